//! The running push layer: registration on the way to the agent, restoring
//! configs on the way back, and the callback endpoint that accepts the
//! agent's notifications into the durable outbox.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{oneshot, Notify};

use super::rewrite::{self, Registration};
use super::safety::TargetPolicy;
use super::{OutboxItem, PushConfig, SnapshotWrite, Store, StoreError, CALLBACK_PREFIX};
use crate::app::LocalResponse;
use crate::config::{PushBackend, PushSettings};
use crate::error::Failure;
use crate::route::Operation;
use crate::version::Version;

/// Most enqueues committed in one store transaction.
const MAX_GROUP: usize = 512;
/// Configs kept in memory (the store has them all).
const CACHE_LIMIT: usize = 100_000;

/// An item for the writer, with its snapshot change; answered with its seq
/// (`None`: the snapshot changed meanwhile, nothing written).
type Enqueue = (
    (OutboxItem, Option<SnapshotWrite>),
    oneshot::Sender<Result<Option<u64>, StoreError>>,
);

/// Counters of the push layer (rendered on `/metrics`).
#[derive(Debug, Default)]
pub struct PushStats {
    pub registered: AtomicU64,
    pub accepted: AtomicU64,
    pub rejected: AtomicU64,
    pub delivered: AtomicU64,
    pub failed_attempts: AtomicU64,
    pub dead_letters: AtomicU64,
    /// Accept to successful delivery, summed, in microseconds.
    pub latency_sum_micros: AtomicU64,
    /// Delivery latency histogram (same bounds as the request histogram).
    pub latency_buckets: [AtomicU64; 12],
    /// Outbox length seen by the worker's last round.
    pub queue_depth: AtomicU64,
}

/// Histogram bounds of delivery latency, seconds (the request histogram's).
use crate::metrics::BUCKETS as LATENCY_BUCKETS;

impl PushStats {
    pub fn delivered_after(&self, accepted_ms: i64) {
        let ms = (super::now_ms() - accepted_ms).max(0) as u64;
        self.delivered.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_micros
            .fetch_add(ms * 1000, Ordering::Relaxed);
        let secs = ms as f64 / 1000.0;
        for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.latency_buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Prometheus text of the push families.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(out, "# HELP a2a_proxy_push_registrations_total Push configs intercepted.\n# TYPE a2a_proxy_push_registrations_total counter\na2a_proxy_push_registrations_total {}", g(&self.registered));
        let _ = writeln!(out, "# HELP a2a_proxy_push_callbacks_total Agent callbacks by outcome.\n# TYPE a2a_proxy_push_callbacks_total counter\na2a_proxy_push_callbacks_total{{outcome=\"accepted\"}} {}\na2a_proxy_push_callbacks_total{{outcome=\"rejected\"}} {}", g(&self.accepted), g(&self.rejected));
        let _ = writeln!(out, "# HELP a2a_proxy_push_deliveries_total Webhook delivery attempts by outcome.\n# TYPE a2a_proxy_push_deliveries_total counter\na2a_proxy_push_deliveries_total{{outcome=\"delivered\"}} {}\na2a_proxy_push_deliveries_total{{outcome=\"failed\"}} {}\na2a_proxy_push_deliveries_total{{outcome=\"dead_letter\"}} {}", g(&self.delivered), g(&self.failed_attempts), g(&self.dead_letters));
        let _ = writeln!(out, "# HELP a2a_proxy_push_queue_depth Notifications waiting in the outbox.\n# TYPE a2a_proxy_push_queue_depth gauge\na2a_proxy_push_queue_depth {}", g(&self.queue_depth));
        let _ = writeln!(out, "# HELP a2a_proxy_push_delivery_seconds Accept to delivery.\n# TYPE a2a_proxy_push_delivery_seconds histogram");
        for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "a2a_proxy_push_delivery_seconds_bucket{{le=\"{b}\"}} {}",
                g(&self.latency_buckets[i])
            );
        }
        let n = g(&self.delivered);
        let _ = writeln!(
            out,
            "a2a_proxy_push_delivery_seconds_bucket{{le=\"+Inf\"}} {n}"
        );
        let _ = writeln!(
            out,
            "a2a_proxy_push_delivery_seconds_sum {}",
            g(&self.latency_sum_micros) as f64 / 1e6
        );
        let _ = writeln!(out, "a2a_proxy_push_delivery_seconds_count {n}");
    }
}

