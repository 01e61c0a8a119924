//! The embedded default [`Store`]: one redb file, `push.redb`, in the data
//! directory. Tables: `meta` (schema version, next seq, applied seq),
//! `configs` (callback id -> JSON), `outbox` (seq -> JSON), `dead` (seq ->
//! JSON).
//!
//! Accepted outbox items are made durable by the journal ([`super::wal`])
//! before `enqueue_many` returns; an inserter thread then adds them to the
//! outbox table with non-durable commits and checkpoints (durable commits)
//! in the background. Reads of the outbox wait until every acknowledged
//! item is in the table. Leases, completions and reschedules are
//! non-durable too: a crash can only bring an item back for another
//! delivery (at least once), never lose one.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::wal::{self, Wal};
use super::{DeadLetter, OutboxItem, PushConfig, Store, StoreError, TaskRecord, SCHEMA_VERSION};

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const CONFIGS: TableDefinition<&str, &[u8]> = TableDefinition::new("configs");
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
const DEAD: TableDefinition<u64, &[u8]> = TableDefinition::new("dead");
const TASKS: TableDefinition<&str, &[u8]> = TableDefinition::new("tasks");

/// How many outbox items one claim looks at (bounds its cost with a deep
/// backlog; the rest is reached once the head is delivered).
const MAX_CLAIM_SCAN: usize = 20_000;

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(x.to_string())
}

fn enc<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(v).map_err(e)
}

fn dec<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(b).map_err(e)
}

/// Migrations from schema version `n` to `n + 1`, index `n`. Version 0 is
/// an empty file; 0 -> 1 creates the tables.
type Migration = fn(&redb::WriteTransaction) -> Result<(), StoreError>;
const MIGRATIONS: &[Migration] = &[
    |tx| {
        tx.open_table(CONFIGS).map_err(e)?;
        tx.open_table(OUTBOX).map_err(e)?;
        tx.open_table(DEAD).map_err(e)?;
        Ok(())
    },
    |tx| {
        tx.open_table(TASKS).map_err(e)?;
        Ok(())
    },
];

/// A quiet inserter checkpoints after this long without new items.
const CHECKPOINT_IDLE: Duration = Duration::from_millis(500);
/// A busy one checkpoints at least this often.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);
/// How long a read waits for acknowledged items to reach the table.
const SETTLE_LIMIT: Duration = Duration::from_secs(10);

/// The redb backend.
pub struct RedbStore {
    inner: Arc<Inner>,
    inserter: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Inner {
    dir: std::path::PathBuf,
    /// `None` once closed.
    db: std::sync::RwLock<Option<Database>>,
    /// `None` once closed.
    journal: Mutex<Option<Journal>>,
    progress: Mutex<Progress>,
    settled: Condvar,
    /// A non-durable write happened since the last checkpoint.
    dirty: AtomicBool,
}

struct Journal {
    wal: Wal,
    next_seq: u64,
    to_table: mpsc::Sender<Vec<OutboxItem>>,
}

#[derive(Default)]
struct Progress {
    /// Highest seq acknowledged (in the journal).
    acked: u64,
    /// Highest seq in the outbox table.
    applied: u64,
    /// The inserter gave up (the items are safe in the journal).
    failed: Option<StoreError>,
}

impl RedbStore {
    /// Opens (creating) `dir/push.redb` and migrates it to [`SCHEMA_VERSION`].
    pub fn open(dir: &Path) -> Result<RedbStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|x| e(format!("{}: {x}", dir.display())))?;
        let db = Database::create(dir.join("push.redb")).map_err(e)?;
        let tx = db.begin_write().map_err(e)?;
        {
            let mut meta = tx.open_table(META).map_err(e)?;
            let mut v = meta
                .get("schema_version")
                .map_err(e)?
                .map(|g| g.value())
                .unwrap_or(0);
            if v > SCHEMA_VERSION {
                return Err(e(format!(
                    "data was written by a newer proxy (schema {v} > {SCHEMA_VERSION})"
                )));
            }
            while v < SCHEMA_VERSION {
                MIGRATIONS[v as usize](&tx)?;
                v += 1;
            }
            meta.insert("schema_version", v).map_err(e)?;
        }
        tx.commit().map_err(e)?;
        let (to_table, from_journal) = mpsc::channel();
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            db: std::sync::RwLock::new(Some(db)),
            journal: Mutex::new(None),
            progress: Mutex::new(Progress::default()),
            settled: Condvar::new(),
            dirty: AtomicBool::new(false),
        });
        // Items acknowledged after the last checkpoint come back from the
        // journal; older ones are in the table (or were delivered).
        let (next_seq, applied) = inner.replay(dir)?;
        inner.release_leases()?;
        let mut journal = Wal::open(dir, applied)?;
        journal.drop_covered(applied)?;
        if let Ok(mut p) = inner.progress.lock() {
            p.acked = applied;
            p.applied = applied;
        }
        if let Ok(mut j) = inner.journal.lock() {
            *j = Some(Journal {
                wal: journal,
                next_seq,
                to_table,
            });
        }
        let me = inner.clone();
        let handle = std::thread::Builder::new()
            .name("a2a-push-inserter".into())
            .spawn(move || me.insert_loop(from_journal))
            .map_err(e)?;
        Ok(RedbStore {
            inner,
            inserter: Mutex::new(Some(handle)),
        })
    }

    /// Waits until every acknowledged item is in the outbox table.
    fn settle(&self) -> Result<(), StoreError> {
        let end = Instant::now() + SETTLE_LIMIT;
        let mut p = self
            .inner
            .progress
            .lock()
            .map_err(|_| e("store lock poisoned"))?;
        while p.applied < p.acked {
            if let Some(f) = &p.failed {
                return Err(f.clone());
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(e("accepted notifications are not in the outbox table yet"));
            }
            p = self
                .inner
                .settled
                .wait_timeout(p, left)
                .map_err(|_| e("store lock poisoned"))?
                .0;
        }
        Ok(())
    }
}

