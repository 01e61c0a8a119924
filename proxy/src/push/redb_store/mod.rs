//! The embedded default [`Store`]: one redb file, `push.redb`, in the data
//! directory. Tables: `meta` (schema version, next seq, applied seq),
//! `configs` (callback id -> JSON), `outbox` (seq -> JSON of an item's
//! state without its body, [`items::Meta`], schema 6), `outbox_bodies`
//! (seq -> the body, schema 6), `dead` (seq -> JSON), `tasks` (the
//! ListTasks index), `snapshots` (callback id -> JSON [`Snapshot`],
//! schema 3).
//!
//! Accepted outbox items are made durable by the journal ([`super::wal`])
//! before `enqueue_many` returns, and are then held in memory ("hot") as
//! their state and the place of their journal record (never their body,
//! read back from the journal when a claim takes it): claiming, leasing,
//! rescheduling and completing them touches no table, so an item
//! delivered before the next checkpoint never reaches redb. A checkpoint
//! (in the background: when quiet, at least every 5 s when busy, and once
//! [`CHECKPOINT_BYTES`] were journaled) moves the hot items still pending
//! into the outbox tables with one durable commit and deletes the journal
//! segments it covers; on open, journal records newer than the last
//! checkpoint are put back. Leases, completions and reschedules are not
//! durable: a crash can only bring an item back for another delivery (at
//! least once), never lose one. Dead letters are durable at once; a replay
//! skips their seqs.
//!
//! A fold snapshot change travels in its item's journal record, so it is
//! durable with the item at no extra cost; it is then known in memory by
//! its version and record (newer than the table) until a checkpoint writes
//! it, and a replay writes the changes of the records it puts back. Its
//! version check is made under the journal lock: one process holds the
//! file, so that lock orders every change.
//!
//! The outbox bounds ([`OutboxBounds`]) are checked under the journal lock
//! against counts kept in memory ([`items::Tally`], rebuilt from the table
//! on open): what a check lets in is appended before the lock is let go,
//! and deliveries only lower the counts.

mod budget;
mod checkpoint;
mod items;
mod schema;

use items::{HotItem, HotSnap, Meta, Tally};
use schema::MIGRATIONS;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::wal::{self, Wal};
use super::{
    counted_bytes, DeadLetter, Enqueued, OutboxBounds, OutboxItem, PushConfig, Snapshot,
    SnapshotWrite, Store, StoreError, TaskRecord, Usage, SCHEMA_VERSION,
};

const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const CONFIGS: TableDefinition<&str, &[u8]> = TableDefinition::new("configs");
const OUTBOX: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
const BODIES: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox_bodies");
const DEAD: TableDefinition<u64, &[u8]> = TableDefinition::new("dead");
const TASKS: TableDefinition<&str, &[u8]> = TableDefinition::new("tasks");
const SNAPSHOTS: TableDefinition<&str, &[u8]> = TableDefinition::new("snapshots");

/// How many outbox items one claim looks at (bounds its cost with a deep
/// backlog; the rest is reached once the head is delivered).
const MAX_CLAIM_SCAN: usize = 20_000;

/// redb's page cache (its own default is 1 GiB, which a backlog of large
/// bodies filled): accepts and deliveries of hot items read no table, and
/// claims read only the items' small state.
const CACHE_BYTES: usize = 32 << 20;

fn e(x: impl std::fmt::Display) -> StoreError {
    StoreError(x.to_string())
}

fn enc<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(v).map_err(e)
}

fn dec<T: serde::de::DeserializeOwned>(b: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(b).map_err(e)
}

/// A body as stored (the store only ever writes UTF-8 there).
fn body_of(b: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(b.to_vec()).map_err(e)
}

/// A quiet store checkpoints after this long without new items.
const CHECKPOINT_IDLE: Duration = Duration::from_millis(500);
/// A busy one checkpoints at least this often.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);
/// And once this many bytes were journaled since its last checkpoint:
/// bounds the journal on disk and what a restart replays.
const CHECKPOINT_BYTES: u64 = 64 << 20;

