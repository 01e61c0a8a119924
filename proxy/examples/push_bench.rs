//! Push-notification benchmark (loopback only, bounded; see bench/push.sh).
//!
//! One run, one load client, same bodies: (1) `direct`: the client POSTs
//! v0.3 Task bodies straight to a webhook; (2) `proxy`: it POSTs them to the
//! proxy's callback endpoint (authenticated, made durable in the outbox,
//! translated to v1.0) and the proxy's worker delivers them to the same
//! webhook. Prints accepts/s and accept p50/p99, delivered/s end to end, and
//! the ratios to direct, for the embedded store and, when a PostgreSQL URL
//! is given, for PostgreSQL; each store twice: saturated (closed loop, for
//! throughput) and at 2000 requests/s offered (open loop, for the accept
//! latency at the target rate). With a PostgreSQL URL, also two proxy
//! instances on that database, the load split over both (issue #25):
//! delivered/s and how many notifications the webhook got more than once.
//!
//!   cargo run --release -p a2a-compat-proxy --example push_bench -- \
//!       [seconds=3] [connections=16] [configs=64] [postgres-url]

#[path = "../tests/support/ports.rs"]
mod ports;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proxy::config::{Config, PushBackend, UpstreamVersion};
use proxy::push::PushConfig;
use proxy::version::Version;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const BODY: &str = r#"{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working","timestamp":"2024-03-15T18:30:00Z"},"artifacts":[{"artifactId":"a1","parts":[{"kind":"text","text":"progress report"}]}]}"#;

/// A webhook answering 200 to each request, counting them.
async fn webhook(count: Arc<AtomicU64>) -> std::net::SocketAddr {
    webhook_seeing(count, None).await
}

/// Arrivals per body (the two-instance run: bodies are numbered).
type Seen = Arc<Mutex<HashMap<Vec<u8>, u32>>>;

/// [`webhook`]; with `seen`, also counts each distinct body.
async fn webhook_seeing(count: Arc<AtomicU64>, seen: Option<Seen>) -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let (count, seen) = (count.clone(), seen.clone());
            tokio::spawn(async move {
                let mut buf = Vec::with_capacity(4096);
                let mut tmp = [0u8; 4096];
                loop {
                    let Some(end) = find(&buf, b"\r\n\r\n") else {
                        match s.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => {
                                buf.extend_from_slice(&tmp[..n]);
                                continue;
                            }
                        }
                    };
                    let len = content_length(&buf[..end]);
                    while buf.len() < end + 4 + len {
                        match s.read(&mut tmp).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => buf.extend_from_slice(&tmp[..n]),
                        }
                    }
                    if let Some(seen) = &seen {
                        let body = buf[end + 4..end + 4 + len].to_vec();
                        *seen.lock().unwrap().entry(body).or_insert(0) += 1;
                    }
                    buf.drain(..end + 4 + len);
                    count.fetch_add(1, Ordering::Relaxed);
                    let r = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                    if s.write_all(r).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    h.windows(n.len()).position(|w| w == n)
}

fn content_length(head: &[u8]) -> usize {
    String::from_utf8_lossy(head)
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(0)
}

/// Keep-alive POSTs for `secs` on `conns` connections; each connection
/// cycles over `targets` (path, token). Returns (count, latencies µs).
/// `rate` None: closed loop, each connection sends as soon as its answer
/// came (saturation: latency there is concurrency / throughput). `rate`
/// Some(r): open loop, r requests/s in total on a fixed schedule (a slow
/// answer delays only its own connection's next send), latency counted
/// from the actual send.
async fn load(
    addr: std::net::SocketAddr,
    targets: Arc<Vec<(String, String)>>,
    conns: usize,
    secs: f64,
    rate: Option<f64>,
    numbered: Option<Arc<AtomicU64>>,
) -> (u64, Vec<u64>) {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let gap = rate.map(|r| Duration::from_secs_f64(conns as f64 / r));
    let mut tasks = Vec::new();
    for c in 0..conns {
        let (targets, numbered) = (targets.clone(), numbered.clone());
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.set_nodelay(true).unwrap();
            let mut lat = Vec::new();
            let mut buf = Vec::new();
            let mut tmp = [0u8; 4096];
            let mut i = c;
            let mut due = gap.map(|g| start + g.mul_f64(c as f64 / conns as f64));
            while Instant::now() < end {
                if let Some(d) = due {
                    tokio::time::sleep_until(d.into()).await;
                }
                let (path, tok) = &targets[i % targets.len()];
                i += conns;
                let body = match &numbered {
                    // A distinct body per request, so the webhook tells
                    // duplicates apart.
                    Some(n) => BODY.replace(
                        "\"kind\":\"task\"",
                        &format!("\"kind\":\"task\",\"metadata\":{{\"n\":{}}}", n.fetch_add(1, Ordering::Relaxed)),
                    ),
                    None => BODY.to_string(),
                };
                let req = format!(
                    "POST {path} HTTP/1.1\r\nHost: b\r\nContent-Type: application/json\r\nX-A2A-Notification-Token: {tok}\r\nContent-Length: {}\r\n\r\n{body}",
                    body.len()
                );
                // From the actual send: tokio's timer wakes up to a
                // millisecond late, which is the load client's lag, not the
                // proxy's latency.
                let t = Instant::now();
                if let (Some(d), Some(g)) = (due.as_mut(), gap) {
                    *d += g;
                }
                s.write_all(req.as_bytes()).await.unwrap();
                loop {
                    if let Some(e) = find(&buf, b"\r\n\r\n") {
                        let len = content_length(&buf[..e]);
                        if buf.len() >= e + 4 + len {
                            assert!(buf.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&buf));
                            buf.drain(..e + 4 + len);
                            break;
                        }
                    }
                    let n = s.read(&mut tmp).await.unwrap();
                    assert!(n > 0, "connection closed");
                    buf.extend_from_slice(&tmp[..n]);
                }
                lat.push(t.elapsed().as_micros() as u64);
            }
            lat
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    (all.len() as u64, all)
}

