//! The delivery worker: claims due notifications from the outbox, posts
//! each to its subscriber's webhook (in the subscriber's version, with its
//! token and authentication), retries with exponential backoff and jitter,
//! and moves an item to the dead letters after `push.max_attempts`.
//!
//! Order is kept per config: the store hands out a config's notifications
//! only from its oldest one, and a run is posted one after the other,
//! stopping at the first failure. Delivery is at least once: an item leaves
//! the outbox only after its webhook answered 2xx.
//!
//! Several instances on one store (issue #25): a claim leases items for
//! `push.lease_ms` and takes per config no more than this instance delivers
//! in half a lease at its recent pace. A heartbeat renews every held lease
//! each third of the lease; an item whose lease was lost (not renewed in
//! time, or taken over by another instance after it ran out) is not posted:
//! before each post the run checks that its lease still has a third to go,
//! and stops otherwise. So while instances live, each item is posted by one
//! of them; a crashed instance's items are taken over once its leases run
//! out (the post in flight at the crash may then arrive twice).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, Notify};

use super::layer::{blocking, Push};
use super::webhook::{post, Net, Undelivered};
use super::OutboxItem;

/// Items claimed per round (and per config at most).
const CLAIM_LIMIT: usize = 256;
/// Configs delivered to at once.
const MAX_IN_FLIGHT: usize = 64;
/// Idle poll interval (retries become due without a wake-up).
const POLL: Duration = Duration::from_millis(200);
/// Bytes of claimed notifications' bodies the worker holds at once: a
/// claim takes no more than what is left of it (its first item whatever
/// its size), so the worker's memory does not grow with the backlog.
const IN_FLIGHT_BYTES: u64 = 32 << 20;

