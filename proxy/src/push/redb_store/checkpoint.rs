//! The store's checkpoints: the journal's records put back on open, hot
//! items moved into the outbox table with one durable commit (when quiet,
//! and at least every few seconds when busy), leases released.

use super::*;

impl Inner {
    /// Puts journal records newer than the table's applied seq into the
    /// table (durably), except those already dead letters, reading the
    /// journal one segment at a time; removes dead letters' items the
    /// table still holds (a crash between a dead letter and the next
    /// checkpoint). Returns (next seq, applied seq).
    pub(super) fn replay(&self, dir: &Path) -> Result<(u64, u64), StoreError> {
        self.write(|tx| {
            let mut meta = tx.open_table(META).map_err(e)?;
            let next = meta.get("next_seq").map_err(e)?.map_or(1, |g| g.value());
            let applied = meta
                .get("applied_seq")
                .map_err(e)?
                .map_or(next.saturating_sub(1), |g| g.value());
            let dead = tx.open_table(DEAD).map_err(e)?;
            let mut dead_seqs = std::collections::HashSet::new();
            for r in dead.iter().map_err(e)? {
                dead_seqs.insert(r.map_err(e)?.0.value());
            }
            remove_cold(tx, &dead_seqs.iter().copied().collect::<Vec<_>>())?;
            let mut out = tx.open_table(OUTBOX).map_err(e)?;
            let mut bodies = tx.open_table(BODIES).map_err(e)?;
            let mut snaps = tx.open_table(SNAPSHOTS).map_err(e)?;
            let configs = tx.open_table(CONFIGS).map_err(e)?;
            let mut top = applied;
            let mut replayed = 0usize;
            wal::replay_each(dir, |wal::Record { item, snapshot }| {
                if item.seq <= applied {
                    return Ok(());
                }
                top = top.max(item.seq);
                // Accepted, so its snapshot change holds even if the item
                // became a dead letter since.
                // (Not for a config deleted since: its snapshot went with it.)
                let live = match &snapshot {
                    Some(w) => configs.get(w.callback_id.as_str()).map_err(e)?.is_some(),
                    None => false,
                };
                if let Some(w) = snapshot.filter(|_| live) {
                    let stored = match snaps.get(w.callback_id.as_str()).map_err(e)? {
                        Some(g) => dec::<Snapshot>(g.value())?.version,
                        None => 0,
                    };
                    if w.base + 1 > stored {
                        let v = enc(&Snapshot {
                            version: w.base + 1,
                            task: w.task,
                        })?;
                        snaps
                            .insert(w.callback_id.as_str(), v.as_slice())
                            .map_err(e)?;
                    }
                }
                if dead_seqs.contains(&item.seq) {
                    return Ok(());
                }
                out.insert(item.seq, enc(&Meta::of(&item))?.as_slice())
                    .map_err(e)?;
                bodies.insert(item.seq, item.body.as_bytes()).map_err(e)?;
                replayed += 1;
                Ok(())
            })?;
            let next = next.max(top + 1);
            meta.insert("next_seq", next).map_err(e)?;
            meta.insert("applied_seq", top).map_err(e)?;
            if replayed > 0 {
                tracing::info!(replayed, "push journal: accepted notifications restored");
            }
            Ok((next, top))
        })
    }