fn pct(v: &mut [u64], p: f64) -> f64 {
    v.sort_unstable();
    if v.is_empty() {
        return 0.0;
    }
    v[((v.len() as f64 - 1.0) * p) as usize] as f64 / 1000.0
}

struct Run {
    accept_rate: f64,
    p50: f64,
    p99: f64,
    delivered_rate: f64,
}

async fn through_proxy(
    backend: PushBackend,
    secs: f64,
    conns: usize,
    configs: usize,
    rate: Option<f64>,
) -> Run {
    let delivered = Arc::new(AtomicU64::new(0));
    let hook = webhook(delivered.clone()).await;
    let addr = ports::free_local_addr().unwrap();
    let mut config = Config::new(addr, "http://127.0.0.1:9").unwrap();
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    config.push.enabled = true;
    config.push.backend = backend;
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    let px = tokio::task::spawn_blocking(move || proxy::start(config).unwrap())
        .await
        .unwrap();
    let push = px.app.push.clone().unwrap();
    let mut targets = Vec::new();
    for _ in 0..configs {
        let c = PushConfig {
            callback_id: proxy::ids::random_id(),
            // The task the bodies name (a push naming another task is refused).
            task_id: "t1".into(),
            config_id: "c".into(),
            original_url: format!("http://{hook}/hook"),
            token: Some("tok".into()),
            auth: None,
            subscriber_version: Version::V10,
            upstream_version: Version::V03,
            callback_secret: proxy::ids::random_id(),
            created: 0,
            seed: None,
        };
        let store = push.store.clone();
        let c2 = c.clone();
        tokio::task::spawn_blocking(move || store.put_config(&c2))
            .await
            .unwrap()
            .unwrap();
        targets.push((
            format!("/a2a-proxy/push/{}", c.callback_id),
            c.callback_secret,
        ));
    }
    let t0 = Instant::now();
    let (n, mut lat) = load(px.addr, Arc::new(targets), conns, secs, rate, None).await;
    let accept_secs = t0.elapsed().as_secs_f64();
    // Bounded wait for the worker to drain the outbox.
    let deadline = Instant::now() + Duration::from_secs(120);
    while delivered.load(Ordering::Relaxed) < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let total = t0.elapsed().as_secs_f64();
    let d = delivered.load(Ordering::Relaxed);
    if d < n {
        eprintln!("warning: only {d} of {n} delivered within the wait");
    }
    drop(px);
    Run {
        accept_rate: n as f64 / accept_secs,
        p50: pct(&mut lat, 0.5),
        p99: pct(&mut lat, 0.99),
        delivered_rate: d as f64 / total,
    }
}