/// The running worker; stopped by [`Worker::stop`] or drop.
pub struct Worker {
    stop: Arc<(AtomicBool, Notify)>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the worker on its own thread and runtime.
    pub fn start(push: Arc<Push>) -> std::io::Result<Worker> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("a2a-push")
            .enable_all()
            .build()?;
        let stop = Arc::new((AtomicBool::new(false), Notify::new()));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("a2a-push-worker".into())
            .spawn(move || rt.block_on(run(push, s)))?;
        Ok(Worker {
            stop,
            thread: Some(thread),
        })
    }

    pub fn stop(&mut self) {
        self.stop.0.store(true, Ordering::Release);
        self.stop.1.notify_waiters();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The leases this worker holds: per seq, the claim that took it, the
/// instant (this host's monotonic clock) until which it may still be
/// posted (its lease's end less a third of the lease) and its body's size.
struct Leases {
    /// Names this worker's leases in the store: the instance id and a
    /// per-start nonce (a restart, or a second process given the same
    /// `push.instance_id`, never takes a lease for its own).
    owner: String,
    lease: Duration,
    held: std::sync::Mutex<HashMap<u64, (u64, Instant, u64)>>,
    claims: AtomicU64,
    /// Recent time per post (moving average), microseconds.
    pace_us: AtomicU64,
}

impl Leases {
    fn new(push: &Push) -> Leases {
        let nonce = crate::ids::random_id();
        Leases {
            owner: format!("{}#{}", push.settings.instance_id, &nonce[..12]),
            lease: push.settings.lease,
            held: std::sync::Mutex::new(HashMap::new()),
            claims: AtomicU64::new(0),
            // Until measured: a tenth of the timeout per post.
            pace_us: AtomicU64::new((push.settings.delivery_timeout.as_micros() / 10) as u64),
        }
    }

    fn lease_ms(&self) -> i64 {
        self.lease.as_millis() as i64
    }

    /// Until when an item leased at `at` may be posted.
    fn usable_until(&self, at: Instant) -> Instant {
        at + self.lease - self.lease / 3
    }

    /// Items per config one claim takes: what this instance posts in half
    /// a lease at its recent pace.
    fn run_limit(&self) -> usize {
        let per = self.pace_us.load(Ordering::Relaxed).max(1_000);
        let n = (self.lease.as_micros() as u64 / 2) / per;
        n.clamp(1, CLAIM_LIMIT as u64) as usize
    }

    fn paced(&self, took: Duration) {
        let s = took.as_micros().min(u64::MAX as u128) as u64;
        let old = self.pace_us.load(Ordering::Relaxed);
        let new = old - old / 4 + s / 4;
        self.pace_us.store(new, Ordering::Relaxed);
    }

    /// Records a claim made at `at`; its number.
    fn claimed(&self, items: &[OutboxItem], at: Instant) -> u64 {
        let claim = self.claims.fetch_add(1, Ordering::Relaxed) + 1;
        let until = self.usable_until(at);
        if let Ok(mut h) = self.held.lock() {
            for i in items {
                h.insert(i.seq, (claim, until, super::counted_bytes(i)));
            }
        }
        claim
    }

    /// The bytes of the bodies held.
    fn held_bytes(&self) -> u64 {
        self.held
            .lock()
            .map(|h| h.values().map(|(_, _, b)| *b).sum())
            .unwrap_or(0)
    }

    /// Whether `seq`, of claim `claim`, may be posted now.
    fn may_post(&self, seq: u64, claim: u64) -> bool {
        let now = Instant::now();
        self.held
            .lock()
            .map(|h| matches!(h.get(&seq), Some((c, until, _)) if *c == claim && now < *until))
            .unwrap_or(false)
    }

    fn forget(&self, seqs: impl IntoIterator<Item = u64>) {
        if let Ok(mut h) = self.held.lock() {
            for s in seqs {
                h.remove(&s);
            }
        }
    }

    /// The held seqs, each with the claim that took it.
    fn held(&self) -> Vec<(u64, u64)> {
        self.held
            .lock()
            .map(|h| h.iter().map(|(s, (c, _, _))| (*s, *c)).collect())
            .unwrap_or_default()
    }

    /// A renewal sent at `at` for `asked` kept `kept`: those are usable a
    /// lease longer, the others are lost (unless given back and claimed
    /// again meanwhile). How many were lost.
    fn renewed(&self, asked: &[(u64, u64)], kept: &[u64], at: Instant) -> usize {
        let until = self.usable_until(at);
        let kept: std::collections::HashSet<u64> = kept.iter().copied().collect();
        let mut lost = 0;
        if let Ok(mut h) = self.held.lock() {
            for (s, claim) in asked {
                let Some(e) = h.get_mut(s).filter(|e| e.0 == *claim) else {
                    continue;
                };
                if kept.contains(s) {
                    e.1 = until;
                } else {
                    h.remove(s);
                    lost += 1;
                }
            }
        }
        lost
    }
}

/// Renews the held leases every third of the lease until stopped.
async fn heartbeat(push: Arc<Push>, leases: Arc<Leases>) {
    let every = leases.lease / 3;
    loop {
        tokio::time::sleep(every).await;
        let held = leases.held();
        if held.is_empty() {
            continue;
        }
        let at = Instant::now();
        let until = super::now_ms().saturating_add(leases.lease_ms());
        let seqs: Vec<u64> = held.iter().map(|(s, _)| *s).collect();
        let (store, owner) = (push.store.clone(), leases.owner.clone());
        match blocking(move || store.renew(&owner, &seqs, until)).await {
            Ok(kept) => {
                let lost = leases.renewed(&held, &kept, at);
                if lost > 0 {
                    tracing::warn!(
                        lost,
                        "push delivery leases lost (taken over or gone): not posted here"
                    );
                }
            }
            Err(e) => tracing::error!(error = %e, "push lease renewal"),
        }
    }
}

async fn run(push: Arc<Push>, stop: Arc<(AtomicBool, Notify)>) {
    let leases = Arc::new(Leases::new(&push));
    let (done_tx, done_rx) = mpsc::unbounded_channel::<u64>();
    let completer = tokio::spawn(complete_loop(push.clone(), leases.clone(), done_rx));
    let beat = tokio::spawn(heartbeat(push.clone(), leases.clone()));
    let mut groups = tokio::task::JoinSet::new();
    let net = Arc::new(Net::new());
    tracing::info!("push delivery worker started");
    while !stop.0.load(Ordering::Acquire) {
        while let Some(r) = groups.try_join_next() {
            if let Err(e) = r {
                tracing::error!(error = %e, "push delivery task failed");
            }
        }
        let room = MAX_IN_FLIGHT.saturating_sub(groups.len());
        let bytes = IN_FLIGHT_BYTES.saturating_sub(leases.held_bytes());
        let (claimed, claim) = if room == 0 || bytes == 0 {
            (Vec::new(), 0)
        } else {
            let (store, owner) = (push.store.clone(), leases.owner.clone());
            let (lease, runs) = (leases.lease_ms(), leases.run_limit());
            let at = Instant::now();
            let claim = move || {
                let now = super::now_ms();
                store.claim_within(&owner, now, lease, CLAIM_LIMIT, runs, bytes)
            };
            match blocking(claim).await {
                Ok(c) => {
                    let claim = leases.claimed(&c, at);
                    (c, claim)
                }
                Err(e) => {
                    tracing::error!(error = %e, "push outbox claim");
                    (Vec::new(), 0)
                }
            }
        };
        if claimed.is_empty() {
            let store = push.store.clone();
            if let Ok((n, u)) =
                blocking(move || Ok((store.outbox_len()?, store.outbox_usage()?))).await
            {
                push.stats.queue_depth.store(n, Ordering::Relaxed);
                push.stats.queue_bytes.store(u.bytes, Ordering::Relaxed);
            }
            tokio::select! {
                _ = push.wake.notified() => {}
                _ = stop.1.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
                Some(_) = groups.join_next(), if !groups.is_empty() => {}
            }
            continue;
        }
        for (callback_id, items) in by_callback(claimed) {
            let (push, done, net, leases) =
                (push.clone(), done_tx.clone(), net.clone(), leases.clone());
            groups.spawn(async move {
                let run = Run {
                    push: &push,
                    leases: &leases,
                    claim,
                    done: &done,
                    net: &net,
                };
                run.deliver(&callback_id, items).await
            });
        }
    }
    // Items in flight keep their lease (no longer renewed) and are
    // delivered again after it runs out (at least once); the embedded
    // store frees them on open.
    beat.abort();
    groups.abort_all();
    drop(done_tx);
    let _ = completer.await;
    tracing::info!("push delivery worker stopped");
}

/// Claimed items grouped per callback id, each group in `seq` order.
fn by_callback(items: Vec<OutboxItem>) -> Vec<(String, Vec<OutboxItem>)> {
    let mut out: Vec<(String, Vec<OutboxItem>)> = Vec::new();
    for it in items {
        match out.iter_mut().find(|(c, _)| *c == it.callback_id) {
            Some((_, v)) => v.push(it),
            None => out.push((it.callback_id.clone(), vec![it])),
        }
    }
    out
}

/// Removes delivered items from the outbox, many per transaction; their
/// leases are renewed until then.
async fn complete_loop(push: Arc<Push>, leases: Arc<Leases>, mut rx: mpsc::UnboundedReceiver<u64>) {
    while let Some(first) = rx.recv().await {
        let mut seqs = vec![first];
        while let Ok(s) = rx.try_recv() {
            seqs.push(s);
        }
        let (store, done) = (push.store.clone(), seqs.clone());
        if let Err(e) = blocking(move || store.complete_many(&done)).await {
            // Their leases run out, then they are delivered again: at
            // least once.
            tracing::error!(error = %e, "push outbox completion");
        }
        leases.forget(seqs);
        push.wake.notify_one();
    }
}

/// One claimed run of one config's items.
struct Run<'a> {
    push: &'a Push,
    leases: &'a Leases,
    claim: u64,
    done: &'a mpsc::UnboundedSender<u64>,
    net: &'a Net,
}