/// The push layer of one proxy instance.
pub struct Push {
    pub settings: PushSettings,
    pub policy: TargetPolicy,
    pub store: Arc<dyn Store>,
    pub stats: PushStats,
    /// Wakes the delivery worker after an accept.
    pub wake: Notify,
    /// `callback_url` as a string (callback URLs are `base/a2a-proxy/push/<id>`).
    pub base: String,
    cache: Mutex<HashMap<String, PushConfig>>,
    /// Config updates learnt from answers whose store write is still under
    /// way (by callback id, with a write number): a request right behind
    /// the answer must see them.
    writing: Arc<Mutex<HashMap<String, (u64, PushConfig)>>>,
    writes: AtomicU64,
    /// Callback ids of configs deleted by their subscriber.
    deleted: Mutex<std::collections::HashSet<String>>,
    enqueue: mpsc::SyncSender<Enqueue>,
    /// Per callback id of a v0.3 subscriber at a v1.0 agent: the Task
    /// snapshot its pushes so far add up to (v0.3 webhooks get the full
    /// Task on every push; see `translate::push_body::fold_v03`), with the
    /// version it has in the store. A cache: the store keeps every snapshot,
    /// written with the item it produced; a miss (a restart, more than
    /// [`SNAPSHOT_LIMIT`]) loads it, and a write refused as stale (another
    /// instance accepted a push for the config) drops the entry, so the
    /// push is folded again from the store's.
    snapshots: Mutex<HashMap<String, (u64, Option<V03Task>)>>,
}

type V03Task = translate::v03::task::Task;

/// Snapshots cached (beyond it the cache is emptied; the store has them).
const SNAPSHOT_LIMIT: usize = 10_000;
/// Folds of one push tried before it is refused (503: the agent retries)
/// while other instances keep changing its config's snapshot.
const FOLD_ATTEMPTS: usize = 8;

impl std::fmt::Debug for Push {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Push").field("base", &self.base).finish()
    }
}

/// Runs `f` on the blocking pool (store calls never block a reactor thread).
pub async fn blocking<R: Send + 'static>(
    f: impl FnOnce() -> Result<R, StoreError> + Send + 'static,
) -> Result<R, StoreError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| StoreError(format!("store task failed: {e}")))?
}

fn store_failure(e: StoreError) -> Failure {
    tracing::error!(error = %e, "push store");
    Failure::Internal {
        detail: "push notification store unavailable".into(),
    }
}

/// Opens the configured backend, its credentials sealed (see
/// [`super::sealed`]) with `push.credentials_key_file`, or with the
/// embedded store's own key file; PostgreSQL without a key file keeps them
/// in clear (several instances must share one key).
pub fn open_store(s: &PushSettings) -> Result<Arc<dyn Store>, StoreError> {
    use super::sealed::{SealedStore, Sealer};
    let (inner, sealer): (Arc<dyn Store>, Option<Sealer>) = match &s.backend {
        PushBackend::Embedded(dir) => {
            let sealer = match &s.credentials_key_file {
                Some(f) => Sealer::from_file(f)?,
                None => Sealer::from_file_or_new(&dir.join("credentials.key"))?,
            };
            (
                Arc::new(super::redb_store::RedbStore::open(dir)?),
                Some(sealer),
            )
        }
        PushBackend::Postgres(url) => {
            let sealer = s
                .credentials_key_file
                .as_deref()
                .map(Sealer::from_file)
                .transpose()?;
            if sealer.is_none() {
                tracing::warn!(
                    "push.credentials_key_file is not set: subscriber credentials are stored in clear in PostgreSQL"
                );
            }
            (open_postgres(url)?, sealer)
        }
    };
    Ok(match sealer {
        Some(k) => Arc::new(SealedStore::new(inner, k)),
        None => inner,
    })
}

fn open_postgres(url: &str) -> Result<Arc<dyn Store>, StoreError> {
    Ok(Arc::new(super::pg_store::PgStore::connect(url)?))
}

