//! ListTasks emulation for v1.0 clients of a v0.3 agent. v0.3 has no list
//! method, so the proxy answers `ListTasks` itself, per caller:
//!
//! - The index holds only what a listing needs: for each task seen in a
//!   translated answer (SendMessage, GetTask, CancelTask results, stream
//!   events), its id, context id, state and status timestamp, and the
//!   caller's [`Scope`] (a keyed hash of the credentials it presented,
//!   see [`scope`]). Never whole tasks.
//! - A caller lists only the entries of its own scope; the page's tasks are
//!   then asked of the agent with the caller's own credentials
//!   (`App::list_tasks`): what the agent refuses is left out, what it
//!   answers is listed.
//! - Bounded in entries, in bytes and in the length of the ids it keeps;
//!   the oldest entries go first. Kept in the push store when there is one
//!   (`push::task_sync`, the same small summaries); on a PostgreSQL store
//!   the store is the truth several instances share, and this index each
//!   one's cache of it, kept up by the store's change feed.
//!
//! Here the index's state and its bounds; `entries.rs` writes entries and
//! evicts; `record.rs` records what translated answers say (read by
//! `probe.rs`); `page.rs` cuts a ListTasks page (its params read by
//! `query.rs`) and answers it; `stored.rs` hands summaries to the push
//! store and loads them back; `scope.rs` the caller scopes; `relay.rs` the
//! relayed subscriptions of idle tasks.

mod entries;
mod page;
mod probe;
mod query;
mod record;
pub mod relay;
pub mod scope;
mod stored;
#[cfg(test)]
mod testing;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, FixedOffset};
use http::{HeaderMap, HeaderName};
use serde_json::Value;

use crate::config::IndexLimits;
use crate::error::Failure;
pub use page::Page;
pub use query::params_from_query;
pub use scope::{Caller, Scope, ScopeKey, SCOPE_BYTES};

/// Default and bounds of `pageSize` (v1.0 spec: default 50, at most 100;
/// a larger one is refused with InvalidParams).
pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 100;
/// Page tokens are `o:<offset>` into the caller's filtered, sorted list.
const TOKEN_PREFIX: &str = "o:";
/// A state longer than this is not a v1.0 `TaskState`: not kept.
const MAX_STATE_BYTES: usize = 64;

/// One entry: a task one caller saw.
type Key = (Scope, Arc<str>);

struct Entry {
    /// When it was last seen ([`Inner::next_seq`]): the eviction order,
    /// and the tie-breaker after the status timestamp.
    seq: u64,
    context: Option<Box<str>>,
    /// The v1.0 state (`TASK_STATE_…`) as last seen.
    state: Option<Box<str>>,
    /// The status timestamp as last seen.
    ts: Option<DateTime<FixedOffset>>,
}

fn cost(id: &str, e: &Entry) -> usize {
    id.len()
        + SCOPE_BYTES
        + e.context.as_deref().map_or(0, str::len)
        + e.state.as_deref().map_or(0, str::len)
}

/// The index of tasks seen, per caller scope.
pub struct TaskIndex {
    enabled: bool,
    limits: IndexLimits,
    key: ScopeKey,
    /// `authorization`, then the configured identity headers.
    names: Vec<HeaderName>,
    /// The scope of a call with none of `names` (computed once: most
    /// calls of an open agent carry no credentials).
    anonymous: Scope,
    inner: Mutex<Inner>,
    /// Told when changes start to wait for the store (its writer).
    on_change: std::sync::OnceLock<Arc<dyn Fn() + Send + Sync>>,
}

#[derive(Default)]
struct Inner {
    /// The last [`Inner::next_seq`].
    seq: u64,
    /// [`cost`] of every entry, summed.
    bytes: usize,
    tasks: HashMap<Key, Entry>,
    /// `Entry::seq` -> key, so the oldest entry is found in O(log n).
    order: BTreeMap<u64, Key>,
    /// Keys changed since the last [`TaskIndex::take_changed`]; `None` until
    /// [`TaskIndex::track_changes`] (nothing persists the index).
    changed: Option<HashSet<Key>>,
    /// Counts every change of the entries, their order or `changed`
    /// (not `seq`, which a look-up of an unknown task moves too).
    generation: u64,
    /// The last facts [`TaskIndex::record_facts`] recorded.
    last: Option<record::Last>,
}