impl Inner {
    fn begin_write(&self) -> Result<redb::WriteTransaction, StoreError> {
        let g = self.db.read().map_err(|_| e("store lock poisoned"))?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_write()
            .map_err(e)
    }

    fn begin_read(&self) -> Result<redb::ReadTransaction, StoreError> {
        let g = self.db.read().map_err(|_| e("store lock poisoned"))?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_read()
            .map_err(e)
    }

    /// Puts journal records newer than the table's applied seq into the
    /// table (durably). Returns (next seq, applied seq).
    fn replay(&self, dir: &Path) -> Result<(u64, u64), StoreError> {
        let records = wal::replay(dir)?;
        self.write(|tx| {
            let mut meta = tx.open_table(META).map_err(e)?;
            let next = meta.get("next_seq").map_err(e)?.map_or(1, |g| g.value());
            let applied = meta
                .get("applied_seq")
                .map_err(e)?
                .map_or(next.saturating_sub(1), |g| g.value());
            let mut out = tx.open_table(OUTBOX).map_err(e)?;
            let mut top = applied;
            let mut replayed = 0usize;
            for item in records.into_iter().filter(|i| i.seq > applied) {
                out.insert(item.seq, enc(&item)?.as_slice()).map_err(e)?;
                top = top.max(item.seq);
                replayed += 1;
            }
            let next = next.max(top + 1);
            meta.insert("next_seq", next).map_err(e)?;
            meta.insert("applied_seq", top).map_err(e)?;
            if replayed > 0 {
                tracing::info!(replayed, "push journal: accepted notifications restored");
            }
            Ok((next, top))
        })
    }

