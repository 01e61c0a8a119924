//! The relay across instances on a PostgreSQL store (issue #36): the
//! [`Link`] of [`crate::tasks::relay`], over `push::pg_shared`.
//!
//! - Out: subscriptions opened and closed here, and event batches of the
//!   tasks subscribed to through the store, go to it on a writer thread
//!   of their own. An answer that changes such a task (a unary answer, or
//!   the event ending a stream) leaves once its batch is in the store (at
//!   most [`SETTLE_WAIT`]), so what a client does next through another
//!   instance is ordered after it. What waits for it is
//!   bounded ([`OUT_MAX_BYTES`]); a batch beyond, or one larger than a
//!   subscriber may hold (`relay_max_buffer_bytes`), or one the store
//!   would not take (down), is written as lost for its task, so the
//!   subscribers elsewhere end with an error instead of missing it.
//! - In (on the listener's thread, `push::pg_listen`): the `id:key` pairs
//!   notified are matched with this instance's subscriptions; their rows
//!   are read in id order (the store's one order), at most
//!   [`FETCH_BYTES`] at a time, and handed to the relay once each (ids
//!   already seen are skipped). After a reconnect what was missed is read
//!   from the table; rows pruned meanwhile end the subscriptions they may
//!   have held events for.
//! - The other instances' open subscriptions are kept here
//!   ([`Link::elsewhere`]), from the announcements each open and close
//!   makes (`+<instance> <sub> <task>`, `-<instance> <sub>...`), and read
//!   again from the table on each (re)connect and every [`REFRESH_EVERY`]
//!   (expired ones dropped). A subscribe goes on once its own
//!   announcement is heard here: every listening instance has been told.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::pg_shared::{task_key, PgShared, RelayRow, RelayWrite};
use super::relay_subs::{Elsewhere, Said};
use super::StoreError;
use crate::config::RelayLimits;
use crate::tasks::relay::{Link, Relay};

/// Bytes of event batches waiting for the store, at most.
pub const OUT_MAX_BYTES: usize = 4 * 1024 * 1024;
/// Bytes of event rows read from the store at once, at most (a row holds
/// at most `relay_max_buffer_bytes`).
pub const FETCH_BYTES: usize = 8 * 1024 * 1024;
/// The others' subscriptions are read again at least this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);
/// Rows written in one transaction, at most.
const WRITE_ROWS: usize = 256;
/// Tasks remembered as lost while the store is down, at most.
const MAX_LOST: usize = 4096;
/// Ids noted before they are read, at most (then read at once).
const MAX_PENDING: usize = 512;
/// Pruning the event table when something was written, this often.
const PRUNE_EVERY: Duration = Duration::from_secs(1);
/// Longest pause after a failed write.
const MAX_RETRY: Duration = Duration::from_secs(5);
/// Longest wait of an answer for its relayed events to be in the store.
pub const SETTLE_WAIT: Duration = Duration::from_millis(500);

/// What the relay across instances counts (`/metrics`).
#[derive(Default)]
pub struct RelayStats {
    /// Events written for other instances' subscribers.
    pub published: AtomicU64,
    /// Events received from other instances and handed to subscribers here.
    pub received: AtomicU64,
    /// Event batches lost on their way (over a bound, the store down).
    pub lost: AtomicU64,
}

enum Op {
    Open {
        sub: u64,
        task: String,
        done: tokio::sync::oneshot::Sender<()>,
    },
    /// With who waits for it to be in the store.
    Event(RelayWrite, Option<std::sync::mpsc::SyncSender<()>>),
}

#[derive(Default)]
struct Out {
    ops: VecDeque<Op>,
    bytes: usize,
    closed: Vec<u64>,
    lost: HashSet<String>,
    stop: bool,
}

/// What the listener's thread keeps.
struct In {
    /// The newest id heard of (every id up to it was notified and seen).
    heard: i64,
    /// The newest row handed to the relay.
    delivered: i64,
    /// Ids of rows of this instance's tasks, to read.
    pending: Vec<i64>,
    /// This instance's tasks by key, for the batch being heard.
    keys: Option<HashMap<String, Arc<str>>>,
    subs_dirty: bool,
    refreshed: Instant,
    connected_once: bool,
}

