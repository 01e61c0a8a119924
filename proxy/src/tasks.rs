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
//!   (`push::task_sync`, the same small summaries).

mod probe;
mod query;
pub mod relay;
pub mod scope;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, FixedOffset};
use http::{HeaderMap, HeaderName};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::error::Failure;
use probe::{probe, At, Seen};
use query::Query;
pub use scope::{Caller, Scope, ScopeKey, SCOPE_BYTES};
use translate::transcode::TaskFacts;

/// Default and bounds of `pageSize` (v1.0 spec: default 50, at most 100;
/// a larger one is refused with InvalidParams).
pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 100;
/// Page tokens are `o:<offset>` into the caller's filtered, sorted list.
const TOKEN_PREFIX: &str = "o:";
/// A state longer than this is not a v1.0 `TaskState`: not kept.
const MAX_STATE_BYTES: usize = 64;

/// Bounds of the index (`limits.list_index_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLimits {
    /// Most entries kept.
    pub max_tasks: usize,
    /// Most bytes of ids, context ids, states and scopes kept.
    pub max_bytes: usize,
    /// A task whose id or context id is longer is not indexed.
    pub max_id_bytes: usize,
}

impl Default for IndexLimits {
    fn default() -> Self {
        IndexLimits {
            max_tasks: 10_000,
            max_bytes: 8 * 1024 * 1024,
            max_id_bytes: 1024,
        }
    }
}

/// One entry: a task one caller saw.
type Key = (Scope, Arc<str>);

struct Entry {
    /// Insertion / update order, the tie-breaker after the status timestamp.
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

/// The stored form of an entry (`push::TaskRecord::task`). A row that does
/// not read as one (a whole task, as stored before scopes existed) belongs
/// to no caller and is never loaded.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    /// Always 1: marks the form.
    index: u8,
    scope: String,
    id: String,
    #[serde(rename = "contextId", default, skip_serializing_if = "Option::is_none")]
    context: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

/// The index of tasks seen, per caller scope.
pub struct TaskIndex {
    enabled: bool,
    limits: IndexLimits,
    key: ScopeKey,
    /// `authorization`, then the configured identity headers.
    names: Vec<HeaderName>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
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
    last: Option<Last>,
}

/// Facts recorded, and the [`Inner::generation`] right after: recording
/// the same facts again while the generation is still that one changes
/// nothing (the entry is there as they left it, already the newest and in
/// `changed`, or they recorded nothing), so it is skipped: a stream's
/// events repeat their task's facts (every status update of a task that
/// is not in the index, or whose state did not move) without a look-up.
struct Last {
    generation: u64,
    scope: Scope,
    /// 1: a task, 2: a status update.
    what: u8,
    id: String,
    context: Option<String>,
    state: &'static str,
    ts: Option<DateTime<FixedOffset>>,
}

impl Last {
    fn is(&self, generation: u64, scope: Scope, facts: &TaskFacts<'_>) -> bool {
        if self.generation != generation || self.scope != scope {
            return false;
        }
        match facts {
            TaskFacts::Nothing => false,
            TaskFacts::Task {
                id,
                context,
                status,
            } => {
                self.what == 1
                    && self.id == **id
                    && self.context.as_deref() == context.as_deref()
                    && self.state == status.state
                    && self.ts == status.timestamp
            }
            TaskFacts::Status { task_id, status } => {
                self.what == 2
                    && self.id == **task_id
                    && self.state == status.state
                    && self.ts == status.timestamp
            }
        }
    }