/// The redb backend.
pub struct RedbStore {
    inner: Arc<Inner>,
    checkpointer: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct Inner {
    dir: std::path::PathBuf,
    /// `None` once closed.
    db: std::sync::RwLock<Option<Database>>,
    /// `None` once closed.
    journal: Mutex<Option<Journal>>,
    hot: Mutex<Hot>,
    /// Held by a claim and by a checkpoint's move of hot items into the
    /// table: a claim sees every item exactly once, in seq order; and a
    /// journal segment is deleted only under it, so a hot item's record
    /// can be read while it is held.
    claiming: Mutex<()>,
    /// A non-durable write happened since the last checkpoint.
    dirty: AtomicBool,
    /// Journal bytes appended since the last checkpoint began.
    journaled: AtomicU64,
    /// How many table items one claim looks at ([`MAX_CLAIM_SCAN`]).
    claim_scan: std::sync::atomic::AtomicUsize,
}

struct Journal {
    wal: Wal,
    next_seq: u64,
    /// Wakes the checkpointer (a spare segment is wanted, or items came);
    /// dropped on close, which makes it checkpoint and stop.
    wake: mpsc::Sender<()>,
}

/// Outbox items acknowledged (in the journal) since the last checkpoint.
/// Items with a seq up to `cold_upto` are in the outbox table (or gone);
/// items above it are here only, so delivering them costs no table write.
#[derive(Default)]
struct Hot {
    items: BTreeMap<u64, HotItem>,
    cold_upto: u64,
    /// Highest seq acknowledged.
    acked: u64,
    /// Items arrived since the last checkpoint.
    fresh: bool,
    /// Snapshot changes acknowledged since the last checkpoint (newer than
    /// the table), by callback id.
    snapshots: HashMap<String, HotSnap>,
    /// Per callback id, the highest seq of its items put in the table (an
    /// upper bound: delivered ones are not taken off; cleared when the
    /// table is empty). A claim whose scan stopped short of the table's
    /// end tells by it which callbacks may have older items beyond.
    cold_last: HashMap<String, u64>,
    /// Every waiting item (hot and in the table), counted for the bounds.
    tally: Tally,
}

impl RedbStore {
    /// Opens (creating) `dir/push.redb` and migrates it to [`SCHEMA_VERSION`].
    pub fn open(dir: &Path) -> Result<RedbStore, StoreError> {
        Self::open_with(dir, true)
    }

    /// `timed: false` (tests) checkpoints only on close.
    fn open_with(dir: &Path, timed: bool) -> Result<RedbStore, StoreError> {
        std::fs::create_dir_all(dir).map_err(|x| e(format!("{}: {x}", dir.display())))?;
        let db = redb::Builder::new()
            .set_cache_size(CACHE_BYTES)
            .create(dir.join("push.redb"))
            .map_err(e)?;
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
        let (wake, woken) = mpsc::channel();
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            db: std::sync::RwLock::new(Some(db)),
            journal: Mutex::new(None),
            hot: Mutex::new(Hot::default()),
            claiming: Mutex::new(()),
            dirty: AtomicBool::new(false),
            journaled: AtomicU64::new(0),
            claim_scan: std::sync::atomic::AtomicUsize::new(MAX_CLAIM_SCAN),
        });
        // Items acknowledged after the last checkpoint come back from the
        // journal; older ones are in the table (or were delivered).
        let (next_seq, applied) = inner.replay(dir)?;
        let (cold_last, tally) = inner.release_leases()?;
        let mut journal = Wal::open(dir, applied)?;
        journal.drop_covered(applied)?;
        if let Ok(mut h) = inner.hot.lock() {
            h.cold_upto = applied;
            h.acked = applied;
            h.cold_last = cold_last;
            h.tally = tally;
        }
        if let Ok(mut j) = inner.journal.lock() {
            *j = Some(Journal {
                wal: journal,
                next_seq,
                wake,
            });
        }
        let me = inner.clone();
        let handle = std::thread::Builder::new()
            .name("a2a-push-checkpoint".into())
            .spawn(move || me.checkpoint_loop(woken, timed))
            .map_err(e)?;
        Ok(RedbStore {
            inner,
            checkpointer: Mutex::new(Some(handle)),
        })
    }
}

fn poisoned<T>(_: T) -> StoreError {
    e("store lock poisoned")
}

impl Inner {
    fn begin_write(&self) -> Result<redb::WriteTransaction, StoreError> {
        let g = self.db.read().map_err(poisoned)?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_write()
            .map_err(e)
    }

    fn begin_read(&self) -> Result<redb::ReadTransaction, StoreError> {
        let g = self.db.read().map_err(poisoned)?;
        g.as_ref()
            .ok_or_else(|| e("store closed"))?
            .begin_read()
            .map_err(e)
    }

