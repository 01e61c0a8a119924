//! The running push layer: registration on the way to the agent, restoring
//! configs on the way back, and the callback endpoint that accepts the
//! agent's notifications into the durable outbox.

mod callback;
mod intercept;
mod snapshot;
mod stats;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{oneshot, Notify};

use super::rewrite::{self, Registration};
use super::safety::TargetPolicy;
use super::{Enqueued, OutboxItem, PushConfig, SnapshotWrite, Store, StoreError};
use crate::config::{PushBackend, PushSettings};
use crate::error::Failure;
use crate::ids::CALLBACK_PREFIX;
use crate::local::LocalResponse;
use crate::version::Version;
use translate::method::Method;

pub use intercept::{delete_target, invalid_params};
pub use stats::PushStats;

/// Most enqueues committed in one store transaction.
const MAX_GROUP: usize = 512;
/// Configs kept in memory (the store has them all).
const CACHE_LIMIT: usize = 100_000;

/// An item for the writer, with its snapshot change; answered with what
/// became of it (its seq; or nothing written: the snapshot changed
/// meanwhile, or a bound of the outbox is reached).
type Enqueue = (
    (OutboxItem, Option<SnapshotWrite>),
    oneshot::Sender<Result<Enqueued, StoreError>>,
);

/// Histogram bounds of delivery latency, seconds (the request histogram's).
use crate::metrics::BUCKETS as LATENCY_BUCKETS;

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
    /// version it has in the store. A cache bounded in bytes
    /// ([`snapshot::Snapshots`]): the store keeps every snapshot, written
    /// with the item it produced; a miss (a restart, a snapshot too large
    /// to cache, a full cache) loads it, and a write refused as stale
    /// (another instance accepted a push for the config) drops the entry,
    /// so the push is folded again from the store's.
    snapshots: Mutex<Snapshots>,
    /// The bytes of callback bodies being read and accepted at once
    /// (`push.callback_read_bytes`), one permit a byte.
    reading: Arc<tokio::sync::Semaphore>,
}

type V03Task = translate::v03::task::Task;
use snapshot::Snapshots;
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
    use super::pg_store::{PgStore, START_WAIT};
    Ok(Arc::new(PgStore::connect_waiting(url, START_WAIT)?))
}

/// The group-commit writer: one store transaction per burst of enqueues,
/// each checked against the outbox bounds `bounds` as it is written.
fn spawn_writer(
    store: Arc<dyn Store>,
    bounds: crate::config::OutboxBounds,
) -> std::io::Result<mpsc::SyncSender<Enqueue>> {
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
                match store.enqueue_bounded(items, &bounds) {
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
        let enqueue = spawn_writer(store.clone(), settings.outbox)?;
        let reading = Arc::new(tokio::sync::Semaphore::new(settings.callback_read_bytes));
        let stats = PushStats {
            reading: Some((reading.clone(), settings.callback_read_bytes)),
            ..PushStats::default()
        };
        Ok(Push {
            base: settings.callback_url.as_string(),
            settings,
            policy,
            store,
            stats,
            wake: Notify::new(),
            cache: Mutex::new(HashMap::new()),
            writing: Arc::default(),
            writes: AtomicU64::new(0),
            deleted: Mutex::default(),
            enqueue,
            snapshots: Mutex::default(),
            reading,
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
}

/// Whether `needle` occurs in `hay`.
pub(crate) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::callback::{presented, translate_body};
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