/// The link of one instance's relay to the others.
pub struct RelaySync {
    shared: Arc<PgShared>,
    relay: Weak<Relay>,
    ttl: Duration,
    max_batch: usize,
    elsewhere: RwLock<Elsewhere>,
    elsewhere_n: AtomicUsize,
    /// Subscriptions written, waiting for this instance to hear them
    /// announced (then every instance listening has been told).
    awaiting: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<()>>>,
    out: Mutex<Out>,
    cv: Condvar,
    input: Mutex<In>,
    pub stats: RelayStats,
    /// The store's listening connection is up (else nothing waits for it).
    up: AtomicBool,
    writer: Mutex<Option<JoinHandle<()>>>,
    started: AtomicBool,
}

impl RelaySync {
    /// The link of `relay` (bounds `limits`) to the instances of `shared`,
    /// its writer started.
    pub fn start(
        shared: Arc<PgShared>,
        relay: &Arc<Relay>,
        limits: RelayLimits,
    ) -> std::io::Result<Arc<RelaySync>> {
        let me = Arc::new(RelaySync {
            shared,
            relay: Arc::downgrade(relay),
            ttl: limits.max_wait + Duration::from_secs(30),
            max_batch: limits.max_buffer_bytes,
            elsewhere: RwLock::default(),
            elsewhere_n: AtomicUsize::new(0),
            awaiting: Mutex::default(),
            out: Mutex::default(),
            cv: Condvar::new(),
            input: Mutex::new(In {
                heard: 0,
                delivered: 0,
                pending: Vec::new(),
                keys: None,
                subs_dirty: true,
                refreshed: Instant::now(),
                connected_once: false,
            }),
            stats: RelayStats::default(),
            up: AtomicBool::new(false),
            writer: Mutex::new(None),
            started: AtomicBool::new(true),
        });
        let w = me.clone();
        let t = std::thread::Builder::new()
            .name("a2a-relay-writer".into())
            .spawn(move || w.write_loop())?;
        if let Ok(mut g) = me.writer.lock() {
            *g = Some(t);
        }
        Ok(me)
    }

    /// Stops the writer (what waits is written first) and removes this
    /// instance's subscriptions from the store.
    pub fn stop(&self) {
        if !self.started.swap(false, Ordering::Relaxed) {
            return;
        }
        if let Ok(mut o) = self.out.lock() {
            o.stop = true;
        }
        self.cv.notify_all();
        let t = self.writer.lock().ok().and_then(|mut g| g.take());
        if let Some(t) = t {
            let _ = t.join();
        }
    }

    fn lose(&self, out: &mut Out, task: &str) {
        self.stats.lost.fetch_add(1, Ordering::Relaxed);
        if out.lost.len() < MAX_LOST {
            out.lost.insert(task.to_string());
        }
    }

    // ---- Out: the writer ----