    fn hot(&self) -> Result<std::sync::MutexGuard<'_, Hot>, StoreError> {
        self.hot.lock().map_err(poisoned)
    }

    /// The version of a config's snapshot (the acknowledged change still in
    /// memory, else the table's).
    fn snapshot_version(&self, callback_id: &str) -> Result<u64, StoreError> {
        if let Some(s) = self.hot()?.snapshots.get(callback_id) {
            return Ok(s.version);
        }
        Ok(self.table_snapshot(callback_id)?.version)
    }

    /// A config's snapshot: the acknowledged change still in memory (its
    /// task read from its journal record), else the table's. (A checkpoint
    /// writes the table before it lets go of the memory entry, and deletes
    /// the record only after: one of the two is always the newest, and a
    /// record found gone means the table has it.)
    fn snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError> {
        for _ in 0..4 {
            let hot = self.hot()?.snapshots.get(callback_id).copied();
            let Some(s) = hot else {
                break;
            };
            if let Some(r) = wal::read_at(&self.dir, s.at)? {
                let task = r.snapshot.and_then(|w| w.task);
                return Ok(Snapshot {
                    version: s.version,
                    task,
                });
            }
        }
        self.table_snapshot(callback_id)
    }

    fn table_snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError> {
        let tx = self.begin_read().map_err(e)?;
        let t = tx.open_table(SNAPSHOTS).map_err(e)?;
        match t.get(callback_id).map_err(e)? {
            Some(g) => dec(g.value()),
            None => Ok(Snapshot::default()),
        }
    }

    /// A hot item whole: its body read back from its journal record (call
    /// under `claiming`, which keeps the record's segment).
    fn hot_item(&self, h: HotItem) -> Result<OutboxItem, StoreError> {
        match wal::read_at(&self.dir, h.at)? {
            Some(r) => Ok(h.meta.item(r.item.body)),
            None => Err(e(format!(
                "journal record of pending item {} missing",
                h.meta.seq
            ))),
        }
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

    /// Outbox items in the table (those at or below `cold_upto`).
    fn cold_len(&self) -> Result<u64, StoreError> {
        let tx = self.begin_read()?;
        tx.open_table(OUTBOX).map_err(e)?.len().map_err(e)
    }
}

/// Removes items `seqs` from the outbox tables of `tx`: the state of
/// those that were there.
fn remove_cold(tx: &redb::WriteTransaction, seqs: &[u64]) -> Result<Vec<Meta>, StoreError> {
    let mut out = tx.open_table(OUTBOX).map_err(e)?;
    let mut bodies = tx.open_table(BODIES).map_err(e)?;
    let mut gone = Vec::new();
    for s in seqs {
        if let Some(g) = out.remove(*s).map_err(e)? {
            gone.push(dec::<Meta>(g.value())?);
        }
        bodies.remove(*s).map_err(e)?;
    }
    Ok(gone)
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        self.close();
    }
}

impl Store for RedbStore {
    fn close(&self) {
        // No more accepts; the checkpointer moves what was acknowledged into
        // the table and stops; then the file is released.
        if let Ok(mut j) = self.inner.journal.lock() {
            *j = None;
        }
        if let Some(h) = self.checkpointer.lock().ok().and_then(|mut h| h.take()) {
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
        {
            let mut h = self.inner.hot()?;
            for c in &gone {
                h.snapshots.remove(&c.callback_id);
            }
        }
        self.inner.write(|tx| {
            let mut t = tx.open_table(CONFIGS).map_err(e)?;
            let mut snaps = tx.open_table(SNAPSHOTS).map_err(e)?;
            for c in &gone {
                t.remove(c.callback_id.as_str()).map_err(e)?;
                snaps.remove(c.callback_id.as_str()).map_err(e)?;
            }
            Ok(gone.len())
        })
    }

    fn enqueue_bounded(
        &self,
        items: Vec<(OutboxItem, Option<SnapshotWrite>)>,
        bounds: &OutboxBounds,
    ) -> Result<Vec<Enqueued>, StoreError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let mut guard = self.inner.journal.lock().map_err(poisoned)?;
        let j = guard.as_mut().ok_or_else(|| e("store closed"))?;
        let first = j.next_seq;
        // Snapshot versions as the records before leave them.
        let mut versions: HashMap<String, u64> = HashMap::new();
        // What the records before add to the counts.
        let mut adding = Tally::default();
        let mut answers = Vec::with_capacity(items.len());
        let mut records = Vec::with_capacity(items.len());
        for (mut item, change) in items {
            let bytes = counted_bytes(&item);
            let refused =
                self.inner
                    .hot()?
                    .tally
                    .refuses(bounds, &item.callback_id, bytes, &adding);
            if let Some(full) = refused {
                answers.push(Enqueued::Full(full));
                continue;
            }
            if let Some(w) = &change {
                let now = match versions.get(&w.callback_id) {
                    Some(v) => *v,
                    None => self.inner.snapshot_version(&w.callback_id)?,
                };
                if now != w.base {
                    answers.push(Enqueued::Stale);
                    continue;
                }
                versions.insert(w.callback_id.clone(), w.base + 1);
            }
            adding.add(&item.callback_id, bytes);
            item.seq = first + records.len() as u64;
            answers.push(Enqueued::Seq(item.seq));
            records.push((item, change));
        }
        if records.is_empty() {
            return Ok(answers);
        }
        // Seqs are spent even if the append fails (a torn record may hold
        // them; a reused seq would be ambiguous on replay).
        j.next_seq += records.len() as u64;
        let places = j.wal.append(&records)?;
        let journaled: u64 = places.iter().map(|a| 8 + u64::from(a.len)).sum();
        self.inner.journaled.fetch_add(journaled, Ordering::Relaxed);
        {
            // Under the journal lock: hot items arrive in seq order. Only
            // their state stays in memory; the body is in the journal.
            let mut h = self.inner.hot()?;
            h.acked = h.acked.max(first + records.len() as u64 - 1);
            h.fresh = true;
            h.tally.merge(adding);
            for ((item, change), at) in records.into_iter().zip(places) {
                if let Some(w) = change {
                    let version = w.base + 1;
                    h.snapshots.insert(w.callback_id, HotSnap { version, at });
                }
                h.items.insert(
                    item.seq,
                    HotItem {
                        meta: Meta::of(&item),
                        at,
                    },
                );
            }
        }
        let _ = j.wake.send(());
        Ok(answers)
    }