/// Two instances on one PostgreSQL, each taking half the connections
/// (saturated): delivered/s end to end and the notifications the webhook
/// got more than once.
async fn two_instances(
    url: String,
    secs: f64,
    conns: usize,
    configs: usize,
) -> (f64, f64, u64, u64) {
    let delivered = Arc::new(AtomicU64::new(0));
    let seen: Seen = Arc::default();
    let hook = webhook_seeing(delivered.clone(), Some(seen.clone())).await;
    let mut pxs = Vec::new();
    for _ in 0..2 {
        let addr = ports::free_local_addr().unwrap();
        let mut config = Config::new(addr, "http://127.0.0.1:9").unwrap();
        config.upstream_version = UpstreamVersion::Fixed(Version::V03);
        config.push.enabled = true;
        config.push.backend = PushBackend::Postgres(url.clone());
        config.push.allow_hosts = vec!["127.0.0.1".into()];
        pxs.push(
            tokio::task::spawn_blocking(move || proxy::start(config).unwrap())
                .await
                .unwrap(),
        );
    }
    let store = pxs[0].app.push.clone().unwrap().store.clone();
    let mut targets = Vec::new();
    for _ in 0..configs {
        let c = PushConfig {
            callback_id: proxy::ids::random_id(),
            // The task the bodies name (a push naming another task is refused).
            task_id: "t1".into(),
            config_id: "c".into(),
            original_url: format!("http://{hook}/hook"),
            token: Some("tok".into()),
            auth: None,
            subscriber_version: Version::V10,
            upstream_version: Version::V03,
            callback_secret: proxy::ids::random_id(),
            created: 0,
            seed: None,
        };
        let (store, c2) = (store.clone(), c.clone());
        tokio::task::spawn_blocking(move || store.put_config(&c2))
            .await
            .unwrap()
            .unwrap();
        targets.push((
            format!("/a2a-proxy/push/{}", c.callback_id),
            c.callback_secret,
        ));
    }
    let targets = Arc::new(targets);
    let numbers = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let half = (conns / 2).max(1);
    let (ra, rb) = tokio::join!(
        load(
            pxs[0].addr,
            targets.clone(),
            half,
            secs,
            None,
            Some(numbers.clone())
        ),
        load(
            pxs[1].addr,
            targets.clone(),
            half,
            secs,
            None,
            Some(numbers.clone())
        ),
    );
    let accept_secs = t0.elapsed().as_secs_f64();
    let n = ra.0 + rb.0;
    let distinct = || seen.lock().unwrap().len() as u64;
    let deadline = Instant::now() + Duration::from_secs(120);
    while distinct() < n && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let total = t0.elapsed().as_secs_f64();
    // Time for late duplicates to show up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let d = distinct();
    if d < n {
        eprintln!("warning: only {d} of {n} delivered within the wait");
    }
    let dups: u64 = seen
        .lock()
        .unwrap()
        .values()
        .map(|c| u64::from(c.saturating_sub(1)))
        .sum();
    // The sync PostgreSQL client must not be dropped on a runtime thread.
    tokio::task::spawn_blocking(move || drop((pxs, store)))
        .await
        .unwrap();
    (n as f64 / accept_secs, d as f64 / total, n, dups)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let secs: f64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let conns: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(16);
    let configs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let pg = args.get(3).cloned();
    let pg_two = pg.clone();
    println!("push benchmark (loopback; {secs} s per run, {conns} connections, {configs} configs)");

    let count = Arc::new(AtomicU64::new(0));
    let hook = webhook(count.clone()).await;
    let targets = Arc::new(vec![("/hook".to_string(), "tok".to_string())]);
    let t0 = Instant::now();
    let (n, mut lat) = load(hook, targets, conns, secs, None, None).await;
    let direct = n as f64 / t0.elapsed().as_secs_f64();
    println!(
        "direct to webhook      {direct:>9.0} posts/s   p50 {:.3} ms  p99 {:.3} ms",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99)
    );

    let mut dirs = Vec::new();
    let mut embedded = || {
        let d = std::env::temp_dir().join(format!("a2a-push-bench-{}", proxy::ids::random_id()));
        dirs.push(d.clone());
        PushBackend::Embedded(d)
    };
    let mut runs = vec![
        ("embedded", "saturated", embedded(), None),
        ("embedded", "at 2000/s", embedded(), Some(2000.0)),
    ];
    if let Some(u) = pg {
        runs.push((
            "postgres",
            "saturated",
            PushBackend::Postgres(u.clone()),
            None,
        ));
        runs.push((
            "postgres",
            "at 2000/s",
            PushBackend::Postgres(u),
            Some(2000.0),
        ));
    }
    for (name, load, backend, rate) in runs {
        let r = through_proxy(backend, secs, conns, configs, rate).await;
        println!(
            "proxy {name:<9} {load:<10} accept {:>6.0} /s   p50 {:.3} ms  p99 {:.3} ms   delivered end to end {:>6.0} /s   ratios to direct: accept {:.2}, delivered {:.2}",
            r.accept_rate, r.p50, r.p99, r.delivered_rate,
            r.accept_rate / direct,
            r.delivered_rate / direct
        );
    }
    if let Some(u) = pg_two {
        let (accept, delivered, n, dups) = two_instances(u, secs, conns, configs).await;
        println!(
            "proxy postgres x2 saturated  accept {accept:>6.0} /s   delivered end to end {delivered:>6.0} /s   {n} accepted, {dups} delivered more than once"
        );
    }
    println!("targets: >= 2000 /s accepted with the embedded store (saturated), accept p99 <= 5 ms (at 2000/s offered)");
    for d in dirs {
        let _ = std::fs::remove_dir_all(&d);
    }
}
