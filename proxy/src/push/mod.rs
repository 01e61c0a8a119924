//! Push notifications across versions (issue #4): the proxy stands in the
//! webhook path. Stored configs ([`PushConfig`]), the durable outbox
//! ([`OutboxItem`]) and dead letters live behind the [`Store`] trait; the
//! embedded default backend is [`redb_store::RedbStore`] (no setup, one file
//! under `push.data_dir`).
//!
//! Credentials (the subscriber's token and authentication, the per-config
//! callback secret) are sealed at rest ([`sealed`]) and never logged:
//! [`PushConfig`]'s `Debug` redacts them.

/// The store contract every backend's tests run: test code, kept with the
/// integration tests' support files and compiled only into tests.
#[cfg(test)]
#[path = "../../tests/support/store_contract.rs"]
pub(crate) mod contract;
pub mod deliver;
pub mod instances;
pub mod layer;
pub mod names;
pub mod pg_listen;
pub mod pg_shared;
pub mod pg_store;
pub mod redb_store;
pub mod relay_subs;
pub mod relay_sync;
pub mod rewrite;
pub mod safety;
pub mod sealed;
pub mod task_sync;
pub mod wal;
pub mod webhook;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::version::Version;

pub use crate::config::OutboxBounds;

/// Schema version of the stored records; [`Store`] backends migrate older
/// data on open.
/// 2 added the ListTasks task index; 3 the fold snapshots ([`Snapshot`]);
/// 4 keeps only per-caller summaries in the task index (the whole tasks
/// stored before, of no known caller, are dropped); 5 keeps the agent's
/// trace context with each accepted notification; 6 counts the outbox per
/// config for its bounds ([`OutboxBounds`]; the embedded store keeps the
/// bodies apart from the items' state); 7 shares the task index, the
/// relay and the deployment's key among the instances of a PostgreSQL
/// store (`pg_shared`; nothing for the embedded one).
pub const SCHEMA_VERSION: u64 = 7;

/// A store failure (IO, corruption, encoding), already rendered as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreError(pub String);

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "push store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

/// Subscriber authentication as registered (v1.0 shape: one scheme).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Auth {
    pub scheme: String,
    pub credentials: Option<String>,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("scheme", &self.scheme)
            .field(
                "credentials",
                &self.credentials.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// One registered push config, keyed by its unguessable `callback_id`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushConfig {
    /// The last path segment of the proxy's callback URL (random, 128 bits).
    pub callback_id: String,
    pub task_id: String,
    /// The config id (the agent's, recorded from its response; may be empty
    /// until then).
    pub config_id: String,
    /// The subscriber's webhook URL.
    pub original_url: String,
    /// The subscriber's token.
    pub token: Option<String>,
    pub auth: Option<Auth>,
    /// The wire version the subscriber registered with (bodies go out in it).
    #[serde(with = "ver")]
    pub subscriber_version: Version,
    /// The version the upstream agent speaks (bodies arrive in it).
    #[serde(with = "ver")]
    pub upstream_version: Version,
    /// The token the upstream was given; it authenticates its callbacks.
    pub callback_secret: String,
    /// Unix seconds.
    pub created: i64,
    /// Where the fold of a v0.3 subscriber's config at a v1.0 agent starts
    /// (v0.3 Task JSON): the task as the agent had it when the config was
    /// created for it. Kept with the config, so a restart or another
    /// instance starts from it too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
}

impl fmt::Debug for PushConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PushConfig")
            .field("callback_id", &"<redacted>")
            .field("task_id", &self.task_id)
            .field("config_id", &self.config_id)
            .field("subscriber_version", &self.subscriber_version)
            .field("upstream_version", &self.upstream_version)
            .field("created", &self.created)
            .finish_non_exhaustive()
    }
}

/// One notification accepted from the upstream, waiting for delivery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxItem {
    /// Assigned by the store: strictly increasing, so per-task order is the
    /// order of `seq`.
    pub seq: u64,
    pub callback_id: String,
    pub task_id: String,
    /// The body as the upstream sent it (its version).
    pub body: String,
    pub attempts: u32,
    /// Unix milliseconds before which no attempt is made.
    pub next_attempt_ms: i64,
    /// Unix milliseconds when accepted.
    pub accepted_ms: i64,
    /// The instance delivering the item now (empty: nobody).
    #[serde(default)]
    pub lease_owner: String,
    /// Unix milliseconds until which `lease_owner` holds the item.
    #[serde(default)]
    pub lease_until_ms: i64,
    /// The agent's W3C `traceparent` on the push (empty: none), sent on
    /// with the delivery so the subscriber's work joins the agent's trace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub traceparent: String,
    /// Its `tracestate` (empty: none).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tracestate: String,
}

/// The v0.3 Task a config's pushes add up to, as stored (v1.0 agent, v0.3
/// subscriber: every v0.3 webhook body is the full Task, see
/// `translate::push_body::fold_v03`). `version` counts the writes, so
/// concurrent accepts for one config (two instances) are told apart: each
/// write names the version it folded from ([`SnapshotWrite::base`]). A
/// removed snapshot (terminal task state) keeps its version, `task` empty,
/// until its config is deleted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub version: u64,
    /// The Task in v0.3 JSON.
    pub task: Option<String>,
}

