//! ListTasks emulation for v1.0 clients of a v0.3 agent. v0.3 has no list
//! method, so the proxy answers `ListTasks` from an index of the tasks it
//! has seen pass through it (translated answers to v1.0 clients: SendMessage,
//! GetTask, CancelTask results and stream events). Bounded; in memory, and
//! kept in the push store when there is one (`push::task_sync`), so it
//! lists the tasks seen through this proxy, also before a restart.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Mutex;

use chrono::{DateTime, FixedOffset};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::error::Failure;

/// Default and bounds of `pageSize` (v1.0 spec: default 50, at most 100).
const DEFAULT_PAGE_SIZE: i64 = 50;
const MAX_PAGE_SIZE: i64 = 100;
/// Page tokens are `o:<offset>` into the filtered, sorted list.
const TOKEN_PREFIX: &str = "o:";

/// Where a stored answer holds its task.
#[derive(Clone, Copy)]
enum At {
    /// The bytes are a JSON-RPC envelope: `result` (`task`: `result.task`).
    Envelope { task: bool },
    /// The bytes are a bare result (REST): itself (`task`: its `task`).
    Bare { task: bool },
}

/// A task in v1.0 shape, as last seen.
#[derive(Clone)]
enum Doc {
    Value(Value),
    /// The translated answer it came in, read again only when listed (most
    /// tasks recorded are never listed).
    Answer {
        bytes: Box<[u8]>,
        at: At,
    },
}

#[derive(Clone)]
struct Entry {
    /// Insertion / update order, the tie-breaker after the status timestamp.
    seq: u64,
    doc: Doc,
    /// The task's `contextId`, when it is a string.
    context: Option<String>,
    /// The task's `status` member as last seen (`None`: absent).
    status: Option<Value>,
    /// A status update replaced `status` after `doc` was stored.
    status_updated: bool,
}

impl Entry {
    /// The task as a value, `status` as last seen.
    fn task(&self) -> Option<Value> {
        let mut t = match &self.doc {
            Doc::Value(v) => v.clone(),
            Doc::Answer { bytes, at } => {
                let mut v: Value = serde_json::from_slice(bytes).ok()?;
                let (outer, task) = match at {
                    At::Envelope { task } => (v.get_mut("result")?.take(), *task),
                    At::Bare { task } => (v, *task),
                };
                if task {
                    let mut outer = outer;
                    outer.get_mut("task")?.take()
                } else {
                    outer
                }
            }
        };
        if self.status_updated {
            if let (Some(o), Some(s)) = (t.as_object_mut(), &self.status) {
                o.insert("status".into(), s.clone());
            }
        }
        Some(t)
    }
}