    /// The checkpointer: prepares spare journal segments, checkpoints when
    /// quiet, at least every [`CHECKPOINT_EVERY`] when busy, and once
    /// [`CHECKPOINT_BYTES`] were journaled.
    pub(super) fn checkpoint_loop(&self, woken: mpsc::Receiver<()>, timed: bool) {
        let mut last = Instant::now();
        loop {
            let quiet = match woken.recv_timeout(CHECKPOINT_IDLE) {
                Ok(()) => {
                    while woken.try_recv().is_ok() {}
                    false
                }
                Err(mpsc::RecvTimeoutError::Timeout) => true,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.checkpoint();
                    return;
                }
            };
            self.ensure_spare();
            let due = quiet
                || last.elapsed() >= CHECKPOINT_EVERY
                || self.journaled.load(Ordering::Relaxed) >= CHECKPOINT_BYTES;
            if timed && due && self.changed() {
                self.checkpoint();
                last = Instant::now();
            }
        }
    }

    pub(super) fn changed(&self) -> bool {
        self.dirty.load(Ordering::Relaxed)
            || self.hot().is_ok_and(|h| h.fresh || !h.items.is_empty())
    }

    /// Prepares the journal's next segment, without holding the journal
    /// while its zeros are written.
    pub(super) fn ensure_spare(&self) {
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

    /// Moves the hot items into the table with one durable commit (which
    /// also persists every non-durable one before it; their bodies and
    /// snapshots are read back from the journal one record at a time),
    /// then deletes the journal segments it covers. Claims wait meanwhile; accepts,
    /// completions and reschedules go on: what they changed in the moved
    /// items is applied to the table afterwards.
    pub(super) fn checkpoint(&self) {
        if let Err(x) = self.try_checkpoint() {
            self.dirty.store(true, Ordering::Relaxed);
            tracing::error!(error = %x, "push store: checkpoint");
        }
    }

    pub(super) fn try_checkpoint(&self) -> Result<(), StoreError> {
        let _claims = self.claiming.lock().map_err(poisoned)?;
        let HotCopy { moved, top, snaps } = self.hot_copy()?;
        self.dirty.store(false, Ordering::Relaxed);
        self.commit_moved(&moved, top, &snaps)?;
        let (gone, changed) = self.settle_moved(&moved, top, &snaps)?;
        if !gone.is_empty() || !changed.is_empty() {
            self.write_lazy(|tx| {
                remove_cold(tx, &gone)?;
                let mut out = tx.open_table(OUTBOX).map_err(e)?;
                for meta in &changed {
                    out.insert(meta.seq, enc(meta)?.as_slice()).map_err(e)?;
                }
                Ok(())
            })?;
        }
        self.remove_covered_segments(top)
    }

    /// A copy of the hot set for a checkpoint.
    fn hot_copy(&self) -> Result<HotCopy, StoreError> {
        let mut h = self.hot()?;
        h.fresh = false;
        self.journaled.store(0, Ordering::Relaxed);
        Ok(HotCopy {
            moved: h.items.values().cloned().collect(),
            top: h.acked,
            snaps: h.snapshots.clone(),
        })
    }

    /// The checkpoint's one durable commit: the `moved` items, the `snaps`
    /// of configs still there, and the seqs up to `top` as applied.
    fn commit_moved(
        &self,
        moved: &[HotItem],
        top: u64,
        snaps: &HashMap<String, HotSnap>,
    ) -> Result<(), StoreError> {
        // Under `claiming` (the caller's): the records are all there.
        let record = |at: wal::At| {
            wal::read_at(&self.dir, at)?
                .ok_or_else(|| e("a journal record to checkpoint is missing"))
        };
        self.write(|tx| {
            let mut out = tx.open_table(OUTBOX).map_err(e)?;
            let mut bodies = tx.open_table(BODIES).map_err(e)?;
            for h in moved {
                let r = record(h.at)?;
                out.insert(h.meta.seq, enc(&h.meta)?.as_slice())
                    .map_err(e)?;
                bodies
                    .insert(h.meta.seq, r.item.body.as_bytes())
                    .map_err(e)?;
            }
            let mut t = tx.open_table(SNAPSHOTS).map_err(e)?;
            let configs = tx.open_table(CONFIGS).map_err(e)?;
            for (cb, snap) in snaps {
                // A config deleted since this copy was taken keeps no row.
                if configs.get(cb.as_str()).map_err(e)?.is_none() {
                    continue;
                }
                let task = record(snap.at)?.snapshot.and_then(|w| w.task);
                let stored = Snapshot {
                    version: snap.version,
                    task,
                };
                t.insert(cb.as_str(), enc(&stored)?.as_slice()).map_err(e)?;
            }
            let mut meta = tx.open_table(META).map_err(e)?;
            let next = meta.get("next_seq").map_err(e)?.map_or(1, |g| g.value());
            meta.insert("next_seq", next.max(top + 1)).map_err(e)?;
            meta.insert("applied_seq", top).map_err(e)?;
            Ok(())
        })
    }

    /// Takes the committed items and snapshots out of the hot set. Returns
    /// what changed in them meanwhile, for the table: the seqs completed
    /// (gone) and the items rescheduled (changed).
    fn settle_moved(
        &self,
        moved: &[HotItem],
        top: u64,
        snaps: &HashMap<String, HotSnap>,
    ) -> Result<(Vec<u64>, Vec<Meta>), StoreError> {
        let (mut gone, mut changed) = (Vec::new(), Vec::new());
        let mut h = self.hot()?;
        for m in moved {
            match h.items.remove(&m.meta.seq) {
                None => gone.push(m.meta.seq),
                Some(now) if now.meta != m.meta => changed.push(now.meta),
                Some(_) => {}
            }
        }
        h.cold_upto = h.cold_upto.max(top);
        for m in moved {
            let (cb, seq) = (&m.meta.callback_id, m.meta.seq);
            match h.cold_last.get_mut(cb) {
                Some(last) => *last = (*last).max(seq),
                None => {
                    h.cold_last.insert(cb.clone(), seq);
                }
            }
        }
        // In the table now, unless changed again meanwhile.
        for (cb, snap) in snaps {
            if h.snapshots
                .get(cb)
                .is_some_and(|x| x.version == snap.version)
            {
                h.snapshots.remove(cb);
            }
        }
        Ok((gone, changed))
    }

    /// Deletes the journal segments whose records are all at or below
    /// `top` (in the table now).
    fn remove_covered_segments(&self, top: u64) -> Result<(), StoreError> {
        let gone = match self.journal.lock().map_err(poisoned)?.as_mut() {
            Some(j) => j.wal.take_covered(top)?,
            None => Vec::new(),
        };
        // Deleted without holding the journal: appends go on meanwhile.
        for p in gone {
            wal::remove_segment(&p)?;
        }
        Ok(())
    }

    /// Only one process can hold the file: leases left by an earlier run
    /// (killed mid-delivery) are void. Returns [`Hot::cold_last`] and the
    /// counts of the waiting items as the table has them (read on the same
    /// pass).
    pub(super) fn release_leases(&self) -> Result<(HashMap<String, u64>, Tally), StoreError> {
        let mut cold_last = HashMap::new();
        let mut tally = Tally::default();
        self.write(|tx| {
            let mut t = tx.open_table(OUTBOX).map_err(e)?;
            let mut held = Vec::new();
            for r in t.iter().map_err(e)? {
                let (k, v) = r.map_err(e)?;
                let seq = k.value();
                let item: Meta = dec(v.value())?;
                tally.add(&item.callback_id, item.bytes);
                // In seq order: the last insert per callback is its highest.
                if item.lease_owner.is_empty() {
                    cold_last.insert(item.callback_id, seq);
                } else {
                    cold_last.insert(item.callback_id.clone(), seq);
                    held.push((seq, item));
                }
            }
            for (k, mut item) in held {
                item.lease_owner.clear();
                item.lease_until_ms = 0;
                t.insert(k, enc(&item)?.as_slice()).map_err(e)?;
            }
            Ok(())
        })?;
        Ok((cold_last, tally))
    }
}

/// What a checkpoint moves into the table: the hot items, the acked seq
/// `top`, and the snapshots. Every snapshot change up to `top` is among
/// `snaps` (they are recorded with `acked` under the same lock).
struct HotCopy {
    moved: Vec<HotItem>,
    top: u64,
    snaps: HashMap<String, HotSnap>,
}