    /// The inserter: journal batches into the outbox table, checkpoints.
    fn insert_loop(&self, rx: mpsc::Receiver<Vec<OutboxItem>>) {
        let mut last_checkpoint = Instant::now();
        loop {
            let first = match rx.recv_timeout(CHECKPOINT_IDLE) {
                Ok(b) => b,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if self.dirty.load(Ordering::Relaxed) {
                        self.checkpoint();
                        last_checkpoint = Instant::now();
                    }
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.checkpoint();
                    return;
                }
            };
            let mut items = first;
            while let Ok(more) = rx.try_recv() {
                items.extend(more);
            }
            let top = items.iter().map(|i| i.seq).max().unwrap_or(0);
            let mut tries = 0;
            let r = loop {
                match self.insert(&items, top) {
                    Ok(()) => break Ok(()),
                    Err(x) if tries >= 3 => break Err(x),
                    Err(x) => {
                        tracing::warn!(error = %x, "push store: inserting accepted notifications, retrying");
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(50 << tries));
                    }
                }
            };
            if let Ok(mut p) = self.progress.lock() {
                match r {
                    Ok(()) => p.applied = p.applied.max(top),
                    Err(x) => {
                        tracing::error!(error = %x, "push store: accepted notifications stay in the journal until a restart");
                        p.failed = Some(x);
                    }
                }
            }
            self.settled.notify_all();
            self.ensure_spare();
            if last_checkpoint.elapsed() >= CHECKPOINT_EVERY {
                self.checkpoint();
                last_checkpoint = Instant::now();
            }
        }
    }

    /// Prepares the journal's next segment, without holding the journal
    /// while its zeros are written.
    fn ensure_spare(&self) {
        let want = match self.journal.lock() {
            Ok(j) => j.as_ref().and_then(|j| j.wal.wants_spare()),
            Err(_) => None,
        };
        let Some(n) = want else {
            return;
        };
        match Wal::prepare(&self.dir, n) {
            Ok(f) => {
                if let Ok(mut j) = self.journal.lock() {
                    if let Some(j) = j.as_mut() {
                        j.wal.give_spare(n, f);
                    }
                }
            }
            Err(x) => tracing::warn!(error = %x, "push journal: preparing the next segment"),
        }
    }

    fn insert(&self, items: &[OutboxItem], top: u64) -> Result<(), StoreError> {
        self.write_lazy(|tx| {
            let mut out = tx.open_table(OUTBOX).map_err(e)?;
            for item in items {
                out.insert(item.seq, enc(item)?.as_slice()).map_err(e)?;
            }
            let mut meta = tx.open_table(META).map_err(e)?;
            let next = meta.get("next_seq").map_err(e)?.map_or(1, |g| g.value());
            meta.insert("next_seq", next.max(top + 1)).map_err(e)?;
            let applied = meta.get("applied_seq").map_err(e)?.map_or(0, |g| g.value());
            meta.insert("applied_seq", applied.max(top)).map_err(e)?;
            Ok(())
        })
    }

    /// A durable commit (persisting every non-durable one before it), then
    /// the journal segments it covers go.
    fn checkpoint(&self) {
        self.dirty.store(false, Ordering::Relaxed);
        let applied = self.write(|tx| {
            let meta = tx.open_table(META).map_err(e)?;
            let applied = meta.get("applied_seq").map_err(e)?.map_or(0, |g| g.value());
            Ok(applied)
        });
        let applied = match applied {
            Ok(a) => a,
            Err(x) => {
                self.dirty.store(true, Ordering::Relaxed);
                tracing::error!(error = %x, "push store: checkpoint");
                return;
            }
        };
        if let Ok(mut j) = self.journal.lock() {
            if let Some(j) = j.as_mut() {
                if let Err(x) = j.wal.drop_covered(applied) {
                    tracing::error!(error = %x, "push store: trimming the journal");
                }
            }
        }
    }

    /// Only one process can hold the file: leases left by an earlier run
    /// (killed mid-delivery) are void.
    fn release_leases(&self) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            let mut held = Vec::new();
            for r in t.iter().map_err(e)? {
                let (k, v) = r.map_err(e)?;
                let item: OutboxItem = dec(v.value())?;
                if !item.lease_owner.is_empty() {
                    held.push((k.value(), item));
                }
            }
            for (k, mut item) in held {
                item.lease_owner.clear();
                item.lease_until_ms = 0;
                t.insert(k, enc(&item)?.as_slice()).map_err(e)?;
            }
            Ok(())
        })
    }

    /// A durable write: on disk when it returns.
    fn write<R>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let tx = self.begin_write().map_err(e)?;
        let r = f(&tx)?;
        tx.commit().map_err(e)?;
        Ok(r)
    }

    /// A write that a crash may undo until the next durable one (no
    /// fsync); see the module docs for why that is safe where it is used.
    fn write_lazy<R>(
        &self,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut tx = self.begin_write().map_err(e)?;
        tx.set_durability(redb::Durability::None);
        let r = f(&tx)?;
        tx.commit().map_err(e)?;
        self.dirty.store(true, Ordering::Relaxed);
        Ok(r)
    }
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        self.close();
    }
}

impl Store for RedbStore {
    fn close(&self) {
        // No more accepts; the inserter drains what was acknowledged,
        // checkpoints and stops; then the file is released.
        if let Ok(mut j) = self.inner.journal.lock() {
            *j = None;
        }
        if let Some(h) = self.inserter.lock().ok().and_then(|mut h| h.take()) {
            let _ = h.join();
        }
        if let Ok(mut g) = self.inner.db.write() {
            *g = None;
        }
    }

