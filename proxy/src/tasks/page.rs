//! One ListTasks page: the caller's entries that match the request,
//! sorted and cut, and the answer made of what the agent gives for them.

use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use serde_json::{json, Value};

use super::query::Query;
use super::{invalid, timestamp, Entry, Scope, TaskIndex, TOKEN_PREFIX};
use crate::error::Failure;

/// One ListTasks page to fetch: the ids of the caller's entries that match
/// the request, and how to shape and check what the agent answers.
#[derive(Debug)]
pub struct Page {
    /// The tasks to ask the agent for, in list order (at most `pageSize`).
    pub ids: Vec<String>,
    page_size: i64,
    pub(super) total: usize,
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
    use super::super::testing::*;
    use super::*;

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
}
