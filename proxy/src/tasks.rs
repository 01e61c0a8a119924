//! ListTasks emulation for v1.0 clients of a v0.3 agent. v0.3 has no list
//! method, so the proxy answers `ListTasks` from an index of the tasks it
//! has seen pass through it (translated answers to v1.0 clients: SendMessage,
//! GetTask, CancelTask results and stream events). In memory, bounded; it
//! lists tasks seen through this proxy instance only, since it started.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use chrono::{DateTime, FixedOffset};
use serde_json::{json, Map, Value};

use crate::error::Failure;

/// Default and bounds of `pageSize` (v1.0 spec: default 50, at most 100).
const DEFAULT_PAGE_SIZE: i64 = 50;
const MAX_PAGE_SIZE: i64 = 100;
/// Page tokens are `o:<offset>` into the filtered, sorted list.
const TOKEN_PREFIX: &str = "o:";

struct Entry {
    /// Insertion / update order, the tie-breaker after the status timestamp.
    seq: u64,
    /// The task in v1.0 shape, as last seen.
    task: Value,
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

fn timestamp(task: &Value) -> Option<DateTime<FixedOffset>> {
    task.pointer("/status/timestamp")
        .and_then(Value::as_str)
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
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
    pub fn put_task(&self, task: &Value) {
        self.put_owned_task(task.clone());
    }

    /// [`Self::put_task`] for a task the caller no longer needs (no copy).
    fn put_owned_task(&self, task: Value) {
        let Some(id) = task.get("id").and_then(Value::as_str).map(str::to_string) else {
            return;
        };
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.seq += 1;
        let seq = inner.seq;
        inner.order.insert(seq, id.clone());
        let previous = inner.tasks.insert(id, Entry { seq, task });
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
        let Inner { tasks, order, .. } = &mut *inner;
        if let Some(e) = tasks.get_mut(id) {
            if let Some(key) = order.remove(&e.seq) {
                order.insert(seq, key);
            }
            e.seq = seq;
            e.task["status"] = status.clone();
        }
    }

    /// Records what a translated v1.0 answer (a JSON-RPC response or one SSE
    /// event envelope) says about tasks. `method` is the v1.0 method name.
    pub fn record(&self, method: &str, envelope: &[u8]) {
        if !indexed(method) {
            return;
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
        if let Ok(result) = serde_json::from_slice::<Value>(body) {
            self.record_value(method, result);
        }
    }

    fn record_value(&self, method: &str, mut result: Value) {
        match method {
            "GetTask" | "CancelTask" => self.put_owned_task(result),
            _ => {
                if let Some(t) = result.get_mut("task") {
                    self.put_owned_task(t.take());
                } else if let Some(u) = result.get("statusUpdate") {
                    self.put_status(u);
                }
            }
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
            .filter(|e| {
                context.is_none_or(|c| e.task.get("contextId").and_then(Value::as_str) == Some(c))
            })
            .filter(|e| {
                status.is_none_or(|s| {
                    e.task.pointer("/status/state").and_then(Value::as_str) == Some(s)
                })
            })
            .map(|e| (e, timestamp(&e.task)))
            .filter(|(_, ts)| after.is_none_or(|a| ts.is_some_and(|t| t > a)))
            .collect();
        // Newest status first; unstamped tasks by when they were last seen.
        hits.sort_by(|(a, ta), (b, tb)| tb.cmp(ta).then(b.seq.cmp(&a.seq)));
        let total = hits.len();
        let page: Vec<Value> = hits
            .iter()
            .skip(offset)
            .take(page_size as usize)
            .map(|(e, _)| shaped(&e.task, history, artifacts))
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
fn shaped(task: &Value, history: Option<i64>, artifacts: bool) -> Value {
    let mut t = task.clone();
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
