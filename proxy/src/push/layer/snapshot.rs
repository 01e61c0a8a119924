//! The Task a v0.3 subscriber of a v1.0 agent is pushed: the fold of its
//! pushes so far, cached here and stored with each item it produced.

use super::*;

/// Snapshots cached (beyond it the cache is emptied; the store has them).
const SNAPSHOT_LIMIT: usize = 10_000;
/// Bytes of the cached snapshots' JSON (beyond it the cache is emptied).
const SNAPSHOT_CACHE_BYTES: usize = 16 << 20;
/// A snapshot whose JSON is larger is not cached (read from the store at
/// each push of its config).
const SNAPSHOT_CACHE_ONE: usize = 1 << 20;

/// The cache of fold snapshots: per callback id, the stored version, the
/// Task and the length of its JSON; bounded in entries and bytes.
#[derive(Default)]
pub(super) struct Snapshots {
    map: HashMap<String, (u64, Option<V03Task>, usize)>,
    bytes: usize,
}

impl Snapshots {
    fn get(&self, callback_id: &str) -> Option<(u64, Option<V03Task>)> {
        self.map.get(callback_id).map(|(v, t, _)| (*v, t.clone()))
    }

    fn contains(&self, callback_id: &str) -> bool {
        self.map.contains_key(callback_id)
    }

    fn remove(&mut self, callback_id: &str) {
        if let Some((_, _, n)) = self.map.remove(callback_id) {
            self.bytes -= n;
        }
    }

    /// Caches `task` (`bytes` of JSON) as version `version`; a snapshot too
    /// large is dropped instead.
    fn put(&mut self, callback_id: &str, version: u64, task: Option<V03Task>, bytes: usize) {
        self.remove(callback_id);
        if bytes > SNAPSHOT_CACHE_ONE {
            return;
        }
        if self.map.len() >= SNAPSHOT_LIMIT || self.bytes + bytes > SNAPSHOT_CACHE_BYTES {
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += bytes;
        self.map
            .insert(callback_id.to_string(), (version, task, bytes));
    }
}

impl Push {
    /// A config's snapshot and its stored version: the cached one, else the
    /// store's; one never written starts at the config's seed.
    pub(super) async fn snapshot_of(
        &self,
        c: &PushConfig,
    ) -> Result<(u64, Option<V03Task>), StoreError> {
        if let Some(x) = self
            .snapshots
            .lock()
            .ok()
            .and_then(|m| m.get(&c.callback_id))
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
            .is_ok_and(|m| !m.contains(&c.callback_id));
        if !fresh {
            return;
        }
        let bytes = match serde_json::to_string(&task) {
            Ok(json) => {
                let n = json.len();
                c.seed = Some(json);
                n
            }
            Err(e) => {
                tracing::debug!(error = %e, "push snapshot seed not serializable");
                return;
            }
        };
        if let Err(e) = self.save(c.clone()).await {
            // The config stands; its fold then starts from nothing.
            tracing::error!(error = %e, "storing a push snapshot seed");
        }
        self.cache_snapshot(&c.callback_id, 0, Some(task), bytes);
    }

    /// The task of the config `pending` creates, when its fold is to start
    /// at that task as the agent has it now (see [`Push::seed_snapshot`]):
    /// a dedicated create of a v0.3 subscriber at a v1.0 agent.
    pub fn seed_task(op: Method, pending: &Pending) -> Option<&str> {
        if op != Method::CreatePushConfig {
            return None;
        }
        let c = pending.known.get(pending.created.as_ref()?)?;
        let pair = (c.subscriber_version, c.upstream_version);
        (!c.task_id.is_empty() && pair == (Version::V03, Version::V10))
            .then_some(c.task_id.as_str())
    }

    /// Caches a config's snapshot, `bytes` the length of its JSON.
    pub(super) fn cache_snapshot(
        &self,
        callback_id: &str,
        version: u64,
        task: Option<V03Task>,
        bytes: usize,
    ) {
        if let Ok(mut m) = self.snapshots.lock() {
            m.put(callback_id, version, task, bytes);
        }
    }

    pub(super) fn forget_snapshot(&self, callback_id: &str) {
        if let Ok(mut m) = self.snapshots.lock() {
            m.remove(callback_id);
        }
    }
}
