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
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, Notify};

use super::layer::{blocking, Push};
use super::safety::{Target, TargetPolicy};
use super::{OutboxItem, PushConfig};
use crate::version::Version;

/// Items claimed per round (and per config at most).
const CLAIM_LIMIT: usize = 256;
/// Configs delivered to at once.
const MAX_IN_FLIGHT: usize = 64;
/// Idle poll interval (retries become due without a wake-up).
const POLL: Duration = Duration::from_millis(200);
/// Most bytes of a webhook's response read (its head; the body is ignored).
const MAX_RESPONSE_HEAD: usize = 8 * 1024;

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

/// The leases this worker holds: per seq, the claim that took it and the
/// instant (this host's monotonic clock) until which it may still be
/// posted: its lease's end less a third of the lease.
struct Leases {
    /// Names this worker's leases in the store: the instance id and a
    /// per-start nonce (a restart, or a second process given the same
    /// `push.instance_id`, never takes a lease for its own).
    owner: String,
    lease: Duration,
    held: std::sync::Mutex<HashMap<u64, (u64, Instant)>>,
    claims: AtomicU64,
    /// Recent time per post (moving average), microseconds.
    pace_us: AtomicU64,
}

impl Leases {
    fn new(push: &Push) -> Leases {
        let nonce = super::random_id();
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
                h.insert(i.seq, (claim, until));
            }
        }
        claim
    }

    /// Whether `seq`, of claim `claim`, may be posted now.
    fn may_post(&self, seq: u64, claim: u64) -> bool {
        let now = Instant::now();
        self.held
            .lock()
            .map(|h| matches!(h.get(&seq), Some((c, until)) if *c == claim && now < *until))
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
            .map(|h| h.iter().map(|(s, (c, _))| (*s, *c)).collect())
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
    let net = Arc::new(Net {
        tls: tls_config(),
        pool: Pool::default(),
    });
    tracing::info!("push delivery worker started");
    while !stop.0.load(Ordering::Acquire) {
        while let Some(r) = groups.try_join_next() {
            if let Err(e) = r {
                tracing::error!(error = %e, "push delivery task failed");
            }
        }
        let room = MAX_IN_FLIGHT.saturating_sub(groups.len());
        let (claimed, claim) = if room == 0 {
            (Vec::new(), 0)
        } else {
            let (store, owner) = (push.store.clone(), leases.owner.clone());
            let (lease, runs) = (leases.lease_ms(), leases.run_limit());
            let at = Instant::now();
            match blocking(move || store.claim(&owner, super::now_ms(), lease, CLAIM_LIMIT, runs))
                .await
            {
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
            if let Ok(n) = blocking(move || store.outbox_len()).await {
                push.stats.queue_depth.store(n, Ordering::Relaxed);
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

/// The headers a subscriber of `version` expects (MAPPING-FACTS §9), and
/// the agent's trace context of the push.
fn headers_for(c: &PushConfig, it: &OutboxItem) -> Vec<(&'static str, String)> {
    let mut h = vec![(
        "Content-Type",
        match c.subscriber_version {
            Version::V03 => translate::push_body::V03_CONTENT_TYPE,
            Version::V10 => translate::push_body::V10_CONTENT_TYPE,
        }
        .to_string(),
    )];
    if let Some(t) = &c.token {
        h.push(("X-A2A-Notification-Token", t.clone()));
    }
    if let Some(a) = &c.auth {
        if let Some(cred) = &a.credentials {
            h.push(("Authorization", format!("{} {}", a.scheme, cred)));
        }
    }
    if !it.traceparent.is_empty() {
        h.push(("traceparent", it.traceparent.clone()));
        if !it.tracestate.is_empty() {
            h.push(("tracestate", it.tracestate.clone()));
        }
    }
    h
}

/// Why a send failed; `last` when trying again cannot help (the target
/// is refused by the policy, the request cannot be written): the item goes
/// to the dead letters at once.
struct Undelivered {
    why: String,
    last: bool,
}

impl Undelivered {
    fn again(why: String) -> Undelivered {
        Undelivered { why, last: false }
    }

    fn last(why: String) -> Undelivered {
        Undelivered { why, last: true }
    }
}

/// Posts one body; `Ok` on a 2xx answer.
async fn post(push: &Push, c: &PushConfig, it: &OutboxItem, net: &Net) -> Result<(), Undelivered> {
    let policy: &TargetPolicy = &push.policy;
    // Checked again on every send: the policy may have changed since the
    // registration (a restart with other settings).
    let target = policy
        .check_url(&c.original_url)
        .map_err(|r| Undelivered::last(r.0))?;
    let timeout = push.settings.delivery_timeout;
    let r = tokio::time::timeout(timeout, send(policy, &target, c, it, net)).await;
    match r {
        Ok(Ok(status)) if (200..300).contains(&status) => Ok(()),
        Ok(Ok(status)) => Err(Undelivered::again(format!(
            "webhook answered HTTP {status}"
        ))),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Undelivered::again(format!(
            "webhook did not answer within {} ms",
            timeout.as_millis()
        ))),
    }
}

async fn send(
    policy: &TargetPolicy,
    t: &Target,
    c: &PushConfig,
    it: &OutboxItem,
    net: &Net,
) -> Result<u16, Undelivered> {
    // An IP literal is the address itself; a name is resolved once, its
    // addresses checked, and only those are connected to.
    let addrs: Vec<SocketAddr> = match t.ip {
        Some(ip) => vec![SocketAddr::new(ip, t.port)],
        None => tokio::net::lookup_host((t.host.as_str(), t.port))
            .await
            .map_err(|e| Undelivered::again(format!("cannot resolve the webhook host: {e}")))?
            .collect(),
    };
    // Checked on every send, pooled connection or not.
    policy
        .check_resolved(t, &addrs)
        .map_err(|r| Undelivered::last(r.0))?;
    let body = it.body.as_str();
    let head = request_head(t, c, it, body.len()).map_err(Undelivered::last)?;
    let mut last = Undelivered::again("webhook host resolves to no address".into());
    for a in &addrs {
        let key: PoolKey = (*a, t.host.clone(), t.https);
        // An idle connection may have been closed by the webhook meanwhile:
        // if it fails before any answer byte, a fresh one is tried.
        while let Some(conn) = net.pool.take(&key) {
            match exchange(conn, &head, body).await {
                Ok((status, again)) => {
                    if let Some(conn) = again {
                        net.pool.put(key, conn);
                    }
                    return Ok(status);
                }
                Err(Failed { stale: true, .. }) => continue,
                Err(Failed { why, .. }) => return Err(Undelivered::again(why)),
            }
        }
        let conn = match connect(a, t, net).await {
            Ok(conn) => conn,
            Err(e) => {
                last = Undelivered::again(e);
                continue;
            }
        };
        return match exchange(conn, &head, body).await {
            Ok((status, again)) => {
                if let Some(conn) = again {
                    net.pool.put(key, conn);
                }
                Ok(status)
            }
            Err(f) => Err(Undelivered::again(f.why)),
        };
    }
    Err(last)
}

async fn connect(a: &SocketAddr, t: &Target, net: &Net) -> Result<Conn, String> {
    let s = tokio::net::TcpStream::connect(a)
        .await
        .map_err(|e| format!("cannot connect to the webhook: {e}"))?;
    let _ = s.set_nodelay(true);
    if !t.https {
        return Ok(Box::new(s));
    }
    let name = rustls_name(&t.host)?;
    let tls = net
        .tls
        .as_ref()
        .ok_or("this build cannot make TLS connections")?;
    let s = tls
        .connect(name, s)
        .await
        .map_err(|e| format!("TLS with the webhook failed: {e}"))?;
    Ok(Box::new(s))
}

fn rustls_name(host: &str) -> Result<tokio_rustls::rustls::pki_types::ServerName<'static>, String> {
    tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|_| "webhook host is not a valid TLS server name".to_string())
}

fn request_head(t: &Target, c: &PushConfig, it: &OutboxItem, len: usize) -> Result<String, String> {
    let host = if t.host.contains(':') {
        format!("[{}]", t.host)
    } else {
        t.host.clone()
    };
    let default_port = if t.https { 443 } else { 80 };
    let host = if t.port == default_port {
        host
    } else {
        format!("{host}:{}", t.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: a2a-compat-proxy\r\nContent-Length: {len}\r\n",
        t.path_and_query
    );
    for (k, v) in headers_for(c, it) {
        if v.bytes().any(|b| b < 0x20 && b != b'\t') {
            return Err(format!(
                "the subscriber's {k} value holds control characters"
            ));
        }
        head.push_str(k);
        head.push_str(": ");
        head.push_str(&v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    Ok(head)
}

/// A connection to a webhook (plain or TLS).
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
type Conn = Box<dyn Io>;

/// (address, host name, https): connections are reused only for the same
/// checked address and the same TLS server name.
type PoolKey = (SocketAddr, String, bool);

/// How long an idle webhook connection is kept.
const IDLE_FOR: Duration = Duration::from_secs(20);
/// Idle connections kept per key, and keys kept.
const IDLE_PER_KEY: usize = 8;
const IDLE_KEYS: usize = 1024;

/// The worker's network side: TLS client and keep-alive pool.
struct Net {
    tls: Option<tokio_rustls::TlsConnector>,
    pool: Pool,
}

/// Idle keep-alive connections to webhooks.
#[derive(Default)]
struct Pool {
    idle: std::sync::Mutex<std::collections::HashMap<PoolKey, Vec<(Conn, std::time::Instant)>>>,
}

impl Pool {
    fn take(&self, key: &PoolKey) -> Option<Conn> {
        let mut m = self.idle.lock().ok()?;
        let list = m.get_mut(key)?;
        while let Some((c, since)) = list.pop() {
            if since.elapsed() < IDLE_FOR {
                return Some(c);
            }
        }
        None
    }

    fn put(&self, key: PoolKey, c: Conn) {
        let Ok(mut m) = self.idle.lock() else {
            return;
        };
        if m.len() >= IDLE_KEYS && !m.contains_key(&key) {
            m.retain(|_, v| v.iter().any(|(_, since)| since.elapsed() < IDLE_FOR));
            if m.len() >= IDLE_KEYS {
                return;
            }
        }
        let list = m.entry(key).or_default();
        if list.len() < IDLE_PER_KEY {
            list.push((c, std::time::Instant::now()));
        }
    }
}

/// A failed exchange; `stale` when nothing was answered on a connection
/// that may simply have been closed while idle (safe to try a fresh one).
struct Failed {
    stale: bool,
    why: String,
}

/// Writes the request and reads the answer: its head (at most
/// [`MAX_RESPONSE_HEAD`] bytes) and, when it has a small Content-Length,
/// its body, so the connection can be reused (returned as `Some`).
async fn exchange(mut s: Conn, head: &str, body: &str) -> Result<(u16, Option<Conn>), Failed> {
    let io = |stale: bool| {
        move |e: std::io::Error| Failed {
            stale,
            why: format!("webhook connection: {e}"),
        }
    };
    s.write_all(head.as_bytes()).await.map_err(io(true))?;
    s.write_all(body.as_bytes()).await.map_err(io(true))?;
    s.flush().await.map_err(io(true))?;
    let mut buf = vec![0u8; MAX_RESPONSE_HEAD];
    let mut n = 0;
    let end = loop {
        let k = s.read(&mut buf[n..]).await.map_err(io(n == 0))?;
        if k == 0 {
            if n == 0 {
                return Err(Failed {
                    stale: true,
                    why: "webhook closed the connection without an answer".into(),
                });
            }
            break None;
        }
        n += k;
        if let Some(i) = buf[..n].windows(4).position(|w| w == b"\r\n\r\n") {
            break Some(i + 4);
        }
        if n == buf.len() {
            break None;
        }
    };
    let text = String::from_utf8_lossy(&buf[..end.unwrap_or(n)]).into_owned();
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split_whitespace();
    let (version, code) = match (
        parts.next(),
        parts.next().and_then(|c| c.parse::<u16>().ok()),
    ) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => (v.to_string(), code),
        _ => {
            return Err(Failed {
                stale: false,
                why: "webhook answered something that is not HTTP/1.x".into(),
            })
        }
    };
    let Some(end) = end else {
        return Ok((code, None));
    };
    // Reusable only with a known, small body and no `close`.
    let mut length = None;
    let mut keep = version == "HTTP/1.1";
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
        match k.as_str() {
            "content-length" => length = v.parse::<usize>().ok(),
            "transfer-encoding" => keep = false,
            "connection" if v.contains("close") => keep = false,
            _ => {}
        }
    }
    let no_body = code == 204 || code == 304 || (100..200).contains(&code);
    let length = if no_body { Some(0) } else { length };
    let Some(length) = length.filter(|l| keep && end + l <= MAX_RESPONSE_HEAD) else {
        return Ok((code, None));
    };
    while n < end + length {
        match s.read(&mut buf[n..end + length]).await {
            Ok(0) | Err(_) => return Ok((code, None)),
            Ok(k) => n += k,
        }
    }
    Ok((code, (n == end + length).then_some(s)))
}

/// The TLS client for https webhooks (`None` if rustls offers no protocol,
/// then https deliveries fail with that reason).
fn tls_config() -> Option<tokio_rustls::TlsConnector> {
    use tokio_rustls::rustls;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Some(tokio_rustls::TlsConnector::from(Arc::new(config)))
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

    #[test]
    fn heads_per_version() {
        let mut c = PushConfig {
            callback_id: "x".into(),
            task_id: "t".into(),
            config_id: "c".into(),
            original_url: "http://127.0.0.1:9/h?q=1".into(),
            token: Some("tok".into()),
            auth: Some(super::super::Auth {
                scheme: "Bearer".into(),
                credentials: Some("cred".into()),
            }),
            subscriber_version: Version::V10,
            upstream_version: Version::V03,
            callback_secret: "s".into(),
            created: 0,
            seed: None,
        };
        let p = TargetPolicy {
            allow_private: true,
            allow_hosts: vec![],
        };
        let t = p.check_url(&c.original_url).unwrap();
        let mut it = crate::push::contract::item("t");
        let h = request_head(&t, &c, &it, 5).unwrap();
        assert!(!h.contains("traceparent"), "{h}");
        it.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into();
        it.tracestate = "a=1".into();
        let h = request_head(&t, &c, &it, 5).unwrap();
        assert!(
            h.contains("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntracestate: a=1\r\n"),
            "{h}"
        );
        assert!(
            h.starts_with("POST /h?q=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"),
            "{h}"
        );
        assert!(h.contains("Content-Type: application/a2a+json\r\n"));
        assert!(h.contains("X-A2A-Notification-Token: tok\r\n"));
        assert!(h.contains("Authorization: Bearer cred\r\n"));
        c.subscriber_version = Version::V03;
        c.token = Some("bad\r\nX-Evil: 1".into());
        assert!(request_head(&t, &c, &it, 5).is_err());
        c.token = None;
        assert!(request_head(&t, &c, &it, 5)
            .unwrap()
            .contains("Content-Type: application/json\r\n"));
    }
}
