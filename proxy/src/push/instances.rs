//! Several instances as one proxy (issue #36): what one instance runs to
//! share its state through a PostgreSQL store: the ListTasks index kept
//! with the store's (`task_sync::start_shared`), the relay linked to the
//! other instances (`relay_sync`), and the one listening connection that
//! wakes both (`pg_listen`). Its counters and the store's reachability
//! are what `/metrics` and `/ready` show.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::pg_listen::{Heard, Listener};
use super::pg_shared::{PgShared, RELAY_CHANNEL, SUBS_CHANNEL, TASKS_CHANNEL};
use super::relay_sync::RelaySync;
use super::task_sync::{self, SyncStats, TaskSync};
use super::StoreError;
use crate::config::RelayLimits;
use crate::tasks::relay::Relay;
use crate::tasks::TaskIndex;

/// The channels an instance listens on.
const CHANNELS: &[&str] = &[TASKS_CHANNEL, RELAY_CHANNEL, SUBS_CHANNEL];

/// One instance's part in a deployment sharing a PostgreSQL store.
pub struct Instances {
    shared: Arc<PgShared>,
    listener: Listener,
    relay: Arc<RelaySync>,
    tasks: Option<TaskSync>,
    task_stats: Arc<SyncStats>,
}

impl Instances {
    /// Starts sharing: `index` (when ListTasks is emulated) loaded from the
    /// store and kept with it, `relay` linked to the other instances.
    pub fn start(
        shared: Arc<PgShared>,
        index: Option<Arc<TaskIndex>>,
        relay: &Arc<Relay>,
        limits: RelayLimits,
    ) -> Result<Instances, StoreError> {
        let task_stats = Arc::new(SyncStats::default());
        let (tasks, wake) = match index {
            Some(ix) => {
                let (s, w) = task_sync::start_shared(ix, shared.clone(), task_stats.clone())?;
                (Some(s), Some(w))
            }
            None => (None, None),
        };
        let io = |e: std::io::Error| StoreError(e.to_string());
        let rs = RelaySync::start(shared.clone(), relay, limits).map_err(io)?;
        relay.link(rs.clone());
        let r = rs.clone();
        let was_up = AtomicBool::new(true);
        let listener = Listener::start(shared.listen_config(), CHANNELS, move |h| match h {
            Heard::Connected => {
                if !was_up.swap(true, Ordering::Relaxed) {
                    tracing::info!("the shared PostgreSQL store answers again: instances share ListTasks and relayed events again");
                }
                if let Some(w) = &wake {
                    w.remote();
                }
                r.connected();
            }
            Heard::Notified { channel, payload } => match channel {
                TASKS_CHANNEL => {
                    if let Some(w) = &wake {
                        w.remote();
                    }
                }
                RELAY_CHANNEL => r.heard_events(payload),
                SUBS_CHANNEL => r.heard_subs(payload),
                _ => {}
            },
            Heard::Drained => r.drained(),
            Heard::Down(reason) => {
                r.down();
                if was_up.swap(false, Ordering::Relaxed) {
                    tracing::warn!(error = reason, "the shared PostgreSQL store does not answer: each instance lists what it has and relays its own events until it does");
                }
            }
        })
        .map_err(io)?;
        Ok(Instances {
            shared,
            listener,
            relay: rs,
            tasks,
            task_stats,
        })
    }

    /// Stops listening and writes what waits.
    pub fn stop(&mut self) {
        self.listener.stop();
        self.relay.stop();
        if let Some(mut t) = self.tasks.take() {
            t.stop();
        }
    }

    /// Whether the store's listening connection is up now.
    pub fn reachable(&self) -> bool {
        self.listener.up()
    }

    /// What `/ready` says of the store.
    pub fn report(&self) -> Value {
        json!({
            "backend": "postgres",
            "shared": true,
            "reachable": self.reachable(),
            "instance": self.shared.instance(),
        })
    }

    /// This instance's counters, Prometheus text.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let g = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
        let s = &self.relay.stats;
        let _ = writeln!(out, "# HELP a2a_proxy_relay_remote_events_total Relayed events of other instances handed to subscribers here.\n# TYPE a2a_proxy_relay_remote_events_total counter\na2a_proxy_relay_remote_events_total {}", g(&s.received));
        let _ = writeln!(out, "# HELP a2a_proxy_relay_published_events_total Relayed events written for other instances' subscribers.\n# TYPE a2a_proxy_relay_published_events_total counter\na2a_proxy_relay_published_events_total {}", g(&s.published));
        let _ = writeln!(out, "# HELP a2a_proxy_relay_lost_batches_total Relayed event batches that could not reach other instances.\n# TYPE a2a_proxy_relay_lost_batches_total counter\na2a_proxy_relay_lost_batches_total {}", g(&s.lost));
        let _ = writeln!(out, "# HELP a2a_proxy_list_tasks_remote_total ListTasks summaries other instances wrote, applied here.\n# TYPE a2a_proxy_list_tasks_remote_total counter\na2a_proxy_list_tasks_remote_total {}", g(&self.task_stats.applied));
        let _ = writeln!(out, "# HELP a2a_proxy_shared_store_up Whether the shared PostgreSQL store's listening connection is up.\n# TYPE a2a_proxy_shared_store_up gauge\na2a_proxy_shared_store_up {}", u8::from(self.reachable()));
    }
}

impl Drop for Instances {
    fn drop(&mut self) {
        self.stop();
    }
}
