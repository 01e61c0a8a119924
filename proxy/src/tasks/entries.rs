//! The index's entries written: a task seen, a status update of a task
//! known, and the oldest entries dropped while over a bound.

use std::sync::Arc;

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

use super::{cost, timestamp, Entry, Inner, Key, Scope, TaskIndex, MAX_STATE_BYTES};

impl TaskIndex {
    /// Records a task (v1.0) `scope` saw.
    pub fn put_task(&self, scope: Scope, task: &Value) {
        if let Some(id) = task.get("id").and_then(Value::as_str) {
            let context = task.get("contextId").and_then(Value::as_str);
            self.put(scope, id, context, task.get("status"));
        }
    }

    /// What the agent says now of a task `scope` listed (ListTasks asks
    /// it with the caller's credentials): the entry's context, state and
    /// timestamp brought up to date where it stands. A listing does not
    /// reorder what it lists, nor is it a change for the store: an
    /// instance whose index is behind the others' never pushes their newer
    /// entries out by listing its older ones.
    pub fn refresh_task(&self, scope: Scope, task: &Value) {
        let Some(id) = task.get("id").and_then(Value::as_str) else {
            return;
        };
        let status = task.get("status");
        let state = status.and_then(|s| s.get("state")).and_then(Value::as_str);
        let context = task.get("contextId").and_then(Value::as_str);
        if context.is_some_and(|c| c.len() > self.limits.max_id_bytes) {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        let Some(e) = inner.tasks.get_mut(&(scope, Arc::from(id))) else {
            return;
        };
        let old = cost(id, e);
        e.context = context.map(Box::from);
        e.state = state.filter(|s| s.len() <= MAX_STATE_BYTES).map(Box::from);
        e.ts = timestamp(status);
        inner.bytes = inner.bytes - old + cost(id, e);
        inner.generation += 1;
        self.evict(inner);
    }

    /// Puts an entry; `false` when it is not indexed (off, or an id or
    /// context id over `max_id_bytes`).
    pub(super) fn put(
        &self,
        scope: Scope,
        id: &str,
        context: Option<&str>,
        status: Option<&Value>,
    ) -> bool {
        let state = status.and_then(|s| s.get("state")).and_then(Value::as_str);
        self.put_entry(scope, id, context, state, timestamp(status))
    }

    /// [`Self::put`] with the status's `state` (when a string) and
    /// timestamp read.
    pub(super) fn put_entry(
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

    /// [`Self::put_entry`] in the locked index: seen now.
    pub(super) fn put_entry_in(
        &self,
        inner: &mut Inner,
        scope: Scope,
        id: &str,
        context: Option<&str>,
        state: Option<&str>,
        ts: Option<DateTime<FixedOffset>>,
    ) -> bool {
        self.put_entry_seen(inner, None, scope, id, context, state, ts)
    }

    /// [`Self::put_entry_in`] of an entry seen at `seen` (an earlier
    /// [`Inner::next_seq`] of this or another instance; `None`: now). An
    /// entry seen earlier than others takes its place among them.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn put_entry_seen(
        &self,
        inner: &mut Inner,
        seen: Option<u64>,
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
        let seq = match seen {
            None => inner.next_seq(),
            Some(mut at) => {
                // Unique in the order; never past what is seen next.
                while inner.order.contains_key(&at) {
                    at += 1;
                }
                inner.seq = inner.seq.max(at);
                at
            }
        };
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
        self.note(&mut inner.changed, key);
        self.evict(inner);
        true
    }

    /// `key` changed: remembered for the store (when tracked), its writer
    /// told when it is the first change waiting.
    fn note(&self, changed: &mut Option<std::collections::HashSet<Key>>, key: Key) {
        if let Some(c) = changed.as_mut() {
            let first = c.is_empty();
            c.insert(key);
            if first {
                if let Some(f) = self.on_change.get() {
                    f();
                }
            }
        }
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
    pub(super) fn put_status(&self, scope: Scope, update: &Value) {
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
    pub(super) fn put_status_of(
        &self,
        scope: Scope,
        id: &str,
        state: Option<&str>,
        ts: Option<&str>,
    ) {
        self.put_status_with(scope, id, state, || {
            ts.and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        });
    }

    /// [`Self::put_status_of`] with the timestamp given by `ts`, asked only
    /// for a task `scope` knows.
    pub(super) fn put_status_with(
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
    pub(super) fn put_status_in(
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
        let seq = inner.next_seq();
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
        self.note(changed, key.clone());
        order.remove(&e.seq);
        order.insert(seq, key);
        e.seq = seq;
        e.state = state.filter(|s| s.len() <= MAX_STATE_BYTES).map(Box::from);
        e.ts = ts();
        *bytes = *bytes - old + cost(id, e);
        self.evict(inner);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

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

    /// A listed task's refresh updates what filters read, in place: not
    /// the most recent for it, not a change for the store, nothing made
    /// up for a task the index does not hold.
    #[test]
    fn a_refresh_updates_in_place() {
        let ix = new_index(IndexLimits {
            max_tasks: 2,
            ..IndexLimits::default()
        });
        ix.track_changes();
        ix.put_task(
            a(),
            &task("t1", "c", "TASK_STATE_WORKING", "2025-01-01T00:00:01Z"),
        );
        ix.put_task(
            a(),
            &task("t2", "c", "TASK_STATE_WORKING", "2025-01-01T00:00:02Z"),
        );
        let _ = ix.take_changed();
        ix.refresh_task(
            a(),
            &task("t1", "c", "TASK_STATE_COMPLETED", "2025-01-01T00:00:03Z"),
        );
        ix.refresh_task(
            a(),
            &task("zz", "c", "TASK_STATE_COMPLETED", "2025-01-01T00:00:03Z"),
        );
        assert!(ix.take_changed().is_empty());
        assert_eq!(ix.len(), 2);
        let done = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_COMPLETED"})))
            .unwrap();
        assert_eq!(done.ids, ["t1"]);
        // t1 is still the oldest: the next entry evicts it.
        ix.put_task(
            a(),
            &task("t3", "c", "TASK_STATE_WORKING", "2025-01-01T00:00:04Z"),
        );
        let mut ids = ix.page(a(), None).unwrap().ids;
        ids.sort();
        assert_eq!(ids, ["t2", "t3"]);
    }
}
