//! Keeps the ListTasks index ([`crate::tasks::TaskIndex`]) in the push
//! store, by a thread of its own (never on a request's path). Rows are the
//! index's small per-caller summaries; a row that is not one (a whole
//! task, of no known caller) is never loaded.
//!
//! - One instance (the embedded store, [`start`]): loaded on start (so
//!   tasks seen before a restart are listed to the same callers) and
//!   written behind every [`FLUSH_EVERY`].
//! - Several instances on PostgreSQL ([`start_shared`]): the store is the
//!   truth, each instance's index a cache of it. A change is written as
//!   soon as it is made (at most one write per [`SHARED_GAP`], so a burst
//!   is one transaction), and every write notifies the others, which read
//!   what changed since they last looked ([`TaskWake::remote`], woken by
//!   `push::pg_listen`; at least every [`CATCH_UP_EVERY`] whatever they
//!   heard). Changes that could not be written (the store down) stay
//!   waiting in the index and go with the next write.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::pg_shared::PgShared;
use super::{Store, StoreError, TaskRecord};
use crate::tasks::TaskIndex;

/// How often changed tasks are written (one instance).
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// Shortest time between two writes of a shared index.
pub const SHARED_GAP: Duration = Duration::from_millis(50);
/// A shared index reads the others' changes at least this often.
pub const CATCH_UP_EVERY: Duration = Duration::from_secs(1);
/// Changes read in one query.
const CATCH_UP_ROWS: usize = 1000;
/// Longest pause after a failed write.
const MAX_RETRY: Duration = Duration::from_secs(5);

#[derive(Default)]
struct Flags {
    stop: bool,
    /// Local changes wait.
    local: bool,
    /// Another instance wrote.
    remote: bool,
}

type Shared = Arc<(Mutex<Flags>, Condvar)>;

/// The running writer; [`TaskSync::stop`] writes what is left.
pub struct TaskSync {
    flags: Shared,
    thread: Option<JoinHandle<()>>,
}

/// Wakes a shared index's thread when the others wrote.
#[derive(Clone)]
pub struct TaskWake(Shared);

impl TaskWake {
    /// Another instance changed the index (or a listener reconnected).
    pub fn remote(&self) {
        set(&self.0, |f| f.remote = true);
    }
}

fn set(flags: &Shared, f: impl FnOnce(&mut Flags)) {
    if let Ok(mut g) = flags.0.lock() {
        f(&mut g);
    }
    flags.1.notify_all();
}

/// Loads the stored tasks into `index`, then starts writing its changes.
pub fn start(index: Arc<TaskIndex>, store: Arc<dyn Store>) -> Result<TaskSync, StoreError> {
    let keep = index.limits().max_tasks;
    let stored = store.load_tasks(keep)?;
    let n = index.load_seen(stored.into_iter().map(|r| (r.task, Some(r.updated_ms))));
    if n > 0 {
        tracing::info!(tasks = n, "ListTasks index loaded from the push store");
    }
    index.track_changes();
    let flags: Shared = Arc::default();
    let s = flags.clone();
    let thread = std::thread::Builder::new()
        .name("a2a-task-index".into())
        .spawn(move || {
            let (lock, cv) = &*s;
            loop {
                let stopping = match lock.lock() {
                    Ok(g) => match cv.wait_timeout_while(g, FLUSH_EVERY, |f| !f.stop) {
                        Ok((g, _)) => g.stop,
                        Err(_) => true,
                    },
                    Err(_) => true,
                };
                let changed = index.take_changed_seen();
                if let Err(e) = write(&changed, |r| store.put_tasks(r, keep)) {
                    tracing::error!(error = %e, tasks = changed.len(), "writing the ListTasks index");
                }
                if stopping {
                    return;
                }
            }
        })
        .map_err(|e| StoreError(e.to_string()))?;
    Ok(TaskSync {
        flags,
        thread: Some(thread),
    })
}

/// Writes `changed` (oldest first) with `put`, each with when it was
/// seen, so recency survives the round trip (and orders the store).
fn write(
    changed: &[(String, String, i64)],
    put: impl FnOnce(&[TaskRecord]) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    if changed.is_empty() {
        return Ok(());
    }
    let records: Vec<TaskRecord> = changed
        .iter()
        .map(|(id, summary, seen)| TaskRecord {
            id: id.clone(),
            updated_ms: *seen,
            task: summary.clone(),
        })
        .collect();
    put(&records)
}