/// The group-commit writer: one store transaction per burst of enqueues.
fn spawn_writer(store: Arc<dyn Store>) -> std::io::Result<mpsc::SyncSender<Enqueue>> {
    let (tx, rx) = mpsc::sync_channel::<Enqueue>(MAX_GROUP * 8);
    std::thread::Builder::new()
        .name("a2a-push-writer".into())
        .spawn(move || {
            while let Ok(first) = rx.recv() {
                let mut batch = vec![first];
                while batch.len() < MAX_GROUP {
                    match rx.try_recv() {
                        Ok(x) => batch.push(x),
                        Err(_) => break,
                    }
                }
                let (items, replies): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
                match store.enqueue_folded(items) {
                    Ok(seqs) => {
                        for (r, s) in replies.into_iter().zip(seqs) {
                            let _ = r.send(Ok(s));
                        }
                    }
                    Err(e) => {
                        for r in replies {
                            let _ = r.send(Err(e.clone()));
                        }
                    }
                }
            }
        })?;
    Ok(tx)
}

/// What a registration left for the answer: the configs it may restore.
#[derive(Debug, Default)]
pub struct Pending {
    pub known: HashMap<String, PushConfig>,
    /// The config created by this request (its agent-side id and task come
    /// from the answer).
    pub created: Option<String>,
}

impl Push {
    pub fn new(settings: PushSettings, store: Arc<dyn Store>) -> std::io::Result<Push> {
        let policy = TargetPolicy {
            allow_private: settings.allow_private_targets,
            allow_hosts: settings.allow_hosts.clone(),
        };
        let enqueue = spawn_writer(store.clone())?;
        Ok(Push {
            base: settings.callback_url.as_string(),
            settings,
            policy,
            store,
            stats: PushStats::default(),
            wake: Notify::new(),
            cache: Mutex::new(HashMap::new()),
            writing: Arc::default(),
            writes: AtomicU64::new(0),
            deleted: Mutex::default(),
            enqueue,
            snapshots: Mutex::default(),
        })
    }

    /// Whether requests between these versions are intercepted.
    pub fn intercepts(&self, client: Version, upstream: Version) -> bool {
        client != upstream || self.settings.intercept_same_version
    }

    fn is_deleted(&self, callback_id: &str) -> bool {
        self.deleted
            .lock()
            .map(|d| d.contains(callback_id))
            .unwrap_or(false)
    }

    fn cache_put(&self, c: &PushConfig) {
        if self.is_deleted(&c.callback_id) {
            return;
        }
        if let Ok(mut m) = self.cache.lock() {
            if m.len() >= CACHE_LIMIT {
                m.clear();
            }
            m.insert(c.callback_id.clone(), c.clone());
        }
    }