    fn put_config(&self, c: &PushConfig) -> Result<(), StoreError> {
        let v = enc(c)?;
        self.inner.write(|tx| {
            tx.open_table(CONFIGS)
                .map_err(e)?
                .insert(c.callback_id.as_str(), v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn config_by_callback(&self, callback_id: &str) -> Result<Option<PushConfig>, StoreError> {
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(CONFIGS).map_err(e)?;
        match t.get(callback_id).map_err(e)? {
            Some(g) => Ok(Some(dec(g.value())?)),
            None => Ok(None),
        }
    }

    fn configs_for_task(&self, task_id: &str) -> Result<Vec<PushConfig>, StoreError> {
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(CONFIGS).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)? {
            let (_, v) = r.map_err(e)?;
            let c: PushConfig = dec(v.value())?;
            if c.task_id == task_id {
                out.push(c);
            }
        }
        out.sort_by_key(|c| c.created);
        Ok(out)
    }

    fn delete_config(&self, task_id: &str, config_id: &str) -> Result<usize, StoreError> {
        let gone = self
            .configs_for_task(task_id)?
            .into_iter()
            .filter(|c| c.config_id == config_id)
            .collect::<Vec<_>>();
        self.inner.write(|tx| {
            let mut t = tx.open_table(CONFIGS).map_err(e)?;
            for c in &gone {
                t.remove(c.callback_id.as_str()).map_err(e)?;
            }
            Ok(gone.len())
        })
    }

    fn enqueue_many(&self, mut items: Vec<OutboxItem>) -> Result<Vec<u64>, StoreError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let mut guard = self
            .inner
            .journal
            .lock()
            .map_err(|_| e("store lock poisoned"))?;
        let j = guard.as_mut().ok_or_else(|| e("store closed"))?;
        let first = j.next_seq;
        for (i, item) in items.iter_mut().enumerate() {
            item.seq = first + i as u64;
        }
        // Seqs are spent even if the append fails (a torn record may hold
        // them; a reused seq would be ambiguous on replay).
        j.next_seq += items.len() as u64;
        j.wal.append(&items)?;
        let seqs: Vec<u64> = items.iter().map(|i| i.seq).collect();
        let top = first + items.len() as u64 - 1;
        if let Ok(mut p) = self.inner.progress.lock() {
            p.acked = p.acked.max(top);
        }
        // Sent under the journal lock: the inserter sees seq order.
        j.to_table
            .send(items)
            .map_err(|_| e("the outbox inserter stopped"))?;
        Ok(seqs)
    }

    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        self.settle()?;
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(OUTBOX).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)?.take(limit) {
            let (_, v) = r.map_err(e)?;
            out.push(dec(v.value())?);
        }
        Ok(out)
    }

