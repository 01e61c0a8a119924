//! The index kept in the push store: changed entries handed over as
//! small summaries, and summaries loaded back; on a store several
//! instances share, the summaries the others wrote applied as they come
//! (the store is the truth, this index a cache of it).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{timestamp, Key, Scope, TaskIndex};

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
        let out = self.take_changed_seen();
        out.into_iter().map(|(k, s, _)| (k, s)).collect()
    }

    /// [`Self::take_changed`] with when each entry was last seen (Unix
    /// milliseconds: the store's `updated_ms`, its recency there).
    pub fn take_changed_seen(&self) -> Vec<(String, String, i64)> {
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
        out.into_iter()
            .map(|(seq, k, s)| (k, s, i64::try_from(seq / 1000).unwrap_or(i64::MAX)))
            .collect()
    }

    /// From now on `f` is told each time changes start to wait for
    /// [`Self::take_changed`] (the store's writer wakes); once.
    pub fn on_change(&self, f: Arc<dyn Fn() + Send + Sync>) {
        let _ = self.on_change.set(f);
    }

    /// Changes [`Self::take_changed`] gave that could not be written:
    /// handed over again with the next ones (those of entries since
    /// evicted are dropped).
    pub fn unflushed<'a>(&self, keys: impl IntoIterator<Item = &'a str>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        for k in keys {
            let Some(key) = key_of(k) else { continue };
            if let (true, Some(c)) = (inner.tasks.contains_key(&key), inner.changed.as_mut()) {
                inner.generation += 1;
                c.insert(key);
            }
        }
    }

    /// The store's changes, in the store's order: `(store key, summary,
    /// when it was seen (Unix ms))`, no summary for a change this instance
    /// wrote itself (it has it). Another instance's summary is recorded as
    /// seen when it was, so this index orders (and evicts) its entries as
    /// the store does however late the summary comes; unless this index
    /// has a change of that entry not yet written (it is newer, and will
    /// replace it in the store). Not a change of this instance's to write
    /// back. How many were kept.
    pub fn apply_feed(&self, changes: &[(String, Option<String>, i64)]) -> usize {
        let Ok(mut inner) = self.inner.lock() else {
            return 0;
        };
        let inner = &mut *inner;
        let mut kept = 0;
        // Not tracked while the feed is put: not this instance's changes.
        let pending = inner.changed.take();
        for (_, summary, seen) in changes {
            let Some(text) = summary else { continue };
            let Ok(s) = serde_json::from_str::<Summary>(text) else {
                continue;
            };
            let Some(scope) = Scope::from_hex(&s.scope).filter(|_| s.index == 1) else {
                continue;
            };
            let key: Key = (scope, Arc::from(s.id.as_str()));
            if pending.as_ref().is_some_and(|c| c.contains(&key)) {
                continue;
            }
            let status = json!({"timestamp": s.timestamp});
            let ts = timestamp(Some(&status));
            let (c, st) = (s.context.as_deref(), s.state.as_deref());
            let at = u64::try_from(*seen).unwrap_or(0).saturating_mul(1000);
            if self.put_entry_seen(inner, Some(at), scope, &s.id, c, st, ts) {
                kept += 1;
            }
        }
        inner.changed = pending;
        kept
    }

    /// Stored summaries, oldest first (the newest end up most recent); what
    /// is not a summary (a whole task stored before scopes existed) is
    /// dropped. How many were loaded.
    pub fn load<S: AsRef<str>>(&self, stored: impl IntoIterator<Item = S>) -> usize {
        self.load_seen(stored.into_iter().map(|s| (s, None)))
    }

    /// [`Self::load`] with when each was seen (Unix ms; `None`: now, in
    /// order), so entries keep their recency across restarts and instances.
    pub fn load_seen<S: AsRef<str>>(
        &self,
        stored: impl IntoIterator<Item = (S, Option<i64>)>,
    ) -> usize {
        let Ok(mut inner) = self.inner.lock() else {
            return 0;
        };
        let mut n = 0;
        for (text, seen) in stored {
            let Ok(s) = serde_json::from_str::<Summary>(text.as_ref()) else {
                continue;
            };
            let Some(scope) = Scope::from_hex(&s.scope).filter(|_| s.index == 1) else {
                continue;
            };
            let status = json!({"timestamp": s.timestamp});
            let ts = timestamp(Some(&status));
            let at = seen.map(|ms| u64::try_from(ms).unwrap_or(0).saturating_mul(1000));
            let (c, st) = (s.context.as_deref(), s.state.as_deref());
            if self.put_entry_seen(&mut inner, at, scope, &s.id, c, st, ts) {
                n += 1;
            }
        }
        n
    }
}