    /// `last` now holds `facts` (its id's buffer kept).
    fn set(last: &mut Option<Last>, generation: u64, scope: Scope, facts: &TaskFacts<'_>) {
        let (what, id, context, status) = match facts {
            TaskFacts::Nothing => return,
            TaskFacts::Task {
                id,
                context,
                status,
            } => (1, id, context.as_deref(), status),
            TaskFacts::Status { task_id, status } => (2, task_id, None, status),
        };
        let l = last.get_or_insert_with(|| Last {
            generation,
            scope,
            what,
            id: String::new(),
            context: None,
            state: status.state,
            ts: None,
        });
        l.generation = generation;
        l.scope = scope;
        l.what = what;
        l.id.clear();
        l.id.push_str(id);
        l.context = context.map(str::to_string);
        l.state = status.state;
        l.ts = status.timestamp;
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

/// The v1.0 methods whose answers carry tasks.
fn indexed(method: &str) -> bool {
    matches!(
        method,
        "SendMessage" | "GetTask" | "CancelTask" | "SendStreamingMessage" | "SubscribeToTask"
    )
}

/// The answer of `method` holds its task in `task`, not as the result itself.
fn wrapped(method: &str) -> bool {
    !matches!(method, "GetTask" | "CancelTask")
}

fn timestamp(status: Option<&Value>) -> Option<DateTime<FixedOffset>> {
    status?
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
}

/// One ListTasks page to fetch: the ids of the caller's entries that match
/// the request, and how to shape and check what the agent answers.
#[derive(Debug)]
pub struct Page {
    /// The tasks to ask the agent for, in list order (at most `pageSize`).
    pub ids: Vec<String>,
    page_size: i64,
    total: usize,
    next: String,
    history: Option<i64>,
    artifacts: bool,
    context: Option<String>,
    status: Option<String>,
    after: Option<DateTime<FixedOffset>>,
}

impl Page {
    /// The `historyLength` to ask the agent for (v0.3 reads 0 as "all", so
    /// only a positive one is passed on).
    pub fn history_length(&self) -> Option<i64> {
        self.history.filter(|h| *h > 0)
    }

    /// Whether a task the agent answered still matches the request.
    fn matches(&self, id: &str, t: &Value) -> bool {
        let status = t.get("status");
        t.get("id").and_then(Value::as_str) == Some(id)
            && self
                .context
                .as_deref()
                .is_none_or(|c| t.get("contextId").and_then(Value::as_str) == Some(c))
            && self.status.as_deref().is_none_or(|s| {
                status
                    .and_then(|st| st.get("state"))
                    .and_then(Value::as_str)
                    == Some(s)
            })
            && self
                .after
                .is_none_or(|a| timestamp(status).is_some_and(|t| t > a))
    }

    /// The ListTasks `result`: of `fetched` (the agent's answers, one per
    /// id of [`Page::ids`], `None` where it gave none), the tasks that are
    /// the one asked for and still match, shaped as asked.
    pub fn answer(&self, fetched: Vec<Option<Value>>) -> Value {
        let tasks: Vec<Value> = self
            .ids
            .iter()
            .zip(fetched)
            .filter_map(|(id, t)| t.filter(|t| self.matches(id, t)))
            .map(|t| shaped(t, self.history, self.artifacts))
            .collect();
        json!({
            "tasks": tasks,
            "nextPageToken": self.next,
            "pageSize": self.page_size,
            "totalSize": self.total,
        })
    }
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
        TaskIndex {
            enabled,
            limits: IndexLimits {
                max_tasks: limits.max_tasks.max(1),
                ..limits
            },
            key,
            names,
            inner: Mutex::new(Inner::default()),
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
        Caller::of(&self.key, &self.names, headers)
    }

    /// The scope of a request with these headers.
    pub fn scope_of(&self, headers: &HeaderMap) -> Scope {
        self.key.scope(&self.names, headers)
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

    /// From now on, changed entries are remembered for [`Self::take_changed`].
    pub fn track_changes(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.generation += 1;
            inner.changed.get_or_insert_with(Default::default);
        }
    }

    /// The entries changed since the last call, oldest change first, as
    /// (store key, stored summary) for a store.
    pub fn take_changed(&self) -> Vec<(String, String)> {
        let Ok(mut inner) = self.inner.lock() else {
            return Vec::new();
        };
        let keys = match inner.changed.as_mut() {
            Some(c) if !c.is_empty() => std::mem::take(c),
            _ => return Vec::new(),
        };
        inner.generation += 1;
        let mut out: Vec<(u64, String, String)> = keys
            .into_iter()
            .filter_map(|k| {
                let e = inner.tasks.get(&k)?;
                let s = Summary {
                    index: 1,
                    scope: k.0.hex(),
                    id: k.1.to_string(),
                    context: e.context.as_deref().map(str::to_string),
                    state: e.state.as_deref().map(str::to_string),
                    timestamp: e.ts.map(|t| t.to_rfc3339()),
                };
                let text = serde_json::to_string(&s).ok()?;
                Some((e.seq, format!("{}/{}", s.scope, s.id), text))
            })
            .collect();
        out.sort_by_key(|(seq, _, _)| *seq);
        out.into_iter().map(|(_, k, s)| (k, s)).collect()
    }

    /// Stored summaries, oldest first (the newest end up most recent); what
    /// is not a summary (a whole task stored before scopes existed) is
    /// dropped. How many were loaded.
    pub fn load<S: AsRef<str>>(&self, stored: impl IntoIterator<Item = S>) -> usize {
        let mut n = 0;
        for text in stored {
            let Ok(s) = serde_json::from_str::<Summary>(text.as_ref()) else {
                continue;
            };
            let Some(scope) = Scope::from_hex(&s.scope).filter(|_| s.index == 1) else {
                continue;
            };
            let status = json!({"state": s.state, "timestamp": s.timestamp});
            if self.put(scope, &s.id, s.context.as_deref(), Some(&status)) {
                n += 1;
            }
        }
        n
    }

    /// Records a task (v1.0) `scope` saw.
    pub fn put_task(&self, scope: Scope, task: &Value) {
        if let Some(id) = task.get("id").and_then(Value::as_str) {
            let context = task.get("contextId").and_then(Value::as_str);
            self.put(scope, id, context, task.get("status"));
        }
    }

    /// Puts an entry; `false` when it is not indexed (off, or an id or
    /// context id over `max_id_bytes`).
    fn put(&self, scope: Scope, id: &str, context: Option<&str>, status: Option<&Value>) -> bool {
        let state = status.and_then(|s| s.get("state")).and_then(Value::as_str);
        self.put_entry(scope, id, context, state, timestamp(status))
    }

    /// [`Self::put`] with the status's `state` (when a string) and
    /// timestamp read.
    fn put_entry(
        &self,
        scope: Scope,
        id: &str,
        context: Option<&str>,
        state: Option<&str>,
        ts: Option<DateTime<FixedOffset>>,
    ) -> bool {
        let Ok(mut inner) = self.inner.lock() else {
            return false;
        };
        self.put_entry_in(&mut inner, scope, id, context, state, ts)
    }

    /// [`Self::put_entry`] in the locked index.
    fn put_entry_in(
        &self,
        inner: &mut Inner,
        scope: Scope,
        id: &str,
        context: Option<&str>,
        state: Option<&str>,
        ts: Option<DateTime<FixedOffset>>,
    ) -> bool {
        let max_id = self.limits.max_id_bytes;
        if !self.enabled || id.len() > max_id || context.is_some_and(|c| c.len() > max_id) {
            return false;
        }
        inner.generation += 1;
        inner.seq += 1;
        let seq = inner.seq;
        let entry = Entry {
            seq,
            context: context.map(Box::from),
            state: state.filter(|s| s.len() <= MAX_STATE_BYTES).map(Box::from),
            ts,
        };
        let key: Key = match inner.tasks.get_key_value(&(scope, Arc::from(id))) {
            Some((k, _)) => k.clone(),
            None => (scope, Arc::from(id)),
        };
        inner.bytes += cost(id, &entry);
        if let Some(p) = inner.tasks.insert(key.clone(), entry) {
            inner.order.remove(&p.seq);
            inner.bytes -= cost(id, &p);
        }
        inner.order.insert(seq, key.clone());
        if let Some(c) = inner.changed.as_mut() {
            c.insert(key);
        }
        self.evict(inner);
        true
    }

    /// Drops the oldest entries while over a bound.
    fn evict(&self, inner: &mut Inner) {
        while inner.tasks.len() > self.limits.max_tasks || inner.bytes > self.limits.max_bytes {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            if let Some(e) = inner.tasks.remove(&oldest) {
                inner.bytes -= cost(&oldest.1, &e);
            }
            if let Some(c) = inner.changed.as_mut() {
                c.remove(&oldest);
            }
        }
    }

    /// A status update of a task `scope` knows (unknown tasks are not invented).
    fn put_status(&self, scope: Scope, update: &Value) {
        let (Some(id), Some(status)) = (
            update.get("taskId").and_then(Value::as_str),
            update.get("status"),
        ) else {
            return;
        };
        let field = |k: &str| status.get(k).and_then(Value::as_str);
        self.put_status_of(scope, id, field("state"), field("timestamp"));
    }

    /// [`Self::put_status`] with the status's `state` and `timestamp` read
    /// (each when it is a string); the timestamp is parsed only for a task
    /// `scope` knows.
    fn put_status_of(&self, scope: Scope, id: &str, state: Option<&str>, ts: Option<&str>) {
        self.put_status_with(scope, id, state, || {
            ts.and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        });
    }

    /// [`Self::put_status_of`] with the timestamp given by `ts`, asked only
    /// for a task `scope` knows.
    fn put_status_with(
        &self,
        scope: Scope,
        id: &str,
        state: Option<&str>,
        ts: impl FnOnce() -> Option<DateTime<FixedOffset>>,
    ) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        self.put_status_in(&mut inner, scope, id, state, ts);
    }

    /// [`Self::put_status_with`] in the locked index.
    fn put_status_in(
        &self,
        inner: &mut Inner,
        scope: Scope,
        id: &str,
        state: Option<&str>,
        ts: impl FnOnce() -> Option<DateTime<FixedOffset>>,
    ) {
        if !self.enabled || id.len() > self.limits.max_id_bytes {
            return;
        }
        inner.seq += 1;
        let seq = inner.seq;
        let Inner {
            tasks,
            order,
            changed,
            bytes,
            generation,
            ..
        } = &mut *inner;
        // One look-up: a vacant entry inserts nothing.
        let std::collections::hash_map::Entry::Occupied(entry) =
            tasks.entry((scope, Arc::from(id)))
        else {
            return;
        };
        *generation += 1;
        let key = entry.key().clone();
        let e = entry.into_mut();
        let old = cost(id, e);
        if let Some(c) = changed.as_mut() {
            c.insert(key.clone());
        }
        order.remove(&e.seq);
        order.insert(seq, key);
        e.seq = seq;
        e.state = state.filter(|s| s.len() <= MAX_STATE_BYTES).map(Box::from);
        e.ts = ts();
        *bytes = *bytes - old + cost(id, e);
        self.evict(inner);
    }

    /// What a probed answer says, recorded for `scope`.
    fn put_seen(&self, scope: Scope, seen: Seen) {
        match seen {
            Seen::Nothing => {}
            Seen::Status(u) => {
                if let (Some(id), Some(status)) = (u.task_id, u.status) {
                    let (state, ts) = (status.state.as_deref(), status.timestamp.as_deref());
                    self.put_status_of(scope, &id, state, ts);
                }
            }
            Seen::Task(p) => {
                let Some(Value::String(id)) = p.id else {
                    return;
                };
                let context = match &p.context {
                    Some(Value::String(c)) => Some(c.as_str()),
                    _ => None,
                };
                self.put(scope, &id, context, p.status.as_ref());
            }
        }
    }

    /// Records what a translated v1.0 answer (a JSON-RPC response or one SSE
    /// event envelope) to a caller of `scope` says about tasks. `method` is
    /// the v1.0 method name.
    pub fn record(&self, scope: Scope, method: &str, envelope: &[u8]) {
        if !self.enabled || !indexed(method) {
            return;
        }
        let at = At::Envelope {
            task: wrapped(method),
        };
        if let Some(seen) = probe(envelope, at) {
            return self.put_seen(scope, seen);
        }
        let Ok(mut v) = serde_json::from_slice::<Value>(envelope) else {
            return;
        };
        if let Some(result) = v.get_mut("result") {
            self.record_value(scope, method, result.take());
        }
    }

    /// [`Self::record`] of what the transcoder learnt about a translated
    /// v1.0 answer while writing it: the same entries as reading the
    /// answer's bytes again (`record_from_facts_as_from_bytes` checks it).
    pub fn record_facts(&self, scope: Scope, method: &str, facts: &TaskFacts<'_>) {
        if !self.enabled || !indexed(method) || matches!(facts, TaskFacts::Nothing) {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        if inner
            .last
            .as_ref()
            .is_some_and(|l| l.is(inner.generation, scope, facts))
        {
            return;
        }
        match facts {
            TaskFacts::Nothing => {}
            TaskFacts::Task {
                id,
                context,
                status,
            } => {
                self.put_entry_in(
                    inner,
                    scope,
                    id,
                    context.as_deref(),
                    Some(status.state),
                    status.timestamp,
                );
            }
            TaskFacts::Status { task_id, status } => {
                self.put_status_in(inner, scope, task_id, Some(status.state), || {
                    status.timestamp
                });
            }
        }
        Last::set(&mut inner.last, inner.generation, scope, facts);
    }

    /// [`Self::record`] for a bare v1.0 result (a REST answer body).
    pub fn record_result(&self, scope: Scope, method: &str, body: &[u8]) {
        if !self.enabled || !indexed(method) {
            return;
        }
        let at = At::Bare {
            task: wrapped(method),
        };
        if let Some(seen) = probe(body, at) {
            return self.put_seen(scope, seen);
        }
        if let Ok(result) = serde_json::from_slice::<Value>(body) {
            self.record_value(scope, method, result);
        }
    }

    fn record_value(&self, scope: Scope, method: &str, result: Value) {
        if !wrapped(method) {
            return self.put_task(scope, &result);
        }
        if let Some(t) = result.get("task") {
            self.put_task(scope, t);
        } else if let Some(u) = result.get("statusUpdate") {
            self.put_status(scope, u);
        }
    }

    /// The page a v1.0 `ListTasks` of a caller of `scope` asks for: its
    /// params checked, its entries filtered (context, state and timestamp
    /// as last seen here), newest status first.
    pub fn page(&self, scope: Scope, params: Option<&Value>) -> Result<Page, Failure> {
        let q = Query::read(params)?;
        let inner = self
            .inner
            .lock()
            .map_err(|_| invalid("task index unavailable"))?;
        let mut hits: Vec<(&Arc<str>, &Entry)> = inner
            .tasks
            .iter()
            .filter(|((s, _), _)| *s == scope)
            .map(|((_, id), e)| (id, e))
            .filter(|(_, e)| q.context.is_none_or(|c| e.context.as_deref() == Some(c)))
            .filter(|(_, e)| q.status.is_none_or(|s| e.state.as_deref() == Some(s)))
            .filter(|(_, e)| q.after.is_none_or(|a| e.ts.is_some_and(|t| t > a)))
            .collect();
        // Newest status first; unstamped tasks by when they were last seen.
        hits.sort_by(|(_, a), (_, b)| b.ts.cmp(&a.ts).then(b.seq.cmp(&a.seq)));
        let total = hits.len();
        let ids: Vec<String> = hits
            .iter()
            .skip(q.offset)
            .take(q.page_size as usize)
            .map(|(id, _)| id.to_string())
            .collect();
        let end = q.offset.saturating_add(ids.len());
        let next = if end < total {
            format!("{TOKEN_PREFIX}{end}")
        } else {
            String::new()
        };
        Ok(Page {
            ids,
            page_size: q.page_size,
            total,
            next,
            history: q.history,
            artifacts: q.artifacts,
            context: q.context.map(str::to_string),
            status: q.status.map(str::to_string),
            after: q.after,
        })
    }
}

/// The `ListTasks` params of a v1.0 REST `GET /tasks?...` query (values
/// percent-decoded; `+` is a space; repeated keys: the last wins).
pub fn params_from_query(query: Option<&str>) -> Result<Value, Failure> {
    let mut p = Map::new();
    for pair in query.unwrap_or("").split('&').filter(|s| !s.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (k, v) = (decode(k)?, decode(v)?);
        let key = match k.as_str() {
            "context_id" => "contextId",
            "page_size" => "pageSize",
            "page_token" => "pageToken",
            "history_length" => "historyLength",
            "include_artifacts" => "includeArtifacts",
            "status_timestamp_after" => "statusTimestampAfter",
            other => other,
        }
        .to_string();
        let value = match (key.as_str(), v.as_str()) {
            ("includeArtifacts", "true") => Value::Bool(true),
            ("includeArtifacts", "false") => Value::Bool(false),
            _ => Value::String(v),
        };
        p.insert(key, value);
    }
    Ok(Value::Object(p))
}

fn decode(s: &str) -> Result<String, Failure> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = b
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| invalid("malformed percent-encoding in the query"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| invalid("the query is not UTF-8"))
}

/// A listed task: artifacts only when asked for, history cut to its last
/// `history` messages (0 = none).
fn shaped(mut t: Value, history: Option<i64>, artifacts: bool) -> Value {
    if let Some(o) = t.as_object_mut() {
        if !artifacts {
            o.remove("artifacts");
        }
        if let Some(n) = history {
            let n = usize::try_from(n).unwrap_or(0);
            if n == 0 {
                o.remove("history");
            } else if let Some(Value::Array(h)) = o.get_mut("history") {
                let cut = h.len().saturating_sub(n);
                h.drain(..cut);
            }
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, ctx: &str, state: &str, ts: &str) -> Value {
        json!({"id": id, "contextId": ctx, "status": {"state": state, "timestamp": ts},
               "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
               "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "1"}]},
                           {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "2"}]}]})
    }

