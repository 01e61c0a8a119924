//! The callback endpoint: a notification from the agent checked against
//! its config (from the request head, before its body is read), its body
//! read within a byte budget shared by all callbacks, translated for the
//! subscriber and accepted into the durable outbox, within its bounds,
//! before it is acknowledged.

use super::*;
use crate::push::{Enqueued, Full};

/// What a refused agent is told to wait before it pushes again.
const RETRY_AFTER_SECS: u64 = 5;

/// Bytes of the callback read budget held by one callback until its
/// accept is over ([`Push::reserve`]).
pub struct Reserved(tokio::sync::OwnedSemaphorePermit);

impl Reserved {
    /// Holds `more` with these.
    pub fn merge(&mut self, more: Reserved) {
        self.0.merge(more.0);
    }
}

impl Push {
    /// The checks of a callback's head, made before any of its body is
    /// read: the config of `callback_id`, when the agent's POST presents
    /// its secret; else the refusal to answer (404 unknown, 401 not
    /// authenticated, 503 store unavailable).
    pub async fn callback_config(
        &self,
        callback_id: &str,
        headers: &http::HeaderMap,
    ) -> Result<PushConfig, LocalResponse> {
        self.authenticated(callback_id, headers)
            .await
            .map_err(|(status, msg)| self.refusal(status, &msg))
    }

    /// Reserves `bytes` of the bytes callbacks may read and accept at once
    /// (`push.callback_read_bytes`), waiting until `deadline` at most;
    /// `None`: not free in time (the caller answers [`Push::busy`]).
    pub async fn reserve(&self, bytes: usize, deadline: Instant) -> Option<Reserved> {
        let n = u32::try_from(bytes).ok()?;
        let wait = self.reading.clone().acquire_many_owned(n);
        let deadline = tokio::time::Instant::from_std(deadline);
        match tokio::time::timeout_at(deadline, wait).await {
            Ok(Ok(p)) => Some(Reserved(p)),
            _ => None,
        }
    }

    /// The answer to a callback the proxy cannot take now (`why`): 503,
    /// with `Retry-After`.
    pub fn busy(&self, why: &str) -> LocalResponse {
        self.refusal(503, why)
    }

    /// A refused callback: counted, logged, answered `{"error": msg}`; a
    /// refusal the agent may retry (429, 503) says when in `Retry-After`.
    pub fn refusal(&self, status: u16, msg: &str) -> LocalResponse {
        self.stats.rejected.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(status, reason = %msg, "push callback refused");
        let mut r = LocalResponse::json(status, json!({ "error": msg }));
        if status == 429 || status == 503 {
            r.headers
                .push(("Retry-After", RETRY_AFTER_SECS.to_string()));
        }
        r
    }

    /// Accepts the body of a callback authenticated as `c`
    /// ([`Push::callback_config`]): translates it to the subscriber's
    /// version and makes it durable before 2xx; refused when the outbox is
    /// at a bound (429 for the config's, 503 for the whole outbox's, both
    /// with `Retry-After`; 413 for a body larger than a bound alone).
    pub async fn accept(
        &self,
        c: PushConfig,
        headers: &http::HeaderMap,
        body: Bytes,
    ) -> LocalResponse {
        let started = Instant::now();
        match self.accept_inner(c, headers, body).await {
            Ok(seq) => {
                self.stats.accepted.fetch_add(1, Ordering::Relaxed);
                self.wake.notify_one();
                tracing::debug!(
                    seq,
                    micros = started.elapsed().as_micros() as u64,
                    "push notification accepted"
                );
                LocalResponse::json(200, json!({"accepted": true}))
            }
            Err((status, msg)) => self.refusal(status, &msg),
        }
    }

    pub(super) async fn accept_inner(
        &self,
        mut c: PushConfig,
        headers: &http::HeaderMap,
        body: Bytes,
    ) -> Result<u64, (u16, String)> {
        // The agent's trace goes on with the delivery (checked, or none).
        let trace = crate::tracectx::TraceContext::from_headers(headers).unwrap_or_default();
        for _ in 0..FOLD_ATTEMPTS {
            if let Some(seq) = self.accept_once(&mut c, &body, &trace).await? {
                return Ok(seq);
            }
        }
        Err((503, "push notification snapshot kept changing".into()))
    }