/// What a shared index's thread counts (`/metrics`).
#[derive(Default)]
pub struct SyncStats {
    /// Summaries other instances wrote, applied here.
    pub applied: std::sync::atomic::AtomicU64,
    /// Writes that failed (the store down).
    pub failed_writes: std::sync::atomic::AtomicU64,
}

/// Loads the `shared` store's index into `index` and keeps both in step:
/// this instance's changes written as they come, the others' read as
/// they are notified. The wake is for the listener.
pub fn start_shared(
    index: Arc<TaskIndex>,
    shared: Arc<PgShared>,
    stats: Arc<SyncStats>,
) -> Result<(TaskSync, TaskWake), StoreError> {
    let keep = index.limits().max_tasks;
    let (mut cursor, stored) = shared.load_tasks(keep)?;
    let n = index.load_seen(stored.into_iter().map(|r| (r.task, Some(r.updated_ms))));
    if n > 0 {
        tracing::info!(tasks = n, "ListTasks index loaded from the shared store");
    }
    index.track_changes();
    let flags: Shared = Arc::default();
    let wake = flags.clone();
    index.on_change(Arc::new(move || set(&wake, |f| f.local = true)));
    let s = flags.clone();
    let thread = std::thread::Builder::new()
        .name("a2a-task-index".into())
        .spawn(move || {
            let (lock, cv) = &*s;
            let mut last_write = Instant::now() - SHARED_GAP;
            let mut last_read = Instant::now();
            let mut retry = Duration::ZERO;
            let mut failing = false;
            loop {
                let Ok(g) = lock.lock() else { return };
                let wait = CATCH_UP_EVERY.saturating_sub(last_read.elapsed());
                let Ok((mut g, _)) =
                    cv.wait_timeout_while(g, wait, |f| !(f.stop || f.local || f.remote))
                else {
                    return;
                };
                let flags = std::mem::take(&mut *g);
                drop(g);
                // Stopping while the store is away: what waits is not
                // written (a connect timeout would hold the stop).
                if flags.stop && failing {
                    return;
                }
                if flags.local || flags.stop {
                    // A burst becomes one write.
                    let gap = SHARED_GAP.max(retry).saturating_sub(last_write.elapsed());
                    if !gap.is_zero() && !flags.stop {
                        std::thread::sleep(gap);
                    }
                    let changed = index.take_changed_seen();
                    last_write = Instant::now();
                    match write(&changed, |r| shared.put_tasks(r, keep)) {
                        Ok(()) => {
                            if failing {
                                tracing::info!("the ListTasks index is written to the shared store again");
                            }
                            failing = false;
                            retry = Duration::ZERO;
                        }
                        Err(e) => {
                            stats.failed_writes.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            if !failing {
                                tracing::error!(error = %e, tasks = changed.len(), "writing the ListTasks index to the shared store; kept, written when it answers again");
                            }
                            failing = true;
                            index.unflushed(changed.iter().map(|(k, _, _)| k.as_str()));
                            retry = (retry * 2).clamp(Duration::from_millis(100), MAX_RETRY);
                            if !flags.stop {
                                set(&s, |f| f.local = true);
                            }
                        }
                    }
                }
                if flags.stop {
                    return;
                }
                if flags.remote || last_read.elapsed() >= CATCH_UP_EVERY {
                    last_read = Instant::now();
                    cursor = catch_up(&index, &shared, cursor, &stats);
                }
            }
        })
        .map_err(|e| StoreError(e.to_string()))?;
    Ok((
        TaskSync {
            flags: flags.clone(),
            thread: Some(thread),
        },
        TaskWake(flags),
    ))
}

/// Applies the others' changes after `cursor`; the cursor reached.
fn catch_up(index: &TaskIndex, shared: &PgShared, mut cursor: i64, stats: &SyncStats) -> i64 {
    loop {
        let rows = match shared.tasks_since(cursor, CATCH_UP_ROWS) {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(error = %e, "reading the shared ListTasks index");
                return cursor;
            }
        };
        let full = rows.len() == CATCH_UP_ROWS;
        if let Some(last) = rows.last() {
            cursor = cursor.max(last.change);
        }
        let feed: Vec<(String, Option<String>, i64)> = rows
            .into_iter()
            .map(|r| (r.id, r.summary, r.updated_ms))
            .collect();
        let n = index.apply_feed(&feed);
        stats
            .applied
            .fetch_add(n as u64, std::sync::atomic::Ordering::Relaxed);
        if !full {
            return cursor;
        }
    }
}

impl TaskSync {
    pub fn stop(&mut self) {
        set(&self.flags, |f| f.stop = true);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for TaskSync {
    fn drop(&mut self) {
        self.stop();
    }
}