impl Run<'_> {
    async fn deliver(&self, callback_id: &str, items: Vec<OutboxItem>) {
        let push = self.push;
        let config = match push.config_for_delivery(callback_id).await {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "push config lookup");
                self.release(items).await;
                return;
            }
        };
        let Some(config) = config else {
            for it in items {
                self.dead(it, "the push config was deleted").await;
            }
            return;
        };
        let mut rest = items.into_iter();
        while let Some(mut it) = rest.next() {
            // Posted only under a lease with a third of it to go; a lost
            // one is another instance's (or nobody's until it runs out).
            if !self.leases.may_post(it.seq, self.claim) {
                let left: Vec<u64> = std::iter::once(it.seq).chain(rest.map(|i| i.seq)).collect();
                tracing::warn!(
                    items = left.len(),
                    "push delivery lease lost or about to run out: the run stops"
                );
                self.leases.forget(left);
                return;
            }
            let started = Instant::now();
            let sent = post(push, &config, &it, self.net).await;
            self.leases.paced(started.elapsed());
            match sent {
                Ok(()) => {
                    push.stats.delivered_after(it.accepted_ms);
                    let _ = self.done.send(it.seq);
                }
                Err(Undelivered { why, last }) => {
                    push.stats.failed_attempts.fetch_add(1, Ordering::Relaxed);
                    it.attempts += 1;
                    tracing::warn!(task_id = %it.task_id, attempt = it.attempts, reason = %why, "push delivery failed");
                    // A refusal that no retry can change ends it at once.
                    if last || it.attempts >= push.settings.max_attempts {
                        self.dead(it, &why).await;
                        continue;
                    }
                    it.next_attempt_ms =
                        super::now_ms() + backoff(push, it.attempts).as_millis() as i64;
                    let mut back = vec![it];
                    back.extend(rest);
                    self.release(back).await;
                    return;
                }
            }
        }
    }

    /// Gives items back (lease cleared) with their schedule as set, where
    /// this worker still holds them.
    async fn release(&self, items: Vec<OutboxItem>) {
        for mut it in items {
            it.lease_owner.clear();
            it.lease_until_ms = 0;
            let seq = it.seq;
            let (store, owner) = (self.push.store.clone(), self.leases.owner.clone());
            if let Err(e) = blocking(move || store.reschedule(&it, &owner)).await {
                tracing::error!(error = %e, "push outbox reschedule");
            }
            self.leases.forget([seq]);
        }
    }

    async fn dead(&self, it: OutboxItem, why: &str) {
        let seq = it.seq;
        dead(self.push, it, why).await;
        self.leases.forget([seq]);
    }
}