    fn reschedule(&self, item: &OutboxItem) -> Result<(), StoreError> {
        // An item acknowledged but not yet in the table would come back.
        self.settle()?;
        let v = enc(item)?;
        self.inner.write_lazy(|tx| {
            tx.open_table(OUTBOX)
                .map_err(e)?
                .insert(item.seq, v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn claim(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        self.settle()?;
        self.inner.write_lazy(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            // Per callback id, decided at its oldest item: true = its run is
            // being claimed, false = skip all of it.
            let mut seen: std::collections::HashMap<String, bool> = Default::default();
            let mut got = Vec::new();
            for r in t.iter().map_err(e)?.take(MAX_CLAIM_SCAN) {
                if got.len() >= limit {
                    break;
                }
                let (_, v) = r.map_err(e)?;
                let item: OutboxItem = dec(v.value())?;
                let take = *seen.entry(item.callback_id.clone()).or_insert_with(|| {
                    item.next_attempt_ms <= now_ms && item.lease_until_ms <= now_ms
                });
                if take {
                    got.push(item);
                }
            }
            for item in &mut got {
                item.lease_owner = owner.to_string();
                item.lease_until_ms = now_ms + lease_ms;
                t.insert(item.seq, enc(&*item)?.as_slice()).map_err(e)?;
            }
            Ok(got)
        })
    }

    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError> {
        // An item acknowledged but not yet in the table would come back.
        self.settle()?;
        self.inner.write_lazy(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            for s in seqs {
                t.remove(*s).map_err(e)?;
            }
            Ok(())
        })
    }

    fn dead_letter(&self, item: &OutboxItem, reason: &str) -> Result<(), StoreError> {
        // An item acknowledged but not yet in the table would come back.
        self.settle()?;
        let d = DeadLetter {
            item: item.clone(),
            reason: reason.to_string(),
            dead_ms: super::now_ms(),
        };
        let v = enc(&d)?;
        self.inner.write(|tx| {
            tx.open_table(OUTBOX)
                .map_err(e)?
                .remove(item.seq)
                .map_err(e)?;
            tx.open_table(DEAD)
                .map_err(e)?
                .insert(item.seq, v.as_slice())
                .map_err(e)?;
            Ok(())
        })
    }

    fn dead_letters(&self) -> Result<Vec<DeadLetter>, StoreError> {
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(DEAD).map_err(e)?;
        let mut out = Vec::new();
        for r in t.iter().map_err(e)? {
            let (_, v) = r.map_err(e)?;
            out.push(dec(v.value())?);
        }
        Ok(out)
    }

    fn outbox_len(&self) -> Result<u64, StoreError> {
        self.settle()?;
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(OUTBOX).map_err(e)?;
        t.len().map_err(e)
    }

    fn put_tasks(&self, tasks: &[TaskRecord], keep: usize) -> Result<(), StoreError> {
        self.inner.write_lazy(|tx| {
            let mut t = tx.open_table(TASKS).map_err(e)?;
            for r in tasks {
                t.insert(r.id.as_str(), enc(r)?.as_slice()).map_err(e)?;
            }
            // Trimmed in bulk once well past `keep` (a scan of the table).
            let len = t.len().map_err(e)? as usize;
            if len > keep + keep / 8 + 1 {
                let mut by_age = Vec::with_capacity(len);
                for x in t.iter().map_err(e)? {
                    let (k, v) = x.map_err(e)?;
                    let r: TaskRecord = dec(v.value())?;
                    by_age.push((r.updated_ms, k.value().to_string()));
                }
                by_age.sort_unstable();
                for (_, id) in &by_age[..len - keep] {
                    t.remove(id.as_str()).map_err(e)?;
                }
            }
            Ok(())
        })
    }

    fn load_tasks(&self, limit: usize) -> Result<Vec<TaskRecord>, StoreError> {
        let tx = self.inner.begin_read().map_err(e)?;
        let t = tx.open_table(TASKS).map_err(e)?;
        let mut out: Vec<TaskRecord> = Vec::new();
        for x in t.iter().map_err(e)? {
            let (_, v) = x.map_err(e)?;
            out.push(dec(v.value())?);
        }
        out.sort_by(|a, b| (a.updated_ms, &a.id).cmp(&(b.updated_ms, &b.id)));
        let skip = out.len().saturating_sub(limit);
        Ok(out.split_off(skip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::push::contract;

    fn dir(tag: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("a2a-push-{tag}-{}", super::super::random_id()))
    }

    #[test]
    fn contract_holds() {
        let dirs = std::sync::Mutex::new(Vec::new());
        contract::run(&|| {
            let d = dir("contract");
            dirs.lock().unwrap().push(d.clone());
            Box::new(RedbStore::open(&d).unwrap())
        });
        for d in dirs.into_inner().unwrap() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    fn item(seq: u64, n: u32) -> OutboxItem {
        OutboxItem {
            seq,
            callback_id: "cb".into(),
            task_id: "t".into(),
            body: format!("{{\"n\":{n}}}"),
            attempts: 0,
            next_attempt_ms: 0,
            accepted_ms: 1,
            lease_owner: String::new(),
            lease_until_ms: 0,
        }
    }

    /// What a crash leaves: journal records the table never got. They come
    /// back on open, once; records the table already holds are not doubled;
    /// new seqs continue after them.
    #[test]
    fn journal_records_newer_than_the_table_are_replayed_once() {
        let dir = dir("replay");
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(
            s.enqueue_many(vec![item(0, 1), item(0, 2)]).unwrap(),
            [1, 2]
        );
        s.close();
        drop(s);
        // As if the process died after these appends were acknowledged:
        // seq 2 again (already in the table) and 3, 4 (only in the journal).
        let mut w = Wal::open(&dir, 0).unwrap();
        w.append(&[item(2, 2), item(3, 3), item(4, 4)]).unwrap();
        drop(w);
        let s = RedbStore::open(&dir).unwrap();
        let seqs: Vec<u64> = s.pending(10).unwrap().iter().map(|i| i.seq).collect();
        assert_eq!(seqs, [1, 2, 3, 4]);
        assert_eq!(s.enqueue(item(0, 5)).unwrap(), 5);
        s.close();
        drop(s);
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(s.outbox_len().unwrap(), 5);
        let journal = wal::replay(&dir).unwrap();
        assert!(
            journal.is_empty(),
            "checkpointed records stay in the journal"
        );
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn configs_outbox_dead_letters_survive_reopen() {
        let dir = dir("store");
        contract::configs_outbox_dead_letters_before(&RedbStore::open(&dir).unwrap());
        contract::configs_outbox_dead_letters_after(&RedbStore::open(&dir).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