    async fn config(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError> {
        if self.is_deleted(callback_id) {
            return Ok(None);
        }
        if let Some(c) = self
            .cache
            .lock()
            .ok()
            .and_then(|m| m.get(callback_id).cloned())
        {
            return Ok(Some(c));
        }
        let (store, id) = (self.store.clone(), callback_id.to_string());
        let c = blocking(move || store.config_by_callback(&id)).await?;
        if let Some(c) = &c {
            self.cache_put(c);
        }
        Ok(c)
    }

    async fn save(&self, c: PushConfig) -> Result<(), StoreError> {
        self.cache_put(&c);
        let store = self.store.clone();
        blocking(move || store.put_config(&c)).await
    }

    /// Rewrites an `op` request body (already in the `upstream` version) so
    /// a push config in it points at the proxy, and stores the subscriber's
    /// config. Returns the body to send and what the answer may restore.
    pub async fn register(
        &self,
        op: Operation,
        client: Version,
        upstream: Version,
        body: &[u8],
    ) -> Result<(Option<Vec<u8>>, Pending), Failure> {
        let mut pending = Pending::default();
        let mut task = None;
        if rewrite::answers_configs(op) || op == Operation::DeleteTaskPushNotificationConfig {
            task = task_param(op, upstream, body);
        }
        // A create is a config (v1.0's is flat: no member names it); a
        // message carries one only under a `…PushNotificationConfig` key.
        let carries_config = op == Operation::CreateTaskPushNotificationConfig
            || contains(body, b"ushNotificationConfig");
        if rewrite::registers(op) && carries_config {
            let mut v: Value = serde_json::from_slice(body).map_err(|e| Failure::Translate {
                code: -32700,
                message: format!("invalid JSON: {e}"),
            })?;
            let callback_id = super::random_id();
            let secret = super::random_id();
            let url = format!("{}{CALLBACK_PREFIX}{callback_id}", self.base);
            let reg = match v.get_mut("params") {
                Some(p) => {
                    rewrite::take_registration(op, upstream, p, &url, &secret).map_err(|m| {
                        Failure::Translate {
                            code: -32602,
                            message: m,
                        }
                    })?
                }
                None => None,
            };
            if let Some(reg) = reg {
                let Registration {
                    task_id,
                    config_id,
                    url: original_url,
                    token,
                    auth,
                } = reg;
                self.policy
                    .check_url(&original_url)
                    .map_err(|r| Failure::Translate {
                        code: -32602,
                        message: r.0,
                    })?;
                let c = PushConfig {
                    callback_id: callback_id.clone(),
                    task_id: task_id.clone(),
                    config_id,
                    original_url,
                    token,
                    auth,
                    subscriber_version: client,
                    upstream_version: upstream,
                    callback_secret: secret,
                    created: chrono::Utc::now().timestamp(),
                    seed: None,
                };
                self.save(c.clone()).await.map_err(store_failure)?;
                self.stats.registered.fetch_add(1, Ordering::Relaxed);
                tracing::info!(task_id = %c.task_id, subscriber = %client, agent = %upstream, "push config intercepted");
                pending.known.insert(callback_id.clone(), c);
                pending.created = Some(callback_id);
                if !task_id.is_empty() {
                    task = Some(task_id);
                }
                let out = serde_json::to_vec(&v).map_err(|e| Failure::Internal {
                    detail: e.to_string(),
                })?;
                if let Some(t) = task {
                    self.add_known(&t, &mut pending).await?;
                }
                return Ok((Some(out), pending));
            }
        }
        if let Some(t) = task {
            self.add_known(&t, &mut pending).await?;
        }
        Ok((None, pending))
    }

    async fn add_known(&self, task_id: &str, p: &mut Pending) -> Result<(), Failure> {
        // In-flight writes are read before the store: a write that ends in
        // between is then in the store (its entry goes only after it).
        let writing: Vec<PushConfig> = match self.writing.lock() {
            Ok(w) => w
                .values()
                .filter(|(_, c)| c.task_id == task_id)
                .map(|(_, c)| c.clone())
                .collect(),
            Err(_) => Vec::new(),
        };
        let (store, t) = (self.store.clone(), task_id.to_string());
        let list = blocking(move || store.configs_for_task(&t))
            .await
            .map_err(store_failure)?;
        for c in list {
            p.known.entry(c.callback_id.clone()).or_insert(c);
        }
        for c in writing {
            if !self.is_deleted(&c.callback_id) {
                p.known.insert(c.callback_id.clone(), c);
            }
        }
        Ok(())
    }

    /// Restores subscriber values in an answer (JSON-RPC envelope in the
    /// client's `version`) and records what the agent answered (config id,
    /// task id) in the background. `None` when nothing changed.
    pub fn restore(&self, version: Version, body: &[u8], p: &Pending) -> Option<Vec<u8>> {
        if p.known.is_empty() && !contains(body, CALLBACK_PREFIX.as_bytes()) {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        self.restore_result(version, v.get_mut("result")?, p);
        serde_json::to_vec(&v).ok()
    }

    /// [`Push::restore`] for a REST answer: `body` is the result itself (in
    /// the client's REST shape).
    pub fn restore_rest(&self, version: Version, body: &[u8], p: &Pending) -> Option<Vec<u8>> {
        if p.known.is_empty() && !contains(body, CALLBACK_PREFIX.as_bytes()) {
            return None;
        }
        let mut v: Value = serde_json::from_slice(body).ok()?;
        self.restore_result(version, &mut v, p);
        serde_json::to_vec(&v).ok()
    }

    /// The lookup [`crate::translation::AskedConfig::settle`] needs: the
    /// config of a task with an agent-side id among those `p` knows
    /// (registered here), in the v1.0 answer shape; nothing without `p`
    /// (no push layer, or a call it did not see).
    pub fn known_config(p: Option<&Pending>) -> impl FnOnce(&str, &str) -> Option<Value> + '_ {
        move |task_id, config_id| {
            p?.known
                .values()
                .find(|c| c.task_id == task_id && c.config_id == config_id)
                .map(rewrite::v10_config)
        }
    }

    /// [`Push::register`] for params already parsed (the REST path builds
    /// them from the path and body): `params` is rewritten in place.
    pub async fn register_params(
        &self,
        op: Operation,
        client: Version,
        upstream: Version,
        params: &mut Value,
    ) -> Result<Pending, Failure> {
        let body = serde_json::to_vec(&serde_json::json!({ "params": &*params })).map_err(|e| {
            Failure::Internal {
                detail: e.to_string(),
            }
        })?;
        let (changed, pending) = self.register(op, client, upstream, &body).await?;
        if let Some(b) = changed {
            let mut v: Value = serde_json::from_slice(&b).map_err(|e| Failure::Internal {
                detail: e.to_string(),
            })?;
            if let Some(p) = v.get_mut("params") {
                *params = p.take();
            }
        }
        Ok(pending)
    }

    fn restore_result(&self, version: Version, result: &mut Value, p: &Pending) {
        let task = rewrite::task_of_answer(version, result);
        let r = rewrite::restore(result, version, &self.base, &p.known);
        if r.unknown > 0 {
            tracing::warn!(
                count = r.unknown,
                "answer names push callbacks this proxy does not know"
            );
        }
        let mut updates = Vec::new();
        for (cb, cid) in &r.seen {
            if let Some(c) = p.known.get(cb) {
                if !cid.is_empty() && c.config_id != *cid {
                    updates.push(PushConfig {
                        config_id: cid.clone(),
                        ..c.clone()
                    });
                }
            }
        }
        if let (Some(cb), Some(t)) = (&p.created, task) {
            if let Some(c) = p.known.get(cb).filter(|c| c.task_id.is_empty()) {
                updates.push(PushConfig {
                    task_id: t,
                    ..c.clone()
                });
            }
        }
        for c in updates {
            if self.is_deleted(&c.callback_id) {
                continue;
            }
            self.cache_put(&c);
            let n = self.writes.fetch_add(1, Ordering::Relaxed);
            let id = c.callback_id.clone();
            if let Ok(mut w) = self.writing.lock() {
                w.insert(id.clone(), (n, c.clone()));
            }
            let (store, writing) = (self.store.clone(), self.writing.clone());
            tokio::spawn(async move {
                if let Err(e) = blocking(move || store.put_config(&c)).await {
                    tracing::error!(error = %e, "recording a push config's agent-side id");
                }
                if let Ok(mut w) = writing.lock() {
                    if w.get(&id).is_some_and(|(m, _)| *m == n) {
                        w.remove(&id);
                    }
                }
            });
        }
    }

    /// Forgets a deleted config (after the agent confirmed the delete):
    /// its callback ids are tombstoned first, so a lookup racing with the
    /// delete cannot bring it back into the cache.
    pub fn forget(self: &Arc<Self>, task_id: String, config_id: String) {
        let me = self.clone();
        tokio::spawn(async move {
            // In-flight writes first (see `add_known`).
            let same = |c: &PushConfig| c.task_id == task_id && c.config_id == config_id;
            let in_flight: Vec<String> = match me.writing.lock() {
                Ok(w) => w
                    .values()
                    .filter(|(_, c)| same(c))
                    .map(|(_, c)| c.callback_id.clone())
                    .collect(),
                Err(_) => Vec::new(),
            };
            let (store, t) = (me.store.clone(), task_id.clone());
            let mut ids: Vec<String> = match blocking(move || store.configs_for_task(&t)).await {
                Ok(list) => list
                    .into_iter()
                    .filter(|c| c.config_id == config_id)
                    .map(|c| c.callback_id)
                    .collect(),
                Err(e) => {
                    tracing::error!(error = %e, "forgetting a deleted push config");
                    return;
                }
            };
            ids.extend(in_flight);
            if let Ok(mut d) = me.deleted.lock() {
                if d.len() >= CACHE_LIMIT {
                    d.clear();
                }
                d.extend(ids.iter().cloned());
            }
            if let Ok(mut m) = me.cache.lock() {
                for id in &ids {
                    m.remove(id);
                }
            }
            for id in &ids {
                me.forget_snapshot(id);
            }
            let store = me.store.clone();
            if let Err(e) = blocking(move || store.delete_config(&task_id, &config_id)).await {
                tracing::error!(error = %e, "forgetting a deleted push config");
            }
        });
    }

    /// The callback endpoint: authenticates the agent's POST, translates the
    /// body to the subscriber's version and makes it durable before 2xx.
    pub async fn accept(
        &self,
        callback_id: &str,
        headers: &http::HeaderMap,
        body: Bytes,
    ) -> LocalResponse {
        let started = Instant::now();
        let r = self.accept_inner(callback_id, headers, body).await;
        let (status, msg) = match &r {
            Ok(seq) => {
                self.stats.accepted.fetch_add(1, Ordering::Relaxed);
                self.wake.notify_one();
                tracing::debug!(
                    seq,
                    micros = started.elapsed().as_micros() as u64,
                    "push notification accepted"
                );
                return LocalResponse::json(200, json!({"accepted": true}));
            }
            Err((s, m)) => (*s, m.clone()),
        };
        self.stats.rejected.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(status, reason = %msg, "push callback refused");
        LocalResponse::json(status, json!({"error": msg}))
    }

    async fn accept_inner(
        &self,
        callback_id: &str,
        headers: &http::HeaderMap,
        body: Bytes,
    ) -> Result<u64, (u16, String)> {
        let unavailable = |e: StoreError| {
            tracing::error!(error = %e, "push store");
            (503, "push notification store unavailable".to_string())
        };
        let Some(mut c) = self.config(callback_id).await.map_err(unavailable)? else {
            return Err((404, "unknown push callback".into()));
        };
        if !presented(headers).is_some_and(|p| super::secret_matches(p, &c.callback_secret)) {
            return Err((401, "push callback not authenticated".into()));
        }
        let folds = c.upstream_version == Version::V10 && c.subscriber_version == Version::V03;
        for _ in 0..FOLD_ATTEMPTS {
            let (base, mut snapshot) = if folds {
                self.snapshot_of(&c).await.map_err(unavailable)?
            } else {
                (0, None)
            };
            let (out, task) = translate_body(
                c.upstream_version,
                c.subscriber_version,
                &body,
                folds.then_some(&mut snapshot),
            )
            .map_err(|m| (400, m))?;
            if c.task_id.is_empty() && !task.is_empty() {
                // Another instance may have learnt the config's task.
                c = self.fresh(c).await.map_err(unavailable)?;
            }
            // A callback is for its config's task only: a push about any
            // other would reach a subscriber of another task.
            if !task.is_empty() && !c.task_id.is_empty() && task != c.task_id {
                return Err((403, "push notification names another task".into()));
            }
            if c.task_id.is_empty() && !task.is_empty() {
                c.task_id = task.clone();
                self.save(c.clone()).await.map_err(unavailable)?;
            }
            // A terminal state ends the snapshot: a later push starts anew.
            let kept = snapshot.filter(|t| !t.status.state.is_terminal());
            let change = match folds {
                true => Some(SnapshotWrite {
                    callback_id: c.callback_id.clone(),
                    base,
                    task: kept
                        .as_ref()
                        .map(serde_json::to_string)
                        .transpose()
                        .map_err(|e| unavailable(StoreError(e.to_string())))?,
                }),
                false => None,
            };
            let item = OutboxItem {
                seq: 0,
                callback_id: c.callback_id.clone(),
                task_id: if task.is_empty() {
                    c.task_id.clone()
                } else {
                    task
                },
                body: out,
                attempts: 0,
                next_attempt_ms: 0,
                accepted_ms: super::now_ms(),
                lease_owner: String::new(),
                lease_until_ms: 0,
            };
            // The snapshot is cached only once accepted (with the item, in
            // one durable write): a refused push is sent again by the agent
            // and must not be folded in twice.
            match self.write_item(item, change).await {
                Ok(Some(seq)) => {
                    if folds {
                        self.cache_snapshot(&c.callback_id, base + 1, kept);
                    }
                    return Ok(seq);
                }
                Ok(None) => {
                    tracing::debug!("push snapshot changed by another instance: folding again");
                    self.forget_snapshot(&c.callback_id);
                }
                Err(e) => {
                    self.forget_snapshot(&c.callback_id);
                    return Err(unavailable(e));
                }
            }
        }
        Err((503, "push notification snapshot kept changing".into()))
    }

    /// `c` as the store has it now, when that knows its task (the cache may
    /// predate it); else `c`.
    async fn fresh(&self, c: PushConfig) -> Result<PushConfig, StoreError> {
        let (store, id) = (self.store.clone(), c.callback_id.clone());
        let stored = blocking(move || store.config_by_callback(&id)).await?;
        Ok(match stored {
            Some(s) if !s.task_id.is_empty() => {
                self.cache_put(&s);
                s
            }
            _ => c,
        })
    }

    /// Hands an item (and its snapshot change) to the group-commit writer;
    /// its seq once durable, `None` when the change was stale.
    async fn write_item(
        &self,
        item: OutboxItem,
        change: Option<SnapshotWrite>,
    ) -> Result<Option<u64>, StoreError> {
        let (tx, rx) = oneshot::channel();
        let sender = self.enqueue.clone();
        let stopped = || StoreError("writer stopped".into());
        // A full queue blocks: wait on the blocking pool, not a reactor.
        tokio::task::spawn_blocking(move || sender.send(((item, change), tx)).map_err(|_| ()))
            .await
            .map_err(|e| StoreError(e.to_string()))?
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }

    /// A config's snapshot and its stored version: the cached one, else the
    /// store's; one never written starts at the config's seed.
    async fn snapshot_of(&self, c: &PushConfig) -> Result<(u64, Option<V03Task>), StoreError> {
        if let Some(x) = self
            .snapshots
            .lock()
            .ok()
            .and_then(|m| m.get(&c.callback_id).cloned())
        {
            return Ok(x);
        }
        let (store, id) = (self.store.clone(), c.callback_id.clone());
        let stored = blocking(move || store.snapshot(&id)).await?;
        let task = match (stored.version, stored.task) {
            (0, None) => c.seed.clone(),
            (_, task) => task,
        };
        let task = task.and_then(|t| match serde_json::from_str::<V03Task>(&t) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(error = %e, "stored push snapshot unreadable: folding from nothing");
                None
            }
        });
        Ok((stored.version, task))
    }

    /// Starts the fold of the config `pending` creates, when it is a v0.3
    /// subscriber's config for a task a v1.0 agent already runs, at `task`
    /// (what the agent has now, v1.0 shape), so the first delta it pushes
    /// reaches the v0.3 webhook as that whole Task, not as a Task built from
    /// the delta alone. Stored with the config ([`PushConfig::seed`]), and
    /// in `pending` (whose answer writes the config again). Nothing for a
    /// finished task, or once something was folded.
    pub async fn seed_snapshot(&self, pending: &mut Pending, task: translate::v10::task::Task) {
        let Some(c) = pending
            .created
            .as_ref()
            .and_then(|cb| pending.known.get_mut(cb))
        else {
            return;
        };
        let task = match translate::task::to_v03(task) {
            Ok(t) if !t.status.state.is_terminal() => t,
            Ok(_) => return,
            Err(e) => {
                tracing::debug!(error = %e, "current task not translatable for a push snapshot");
                return;
            }
        };
        let fresh = self
            .snapshots
            .lock()
            .is_ok_and(|m| !m.contains_key(&c.callback_id));
        if !fresh {
            return;
        }
        match serde_json::to_string(&task) {
            Ok(json) => c.seed = Some(json),
            Err(e) => {
                tracing::debug!(error = %e, "push snapshot seed not serializable");
                return;
            }
        }
        if let Err(e) = self.save(c.clone()).await {
            // The config stands; its fold then starts from nothing.
            tracing::error!(error = %e, "storing a push snapshot seed");
        }
        self.cache_snapshot(&c.callback_id, 0, Some(task));
    }

    /// The task of the config `pending` creates, when its fold is to start
    /// at that task as the agent has it now (see [`Push::seed_snapshot`]):
    /// a dedicated create of a v0.3 subscriber at a v1.0 agent.
    pub fn seed_task(op: Operation, pending: &Pending) -> Option<&str> {
        if op != Operation::CreateTaskPushNotificationConfig {
            return None;
        }
        let c = pending.known.get(pending.created.as_ref()?)?;
        let pair = (c.subscriber_version, c.upstream_version);
        (!c.task_id.is_empty() && pair == (Version::V03, Version::V10))
            .then_some(c.task_id.as_str())
    }

    fn cache_snapshot(&self, callback_id: &str, version: u64, task: Option<V03Task>) {
        if let Ok(mut m) = self.snapshots.lock() {
            if m.len() >= SNAPSHOT_LIMIT && !m.contains_key(callback_id) {
                m.clear();
            }
            m.insert(callback_id.to_string(), (version, task));
        }
    }

    fn forget_snapshot(&self, callback_id: &str) {
        if let Ok(mut m) = self.snapshots.lock() {
            m.remove(callback_id);
        }
    }

    /// Looks up a config for delivery.
    pub async fn config_for_delivery(
        &self,
        callback_id: &str,
    ) -> Result<Option<PushConfig>, StoreError> {
        self.config(callback_id).await
    }
}