/// The change to a config's [`Snapshot`] an accepted push makes, written
/// with its outbox item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotWrite {
    pub callback_id: String,
    /// The version the fold started from; the stored snapshot becomes
    /// version `base + 1`.
    pub base: u64,
    /// The new Task (v0.3 JSON); `None` removes it.
    pub task: Option<String>,
}

/// A notification given up on after the retry limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeadLetter {
    pub item: OutboxItem,
    pub reason: String,
    pub dead_ms: i64,
}

/// What became of one notification handed to [`Store::enqueue_bounded`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enqueued {
    /// Written, durable: its `seq`.
    Seq(u64),
    /// Its snapshot change was folded from a stale version: nothing written.
    Stale,
    /// Refused by a bound: nothing written.
    Full(Full),
}

/// The bound that refused a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// Its body alone is larger than a bound in bytes: it never fits.
    TooLarge,
    /// Its config's waiting notifications are at their bound.
    Config,
    /// All waiting notifications are at their bound.
    Total,
}

/// Notifications waiting for delivery and the bytes of their bodies, as
/// the outbox bounds count them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub items: u64,
    pub bytes: u64,
}

impl Usage {
    pub fn add(&mut self, bytes: u64) {
        self.items += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }

    pub fn sub(&mut self, bytes: u64) {
        self.items = self.items.saturating_sub(1);
        self.bytes = self.bytes.saturating_sub(bytes);
    }
}

impl OutboxBounds {
    /// Whether one more body of `bytes` fits beside `config` (its config's
    /// waiting notifications) and `total` (all of them); the bound it
    /// breaks otherwise.
    pub fn refuses(&self, config: Usage, total: Usage, bytes: u64) -> Option<Full> {
        if bytes > self.config_bytes || bytes > self.total_bytes {
            return Some(Full::TooLarge);
        }
        let over = |u: Usage, items: u64, most: u64| {
            u.items.saturating_add(1) > items || u.bytes.saturating_add(bytes) > most
        };
        if over(config, self.config_items, self.config_bytes) {
            return Some(Full::Config);
        }
        if over(total, self.total_items, self.total_bytes) {
            return Some(Full::Total);
        }
        None
    }
}

/// The bytes a notification counts for in the outbox bounds: its body's.
pub fn counted_bytes(item: &OutboxItem) -> u64 {
    item.body.len() as u64
}