    fn key() -> ScopeKey {
        ScopeKey::derived(&scope::derive_secret(b"test"))
    }

    fn new_index(limits: IndexLimits) -> TaskIndex {
        TaskIndex::new(true, limits, key(), &[])
    }

    fn scope_of(auth: &str) -> Scope {
        let mut h = HeaderMap::new();
        if !auth.is_empty() {
            h.insert(http::header::AUTHORIZATION, auth.parse().unwrap());
        }
        new_index(IndexLimits::default()).scope_of(&h)
    }

    fn a() -> Scope {
        scope_of("Bearer a")
    }

    fn index() -> TaskIndex {
        let ix = new_index(IndexLimits::default());
        for (id, c, st, ts) in [
            ("t1", "c1", "TASK_STATE_COMPLETED", "2025-01-01T00:00:01Z"),
            ("t2", "c2", "TASK_STATE_WORKING", "2025-01-01T00:00:03Z"),
            ("t3", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:02Z"),
        ] {
            ix.put_task(a(), &task(id, c, st, ts));
        }
        ix
    }

    /// The page's ids, and its answer when the agent gives each task as
    /// recorded (`tasks`), by id.
    fn listed(
        ix: &TaskIndex,
        scope: Scope,
        params: Value,
        tasks: &[Value],
    ) -> (Vec<String>, Value) {
        let page = ix.page(scope, Some(&params)).unwrap();
        let fetched = page
            .ids
            .iter()
            .map(|id| tasks.iter().find(|t| t["id"] == id.as_str()).cloned())
            .collect();
        (page.ids.clone(), page.answer(fetched))
    }

    fn all() -> Vec<Value> {
        vec![
            task("t1", "c1", "TASK_STATE_COMPLETED", "2025-01-01T00:00:01Z"),
            task("t2", "c2", "TASK_STATE_WORKING", "2025-01-01T00:00:03Z"),
            task("t3", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:02Z"),
        ]
    }

    #[test]
    fn a_caller_lists_only_its_own_entries() {
        let ix = index();
        let (ids, r) = listed(&ix, a(), json!({}), &all());
        assert_eq!(ids, ["t2", "t3", "t1"]);
        assert_eq!(r["totalSize"], 3);
        assert_eq!(r["pageSize"], 50);
        assert_eq!(r["nextPageToken"], "");
        assert!(r["tasks"][0].get("artifacts").is_none());
        assert_eq!(r["tasks"][0]["history"].as_array().unwrap().len(), 2);
        for other in [scope_of("Bearer b"), scope_of("")] {
            let (ids, r) = listed(&ix, other, json!({}), &all());
            assert!(ids.is_empty());
            assert_eq!(r["tasks"], json!([]));
            assert_eq!(r["totalSize"], 0);
        }
    }

    #[test]
    fn filters_pages_and_shapes() {
        let ix = index();
        let ids = |p: Value| listed(&ix, a(), p, &all()).0;
        assert_eq!(ids(json!({"contextId": "c1"})), ["t3", "t1"]);
        assert_eq!(ids(json!({"status": "TASK_STATE_WORKING"})), ["t2", "t3"]);
        assert_eq!(
            ids(json!({"statusTimestampAfter": "2025-01-01T00:00:01Z"})),
            ["t2", "t3"]
        );
        let (p1, r1) = listed(&ix, a(), json!({"pageSize": 2}), &all());
        assert_eq!(p1, ["t2", "t3"]);
        assert_eq!(r1["totalSize"], 3);
        let tok = r1["nextPageToken"].as_str().unwrap().to_string();
        assert!(!tok.is_empty());
        let (p2, r2) = listed(&ix, a(), json!({"pageSize": 2, "pageToken": tok}), &all());
        assert_eq!(p2, ["t1"]);
        assert_eq!(r2["nextPageToken"], "");
        let (_, r) = listed(
            &ix,
            a(),
            json!({"historyLength": 1, "includeArtifacts": true}),
            &all(),
        );
        assert_eq!(r["tasks"][0]["history"][0]["messageId"], "m2");
        assert!(r["tasks"][0]["artifacts"].is_array());
        let (_, r) = listed(&ix, a(), json!({"historyLength": 0}), &all());
        assert!(r["tasks"][0].get("history").is_none());
        let page = ix.page(a(), Some(&json!({"historyLength": 3}))).unwrap();
        assert_eq!(page.history_length(), Some(3));
        let page = ix.page(a(), Some(&json!({"historyLength": 0}))).unwrap();
        assert_eq!(page.history_length(), None);
    }

    /// What the agent answers is listed; what it refuses (no answer, another
    /// id) or what no longer matches the filter is left out.
    #[test]
    fn the_answer_is_what_the_agent_gave() {
        let ix = index();
        let page = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_WORKING"})))
            .unwrap();
        assert_eq!(page.ids, ["t2", "t3"]);
        let r = page.answer(vec![
            Some(task(
                "t2",
                "c2",
                "TASK_STATE_COMPLETED",
                "2025-01-01T00:00:09Z",
            )),
            Some(task(
                "t3",
                "c1",
                "TASK_STATE_WORKING",
                "2025-01-01T00:00:02Z",
            )),
        ]);
        assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(r["tasks"][0]["id"], "t3");
        let page = ix.page(a(), None).unwrap();
        let r = page.answer(vec![
            None,
            Some(task(
                "zz",
                "c1",
                "TASK_STATE_WORKING",
                "2025-01-01T00:00:02Z",
            )),
            Some(all()[0].clone()),
        ]);
        assert_eq!(r["tasks"].as_array().unwrap().len(), 1);
        assert_eq!(r["tasks"][0]["id"], "t1");
    }

    #[test]
    fn rest_query_becomes_params() {
        let p = params_from_query(Some(
            "contextId=c%201&pageSize=2&include_artifacts=true&status=TASK_STATE_WORKING",
        ))
        .unwrap();
        assert_eq!(
            p,
            json!({"contextId": "c 1", "pageSize": "2", "includeArtifacts": true, "status": "TASK_STATE_WORKING"})
        );
        let q = params_from_query(Some("pageSize=1&contextId=c1")).unwrap();
        assert_eq!(listed(&index(), a(), q, &all()).0, ["t3"]);
        assert!(params_from_query(Some("contextId=%zz")).is_err());
        assert_eq!(params_from_query(None).unwrap(), json!({}));
    }

    #[test]
    fn bad_params_are_invalid_params() {
        let ix = index();
        for p in [
            json!({"pageSize": 0}),
            json!({"pageSize": 101}),
            json!({"pageToken": "garbage"}),
            json!({"status": "working"}),
            json!({"historyLength": -1}),
            json!({"includeArtifacts": "yes"}),
            json!({"statusTimestampAfter": "yesterday"}),
            json!([1]),
        ] {
            let e = ix.page(a(), Some(&p)).unwrap_err();
            assert!(
                matches!(e, Failure::Translate { code: -32602, .. }),
                "{p}: {e:?}"
            );
        }
    }

    #[test]
    fn records_answers_and_status_updates_per_caller_and_stays_bounded() {
        let ix = new_index(IndexLimits {
            max_tasks: 2,
            ..IndexLimits::default()
        });
        let t = task("t1", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:01Z");
        let env = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": t}}).to_string();
        ix.record(a(), "SendMessage", env.as_bytes());
        let ev = json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-01T00:00:09Z"}}}})
        .to_string();
        // Another caller's update does not touch a's entry.
        ix.record(scope_of("Bearer b"), "SendStreamingMessage", ev.as_bytes());
        let p = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_COMPLETED"})))
            .unwrap();
        assert!(p.ids.is_empty());
        ix.record(a(), "SendStreamingMessage", ev.as_bytes());
        let p = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_COMPLETED"})))
            .unwrap();
        assert_eq!(p.ids, ["t1"]);
        ix.record(a(), "ListTaskPushNotificationConfigs", env.as_bytes());
        ix.record(a(), "GetTask", br#"{"jsonrpc":"2.0","id":2,"result":{"id":"t2","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#);
        ix.record_result(
            a(),
            "GetTask",
            br#"{"id":"t3","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}"#,
        );
        assert_eq!(ix.len(), 2);
        ix.record(a(), "GetTask", b"not json");
        assert_eq!(ix.len(), 2);
        // Nothing of a task but its summary is kept.
        assert!(ix.bytes() < 2 * (SCOPE_BYTES + 64), "{}", ix.bytes());
    }

    /// What the answer-probing `record` keeps equals what reading the whole
    /// answer as a value keeps (the reference).
    /// The v0.3 answers and events of the fixtures (and, embedded in an
    /// event, the status updates and tasks), with the method they answer,
    /// and a few edge cases of ids and timestamps.
    fn v03_answers() -> Vec<(translate::method::Method, Vec<u8>)> {
        use translate::method::Method;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut out = Vec::new();
        let files = |dir: &str| {
            let mut f: Vec<_> = std::fs::read_dir(root.join(dir))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            f.retain(|p: &std::path::PathBuf| p.to_string_lossy().ends_with(".v03.json"));
            f.sort();
            f
        };
        for dir in ["event", "response"] {
            for file in files(dir) {
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                let Some((m, _)) = Method::from_name(name.split('.').next().unwrap()) else {
                    continue;
                };
                out.push((m, std::fs::read(&file).unwrap()));
            }
        }
        for (dir, m) in [
            ("status-update", Method::SendStreamingMessage),
            ("task", Method::SendStreamingMessage),
            ("task", Method::SendMessage),
            ("task", Method::GetTask),
            ("artifact-update", Method::SubscribeToTask),
            ("message", Method::SendMessage),
        ] {
            for file in files(dir) {
                let x = String::from_utf8(std::fs::read(&file).unwrap()).unwrap();
                out.push((
                    m,
                    format!(r#"{{"jsonrpc":"2.0","id":3,"result":{x}}}"#).into_bytes(),
                ));
            }
        }
        for ts in [
            "2024-03-15T18:30:00.120+02:00",
            "2025-04-02T16:59:25.331844",
            "2016-12-31T23:59:60.5Z",
            "9999-12-31T23:59:59-01:00",
            "0000-01-01T00:00:00+01:00",
        ] {
            let ev = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"status-update","taskId":"t\"1","contextId":"c","status":{{"state":"working","timestamp":"{ts}"}},"final":false}}}}"#
            );
            out.push((Method::SendStreamingMessage, ev.into_bytes()));
            let task = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"task","id":"t\\2","contextId":"","status":{{"state":"failed","timestamp":"{ts}"}}}}}}"#
            );
            out.push((Method::SendMessage, task.into_bytes()));
        }
        out
    }

    /// What the transcoder learns while translating a v0.3 answer to v1.0
    /// records the same entries as reading the v1.0 answer's bytes again
    /// (the probe, or the whole value).
    /// Facts repeated (a stream's status updates) are recorded once while
    /// nothing else changes the index, and the index lists, orders, evicts
    /// and hands to the store exactly what recording every one gives.
    #[test]
    fn repeated_facts_skip_the_look_up_and_list_the_same() {
        use translate::transcode::StatusFacts;
        let limits = IndexLimits {
            max_tasks: 3,
            ..IndexLimits::default()
        };
        let (skipping, every) = (new_index(limits), new_index(limits));
        every.track_changes();
        skipping.track_changes();
        let ts = |s: &str| Some(DateTime::parse_from_rfc3339(s).unwrap());
        let status = |state, t: &str| StatusFacts {
            state,
            timestamp: ts(t),
        };
        let b = scope_of("Bearer b");
        let facts = |i: usize| -> (Scope, TaskFacts<'static>) {
            let id = ["t1", "t2", "t3", "t4", "u"][i % 5];
            let scope = if i % 7 == 3 { b } else { a() };
            let st = ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"][i / 9 % 2];
            let t = ["2025-01-01T00:00:01Z", "2025-01-01T00:00:02Z"][i / 4 % 2];
            let f = if i.is_multiple_of(3) {
                TaskFacts::Task {
                    id: id.into(),
                    context: i.is_multiple_of(2).then(|| "c1".into()),
                    status: status(st, t),
                }
            } else {
                TaskFacts::Status {
                    task_id: id.into(),
                    status: status(st, t),
                }
            };
            (scope, f)
        };
        // Each step repeated a few times, as a stream's events do.
        for step in 0..60 {
            for _ in 0..1 + step % 3 {
                let (scope, f) = facts(step * 5 / 3);
                skipping.record_facts(scope, "SendStreamingMessage", &f);
                // The reference: every event looked up and written again.
                match &f {
                    TaskFacts::Task {
                        id,
                        context,
                        status,
                    } => {
                        every.put_entry(
                            scope,
                            id,
                            context.as_deref(),
                            Some(status.state),
                            status.timestamp,
                        );
                    }
                    TaskFacts::Status { task_id, status } => {
                        every.put_status_with(scope, task_id, Some(status.state), || {
                            status.timestamp
                        });
                    }
                    TaskFacts::Nothing => {}
                }
            }
            for scope in [a(), b] {
                let (ids, _) = listed(&skipping, scope, json!({}), &[]);
                let (want, _) = listed(&every, scope, json!({}), &[]);
                assert_eq!(ids, want, "step {step}");
            }
            if step % 4 == 0 {
                assert_eq!(skipping.take_changed(), every.take_changed(), "{step}");
            }
            assert_eq!(skipping.bytes(), every.bytes(), "{step}");
        }
        // A repeat takes no look-up: the order counter does not move.
        let f = TaskFacts::Status {
            task_id: "nowhere".into(),
            status: status("TASK_STATE_WORKING", "2025-01-01T00:00:01Z"),
        };
        skipping.record_facts(a(), "SubscribeToTask", &f);
        let seq = skipping.inner.lock().unwrap().seq;
        skipping.record_facts(a(), "SubscribeToTask", &f);
        assert_eq!(skipping.inner.lock().unwrap().seq, seq);
        // Anything changed in between, and it is looked up again.
        skipping.put_task(
            a(),
            &task("nowhere", "c", "TASK_STATE_WORKING", "2025-01-01T00:00:00Z"),
        );
        skipping.record_facts(a(), "SubscribeToTask", &f);
        let inner = skipping.inner.lock().unwrap();
        let e = &inner.tasks[&(a(), Arc::from("nowhere"))];
        assert_eq!(e.ts, ts("2025-01-01T00:00:01Z"));
    }

    #[test]
    fn record_from_facts_as_from_bytes() {
        use translate::transcode::{response_to_v10_with_facts, TaskFacts};
        let from_bytes = new_index(IndexLimits::default());
        let from_facts = new_index(IndexLimits::default());
        from_bytes.track_changes();
        from_facts.track_changes();
        let (mut checked, mut statuses, mut tasks) = (0, 0, 0);
        for (m, input) in v03_answers() {
            let name = m.name(crate::version::Version::V10).unwrap();
            let Ok(text) = std::str::from_utf8(&input) else {
                continue;
            };
            let Some((out, facts)) = response_to_v10_with_facts(m, text) else {
                continue;
            };
            // A status update lands only on a task the index knows.
            if let TaskFacts::Status { task_id, .. } = &facts {
                statuses += 1;
                for ix in [&from_bytes, &from_facts] {
                    ix.put(a(), task_id, Some("seeded"), None);
                }
            }
            if let TaskFacts::Task { .. } = &facts {
                tasks += 1;
            }
            from_bytes.record(a(), name, &out);
            from_facts.record_facts(a(), name, &facts);
            assert_eq!(
                from_facts.take_changed(),
                from_bytes.take_changed(),
                "{}",
                String::from_utf8_lossy(&out)
            );
            checked += 1;
        }
        assert!(
            checked > 40 && statuses > 10 && tasks > 10,
            "{checked} {statuses} {tasks}"
        );
        assert_eq!(from_facts.len(), from_bytes.len());
    }

    #[test]
    fn probed_answers_list_as_whole_values() {
        let t = |id: &str, ctx: &str| {
            task(id, ctx, "TASK_STATE_WORKING", "2025-01-01T00:00:01Z").to_string()
        };
        let cases: Vec<(&str, String)> = vec![
            ("GetTask", format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, t("a", "c1"))),
            ("CancelTask", format!(r#"{{"id":1,"result":{},"jsonrpc":"2.0"}}"#, t("b", "c2"))),
            ("SendMessage", format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{}}}}}"#, t("c", "c1"))),
            ("SubscribeToTask", format!(r#"{{"result":{{"x":[1,{{"task":2}}],"task":{}}}}}"#, t("d", "c3"))),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"a","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-01T00:00:05Z"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"c","status":[1]}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"zz","status":{}}}}"#.into()),
            ("SendMessage", r#"{"result":{"task":null,"statusUpdate":{"taskId":"a","status":{}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"contextId":"c1","status":{"message":{"parts":[{"text":"x"}]},"state":"TASK_STATE_FAILED","timestamp":"2025-01-01T00:00:06Z"},"taskId":"b"}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"c","status":{"state":"TASK_STATE_WORKING","state":"TASK_STATE_CANCELED"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"\u0064","status":{"state":"TASK_\u0053TATE_REJECTED","timestamp":"2025-01-01T00:00:07\u005a"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"d","status":null}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":7,"status":{"state":"TASK_STATE_FAILED"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"a","status":{"state":9,"timestamp":{"t":1}}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":"a"}}"#.into()),
            ("SendMessage", r#"{"result":{"message":{"messageId":"m"}}}"#.into()),
            ("GetTask", r#"{"result":{"id":5,"status":{}}}"#.into()),
            ("GetTask", r#"{"result":[{"id":"arr"}]}"#.into()),
            ("GetTask", r#"[{"result":{"id":"arr2"}}]"#.into()),
            ("GetTask", r#"{"result":{"id":"dup","id":"dup2","contextId":7}}"#.into()),
            ("GetTask", r#"{"result":{"id":"e","status":null,"contextId":"c1"},"result":{"id":"e2"}}"#.into()),
            ("GetTask", r#"{"result":{"id":"f","status":{"state":"TASK_STATE_WORKING"}}} trailing"#.into()),
            ("GetTask", r#"{"result":{"id":"g","history":[{"messageId":"m1"},{"messageId":"m2"}],"artifacts":[]}}"#.into()),
        ];
        let probed = new_index(IndexLimits::default());
        let whole = new_index(IndexLimits::default());
        for (method, env) in &cases {
            probed.record(a(), method, env.as_bytes());
            if let Ok(mut v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get_mut("result") {
                    whole.record_value(a(), method, r.take());
                }
            }
            // REST bodies: the bare result.
            if let Ok(v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get("result") {
                    let body = r.to_string();
                    probed.record_result(a(), method, body.as_bytes());
                    whole.record_value(a(), method, r.clone());
                }
            }
        }
        for params in [
            json!({}),
            json!({"contextId": "c1"}),
            json!({"status": "TASK_STATE_COMPLETED"}),
            json!({"status": "TASK_STATE_WORKING"}),
            json!({"statusTimestampAfter": "2025-01-01T00:00:02Z"}),
            json!({"pageSize": 2}),
        ] {
            let p = probed.page(a(), Some(&params)).unwrap();
            let w = whole.page(a(), Some(&params)).unwrap();
            assert_eq!(p.ids, w.ids, "{params}");
            assert_eq!(p.total, w.total, "{params}");
        }
        assert_eq!(probed.len(), whole.len());
        assert!(probed.len() >= 5, "{}", probed.len());
    }

    #[test]
    fn evicts_the_least_recently_seen_entry_by_count_and_bytes() {
        let ix = new_index(IndexLimits {
            max_tasks: 2,
            ..IndexLimits::default()
        });
        let ts = "2025-01-01T00:00:01Z";
        ix.put_task(a(), &task("t1", "c", "TASK_STATE_WORKING", ts));
        ix.put_task(a(), &task("t2", "c", "TASK_STATE_WORKING", ts));
        // A status update makes t1 the most recently seen; t3 then evicts t2.
        ix.put_status(
            a(),
            &json!({"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}),
        );
        ix.put_task(a(), &task("t3", "c", "TASK_STATE_WORKING", ts));
        let mut seen = ix.page(a(), None).unwrap().ids;
        seen.sort();
        assert_eq!(seen, ["t1", "t3"]);
        // Re-putting a known task replaces it without evicting another.
        ix.put_task(a(), &task("t3", "c", "TASK_STATE_COMPLETED", ts));
        assert_eq!(ix.len(), 2);
        for n in 0..50 {
            ix.put_task(a(), &task(&format!("x{n}"), "c", "TASK_STATE_WORKING", ts));
        }
        let mut seen = ix.page(a(), None).unwrap().ids;
        seen.sort();
        assert_eq!(seen, ["x48", "x49"]);

        // Bytes: ids, context ids, states and scopes.
        let ix = new_index(IndexLimits {
            max_bytes: 1000,
            ..IndexLimits::default()
        });
        let long = "i".repeat(300);
        for n in 0..10 {
            ix.put_task(
                a(),
                &task(&format!("{long}{n}"), "c", "TASK_STATE_WORKING", ts),
            );
            assert!(ix.bytes() <= 1000, "{}", ix.bytes());
        }
        assert_eq!(ix.len(), 2);
        assert_eq!(
            ix.page(a(), None).unwrap().ids,
            [format!("{long}9"), format!("{long}8")]
        );
        // An id or context id over max_id_bytes is not indexed.
        let ix = new_index(IndexLimits {
            max_id_bytes: 8,
            ..IndexLimits::default()
        });
        ix.put_task(a(), &task("123456789", "c", "TASK_STATE_WORKING", ts));
        ix.put_task(a(), &task("t", "123456789", "TASK_STATE_WORKING", ts));
        assert!(ix.is_empty());
    }

    #[test]
    fn off_records_nothing() {
        let ix = TaskIndex::new(false, IndexLimits::default(), key(), &[]);
        ix.put_task(a(), &all()[0]);
        assert!(ix.is_empty() && !ix.enabled());
    }

    /// Summaries go to the store and come back to the same scopes; whole
    /// tasks (stored before scopes existed) are never loaded.
    #[test]
    fn summaries_round_trip_and_whole_tasks_are_dropped() {
        let ix = index();
        ix.track_changes();
        ix.put_task(
            scope_of("Bearer b"),
            &task("tb", "c9", "TASK_STATE_WORKING", "2025-01-01T00:00:05Z"),
        );
        ix.put_task(a(), &all()[0]);
        let changed = ix.take_changed();
        assert_eq!(changed.len(), 2);
        assert!(
            changed
                .iter()
                .all(|(k, _)| k.ends_with("/tb") || k.ends_with("/t1"))
                && !changed[0].1.contains("history")
        );
        assert!(ix.take_changed().is_empty());
        let all_rows: Vec<String> = {
            let ix2 = index();
            ix2.track_changes();
            for t in all() {
                ix2.put_task(a(), &t);
            }
            ix2.take_changed().into_iter().map(|(_, s)| s).collect()
        };
        assert!(all_rows.iter().all(|s| s.len() < 200), "{all_rows:?}");
        let back = new_index(IndexLimits::default());
        let mut rows: Vec<String> = all().iter().map(|t| t.to_string()).collect();
        rows.push("not json".into());
        rows.extend(all_rows);
        assert_eq!(back.load(rows), 3);
        let (ids, _) = listed(&back, a(), json!({"status": "TASK_STATE_WORKING"}), &all());
        assert_eq!(ids, ["t2", "t3"]);
        assert!(back.page(scope_of(""), None).unwrap().ids.is_empty());
    }
}