/// The secret the agent presented: `X-A2A-Notification-Token` (or
/// `A2A-Notification-Token`, which some v1.0 agent SDKs send), or a bearer
/// `Authorization`.
fn presented(h: &http::HeaderMap) -> Option<&str> {
    if let Some(t) = ["x-a2a-notification-token", "a2a-notification-token"]
        .iter()
        .find_map(|n| h.get(*n).and_then(|v| v.to_str().ok()))
    {
        return Some(t.trim());
    }
    let a = h.get(http::header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, rest) = a.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

/// Whether `needle` occurs in `hay`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// The task id a push-config Get/List/Delete request names.
fn task_param(op: Operation, version: Version, body: &[u8]) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let p = v.get("params")?;
    let key = match (op, version) {
        (_, Version::V10) => "taskId",
        (Operation::CreateTaskPushNotificationConfig, Version::V03) => "taskId",
        (_, Version::V03) => "id",
    };
    p.get(key)?.as_str().map(str::to_string)
}

/// The (task id, config id) a Delete request names (in `version`).
pub fn delete_target(version: Version, body: &[u8]) -> Option<(String, String)> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let p = v.get("params")?;
    let (t, c) = match version {
        Version::V03 => ("id", "pushNotificationConfigId"),
        Version::V10 => ("taskId", "id"),
    };
    Some((
        p.get(t)?.as_str()?.to_string(),
        p.get(c)?.as_str()?.to_string(),
    ))
}