/// Durable state of the push layer. Every method is one transaction.
pub trait Store: Send + Sync {
    fn put_config(&self, c: &PushConfig) -> Result<(), StoreError>;
    fn config_by_callback(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError>;
    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError>;
    /// Removes the configs of `task_id` with `config_id`, and their fold
    /// snapshots; how many configs went.
    fn delete_config(&self, task_id: &str, config_id: &str) -> Result<usize, StoreError>;
    /// Appends to the outbox in one durable write, each item with the
    /// change to its config's fold snapshot it carries, if any: an item and
    /// its snapshot change are kept both or neither. A change whose `base`
    /// is not the stored snapshot's version (checked in order, so a second
    /// change of one config in the same call must build on the first) is a
    /// conflict: neither it nor its item is written, and its answer is
    /// `None`. Otherwise the answer is the assigned `seq` (increasing in
    /// order). Durable on return.
    fn enqueue_folded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
    ) -> Result<Vec<Option<u64>>, StoreError> {
        self.enqueue_bounded(items, &OutboxBounds::NONE)?
            .into_iter()
            .map(|e| match e {
                Enqueued::Seq(s) => Ok(Some(s)),
                Enqueued::Stale => Ok(None),
                Enqueued::Full(f) => Err(StoreError(format!("unbounded append refused: {f:?}"))),
            })
            .collect()
    }
    /// [`Store::enqueue_folded`] within `bounds`: an item is written only
    /// if it fits beside the notifications waiting (delivered and dead ones
    /// not counted; a shared store counts those of every instance), counted
    /// with the items before it in the same call; otherwise neither it nor
    /// its snapshot change is written ([`Enqueued::Full`]). The check and
    /// the write are one: an item answered [`Enqueued::Seq`] is kept, and
    /// no two callers together pass a bound.
    fn enqueue_bounded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
        bounds: &OutboxBounds,
    ) -> Result<Vec<Enqueued>, StoreError>;
    /// The fold snapshot of a config (version 0 and no task: never written).
    fn snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError>;
    /// Appends to the outbox in one transaction; returns the assigned `seq`s
    /// in order. Durable on return.
    fn enqueue_many(&self, items: Vec<OutboxItem>) -> Result<Vec<u64>, StoreError> {
        self.enqueue_folded(items.into_iter().map(|i| (i, None)).collect())?
            .into_iter()
            .map(|s| s.ok_or_else(|| StoreError("an item without a snapshot conflicted".into())))
            .collect()
    }
    /// Appends one item; see [`Store::enqueue_many`].
    fn enqueue(&self, item: OutboxItem) -> Result<u64, StoreError> {
        let seqs = self.enqueue_many(vec![item])?;
        seqs.first()
            .copied()
            .ok_or_else(|| StoreError("enqueue assigned no seq".into()))
    }
    /// Pending items in `seq` order (at most `limit`), leased or not.
    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError>;
    /// Leases due items to `owner` until `now_ms + lease_ms`, at most
    /// `limit` in all and at most `run_limit` per callback id, in `seq`
    /// order. Per callback id only a run starting at its oldest item is
    /// handed out, and only when that oldest item is due and not leased by
    /// anyone (so one instance delivers a config's notifications, in
    /// order). Returned items carry the new lease.
    ///
    /// A run whose oldest item failed before (`attempts > 0`) is that item
    /// alone: a webhook that is down is tried with one notification, not
    /// with its whole backlog.
    fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
        run_limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        self.claim_within(owner, now_ms, lease_ms, limit, run_limit, u64::MAX)
    }
    /// [`Store::claim`], taking in `seq` order only while the bodies taken
    /// add up to at most `max_bytes` (the first item is taken whatever its
    /// size): a claim's memory is bounded, whatever the backlog.
    fn claim_within(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
        run_limit: usize,
        max_bytes: u64,
    ) -> Result<Vec<OutboxItem>, StoreError>;
    /// Extends `owner`'s leases on `seqs` until `until_ms`; the seqs it
    /// still holds (the others are gone, or were claimed by another owner
    /// after their lease ran out: the caller must not post them).
    fn renew(&self, owner: &str, seqs: &[u64], until_ms: i64) -> Result<Vec<u64>, StoreError>;
    /// Rewrites an item (attempts, next attempt time, lease) if it is still
    /// leased to `held_by` (an item another owner took over is left alone).
    fn reschedule(&self, item: &OutboxItem, held_by: &str) -> Result<(), StoreError>;
    /// Removes delivered items.
    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError>;
    /// Removes a delivered item.
    fn complete(&self, seq: u64) -> Result<(), StoreError> {
        self.complete_many(&[seq])
    }
    /// Moves an item to the dead letters (a shared backend: only while it
    /// is still leased as `item.lease_owner` says).
    fn dead_letter(&self, item: &OutboxItem, reason: &str) -> Result<(), StoreError>;
    fn dead_letters(&self) -> Result<Vec<DeadLetter>, StoreError>;
    fn outbox_len(&self) -> Result<u64, StoreError>;
    /// The waiting notifications as the bounds count them (all instances'
    /// on a shared store).
    fn outbox_usage(&self) -> Result<Usage, StoreError>;
    /// Writes (inserts or replaces by id) entries of the ListTasks index,
    /// then drops the least recently updated ones beyond `keep`.
    fn put_tasks(&self, tasks: &[TaskRecord], keep: usize) -> Result<(), StoreError>;
    /// The `limit` most recently updated entries, oldest first.
    fn load_tasks(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError>;
    /// A secret of this store's deployment the ListTasks caller scopes are
    /// keyed from (see `crate::tasks::scope`): instances sharing the store
    /// agree on it. `None`: the store has none (scopes then live as long
    /// as the process).
    fn list_scope_secret(&self) -> Option<[u8; 32]> {
        None
    }
    /// What instances sharing this store share besides the outbox (the
    /// ListTasks index's change feed, relayed events, the deployment's
    /// key): PostgreSQL's; `None` for a store of one instance.
    fn shared(&self) -> Option<std::sync::Arc<pg_shared::PgShared>> {
        None
    }
    /// Releases the backend's resources (an embedded file can then be
    /// opened again); later calls fail.
    fn close(&self) {}
}

/// One entry of the ListTasks index (a task one caller saw through the
/// proxy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// `<caller scope>/<task id>`.
    pub id: String,
    /// When the proxy last saw the task (Unix ms): recency across restarts
    /// and instances.
    pub updated_ms: i64,
    /// The entry's summary (JSON: scope, id, context id, state, status
    /// timestamp; see `crate::tasks`), never the task itself.
    pub task: String,
}

/// Constant-time comparison of a presented secret with the stored one.
pub fn secret_matches(presented: &str, stored: &str) -> bool {
    let (a, b) = (presented.as_bytes(), stored.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Unix milliseconds now.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Versions are stored as `"0.3"` / `"1.0"`.
mod ver {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::version::Version;

    pub fn serialize<S: Serializer>(v: &Version, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match v {
            Version::V03 => "0.3",
            Version::V10 => "1.0",
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Version, D::Error> {
        match String::deserialize(d)?.as_str() {
            "0.3" => Ok(Version::V03),
            "1.0" => Ok(Version::V10),
            other => Err(serde::de::Error::custom(format!(
                "unknown version {other:?}"
            ))),
        }
    }
}
