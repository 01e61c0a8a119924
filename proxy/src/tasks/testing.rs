//! What the index's unit tests share: tasks, scopes and a filled index.

pub(super) use http::HeaderMap;
pub(super) use serde_json::{json, Value};

pub(super) use super::*;

pub(super) fn task(id: &str, ctx: &str, state: &str, ts: &str) -> Value {
    json!({"id": id, "contextId": ctx, "status": {"state": state, "timestamp": ts},
           "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}],
           "history": [{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "1"}]},
                       {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "2"}]}]})
}

pub(super) fn key() -> ScopeKey {
    ScopeKey::derived(&scope::derive_secret(b"test"))
}

pub(super) fn new_index(limits: IndexLimits) -> TaskIndex {
    TaskIndex::new(true, limits, key(), &[])
}

pub(super) fn scope_of(auth: &str) -> Scope {
    let mut h = HeaderMap::new();
    if !auth.is_empty() {
        h.insert(http::header::AUTHORIZATION, auth.parse().unwrap());
    }
    new_index(IndexLimits::default()).scope_of(&h)
}

pub(super) fn a() -> Scope {
    scope_of("Bearer a")
}

pub(super) fn index() -> TaskIndex {
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
pub(super) fn listed(
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

pub(super) fn all() -> Vec<Value> {
    vec![
        task("t1", "c1", "TASK_STATE_COMPLETED", "2025-01-01T00:00:01Z"),
        task("t2", "c2", "TASK_STATE_WORKING", "2025-01-01T00:00:03Z"),
        task("t3", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:02Z"),
    ]
}