impl Inner {
    /// The order of what is seen now: Unix microseconds, always past the
    /// last one. Instances sharing a store order entries by it (as the
    /// store does, `push::task_sync`), so an entry seen earlier on another
    /// instance sits below one seen later here, however late its summary
    /// arrives.
    fn next_seq(&mut self) -> u64 {
        let now = chrono::Utc::now().timestamp_micros();
        self.seq = (self.seq + 1).max(u64::try_from(now).unwrap_or(0));
        self.seq
    }
}

/// Whether a v1.0 task state (`TASK_STATE_…`) is terminal, as the
/// translator defines it (the v0.3 state's).
pub fn is_terminal(state: &str) -> bool {
    serde_json::from_value::<translate::v10::task::TaskState>(Value::from(state))
        .is_ok_and(|s| translate::task::state_to_v03(s).is_terminal())
}

fn invalid(message: impl Into<String>) -> Failure {
    Failure::Translate {
        code: -32602,
        message: message.into(),
    }
}

fn timestamp(status: Option<&Value>) -> Option<DateTime<FixedOffset>> {
    status?
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
}

impl TaskIndex {
    /// `enabled`: `list_tasks = "per-caller"` (off: nothing is recorded);
    /// `identity`: the identity headers besides `Authorization`.
    pub fn new(
        enabled: bool,
        limits: IndexLimits,
        key: ScopeKey,
        identity: &[HeaderName],
    ) -> TaskIndex {
        let mut names = vec![http::header::AUTHORIZATION];
        for n in identity {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        let anonymous = key.scope(&names, &HeaderMap::new());
        TaskIndex {
            enabled,
            limits: IndexLimits {
                max_tasks: limits.max_tasks.max(1),
                ..limits
            },
            key,
            names,
            anonymous,
            inner: Mutex::new(Inner::default()),
            on_change: std::sync::OnceLock::new(),
        }
    }

    /// Whether ListTasks is emulated (`list_tasks = "per-caller"`).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn limits(&self) -> IndexLimits {
        self.limits
    }

    /// The caller of a request with these headers (HTTP headers, or gRPC
    /// metadata as headers).
    pub fn caller(&self, headers: &HeaderMap) -> Caller {
        Caller::of(self.scope_of(headers), &self.names, headers)
    }

    /// The scope of a request with these headers.
    pub fn scope_of(&self, headers: &HeaderMap) -> Scope {
        if self.names.iter().any(|n| headers.contains_key(n)) {
            self.key.scope(&self.names, headers)
        } else {
            self.anonymous
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map(|i| i.tasks.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the index counts against `max_bytes`.
    pub fn bytes(&self) -> usize {
        self.inner.lock().map(|i| i.bytes).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::testing::key;
    use super::*;

    #[test]
    fn a_call_without_credentials_gets_the_one_computed_anonymous_scope() {
        let names = [HeaderName::from_static("x-user")];
        let ix = TaskIndex::new(true, IndexLimits::default(), key(), &names);
        let mut other = HeaderMap::new();
        other.insert("x-other", "1".parse().unwrap());
        // The shortcut gives what the full hash of no credentials gives.
        assert_eq!(
            ix.scope_of(&other),
            ix.key.scope(&ix.names, &HeaderMap::new())
        );
        let mut user = HeaderMap::new();
        user.insert("x-user", "u".parse().unwrap());
        let mut auth = HeaderMap::new();
        auth.insert(http::header::AUTHORIZATION, "Bearer a".parse().unwrap());
        for creds in [&user, &auth] {
            assert_ne!(ix.scope_of(creds), ix.scope_of(&other));
            assert_eq!(ix.scope_of(creds), ix.key.scope(&ix.names, creds));
            assert_eq!(ix.caller(creds).scope, ix.scope_of(creds));
        }
    }
}