    fn write_loop(&self) {
        let mut retry = Duration::ZERO;
        let mut next_try = Instant::now();
        let mut failing = false;
        let mut wrote = false;
        let mut pruned = Instant::now();
        loop {
            let Ok(mut o) = self.out.lock() else { return };
            loop {
                let now = Instant::now();
                let work = !o.ops.is_empty() || !o.closed.is_empty() || !o.lost.is_empty();
                if o.stop || (work && now >= next_try) {
                    break;
                }
                let prune_at = pruned + if wrote { PRUNE_EVERY } else { 10 * PRUNE_EVERY };
                if now >= prune_at {
                    break;
                }
                let until = if work {
                    next_try.min(prune_at)
                } else {
                    prune_at
                };
                let Ok((g, _)) = self.cv.wait_timeout(o, until - now) else {
                    return;
                };
                o = g;
            }
            let stop = o.stop;
            let mut opens = Vec::new();
            let mut events = Vec::new();
            let mut settled = Vec::new();
            let mut bytes = 0;
            while let Some(op) = o.ops.pop_front() {
                match op {
                    Op::Open { sub, task, done } => opens.push((sub, task, done)),
                    Op::Event(w, waits) => {
                        bytes += w.events.len();
                        events.push(w);
                        settled.extend(waits);
                        if events.len() >= WRITE_ROWS {
                            break;
                        }
                    }
                }
            }
            o.bytes = o.bytes.saturating_sub(bytes);
            let closed = std::mem::take(&mut o.closed);
            let lost = std::mem::take(&mut o.lost);
            drop(o);

            let mut err: Option<StoreError> = None;
            for (sub, task, done) in opens {
                // Told once its announcement is heard here (or at once
                // when nothing listens).
                let up = self.up.load(Ordering::Relaxed);
                let mut done = Some(done);
                if up {
                    if let (Ok(mut a), Some(d)) = (self.awaiting.lock(), done.take()) {
                        a.insert(sub, d);
                    }
                }
                match self.shared.subscribe(sub, &task, self.ttl) {
                    Ok(()) => {
                        if let Some(d) = done {
                            let _ = d.send(());
                        }
                    }
                    Err(e) => {
                        if let Ok(mut a) = self.awaiting.lock() {
                            a.remove(&sub);
                        }
                        err = Some(e);
                    }
                }
            }
            if !closed.is_empty() {
                if let Err(e) = self.shared.unsubscribe(Some(&closed)) {
                    // They expire with their longest wait.
                    err = Some(e);
                }
            }
            let n_events: usize = events.iter().map(|w| w.events.lines().count()).sum();
            let mut batch = events;
            batch.extend(lost.iter().map(|t| RelayWrite {
                task_id: t.clone(),
                state: None,
                timestamp: None,
                lost: true,
                events: String::new(),
            }));
            if !batch.is_empty() {
                match self.shared.publish(&batch) {
                    Ok(_) => {
                        wrote = true;
                        self.stats
                            .published
                            .fetch_add(n_events as u64, Ordering::Relaxed);
                    }
                    Err(e) => {
                        // Served here all the same; the others are told
                        // the batches were lost once the store answers.
                        if let Some(relay) = self.relay.upgrade() {
                            for w in batch.iter().filter(|w| !w.lost) {
                                let events = w.events.lines();
                                let events = events.map(|l| Bytes::copy_from_slice(l.as_bytes()));
                                let (st, ts) = (w.state.clone(), w.timestamp.clone());
                                relay.deliver(&w.task_id, true, st, ts, events.collect());
                            }
                        }
                        if let Ok(mut o) = self.out.lock() {
                            for w in &batch {
                                if !w.lost {
                                    self.stats.lost.fetch_add(1, Ordering::Relaxed);
                                }
                                if o.lost.len() < MAX_LOST {
                                    o.lost.insert(w.task_id.clone());
                                }
                            }
                        }
                        err = Some(e);
                    }
                }
            }
            // Written, or not to be: who waits goes on.
            for w in settled {
                let _ = w.try_send(());
            }
            match err {
                None => {
                    if failing {
                        tracing::info!("relayed events reach the shared store again");
                    }
                    failing = false;
                    retry = Duration::ZERO;
                }
                Some(e) => {
                    if !failing {
                        tracing::warn!(error = %e, "relayed events cannot reach the shared store: other instances' subscribers of these tasks are told they were lost once it answers");
                    }
                    failing = true;
                    retry = (retry * 2).clamp(Duration::from_millis(100), MAX_RETRY);
                    next_try = Instant::now() + retry;
                }
            }
            if stop {
                // Not worth a connect timeout when the store is away: the
                // rows expire with their longest wait.
                if self.up.load(Ordering::Relaxed) && !failing {
                    let _ = self.shared.unsubscribe(None);
                }
                return;
            }
            let due = pruned + if wrote { PRUNE_EVERY } else { 10 * PRUNE_EVERY };
            if Instant::now() >= due && !failing {
                if let Err(e) = self.shared.prune_events() {
                    tracing::debug!(error = %e, "pruning relayed events");
                }
                pruned = Instant::now();
                wrote = false;
            }
        }
    }

    // ---- In: on the listener's thread ----

    /// The store's listening connection is down.
    pub fn down(&self) {
        self.up.store(false, Ordering::Relaxed);
    }