/// The entry of a store key (`<scope>/<task id>`, [`TaskIndex::take_changed`]).
fn key_of(k: &str) -> Option<Key> {
    let (scope, id) = k.split_once('/')?;
    Some((Scope::from_hex(scope)?, Arc::from(id)))
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    /// Another instance's summaries land as the newest entries, never as
    /// this index's changes, never over a change of its own not yet
    /// written; a failed write is handed over again; the writer is told
    /// once per batch of changes.
    #[test]
    fn summaries_of_other_instances_apply_and_failed_writes_come_back() {
        let writer = new_index(IndexLimits::default());
        writer.track_changes();
        writer.put_task(
            a(),
            &task("t1", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:01Z"),
        );
        writer.put_task(
            a(),
            &task("t2", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:02Z"),
        );
        let rows = writer.take_changed_seen();
        let reader = new_index(IndexLimits::default());
        reader.track_changes();
        let woken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let w = woken.clone();
        reader.on_change(Arc::new(move || {
            w.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }));
        let feed: Vec<(String, Option<String>, i64)> = rows
            .iter()
            .map(|(k, t, at)| (k.clone(), Some(t.clone()), *at))
            .collect();
        assert_eq!(reader.apply_feed(&feed), 2);
        assert!(reader.take_changed().is_empty(), "not the reader's changes");
        assert_eq!(woken.load(std::sync::atomic::Ordering::Relaxed), 0);
        let (ids, _) = listed(&reader, a(), json!({}), &[]);
        assert_eq!(ids, ["t2", "t1"]);
        // A change of its own waits: the other's older summary of t1 does
        // not replace it.
        reader.put_task(
            a(),
            &task("t1", "c1", "TASK_STATE_COMPLETED", "2025-01-01T00:00:03Z"),
        );
        reader.put_task(
            a(),
            &task("t3", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:04Z"),
        );
        assert_eq!(woken.load(std::sync::atomic::Ordering::Relaxed), 1);
        assert_eq!(reader.apply_feed(&feed[..1]), 0);
        let (ids, _) = listed(&reader, a(), json!({"status": "TASK_STATE_COMPLETED"}), &[]);
        assert_eq!(ids, ["t1"]);
        // Written and failed: handed over again.
        let mine = reader.take_changed();
        assert_eq!(mine.len(), 2);
        reader.unflushed(mine.iter().map(|(k, _)| k.as_str()));
        assert_eq!(reader.take_changed(), mine);
        let junk = [
            (String::new(), Some("not json".to_string()), 0),
            (
                String::new(),
                Some(r#"{"index":1,"scope":"zz","id":"x"}"#.into()),
                0,
            ),
        ];
        assert_eq!(reader.apply_feed(&junk), 0);
    }

    /// An index orders (and so evicts) entries by when they were seen,
    /// wherever: one seen on another instance before one seen here sits
    /// below it however late its summary comes, so every instance of a
    /// store evicts the same entries.
    #[test]
    fn entries_seen_elsewhere_take_their_place_by_when_they_were_seen() {
        let ix = new_index(IndexLimits {
            max_tasks: 3,
            ..IndexLimits::default()
        });
        ix.track_changes();
        let other = new_index(IndexLimits::default());
        other.track_changes();
        let untimed = |id: &str| json!({"id": id, "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}});
        let tick = || std::thread::sleep(std::time::Duration::from_millis(3));
        ix.put_task(a(), &untimed("first"));
        tick();
        other.put_task(a(), &untimed("theirs"));
        tick();
        ix.put_task(a(), &untimed("mine"));
        let theirs = other.take_changed_seen().pop().unwrap();
        let _ = ix.take_changed();
        // Its summary comes after "mine" was seen here.
        assert_eq!(ix.apply_feed(&[(theirs.0, Some(theirs.1), theirs.2)]), 1);
        ix.put_task(a(), &untimed("next"));
        let (ids, _) = listed(&ix, a(), json!({}), &[]);
        assert_eq!(ids, ["next", "mine", "theirs"], "\"first\" went first");
        ix.put_task(a(), &untimed("last"));
        let (ids, _) = listed(&ix, a(), json!({}), &[]);
        assert_eq!(ids, ["last", "next", "mine"]);
        // Loaded with when they were seen, restarts keep the order.
        let back = new_index(IndexLimits::default());
        let rows = {
            let w = new_index(IndexLimits::default());
            w.track_changes();
            for id in ["x", "y"] {
                w.put_task(a(), &untimed(id));
                tick();
            }
            w.take_changed_seen()
        };
        back.load_seen(rows.iter().rev().map(|(_, s, at)| (s.as_str(), Some(*at))));
        let (ids, _) = listed(&back, a(), json!({}), &[]);
        assert_eq!(ids, ["y", "x"]);
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