async fn dead(push: &Push, it: OutboxItem, why: &str) {
    tracing::error!(task_id = %it.task_id, attempts = it.attempts, reason = %why, "push notification moved to dead letters");
    push.stats.dead_letters.fetch_add(1, Ordering::Relaxed);
    let (store, why) = (push.store.clone(), why.to_string());
    if let Err(e) = blocking(move || store.dead_letter(&it, &why)).await {
        tracing::error!(error = %e, "push dead letter");
    }
}

/// `initial * 2^(attempt-1)`, capped, with jitter in its upper half.
pub fn backoff(push: &Push, attempt: u32) -> Duration {
    let s = &push.settings;
    backoff_between(
        s.backoff_initial,
        s.backoff_max,
        attempt,
        rand::random::<f64>(),
    )
}

fn backoff_between(initial: Duration, max: Duration, attempt: u32, unit: f64) -> Duration {
    let exp = initial.saturating_mul(1u32 << attempt.saturating_sub(1).min(20));
    let d = exp.min(max);
    d.mul_f64(0.5 + 0.5 * unit.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_caps_and_jitters() {
        let (i, m) = (Duration::from_millis(100), Duration::from_millis(1000));
        assert_eq!(backoff_between(i, m, 1, 1.0), Duration::from_millis(100));
        assert_eq!(backoff_between(i, m, 1, 0.0), Duration::from_millis(50));
        assert_eq!(backoff_between(i, m, 3, 1.0), Duration::from_millis(400));
        assert_eq!(backoff_between(i, m, 9, 1.0), Duration::from_millis(1000));
        assert_eq!(backoff_between(i, m, 100, 0.0), Duration::from_millis(500));
    }
}