    /// The listening connection is (again) up: what was missed is read.
    pub fn connected(&self) {
        self.up.store(true, Ordering::Relaxed);
        let Ok(mut i) = self.input.lock() else { return };
        i.subs_dirty = true;
        if !i.connected_once {
            i.connected_once = true;
            match self.shared.event_ids() {
                Ok((_, newest)) => {
                    i.heard = newest;
                    i.delivered = newest;
                }
                Err(e) => tracing::debug!(error = %e, "reading relayed event ids"),
            }
            return;
        }
        let Some(relay) = self.relay.upgrade() else {
            return;
        };
        let tasks: Vec<String> = relay.tasks().iter().map(|t| t.to_string()).collect();
        if tasks.is_empty() {
            if let Ok((_, newest)) = self.shared.event_ids() {
                i.heard = i.heard.max(newest);
            }
            return;
        }
        // Rows pruned before they could be read may have held events of
        // these tasks: their subscribers cannot be served in order.
        if let Ok((oldest, _)) = self.shared.event_ids() {
            if oldest > i.heard + 1 {
                for t in &tasks {
                    relay.deliver_lost(t);
                }
            }
        }
        let limit = (FETCH_BYTES / self.max_batch.max(1)).max(1);
        loop {
            let rows = match self.shared.events_since(i.heard, &tasks, limit) {
                Ok(r) => r,
                Err(e) => {
                    tracing::debug!(error = %e, "catching up on relayed events");
                    return;
                }
            };
            let full = rows.len() == limit;
            if let Some(last) = rows.last() {
                i.heard = i.heard.max(last.id);
            }
            self.hand(&mut i, &relay, rows);
            if !full {
                return;
            }
        }
    }

    /// Notified event rows (`id:key,...`).
    pub fn heard_events(&self, payload: &str) {
        let Ok(mut guard) = self.input.lock() else {
            return;
        };
        let i = &mut *guard;
        let Some(relay) = self.relay.upgrade() else {
            return;
        };
        for pair in payload.split(',') {
            let Some((id, key)) = pair.split_once(':') else {
                continue;
            };
            let Ok(id) = id.parse::<i64>() else { continue };
            i.heard = i.heard.max(id);
            if id <= i.delivered {
                continue;
            }
            let keys = i.keys.get_or_insert_with(|| {
                relay
                    .tasks()
                    .into_iter()
                    .map(|t| (task_key(&t), t))
                    .collect()
            });
            if keys.contains_key(key) {
                i.pending.push(id);
            }
        }
        if i.pending.len() >= MAX_PENDING {
            self.fetch(i, &relay);
        }
    }

    /// Subscriptions opened (`+<instance> <sub> <task>`) or closed
    /// (`-<instance> <sub>...`, `*`: all) somewhere; anything else has
    /// the table read again.
    pub fn heard_subs(&self, payload: &str) {
        let known = match Said::read(payload) {
            Said::Opened { instance, sub, .. } if instance == self.shared.instance() => {
                let d = self.awaiting.lock().ok().and_then(|mut a| a.remove(&sub));
                if let Some(d) = d {
                    let _ = d.send(());
                }
                true
            }
            Said::Closed { instance, .. } if instance == self.shared.instance() => true,
            Said::Other => false,
            said => {
                if let Ok(mut e) = self.elsewhere.write() {
                    e.apply(said);
                    self.elsewhere_n.store(e.tasks(), Ordering::Relaxed);
                }
                true
            }
        };
        if !known {
            if let Ok(mut i) = self.input.lock() {
                i.subs_dirty = true;
            }
        }
    }

    /// What was heard is in: the noted rows are read and handed over, and
    /// the others' subscriptions read again when due.
    pub fn drained(&self) {
        let Ok(mut i) = self.input.lock() else { return };
        i.keys = None;
        if let Some(relay) = self.relay.upgrade() {
            if !i.pending.is_empty() {
                self.fetch(&mut i, &relay);
            }
        }
        if i.subs_dirty || i.refreshed.elapsed() >= REFRESH_EVERY {
            match self.shared.subscribed_elsewhere() {
                Ok(subs) => {
                    i.subs_dirty = false;
                    i.refreshed = Instant::now();
                    if let Ok(mut e) = self.elsewhere.write() {
                        *e = Elsewhere::default();
                        for (instance, sub, task) in &subs {
                            e.add(instance, *sub, task);
                        }
                        self.elsewhere_n.store(e.tasks(), Ordering::Relaxed);
                    }
                }
                Err(e) => {
                    i.refreshed = Instant::now();
                    tracing::debug!(error = %e, "reading the other instances' relayed subscriptions");
                }
            }
        }
    }