/// Translates a webhook body from the agent's version to the subscriber's;
/// also returns the task id it is about. With `snapshot` (v1.0 agent, v0.3
/// subscriber), the body is folded into that Task snapshot, which becomes
/// the body and is updated.
pub fn translate_body(
    from: Version,
    to: Version,
    body: &[u8],
    snapshot: Option<&mut Option<V03Task>>,
) -> Result<(String, String), String> {
    let bad = |e: String| format!("push notification body: {e}");
    let value: Value = serde_json::from_slice(body).map_err(|e| bad(e.to_string()))?;
    let task = rewrite::task_named(&value)
        .map_err(|_| bad("it names more than one task".into()))?
        .unwrap_or_default();
    if from == to {
        // Valid JSON, hence UTF-8: the agent's bytes go on as they are.
        let same = String::from_utf8(body.to_vec()).map_err(|e| bad(e.to_string()))?;
        return Ok((same, task));
    }
    let out = match from {
        Version::V03 => {
            let e: translate::v03::event::StreamEvent =
                serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
            let r = translate::push_body::to_v10(e).map_err(|e| bad(e.to_string()))?;
            serde_json::to_string(&r)
        }
        Version::V10 => {
            let r: translate::v10::event::StreamResponse =
                serde_json::from_value(value).map_err(|e| bad(e.to_string()))?;
            let mut e = translate::push_body::to_v03(r).map_err(|e| bad(e.to_string()))?;
            if let Some(slot) = snapshot {
                e = translate::push_body::fold_v03(slot.take(), e);
                if let translate::v03::event::StreamEvent::Task(t) = &e {
                    *slot = Some(t.clone());
                }
            }
            serde_json::to_string(&e)
        }
    };
    Ok((out.map_err(|e| bad(e.to_string()))?, task))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_cross_versions() {
        let v03 = br#"{"id":"t1","contextId":"c1","status":{"state":"completed","timestamp":"2024-03-15T18:30:00Z"},"kind":"task"}"#;
        let (out, task) = translate_body(Version::V03, Version::V10, v03, None).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(task, "t1");
        assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        let v10 = br#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}"#;
        let (out, task) = translate_body(Version::V10, Version::V03, v10, None).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(task, "t1");
        assert_eq!(
            (v["kind"].as_str(), v["status"]["state"].as_str()),
            (Some("status-update"), Some("working"))
        );
        assert!(translate_body(Version::V03, Version::V10, b"{nope", None).is_err());
        assert!(translate_body(Version::V10, Version::V03, br#"{"foo":1}"#, None).is_err());
    }

    #[test]
    fn presented_secret() {
        let mut h = http::HeaderMap::new();
        assert_eq!(presented(&h), None);
        h.insert("authorization", "Bearer abc".parse().unwrap());
        assert_eq!(presented(&h), Some("abc"));
        h.insert("x-a2a-notification-token", "tok".parse().unwrap());
        assert_eq!(presented(&h), Some("tok"));
    }
}