    /// The config of `callback_id`, when the agent's POST presents its
    /// secret.
    async fn authenticated(
        &self,
        callback_id: &str,
        headers: &http::HeaderMap,
    ) -> Result<PushConfig, (u16, String)> {
        let Some(c) = self.config(callback_id).await.map_err(unavailable)? else {
            return Err((404, "unknown push callback".into()));
        };
        if !presented(headers).is_some_and(|p| crate::push::secret_matches(p, &c.callback_secret)) {
            return Err((401, "push callback not authenticated".into()));
        }
        Ok(c)
    }

    /// One attempt at accepting `body` for `c`: translated (folded into
    /// the config's v0.3 Task where it has one), checked against the
    /// config's task and written with the snapshot it read. `None`: the
    /// snapshot changed meanwhile (another instance), to fold again.
    async fn accept_once(
        &self,
        c: &mut PushConfig,
        body: &[u8],
        trace: &crate::tracectx::TraceContext,
    ) -> Result<Option<u64>, (u16, String)> {
        let folds = c.upstream_version == Version::V10 && c.subscriber_version == Version::V03;
        let (base, mut snapshot) = if folds {
            self.snapshot_of(c).await.map_err(unavailable)?
        } else {
            (0, None)
        };
        let (out, task) = translate_body(
            c.upstream_version,
            c.subscriber_version,
            body,
            folds.then_some(&mut snapshot),
        )
        .map_err(|m| (400, m))?;
        self.learn_task(c, &task).await?;
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
            accepted_ms: crate::push::now_ms(),
            lease_owner: String::new(),
            lease_until_ms: 0,
            traceparent: trace.traceparent.clone(),
            tracestate: trace.tracestate.clone(),
        };
        let kept_bytes = change
            .as_ref()
            .and_then(|w| w.task.as_ref())
            .map_or(0, String::len);
        // The snapshot is cached only once accepted (with the item, in
        // one durable write): a refused push is sent again by the agent
        // and must not be folded in twice.
        match self.write_item(item, change).await {
            Ok(Enqueued::Seq(seq)) => {
                if folds {
                    self.cache_snapshot(&c.callback_id, base + 1, kept, kept_bytes);
                }
                Ok(Some(seq))
            }
            Ok(Enqueued::Stale) => {
                tracing::debug!("push snapshot changed by another instance: folding again");
                self.forget_snapshot(&c.callback_id);
                Ok(None)
            }
            // Nothing written, the snapshot untouched: the agent sends the
            // push again later, folded as if for the first time.
            Ok(Enqueued::Full(full)) => {
                self.stats.outbox_full.fetch_add(1, Ordering::Relaxed);
                Err(outbox_full(full))
            }
            Err(e) => {
                self.forget_snapshot(&c.callback_id);
                Err(unavailable(e))
            }
        }
    }

    /// Checks the task a push names against its config's, and records it
    /// when the config did not know its task yet.
    async fn learn_task(&self, c: &mut PushConfig, task: &str) -> Result<(), (u16, String)> {
        if c.task_id.is_empty() && !task.is_empty() {
            // Another instance may have learnt the config's task.
            *c = self.fresh(c.clone()).await.map_err(unavailable)?;
        }
        // A callback is for its config's task only: a push about any
        // other would reach a subscriber of another task.
        if !task.is_empty() && !c.task_id.is_empty() && task != c.task_id {
            return Err((403, "push notification names another task".into()));
        }
        if c.task_id.is_empty() && !task.is_empty() {
            c.task_id = task.to_string();
            self.save(c.clone()).await.map_err(unavailable)?;
        }
        Ok(())
    }

    /// `c` as the store has it now, when that knows its task (the cache may
    /// predate it); else `c`.
    pub(super) async fn fresh(&self, c: PushConfig) -> Result<PushConfig, StoreError> {
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
    /// its seq once durable, or why nothing was written.
    pub(super) async fn write_item(
        &self,
        item: OutboxItem,
        change: Option<SnapshotWrite>,
    ) -> Result<Enqueued, StoreError> {
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
pub(super) fn presented(h: &http::HeaderMap) -> Option<&str> {
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

/// A push refused by the outbox bound `full`, as the callback answers it.
fn outbox_full(full: Full) -> (u16, String) {
    match full {
        Full::TooLarge => (
            413,
            "push notification larger than the push outbox holds".into(),
        ),
        Full::Config => (
            429,
            "push outbox of this config is full: retry later".into(),
        ),
        Full::Total => (503, "push outbox is full: retry later".into()),
    }
}

/// A store failure as the callback answers it (logged here, never echoed).
fn unavailable(e: StoreError) -> (u16, String) {
    tracing::error!(error = %e, "push store");
    (503, "push notification store unavailable".to_string())
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
