//! The index kept in the push store: changed entries handed over as
//! small summaries, and summaries loaded back.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Scope, TaskIndex};

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

impl TaskIndex {
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

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