    fn fetch(&self, i: &mut In, relay: &Relay) {
        let mut ids = std::mem::take(&mut i.pending);
        ids.sort_unstable();
        ids.dedup();
        let per = (FETCH_BYTES / self.max_batch.max(1)).max(1);
        for chunk in ids.chunks(per) {
            match self.shared.events(chunk) {
                Ok(rows) => self.hand(i, relay, rows),
                Err(e) => {
                    // The rows' subscribers here cannot get them in order.
                    tracing::debug!(error = %e, "reading relayed events");
                    for t in relay.tasks() {
                        relay.deliver_lost(&t);
                    }
                    return;
                }
            }
        }
    }

    /// Hands rows (in id order) to the relay, each once; this instance's
    /// own were handed at once when relayed.
    fn hand(&self, i: &mut In, relay: &Relay, rows: Vec<RelayRow>) {
        for r in rows {
            if r.id <= i.delivered {
                continue;
            }
            i.delivered = r.id;
            let own = r.origin == self.shared.instance();
            let b = r.batch;
            if b.lost {
                // This instance's own subscribers were told (or served)
                // when the batch was lost.
                if !own {
                    relay.deliver_lost(&b.task_id);
                }
                continue;
            }
            let events: Vec<Bytes> = b
                .events
                .lines()
                .map(|l| Bytes::copy_from_slice(l.as_bytes()))
                .collect();
            let n = events.len() as u64;
            if relay.deliver(&b.task_id, own, b.state, b.timestamp, events) > 0 && !own {
                self.stats.received.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

impl Link for RelaySync {
    fn elsewhere_any(&self) -> bool {
        self.elsewhere_n.load(Ordering::Relaxed) > 0
    }

    fn elsewhere(&self, task: &str) -> bool {
        self.elsewhere_any() && self.elsewhere.read().is_ok_and(|e| e.has(task))
    }

    fn publish(
        &self,
        task: &str,
        status: Option<(&str, Option<&str>)>,
        events: &[Bytes],
        bytes: usize,
        settle: bool,
    ) {
        let Ok(mut o) = self.out.lock() else { return };
        let (ack, settled) = if settle && self.up.load(Ordering::Relaxed) && !o.stop {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            (Some(tx), Some(rx))
        } else {
            (None, None)
        };
        if bytes > self.max_batch || o.bytes + bytes > OUT_MAX_BYTES {
            self.lose(&mut o, task);
            drop(o);
            // The subscribers here are told now, the others through the store.
            if let Some(relay) = self.relay.upgrade() {
                relay.deliver_lost(task);
            }
            self.cv.notify_one();
            return;
        } else {
            let mut text = String::with_capacity(bytes + events.len());
            for (n, ev) in events.iter().enumerate() {
                if n > 0 {
                    text.push('\n');
                }
                // Compact JSON (serde_json's) holds no raw newline.
                text.push_str(&String::from_utf8_lossy(ev));
            }
            o.bytes += text.len();
            o.ops.push_back(Op::Event(
                RelayWrite {
                    task_id: task.to_string(),
                    state: status.map(|s| s.0.to_string()),
                    timestamp: status.and_then(|s| s.1).map(str::to_string),
                    lost: false,
                    events: text,
                },
                ack,
            ));
        }
        drop(o);
        self.cv.notify_one();
        if let Some(rx) = settled {
            // A blocking wait on the caller's thread, bounded: only for an
            // answer that changes a task another instance follows.
            let _ = rx.recv_timeout(SETTLE_WAIT);
        }
    }

    fn opened(&self, sub: u64, task: &str) -> Option<tokio::sync::oneshot::Receiver<()>> {
        let (done, rx) = tokio::sync::oneshot::channel();
        let mut o = self.out.lock().ok()?;
        if o.stop {
            return None;
        }
        // Announcements first: a subscribe waits for its own.
        o.ops.push_front(Op::Open {
            sub,
            task: task.to_string(),
            done,
        });
        drop(o);
        self.cv.notify_one();
        Some(rx)
    }

    fn closed(&self, sub: u64) {
        if let Ok(mut o) = self.out.lock() {
            o.closed.push(sub);
        }
        self.cv.notify_one();
    }
}

impl Drop for RelaySync {
    fn drop(&mut self) {
        self.stop();
    }
}
