//! Keeps the ListTasks index ([`crate::tasks::TaskIndex`]) in the push
//! store: loaded on start (so tasks seen before a restart, or by another
//! instance sharing PostgreSQL, are listed to the same callers), and
//! written behind in batches by a thread of its own (never on a request's
//! path). Rows are the index's small per-caller summaries; a row that is
//! not one (a whole task, of no known caller) is never loaded.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use super::{Store, StoreError, TaskRecord};
use crate::tasks::TaskIndex;

/// How often changed tasks are written.
const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// The running writer; [`TaskSync::stop`] writes what is left.
pub struct TaskSync {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// Loads the stored tasks into `index`, then starts writing its changes.
pub fn start(index: Arc<TaskIndex>, store: Arc<dyn Store>) -> Result<TaskSync, StoreError> {
    let keep = index.limits().max_tasks;
    let stored = store.load_tasks(keep)?;
    let n = index.load(stored.into_iter().map(|r| r.task));
    if n > 0 {
        tracing::info!(tasks = n, "ListTasks index loaded from the push store");
    }
    index.track_changes();
    let stop = Arc::new((Mutex::new(false), Condvar::new()));
    let s = stop.clone();
    let thread = std::thread::Builder::new()
        .name("a2a-task-index".into())
        .spawn(move || {
            let (lock, cv) = &*s;
            loop {
                let stopping = match lock.lock() {
                    Ok(g) => match cv.wait_timeout_while(g, FLUSH_EVERY, |stop| !*stop) {
                        Ok((g, _)) => *g,
                        Err(_) => true,
                    },
                    Err(_) => true,
                };
                flush(&index, &*store, keep);
                if stopping {
                    return;
                }
            }
        })
        .map_err(|e| StoreError(e.to_string()))?;
    Ok(TaskSync {
        stop,
        thread: Some(thread),
    })
}

fn flush(index: &TaskIndex, store: &dyn Store, keep: usize) {
    let changed = index.take_changed();
    if changed.is_empty() {
        return;
    }
    let now = super::now_ms();
    let n = changed.len() as i64;
    // Later changes get later times, so recency survives the round trip.
    let records: Vec<TaskRecord> = changed
        .into_iter()
        .enumerate()
        .map(|(i, (id, summary))| TaskRecord {
            id,
            updated_ms: now - n + i as i64,
            task: summary,
        })
        .collect();
    if let Err(e) = store.put_tasks(&records, keep) {
        tracing::error!(error = %e, tasks = records.len(), "writing the ListTasks index");
    }
}

impl TaskSync {
    pub fn stop(&mut self) {
        if let Ok(mut g) = self.stop.0.lock() {
            *g = true;
        }
        self.stop.1.notify_all();
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