/// The index of tasks seen; oldest entries are dropped past `capacity`.
pub struct TaskIndex {
    capacity: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    seq: u64,
    tasks: HashMap<String, Entry>,
    /// `Entry::seq` -> task id, so the oldest entry is found in O(log n).
    order: BTreeMap<u64, String>,
    /// Ids changed since the last [`TaskIndex::take_changed`]; `None` until
    /// [`TaskIndex::track_changes`] (nothing persists the index).
    changed: Option<std::collections::HashSet<String>>,
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

/// The members of a task the index needs, read without building the task.
/// Only a JSON object is a task; a repeated member fails (the caller then
/// reads the whole value, where the last one wins).
#[derive(Default)]
struct TaskProbe {
    id: Option<Value>,
    context: Option<Value>,
    status: Option<Value>,
}

/// What a task-carrying member held: an object (`Some`), or anything else,
/// which is no task.
struct Probed(Option<TaskProbe>);

fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::custom("repeated member"));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Deserialize<'de> for Probed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Probed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probed, A::Error> {
                let mut p = TaskProbe::default();
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match k.as_ref() {
                        "id" => once(&mut p.id, &mut map)?,
                        "contextId" => once(&mut p.context, &mut map)?,
                        "status" => once(&mut p.status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Probed(Some(p)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Probed, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Probed(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_unit<E>(self) -> Result<Probed, E> {
                Ok(Probed(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// What one answer says about tasks.
enum Seen {
    Nothing,
    Task(TaskProbe),
    /// A `statusUpdate` member (any value).
    Status(Value),
}

/// A result wrapping its task (`{"task": …}` or `{"statusUpdate": …}`):
/// a `task` member wins over `statusUpdate`, as in
/// [`TaskIndex::record_value`].
struct WrappedProbe(Seen);

impl<'de> Deserialize<'de> for WrappedProbe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WrappedProbe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WrappedProbe, A::Error> {
                let (mut task, mut status) = (None::<Probed>, None::<Value>);
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match k.as_ref() {
                        "task" => once(&mut task, &mut map)?,
                        "statusUpdate" => once(&mut status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(WrappedProbe(match (task, status) {
                    (Some(Probed(Some(t))), _) => Seen::Task(t),
                    (Some(Probed(None)), _) => Seen::Nothing,
                    (None, Some(s)) => Seen::Status(s),
                    (None, None) => Seen::Nothing,
                }))
            }
        }
        d.deserialize_map(V)
    }
}

/// An answer's result, probed as wrapping its task or as the task itself.
struct ResultSeed {
    wrapped: bool,
}

impl<'de> DeserializeSeed<'de> for ResultSeed {
    type Value = Seen;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        if self.wrapped {
            return WrappedProbe::deserialize(d).map(|w| w.0);
        }
        Ok(match Probed::deserialize(d)?.0 {
            Some(t) => Seen::Task(t),
            None => Seen::Nothing,
        })
    }
}

/// A JSON-RPC answer envelope, its `result` probed.
struct EnvelopeSeed {
    wrapped: bool,
}

impl<'de> DeserializeSeed<'de> for EnvelopeSeed {
    type Value = Seen;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        struct V(bool);
        impl<'de> Visitor<'de> for V {
            type Value = Seen;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC envelope")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen, A::Error> {
                let mut result = None;
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if k == "result" {
                        if result.is_some() {
                            return Err(de::Error::custom("repeated member"));
                        }
                        result = Some(map.next_value_seed(ResultSeed { wrapped: self.0 })?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(result.unwrap_or(Seen::Nothing))
            }
        }
        d.deserialize_map(V(self.wrapped))
    }
}

/// What the answer `bytes` says about tasks; `None` when the probe does not
/// take it (then the whole value is read).
fn probe(bytes: &[u8], at: At) -> Option<Seen> {
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let seen = match at {
        At::Envelope { task } => EnvelopeSeed { wrapped: task }.deserialize(&mut d),
        At::Bare { task } => ResultSeed { wrapped: task }.deserialize(&mut d),
    }
    .ok()?;
    d.end().ok()?;
    Some(seen)
}

impl TaskIndex {
    pub fn new(capacity: usize) -> TaskIndex {
        TaskIndex {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn len(&self) -> usize {
        self.inner.lock().map(|i| i.tasks.len()).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records a whole v1.0 task.
    /// How many tasks are kept.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// From now on, changed ids are remembered for [`Self::take_changed`].
    pub fn track_changes(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.changed.get_or_insert_with(Default::default);
        }
    }

    /// The tasks changed since the last call (v1.0 values), for a store.
    /// Entries are copied under the lock and read outside it.
    pub fn take_changed(&self) -> Vec<(String, Value)> {
        let picked: Vec<(String, Entry)> = {
            let Ok(mut inner) = self.inner.lock() else {
                return Vec::new();
            };
            let ids = match inner.changed.as_mut() {
                Some(c) if !c.is_empty() => std::mem::take(c),
                _ => return Vec::new(),
            };
            ids.into_iter()
                .filter_map(|id| inner.tasks.get(&id).cloned().map(|e| (id, e)))
                .collect()
        };
        let mut out: Vec<(u64, String, Value)> = picked
            .into_iter()
            .filter_map(|(id, e)| e.task().map(|t| (e.seq, id, t)))
            .collect();
        out.sort_by_key(|(seq, _, _)| *seq);
        out.into_iter().map(|(_, id, t)| (id, t)).collect()
    }

    /// Ids of the tasks not in a terminal state when last seen, in
    /// `context` when given, the most recently seen first, at most `limit`.
    pub fn unfinished(&self, context: Option<&str>, limit: usize) -> Vec<String> {
        let Ok(inner) = self.inner.lock() else {
            return Vec::new();
        };
        let terminal = |e: &Entry| {
            let state = e.status.as_ref().and_then(|s| s.get("state"));
            state.and_then(Value::as_str).is_some_and(is_terminal)
        };
        inner
            .order
            .values()
            .rev()
            .filter_map(|id| inner.tasks.get(id).map(|e| (id, e)))
            .filter(|(_, e)| context.is_none_or(|c| e.context.as_deref() == Some(c)))
            .filter(|(_, e)| !terminal(e))
            .take(limit)
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Tasks from a store, oldest first (the newest end up most recent).
    pub fn load(&self, tasks: Vec<Value>) {
        for t in tasks {
            self.put_owned_task(t);
        }
    }

    pub fn put_task(&self, task: &Value) {
        self.put_owned_task(task.clone());
    }

    /// [`Self::put_task`] for a task the caller no longer needs (no copy).
    fn put_owned_task(&self, task: Value) {
        let Some(id) = task.get("id").and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        let context = task
            .get("contextId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let status = task.get("status").cloned();
        self.put(id, Doc::Value(task), context, status);
    }

    fn put(&self, id: String, doc: Doc, context: Option<String>, status: Option<Value>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.seq += 1;
        let seq = inner.seq;
        inner.order.insert(seq, id.clone());
        let entry = Entry {
            seq,
            doc,
            context,
            status,
            status_updated: false,
        };
        if let Some(c) = inner.changed.as_mut() {
            c.insert(id.clone());
        }
        let previous = inner.tasks.insert(id, entry);
        if let Some(p) = previous {
            inner.order.remove(&p.seq);
        }
        while inner.tasks.len() > self.capacity {
            let Some((_, oldest)) = inner.order.pop_first() else {
                break;
            };
            inner.tasks.remove(&oldest);
        }
    }

    /// A status update of a known task (unknown tasks are not invented).
    fn put_status(&self, update: &Value) {
        let (Some(id), Some(status)) = (
            update.get("taskId").and_then(Value::as_str),
            update.get("status"),
        ) else {
            return;
        };
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.seq += 1;
        let seq = inner.seq;
        let Inner {
            tasks,
            order,
            changed,
            ..
        } = &mut *inner;
        if let Some(e) = tasks.get_mut(id) {
            if let Some(c) = changed.as_mut() {
                c.insert(id.to_string());
            }
            if let Some(key) = order.remove(&e.seq) {
                order.insert(seq, key);
            }
            e.seq = seq;
            e.status = Some(status.clone());
            e.status_updated = true;
        }
    }

    /// What a probed answer says, recorded (the answer kept as bytes).
    fn put_seen(&self, seen: Seen, bytes: &[u8], at: At) {
        match seen {
            Seen::Nothing => {}
            Seen::Status(u) => self.put_status(&u),
            Seen::Task(p) => {
                let Some(Value::String(id)) = p.id else {
                    return;
                };
                let context = match p.context {
                    Some(Value::String(c)) => Some(c),
                    _ => None,
                };
                let doc = Doc::Answer {
                    bytes: bytes.into(),
                    at,
                };
                self.put(id, doc, context, p.status);
            }
        }
    }

    /// Records what a translated v1.0 answer (a JSON-RPC response or one SSE
    /// event envelope) says about tasks. `method` is the v1.0 method name.
    pub fn record(&self, method: &str, envelope: &[u8]) {
        if !indexed(method) {
            return;
        }
        let at = At::Envelope {
            task: wrapped(method),
        };
        if let Some(seen) = probe(envelope, at) {
            return self.put_seen(seen, envelope, at);
        }
        let Ok(mut v) = serde_json::from_slice::<Value>(envelope) else {
            return;
        };
        if let Some(result) = v.get_mut("result") {
            self.record_value(method, result.take());
        }
    }

    /// [`Self::record`] for a bare v1.0 result (a REST answer body).
    pub fn record_result(&self, method: &str, body: &[u8]) {
        if !indexed(method) {
            return;
        }
        let at = At::Bare {
            task: wrapped(method),
        };
        if let Some(seen) = probe(body, at) {
            return self.put_seen(seen, body, at);
        }
        if let Ok(result) = serde_json::from_slice::<Value>(body) {
            self.record_value(method, result);
        }
    }

    fn record_value(&self, method: &str, mut result: Value) {
        if !wrapped(method) {
            return self.put_owned_task(result);
        }
        if let Some(t) = result.get_mut("task") {
            self.put_owned_task(t.take());
        } else if let Some(u) = result.get("statusUpdate") {
            self.put_status(u);
        }
    }

    /// Answers a v1.0 `ListTasks` request envelope with its `result`.
    pub fn list(&self, params: Option<&Value>) -> Result<Value, Failure> {
        let empty = Map::new();
        let p = match params {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(o)) => o,
            Some(_) => return Err(invalid("ListTasks params must be an object")),
        };
        let str_param = |k: &str| -> Result<Option<&str>, Failure> {
            match p.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(_) => Err(invalid(format!("`{k}` must be a string"))),
            }
        };
        let int_param = |k: &str| -> Result<Option<i64>, Failure> {
            match p.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => n
                    .as_i64()
                    .map(Some)
                    .ok_or_else(|| invalid(format!("`{k}` must be an integer"))),
                // ProtoJSON also accepts integers as strings.
                Some(Value::String(s)) => s
                    .parse()
                    .map(Some)
                    .map_err(|_| invalid(format!("`{k}` must be an integer"))),
                Some(_) => Err(invalid(format!("`{k}` must be an integer"))),
            }
        };
        let context = str_param("contextId")?.filter(|s| !s.is_empty());
        let status =
            str_param("status")?.filter(|s| !s.is_empty() && *s != "TASK_STATE_UNSPECIFIED");
        if let Some(s) = status {
            if !s.starts_with("TASK_STATE_") {
                return Err(invalid(format!("`status` {s:?} is not a TaskState")));
            }
        }
        let page_size = int_param("pageSize")?.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(invalid(format!(
                "`pageSize` must be between 1 and {MAX_PAGE_SIZE}, got {page_size}"
            )));
        }
        let offset = match str_param("pageToken")?.filter(|s| !s.is_empty()) {
            None => 0usize,
            Some(t) => t
                .strip_prefix(TOKEN_PREFIX)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| invalid("`pageToken` is not a token this proxy issued"))?,
        };
        let history = int_param("historyLength")?;
        if history.is_some_and(|h| h < 0) {
            return Err(invalid("`historyLength` must not be negative"));
        }
        let artifacts = match p.get("includeArtifacts") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(invalid("`includeArtifacts` must be a boolean")),
        };
        let after = match str_param("statusTimestampAfter")? {
            None => None,
            Some(s) => Some(
                DateTime::parse_from_rfc3339(s)
                    .map_err(|_| invalid("`statusTimestampAfter` is not an RFC 3339 timestamp"))?,
            ),
        };

        let inner = self
            .inner
            .lock()
            .map_err(|_| invalid("task index unavailable"))?;
        let mut hits: Vec<(&Entry, Option<DateTime<FixedOffset>>)> = inner
            .tasks
            .values()
            .filter(|e| context.is_none_or(|c| e.context.as_deref() == Some(c)))
            .filter(|e| {
                status.is_none_or(|s| {
                    let state = e.status.as_ref().and_then(|st| st.get("state"));
                    state.and_then(Value::as_str) == Some(s)
                })
            })
            .map(|e| (e, timestamp(e.status.as_ref())))
            .filter(|(_, ts)| after.is_none_or(|a| ts.is_some_and(|t| t > a)))
            .collect();
        // Newest status first; unstamped tasks by when they were last seen.
        hits.sort_by(|(a, ta), (b, tb)| tb.cmp(ta).then(b.seq.cmp(&a.seq)));
        let total = hits.len();
        let page: Vec<Value> = hits
            .iter()
            .skip(offset)
            .take(page_size as usize)
            .filter_map(|(e, _)| e.task().map(|t| shaped(t, history, artifacts)))
            .collect();
        let end = offset.saturating_add(page.len());
        let next = if end < total {
            format!("{TOKEN_PREFIX}{end}")
        } else {
            String::new()
        };
        Ok(json!({
            "tasks": page,
            "nextPageToken": next,
            "pageSize": page_size,
            "totalSize": total,
        }))
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

    fn index() -> TaskIndex {
        let ix = TaskIndex::new(100);
        ix.put_task(&task(
            "t1",
            "c1",
            "TASK_STATE_COMPLETED",
            "2025-01-01T00:00:01Z",
        ));
        ix.put_task(&task(
            "t2",
            "c2",
            "TASK_STATE_WORKING",
            "2025-01-01T00:00:03Z",
        ));
        ix.put_task(&task(
            "t3",
            "c1",
            "TASK_STATE_WORKING",
            "2025-01-01T00:00:02Z",
        ));
        ix
    }

    fn ids(r: &Value) -> Vec<&str> {
        r["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn newest_first_with_defaults() {
        let r = index().list(None).unwrap();
        assert_eq!(ids(&r), ["t2", "t3", "t1"]);
        assert_eq!(r["totalSize"], 3);
        assert_eq!(r["pageSize"], 50);
        assert_eq!(r["nextPageToken"], "");
        assert!(r["tasks"][0].get("artifacts").is_none());
        assert_eq!(r["tasks"][0]["history"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn filters_and_pages() {
        let ix = index();
        let r = ix.list(Some(&json!({"contextId": "c1"}))).unwrap();
        assert_eq!(ids(&r), ["t3", "t1"]);
        let r = ix
            .list(Some(&json!({"status": "TASK_STATE_WORKING"})))
            .unwrap();
        assert_eq!(ids(&r), ["t2", "t3"]);
        let r = ix
            .list(Some(
                &json!({"statusTimestampAfter": "2025-01-01T00:00:01Z"}),
            ))
            .unwrap();
        assert_eq!(ids(&r), ["t2", "t3"]);
        let p1 = ix.list(Some(&json!({"pageSize": 2}))).unwrap();
        assert_eq!(ids(&p1), ["t2", "t3"]);
        assert_eq!(p1["totalSize"], 3);
        let tok = p1["nextPageToken"].as_str().unwrap().to_string();
        assert!(!tok.is_empty());
        let p2 = ix
            .list(Some(&json!({"pageSize": 2, "pageToken": tok})))
            .unwrap();
        assert_eq!(ids(&p2), ["t1"]);
        assert_eq!(p2["nextPageToken"], "");
        let r = ix
            .list(Some(&json!({"historyLength": 1, "includeArtifacts": true})))
            .unwrap();
        assert_eq!(r["tasks"][0]["history"][0]["messageId"], "m2");
        assert!(r["tasks"][0]["artifacts"].is_array());
        let r = ix.list(Some(&json!({"historyLength": 0}))).unwrap();
        assert!(r["tasks"][0].get("history").is_none());
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
        let r = index()
            .list(Some(
                &params_from_query(Some("pageSize=1&contextId=c1")).unwrap(),
            ))
            .unwrap();
        assert_eq!(ids(&r), ["t3"]);
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
            let e = ix.list(Some(&p)).unwrap_err();
            assert!(
                matches!(e, Failure::Translate { code: -32602, .. }),
                "{p}: {e:?}"
            );
        }
    }

    #[test]
    fn records_answers_and_status_updates_and_stays_bounded() {
        let ix = TaskIndex::new(2);
        let t = task("t1", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:01Z");
        let env = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": t}}).to_string();
        ix.record("SendMessage", env.as_bytes());
        let ev = json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-01T00:00:09Z"}}}})
        .to_string();
        ix.record("SendStreamingMessage", ev.as_bytes());
        let r = ix.list(None).unwrap();
        assert_eq!(r["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED");
        ix.record("ListTaskPushNotificationConfigs", env.as_bytes());
        ix.record("GetTask", br#"{"jsonrpc":"2.0","id":2,"result":{"id":"t2","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#);
        ix.record("GetTask", br#"{"jsonrpc":"2.0","id":3,"result":{"id":"t3","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#);
        assert_eq!(ix.len(), 2);
        ix.record("GetTask", b"not json");
        assert_eq!(ix.len(), 2);
    }

    /// What the answer-probing `record` keeps equals what reading the whole
    /// answer as a value keeps (the reference), listed.
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
            ("SendMessage", r#"{"result":{"message":{"messageId":"m"}}}"#.into()),
            ("GetTask", r#"{"result":{"id":5,"status":{}}}"#.into()),
            ("GetTask", r#"{"result":[{"id":"arr"}]}"#.into()),
            ("GetTask", r#"[{"result":{"id":"arr2"}}]"#.into()),
            ("GetTask", r#"{"result":{"id":"dup","id":"dup2","contextId":7}}"#.into()),
            ("GetTask", r#"{"result":{"id":"e","status":null,"contextId":"c1"},"result":{"id":"e2"}}"#.into()),
            ("GetTask", r#"{"result":{"id":"f","status":{"state":"TASK_STATE_WORKING"}}} trailing"#.into()),
            ("GetTask", r#"{"result":{"id":"g","history":[{"messageId":"m1"},{"messageId":"m2"}],"artifacts":[]}}"#.into()),
        ];
        let probed = TaskIndex::new(100);
        let whole = TaskIndex::new(100);
        for (method, env) in &cases {
            probed.record(method, env.as_bytes());
            if let Ok(mut v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get_mut("result") {
                    whole.record_value(method, r.take());
                }
            }
            // REST bodies: the bare result.
            if let Ok(v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get("result") {
                    let body = r.to_string();
                    probed.record_result(method, body.as_bytes());
                    whole.record_value(method, r.clone());
                }
            }
        }
        for params in [
            json!({}),
            json!({"contextId": "c1"}),
            json!({"status": "TASK_STATE_COMPLETED"}),
            json!({"status": "TASK_STATE_WORKING", "includeArtifacts": true}),
            json!({"historyLength": 1}),
            json!({"statusTimestampAfter": "2025-01-01T00:00:02Z"}),
            json!({"pageSize": 2}),
        ] {
            let a = probed.list(Some(&params)).unwrap();
            let b = whole.list(Some(&params)).unwrap();
            assert_eq!(a, b, "{params}");
        }
        assert_eq!(probed.len(), whole.len());
        assert!(probed.len() >= 5, "{}", probed.len());
    }

    #[test]
    fn evicts_the_least_recently_seen_task() {
        let ix = TaskIndex::new(2);
        let ts = "2025-01-01T00:00:01Z";
        ix.put_task(&task("t1", "c", "TASK_STATE_WORKING", ts));
        ix.put_task(&task("t2", "c", "TASK_STATE_WORKING", ts));
        // A status update makes t1 the most recently seen; t3 then evicts t2.
        ix.put_status(&json!({"taskId": "t1", "status": {"state": "TASK_STATE_COMPLETED"}}));
        ix.put_task(&task("t3", "c", "TASK_STATE_WORKING", ts));
        let mut seen = ids(&ix.list(None).unwrap())
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        seen.sort();
        assert_eq!(seen, ["t1", "t3"]);
        // Re-putting a known task replaces it without evicting another.
        ix.put_task(&task("t3", "c", "TASK_STATE_COMPLETED", ts));
        assert_eq!(ix.len(), 2);
        for n in 0..50 {
            ix.put_task(&task(&format!("x{n}"), "c", "TASK_STATE_WORKING", ts));
        }
        assert_eq!(ix.len(), 2);
        let mut seen = ids(&ix.list(None).unwrap())
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>();
        seen.sort();
        assert_eq!(seen, ["x48", "x49"]);
    }
}