    fn snapshot(&self, callback_id: &str) -> Result<Snapshot, StoreError> {
        self.inner.snapshot(callback_id)
    }

    fn pending(&self, limit: usize) -> Result<Vec<OutboxItem>, StoreError> {
        let _claims = self.inner.claiming.lock().map_err(poisoned)?;
        let mut out = Vec::new();
        {
            let tx = self.inner.begin_read().map_err(e)?;
            let t = tx.open_table(OUTBOX).map_err(e)?;
            let bodies = tx.open_table(BODIES).map_err(e)?;
            for r in t.iter().map_err(e)?.take(limit) {
                let (k, v) = r.map_err(e)?;
                let meta: Meta = dec(v.value())?;
                let body = match bodies.get(k.value()).map_err(e)? {
                    Some(b) => body_of(b.value())?,
                    None => return Err(e(format!("no body of item {}", k.value()))),
                };
                out.push(meta.item(body));
            }
        }
        let room = limit.saturating_sub(out.len());
        let hot: Vec<HotItem> = self
            .inner
            .hot()?
            .items
            .values()
            .take(room)
            .cloned()
            .collect();
        for h in hot {
            out.push(self.inner.hot_item(h)?);
        }
        Ok(out)
    }

    fn reschedule(&self, item: &OutboxItem, held_by: &str) -> Result<(), StoreError> {
        {
            let mut h = self.inner.hot()?;
            if let Some(x) = h.items.get_mut(&item.seq) {
                if x.meta.lease_owner == held_by {
                    x.meta = x.meta.rescheduled(item);
                }
                return Ok(());
            }
            if item.seq > h.cold_upto {
                // Delivered meanwhile (not in the table, not hot).
                return Ok(());
            }
        }
        self.inner.write_lazy(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            // Only while still pending (a completed item stays gone) and
            // leased to `held_by`.
            let cur = match t.get(item.seq).map_err(e)? {
                Some(cur) => Some(dec::<Meta>(cur.value())?),
                None => None,
            };
            if let Some(cur) = cur.filter(|c| c.lease_owner == held_by) {
                let v = enc(&cur.rescheduled(item))?;
                t.insert(item.seq, v.as_slice()).map_err(e)?;
            }
            Ok(())
        })
    }

    fn claim_within(
        &self,
        owner: &str,
        now_ms: i64,
        lease_ms: i64,
        limit: usize,
        run_limit: usize,
        max_bytes: u64,
    ) -> Result<Vec<OutboxItem>, StoreError> {
        let _claims = self.inner.claiming.lock().map_err(poisoned)?;
        // Table items come first (every one is older than every hot one).
        let mut take = budget::Take::new(now_ms, run_limit, limit, max_bytes);
        let mut got = Vec::new();
        let window = self.inner.claim_scan.load(Ordering::Relaxed);
        // The last seq looked at, when the scan stopped at its window with
        // table items possibly left beyond it.
        let mut cut: Option<u64> = None;
        let cold = self.inner.cold_len()?;
        if cold > 0 {
            self.inner.write_lazy(|tx| {
                let mut t = tx.open_table(OUTBOX).map_err(e)?;
                let mut chosen = Vec::new();
                for (scanned, r) in t.iter().map_err(e)?.enumerate() {
                    if take.done() {
                        break;
                    }
                    let (k, v) = r.map_err(e)?;
                    if scanned == window {
                        cut = Some(k.value().saturating_sub(1));
                        break;
                    }
                    let meta: Meta = dec(v.value())?;
                    if take.admits(&meta) {
                        chosen.push(meta);
                    }
                }
                let bodies = tx.open_table(BODIES).map_err(e)?;
                for mut meta in chosen {
                    meta.lease_owner = owner.to_string();
                    meta.lease_until_ms = now_ms + lease_ms;
                    t.insert(meta.seq, enc(&meta)?.as_slice()).map_err(e)?;
                    let body = match bodies.get(meta.seq).map_err(e)? {
                        Some(b) => body_of(b.value())?,
                        None => return Err(e(format!("no body of item {}", meta.seq))),
                    };
                    got.push(meta.item(body));
                }
                Ok(())
            })?;
        }
        let hot: Vec<HotItem> = {
            let mut h = self.inner.hot()?;
            let Hot {
                items, cold_last, ..
            } = &mut *h;
            if cold == 0 {
                cold_last.clear();
            }
            let mut chosen = Vec::new();
            for item in items.values_mut() {
                if take.done() {
                    break;
                }
                // Per-callback order: none of a callback that may still have
                // table items beyond the scanned window (all older than this).
                if let Some(cut) = cut {
                    if cold_last
                        .get(&item.meta.callback_id)
                        .is_some_and(|last| *last > cut)
                    {
                        continue;
                    }
                }
                if take.admits(&item.meta) {
                    item.meta.lease_owner = owner.to_string();
                    item.meta.lease_until_ms = now_ms + lease_ms;
                    chosen.push(item.clone());
                }
            }
            chosen
        };
        // Read back without holding the hot set (accepts go on).
        for h in hot {
            got.push(self.inner.hot_item(h)?);
        }
        Ok(got)
    }

    fn renew(&self, owner: &str, seqs: &[u64], until_ms: i64) -> Result<Vec<u64>, StoreError> {
        // Ordered with claims and with a checkpoint's move of hot items.
        let _claims = self.inner.claiming.lock().map_err(poisoned)?;
        let mut kept = Vec::new();
        let mut cold = Vec::new();
        {
            let mut h = self.inner.hot()?;
            for s in seqs {
                match h.items.get_mut(s) {
                    Some(i) if i.meta.lease_owner == owner => {
                        i.meta.lease_until_ms = until_ms;
                        kept.push(*s);
                    }
                    Some(_) => {}
                    None => cold.push(*s),
                }
            }
        }
        if !cold.is_empty() {
            self.inner.write_lazy(|tx| {
                let mut t = tx.open_table(OUTBOX).map_err(e)?;
                for s in cold {
                    let cur = match t.get(s).map_err(e)? {
                        Some(v) => dec::<Meta>(v.value())?,
                        None => continue,
                    };
                    if cur.lease_owner == owner {
                        let renewed = Meta {
                            lease_until_ms: until_ms,
                            ..cur
                        };
                        t.insert(s, enc(&renewed)?.as_slice()).map_err(e)?;
                        kept.push(s);
                    }
                }
                Ok(())
            })?;
        }
        kept.sort_unstable();
        Ok(kept)
    }

    fn complete_many(&self, seqs: &[u64]) -> Result<(), StoreError> {
        let cold: Vec<u64> = {
            let mut h = self.inner.hot()?;
            let upto = h.cold_upto;
            let mut cold = Vec::new();
            for s in seqs {
                match h.items.remove(s) {
                    Some(x) => h.tally.sub(&x.meta.callback_id, x.meta.bytes),
                    None if *s <= upto => cold.push(*s),
                    None => {}
                }
            }
            cold
        };
        if cold.is_empty() {
            return Ok(());
        }
        let gone = self.inner.write_lazy(|tx| remove_cold(tx, &cold))?;
        let mut h = self.inner.hot()?;
        for m in gone {
            h.tally.sub(&m.callback_id, m.bytes);
        }
        Ok(())
    }

    fn dead_letter(&self, item: &OutboxItem, reason: &str) -> Result<(), StoreError> {
        // A hot item leaves memory now; the journal may still hold it, so
        // a replay skips seqs that are dead letters.
        let was_hot = {
            let mut h = self.inner.hot()?;
            match h.items.remove(&item.seq) {
                Some(x) => {
                    h.tally.sub(&x.meta.callback_id, x.meta.bytes);
                    true
                }
                None => false,
            }
        };
        let d = DeadLetter {
            item: item.clone(),
            reason: reason.to_string(),
            dead_ms: super::now_ms(),
        };
        let v = enc(&d)?;
        let gone = self.inner.write(|tx| {
            let gone = remove_cold(tx, &[item.seq])?.pop();
            tx.open_table(DEAD)
                .map_err(e)?
                .insert(item.seq, v.as_slice())
                .map_err(e)?;
            Ok(gone)
        })?;
        if let Some(m) = gone.filter(|_| !was_hot) {
            self.inner.hot()?.tally.sub(&m.callback_id, m.bytes);
        }
        Ok(())
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
        let _claims = self.inner.claiming.lock().map_err(poisoned)?;
        let cold = self.inner.cold_len()?;
        Ok(cold + self.inner.hot()?.items.len() as u64)
    }

    fn outbox_usage(&self) -> Result<Usage, StoreError> {
        Ok(self.inner.hot()?.tally.total())
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
pub(crate) mod tests {
    use super::*;
    use crate::push::contract;

    pub(crate) fn dir(tag: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("a2a-push-{tag}-{}", crate::ids::random_id()))
    }

    /// Runs the store contract on fresh redb stores in temporary
    /// directories, each as `wrap` makes it (the directories go after).
    pub(crate) fn contract_on_temp_stores(wrap: &dyn Fn(RedbStore) -> Box<dyn Store>) {
        let dirs = std::sync::Mutex::new(Vec::new());
        contract::run(&|| {
            let d = dir("contract");
            dirs.lock().unwrap().push(d.clone());
            wrap(RedbStore::open(&d).unwrap())
        });
        for d in dirs.into_inner().unwrap() {
            let _ = std::fs::remove_dir_all(d);
        }
    }

    #[test]
    fn contract_holds() {
        contract_on_temp_stores(&|s| Box::new(s));
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
            traceparent: String::new(),
            tracestate: String::new(),
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
        w.append(&[(item(2, 2), None), (item(3, 3), None), (item(4, 4), None)])
            .unwrap();
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

    /// A dead letter made before a crash (no checkpoint after it): its
    /// journal record is not put back on open; the next seq is.
    #[test]
    fn dead_letters_are_not_replayed_from_the_journal() {
        let dir = dir("dead");
        let s = RedbStore::open(&dir).unwrap();
        s.dead_letter(&item(3, 3), "gone").unwrap();
        s.close();
        drop(s);
        let mut w = Wal::open(&dir, 0).unwrap();
        w.append(&[(item(3, 3), None), (item(4, 4), None)]).unwrap();
        drop(w);
        let s = RedbStore::open(&dir).unwrap();
        let seqs: Vec<u64> = s.pending(10).unwrap().iter().map(|i| i.seq).collect();
        assert_eq!(seqs, [4]);
        assert_eq!(s.dead_letters().unwrap().len(), 1);
        assert_eq!(s.enqueue(item(0, 5)).unwrap(), 5);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A claim that looks at only part of a deep table still keeps each
    /// callback's order: a newer (in-memory) item of a callback that may
    /// have older items beyond the scanned window waits for them.
    #[test]
    fn a_claim_cut_short_by_its_window_keeps_per_callback_order() {
        let (d1, d2) = (dir("window"), dir("window-reopen"));
        let s = RedbStore::open_with(&d1, false).unwrap();
        s.inner.claim_scan.store(2, Ordering::Relaxed);
        let of = |cb: &str, n: u32, due: i64| OutboxItem {
            callback_id: cb.into(),
            next_attempt_ms: due,
            ..item(0, n)
        };
        // a's two items are not due before t=1000; b's first is behind them.
        s.enqueue_many(vec![of("a", 1, 1000), of("a", 2, 1000), of("b", 3, 0)])
            .unwrap();
        s.inner.try_checkpoint().unwrap();
        assert_eq!(s.inner.cold_len().unwrap(), 3);
        s.enqueue(of("b", 4, 0)).unwrap();
        let seqs = |v: Vec<OutboxItem>| v.iter().map(|i| i.seq).collect::<Vec<_>>();
        assert_eq!(
            seqs(s.claim("one", 10, 100, 10, usize::MAX).unwrap()),
            Vec::<u64>::new()
        );
        let got = s.claim("one", 2000, 100, 10, usize::MAX).unwrap();
        assert_eq!(seqs(got), [1, 2]);
        s.complete_many(&[1, 2]).unwrap();
        assert_eq!(
            seqs(s.claim("one", 2000, 100, 10, usize::MAX).unwrap()),
            [3, 4]
        );
        drop(s);
        // After a restart the table's callbacks are known again.
        let s = RedbStore::open_with(&d2, false).unwrap();
        s.enqueue_many(vec![of("a", 1, 1000), of("a", 2, 1000), of("b", 3, 0)])
            .unwrap();
        s.inner.try_checkpoint().unwrap();
        s.close();
        drop(s);
        let s = RedbStore::open_with(&d2, false).unwrap();
        s.inner.claim_scan.store(2, Ordering::Relaxed);
        s.enqueue(of("b", 4, 0)).unwrap();
        assert_eq!(
            seqs(s.claim("one", 10, 100, 10, usize::MAX).unwrap()),
            Vec::<u64>::new()
        );
        drop(s);
        let _ = std::fs::remove_dir_all(&d1);
        let _ = std::fs::remove_dir_all(&d2);
    }

    /// Items stay in memory until a checkpoint moves them: delivered ones
    /// never reach the table; pending ones do, with what changed in them
    /// while the checkpoint ran; claims see each item once either way.
    #[test]
    fn hot_items_move_to_the_table_at_a_checkpoint() {
        let dir = dir("hot");
        let s = RedbStore::open_with(&dir, false).unwrap();
        s.enqueue_many((0..4).map(|n| item(0, n)).collect())
            .unwrap();
        let got = s.claim("one", 10, 100, 2, usize::MAX).unwrap();
        assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), [1, 2]);
        s.complete(1).unwrap();
        assert_eq!(s.inner.cold_len().unwrap(), 0, "nothing written yet");
        s.inner.try_checkpoint().unwrap();
        assert_eq!(s.inner.cold_len().unwrap(), 3, "2 (leased), 3, 4 moved");
        assert!(s.inner.hot().unwrap().items.is_empty());
        // The lease moved with it: only the run behind it is not handed out.
        assert!(s.claim("two", 20, 100, 10, usize::MAX).unwrap().is_empty());
        s.enqueue(item(0, 5)).unwrap();
        let mut head = s.pending(1).unwrap().remove(0);
        head.lease_owner.clear();
        head.lease_until_ms = 0;
        head.attempts = 1;
        s.reschedule(&head, "one").unwrap();
        // A head that failed before goes alone; the run behind it once it
        // is delivered, its bodies read back from the table and journal.
        let got = s.claim("two", 20, 100, 10, usize::MAX).unwrap();
        assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), [2]);
        assert_eq!((got[0].attempts, got[0].body.as_str()), (1, "{\"n\":1}"));
        s.complete(2).unwrap();
        let got = s.claim("two", 20, 100, 10, usize::MAX).unwrap();
        assert_eq!(got.iter().map(|i| i.seq).collect::<Vec<_>>(), [3, 4, 5]);
        let bodies: Vec<&str> = got.iter().map(|i| i.body.as_str()).collect();
        assert_eq!(bodies, ["{\"n\":2}", "{\"n\":3}", "{\"n\":5}"]);
        s.complete_many(&[3, 4, 5]).unwrap();
        assert_eq!(s.outbox_len().unwrap(), 0);
        assert_eq!(s.outbox_usage().unwrap(), Usage::default());
        drop(s);
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(s.outbox_len().unwrap(), 0, "completed items stay gone");
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

    /// The counts of the bounds are rebuilt from the tables on open (the
    /// journal's records replayed first).
    #[test]
    fn bounds_survive_reopen() {
        let dir = dir("bounds-reopen");
        let s = RedbStore::open(&dir).unwrap();
        contract::bounds_before(&s);
        drop(s);
        contract::bounds_after(&RedbStore::open(&dir).unwrap());
        // What a crash leaves: the records in the journal only.
        let dir2 = dir.with_extension("crash");
        let s = RedbStore::open_with(&dir2, false).unwrap();
        contract::bounds_before(&s);
        let seg: Vec<_> = std::fs::read_dir(&dir2)
            .unwrap()
            .map(|d| d.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".log"))
            .collect();
        let kept: Vec<(std::path::PathBuf, Vec<u8>)> = seg
            .iter()
            .map(|p| (p.clone(), std::fs::read(p).unwrap()))
            .collect();
        drop(s);
        // The close checkpointed; put the journal back as it was and undo
        // the table (a fresh file, as if the checkpoint never happened).
        std::fs::remove_file(dir2.join("push.redb")).unwrap();
        for (p, b) in kept {
            std::fs::write(p, b).unwrap();
        }
        contract::bounds_after(&RedbStore::open(&dir2).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::remove_dir_all(&dir2);
    }

    #[test]
    fn snapshots_survive_reopen() {
        let dir = dir("snap-reopen");
        contract::snapshots_before(&RedbStore::open(&dir).unwrap());
        contract::snapshots_after(&RedbStore::open(&dir).unwrap());
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// What a crash leaves: snapshot changes only in the journal come back
    /// with their records; one in a record the table already covers does
    /// not undo the newer stored one.
    #[test]
    fn snapshot_changes_in_the_journal_are_replayed() {
        let dir = dir("snap-replay");
        let s = RedbStore::open(&dir).unwrap();
        contract::snapshots_before(&s);
        s.close();
        drop(s);
        let mut w = Wal::open(&dir, 0).unwrap();
        w.append(&[
            (item(4, 4), Some(contract::change("b", 0, Some("old")))),
            (item(5, 5), Some(contract::change("a", 2, Some("A3")))),
        ])
        .unwrap();
        drop(w);
        let s = RedbStore::open(&dir).unwrap();
        let a3 = Snapshot {
            version: 3,
            task: Some("A3".into()),
        };
        assert_eq!(s.snapshot("a").unwrap(), a3);
        assert_eq!(s.snapshot("b").unwrap().version, 2);
        let next = (item(0, 6), Some(contract::change("a", 3, Some("A4"))));
        assert_eq!(s.enqueue_folded(vec![next]).unwrap(), [Some(6)]);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A snapshot change still in the journal when its config is deleted
    /// does not come back as an orphan row at the next start.
    #[test]
    fn a_deleted_configs_journaled_snapshot_is_not_replayed() {
        let dir = dir("snap-orphan");
        let s = RedbStore::open(&dir).unwrap();
        contract::snapshots_before(&s);
        assert_eq!(s.delete_config("t", "a").unwrap(), 1);
        assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
        s.close();
        drop(s);
        // What a crash leaves when the delete came after a record of "a"
        // was journaled and before it was applied.
        let mut w = Wal::open(&dir, 0).unwrap();
        w.append(&[(item(5, 5), Some(contract::change("a", 2, Some("A3"))))])
            .unwrap();
        drop(w);
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
        assert_eq!(s.snapshot("b").unwrap().version, 2);
        s.close();
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A change is held in memory until a checkpoint writes it; read and
    /// checked the same before and after.
    #[test]
    fn snapshot_changes_move_to_the_table_at_a_checkpoint() {
        let dir = dir("snap-hot");
        let s = RedbStore::open_with(&dir, false).unwrap();
        s.put_config(&contract::cfg("a", "t", "a")).unwrap();
        let first = (item(0, 1), Some(contract::change("a", 0, Some("A1"))));
        assert_eq!(s.enqueue_folded(vec![first]).unwrap(), [Some(1)]);
        assert_eq!(s.inner.hot().unwrap().snapshots.len(), 1);
        s.inner.try_checkpoint().unwrap();
        assert!(s.inner.hot().unwrap().snapshots.is_empty());
        assert_eq!(s.snapshot("a").unwrap().version, 1);
        let stale = (item(0, 2), Some(contract::change("a", 0, Some("X"))));
        let next = (item(0, 3), Some(contract::change("a", 1, Some("A2"))));
        assert_eq!(
            s.enqueue_folded(vec![stale, next]).unwrap(),
            [None, Some(2)]
        );
        assert_eq!(s.snapshot("a").unwrap().task.as_deref(), Some("A2"));
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A schema-3 data dir whose ListTasks index holds whole tasks (of no
    /// known caller) opens with that index emptied; it works after.
    #[test]
    fn a_schema_3_task_index_of_whole_tasks_is_dropped() {
        let dir = dir("schema3");
        std::fs::create_dir_all(&dir).unwrap();
        let whole = TaskRecord {
            id: "t1".into(),
            updated_ms: 1,
            task: r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"history":[]}"#.into(),
        };
        {
            let db = Database::create(dir.join("push.redb")).unwrap();
            let tx = db.begin_write().unwrap();
            for m in &MIGRATIONS[..3] {
                m(&tx).unwrap();
            }
            {
                let mut meta = tx.open_table(META).unwrap();
                meta.insert("schema_version", 3).unwrap();
                let t = enc(&whole).unwrap();
                tx.open_table(TASKS)
                    .unwrap()
                    .insert("t1", t.as_slice())
                    .unwrap();
            }
            tx.commit().unwrap();
        }
        let s = RedbStore::open(&dir).unwrap();
        assert!(s.load_tasks(10).unwrap().is_empty());
        let summary = TaskRecord {
            id: "s/t2".into(),
            updated_ms: 2,
            task: "{}".into(),
        };
        s.put_tasks(std::slice::from_ref(&summary), 10).unwrap();
        assert_eq!(s.load_tasks(10).unwrap(), [summary]);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A data directory of schema 2 (before snapshots), with a config, an
    /// item in the table and one only in the journal, opens migrated: the
    /// old data is there and snapshots work.
    #[test]
    fn a_schema_2_data_dir_is_migrated_and_works() {
        let dir = dir("schema2");
        std::fs::create_dir_all(&dir).unwrap();
        {
            let db = Database::create(dir.join("push.redb")).unwrap();
            let tx = db.begin_write().unwrap();
            for m in &MIGRATIONS[..2] {
                m(&tx).unwrap();
            }
            {
                let mut meta = tx.open_table(META).unwrap();
                meta.insert("schema_version", 2).unwrap();
                meta.insert("next_seq", 2).unwrap();
                meta.insert("applied_seq", 1).unwrap();
                let c = enc(&contract::cfg("a", "t1", "c1")).unwrap();
                let mut configs = tx.open_table(CONFIGS).unwrap();
                configs.insert("a", c.as_slice()).unwrap();
                let i = enc(&item(1, 1)).unwrap();
                tx.open_table(OUTBOX)
                    .unwrap()
                    .insert(1, i.as_slice())
                    .unwrap();
            }
            tx.commit().unwrap();
        }
        // A record without a snapshot change is what schema 2 wrote.
        let mut w = Wal::open(&dir, 1).unwrap();
        w.append(&[(item(2, 2), None)]).unwrap();
        drop(w);
        let s = RedbStore::open(&dir).unwrap();
        {
            let tx = s.inner.begin_read().unwrap();
            let meta = tx.open_table(META).unwrap();
            let v = meta.get("schema_version").unwrap().unwrap().value();
            assert_eq!(v, SCHEMA_VERSION);
        }
        assert_eq!(
            s.config_by_callback("a").unwrap(),
            Some(contract::cfg("a", "t1", "c1"))
        );
        let seqs: Vec<u64> = s.pending(10).unwrap().iter().map(|i| i.seq).collect();
        assert_eq!(seqs, [1, 2]);
        assert_eq!(s.snapshot("a").unwrap(), Snapshot::default());
        let first = (item(0, 3), Some(contract::change("a", 0, Some("A1"))));
        assert_eq!(s.enqueue_folded(vec![first]).unwrap(), [Some(3)]);
        drop(s);
        let s = RedbStore::open(&dir).unwrap();
        assert_eq!(s.snapshot("a").unwrap().task.as_deref(), Some("A1"));
        assert_eq!(s.outbox_len().unwrap(), 3);
        // The item stored whole before schema 6 is counted and reads whole.
        let body = item(1, 1).body;
        let usage = s.outbox_usage().unwrap();
        assert_eq!(usage.items, 3);
        assert_eq!(s.pending(1).unwrap()[0].body, body);
        drop(s);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
