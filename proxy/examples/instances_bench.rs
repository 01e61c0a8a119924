//! One instance vs three behind nginx (issue #36; see bench/instances.sh),
//! loopback only, bounded, one load client, everything on this box.
//!
//! Targets: `one` (an instance with the embedded store: the ListTasks index
//! in memory only), `pg1` (one instance of a three-instance deployment on
//! PostgreSQL, asked directly: the index a cache of the store's), `nginx`
//! (the three instances behind nginx round-robin, no keep-alive to them, as
//! proxy/README.md advises; for throughput also `nginx-ka`, the same with
//! keep-alive connections to the instances). Each instance is the
//! release binary (`serve`, one worker thread) in front of one fake v0.3
//! agent served here. Measured, the targets interleaved:
//! 1. req/s and p50/p99 of a translated SendMessage (v1.0 client, v0.3
//!    agent), closed loop;
//! 2. ListTasks p50/p99 with 10,000 entries in the caller's index (each
//!    call lists a page of 50, which the proxy asks the agent for);
//! 3. relayed-event latency: a subscriber of an idle task on one instance,
//!    a message changing the task sent through another (and, for
//!    comparison, through the same one): from the message sent to its
//!    event at the subscriber, p50/p99.
//!
//! The load average is printed before and after each phase.
//!
//!   instances_bench --proxy-bin BIN --nginx NGINX --pg ADMIN_CONNINFO
//!       [--seconds 5] [--conns 16] [--rounds 3] [--lists 300] [--relays 300]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

struct Args {
    proxy_bin: PathBuf,
    nginx: PathBuf,
    pg: String,
    seconds: u64,
    conns: usize,
    rounds: usize,
    lists: usize,
    relays: usize,
}

fn args() -> Args {
    let mut a = Args {
        proxy_bin: PathBuf::from("target/release/a2a-compat-proxy"),
        nginx: PathBuf::from("/usr/sbin/nginx"),
        pg: String::new(),
        seconds: 5,
        conns: 16,
        rounds: 3,
        lists: 300,
        relays: 300,
    };
    let v: Vec<String> = std::env::args().skip(1).collect();
    for w in v.chunks(2) {
        let val = w.get(1).cloned().unwrap_or_default();
        match w[0].as_str() {
            "--proxy-bin" => a.proxy_bin = val.into(),
            "--nginx" => a.nginx = val.into(),
            "--pg" => a.pg = val,
            "--seconds" => a.seconds = val.parse().expect("--seconds"),
            "--conns" => a.conns = val.parse().expect("--conns"),
            "--rounds" => a.rounds = val.parse().expect("--rounds"),
            "--lists" => a.lists = val.parse().expect("--lists"),
            "--relays" => a.relays = val.parse().expect("--relays"),
            other => panic!("unknown flag {other}"),
        }
    }
    assert!(!a.pg.is_empty(), "--pg ADMIN_CONNINFO is required");
    a
}

fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

// ---- The fake v0.3 agent ----

/// Status timestamps, one microsecond apart: every status is news.
fn stamp(n: u64) -> String {
    let (s, us) = (n / 1_000_000, n % 1_000_000);
    format!(
        "2026-01-01T{:02}:{:02}:{:02}.{us:06}Z",
        s / 3600 % 24,
        s / 60 % 60,
        s % 60
    )
}

fn task(id: &str, state: &str, n: u64) -> Value {
    json!({"kind": "task", "id": id, "contextId": "c1",
           "status": {"state": state, "timestamp": stamp(n)},
           "artifacts": [{"artifactId": "a1", "parts": [{"kind": "text", "text": "echo"}]}]})
}

/// message/send: a new completed task (a message id starting "idle": a task
/// idle in input-required; one naming a task: that task working, newer);
/// tasks/get: the task asked, working; tasks/resubscribe: refused.
async fn agent() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let clock = Arc::new(AtomicU64::new(1));
    tokio::spawn(async move {
        loop {
            let Ok((s, _)) = l.accept().await else { return };
            let clock = clock.clone();
            tokio::spawn(async move {
                let _ = s.set_nodelay(true);
                let (r, mut w) = s.into_split();
                let mut r = BufReader::new(r);
                while let Ok(Some((_, body))) = read_request(&mut r).await {
                    let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let id = &v["id"];
                    let p = &v["params"];
                    let n = clock.fetch_add(1, Ordering::Relaxed);
                    let out = match v["method"].as_str() {
                        Some("message/send") => {
                            let m = &p["message"];
                            let t = match m["taskId"].as_str() {
                                Some(t) => task(t, "working", n),
                                None if m["messageId"].as_str().is_some_and(|i| i.starts_with("idle")) => {
                                    task(&format!("idle-{n}"), "input-required", n)
                                }
                                None => task(&format!("t-{n}"), "completed", n),
                            };
                            json!({"jsonrpc": "2.0", "id": id, "result": t}).to_string()
                        }
                        Some("tasks/get") => {
                            let t = p["id"].as_str().unwrap_or("t");
                            let state = if t.starts_with("idle") { "input-required" } else { "working" };
                            json!({"jsonrpc": "2.0", "id": id, "result": task(t, state, 0)}).to_string()
                        }
                        Some("tasks/resubscribe") => {
                            let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Task not found"}});
                            let ev = format!("data: {e}\n\n");
                            let head = format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n{ev}", ev.len());
                            if w.write_all(head.as_bytes()).await.is_err() {
                                return;
                            }
                            continue;
                        }
                        _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}).to_string(),
                    };
                    let head = format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n", out.len());
                    if w.write_all(format!("{head}{out}").as_bytes())
                        .await
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    addr
}

/// One HTTP/1.1 message (request or answer): its head and body
/// (Content-Length or chunked); `None` at the connection's end.
async fn read_request<R: tokio::io::AsyncRead + Unpin>(
    r: &mut BufReader<R>,
) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let lower = head.to_ascii_lowercase();
    let header = |n: &str| {
        lower.lines().find_map(|l| {
            l.strip_prefix(&format!("{n}:"))
                .map(|v| v.trim().to_string())
        })
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).await?;
            let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).await?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body).await?;
    }
    Ok(Some((head, body)))
}

// ---- The instances and nginx ----

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(bin: &Path, config: &Path, log: &Path) -> Proc {
    let log = std::fs::File::create(log).unwrap();
    Proc(
        Command::new(bin)
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("start the proxy binary"),
    )
}

async fn wait_health(addr: SocketAddr) {
    let end = Instant::now() + Duration::from_secs(60);
    while Instant::now() < end {
        if let Ok((200, _)) = call(addr, "GET", "/health", "", b"").await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{addr} did not start");
}

fn instance_toml(addr: SocketAddr, agent: SocketAddr, push: &str) -> String {
    format!(
        "listen = \"{addr}\"\nthreads = 1\n[upstream]\nurl = \"http://{agent}\"\nversion = \"0.3\"\n\
         [push]\nallow_hosts = [\"127.0.0.1\"]\n{push}[limits]\nmax_connections = 4096\n"
    )
}

/// nginx round-robin over `ups`; `keepalive`: connections to the instances
/// kept and reused (faster; proxy/README.md explains why the tests and the
/// docs leave them off).
fn nginx_conf(dir: &Path, addr: SocketAddr, ups: &[SocketAddr], keepalive: bool) -> String {
    let d = dir.display();
    let mut servers: String = ups.iter().map(|u| format!("server {u};\n")).collect();
    let connection = if keepalive {
        servers.push_str("keepalive 64;\n");
        ""
    } else {
        "close"
    };
    let user = if is_root() { "user root;\n" } else { "" };
    format!(
        "{user}worker_processes 1;\ndaemon off;\nerror_log {d}/error.log warn;\npid {d}/nginx.pid;\n\
         events {{ worker_connections 4096; }}\nhttp {{\naccess_log off;\nkeepalive_requests 1000000;\n\
         client_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\nfastcgi_temp_path {d}/fcgi;\n\
         uwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\nupstream proxies {{\n{servers}}}\n\
         server {{\nlisten {addr};\nlocation / {{\nproxy_pass http://proxies;\nproxy_http_version 1.1;\n\
         proxy_set_header Connection \"{connection}\";\nproxy_set_header Host $http_host;\nproxy_buffering off;\n\
         proxy_read_timeout 120s;\nproxy_next_upstream error timeout;\n}}\n}}\n}}\n"
    )
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

// ---- The load ----

/// One request on a fresh connection; status and body.
async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    auth: &str,
    body: &[u8],
) -> std::io::Result<(u16, Vec<u8>)> {
    let s = TcpStream::connect(addr).await?;
    s.set_nodelay(true)?;
    let (r, mut w) = s.into_split();
    let mut r = BufReader::new(r);
    w.write_all(&request(method, path, auth, body, true))
        .await?;
    answer(&mut r).await
}

fn request(method: &str, path: &str, auth: &str, body: &[u8], close: bool) -> Vec<u8> {
    let mut h = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !auth.is_empty() {
        h.push_str(&format!("Authorization: Bearer {auth}\r\n"));
    }
    if close {
        h.push_str("Connection: close\r\n");
    }
    h.push_str("\r\n");
    let mut out = h.into_bytes();
    out.extend_from_slice(body);
    out
}

async fn answer<R: tokio::io::AsyncRead + Unpin>(
    r: &mut BufReader<R>,
) -> std::io::Result<(u16, Vec<u8>)> {
    let Some((head, body)) = read_request(r).await? else {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    };
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok((status, body))
}

fn rpc_body(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

fn send_body(message_id: &str, task: Option<&str>) -> Vec<u8> {
    let mut m = json!({"role": "ROLE_USER", "messageId": message_id, "parts": [{"text": "hello"}]});
    if let Some(t) = task {
        m["taskId"] = json!(t);
    }
    rpc_body("SendMessage", json!({"message": m}))
}

/// p50 and p99 (ms) of latencies in microseconds.
fn quantiles(mut us: Vec<u64>) -> (f64, f64) {
    if us.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    us.sort_unstable();
    let q = |f: f64| us[((us.len() - 1) as f64 * f).round() as usize] as f64 / 1000.0;
    (q(0.5), q(0.99))
}

/// Closed loop: `conns` keep-alive connections sending SendMessage as
/// `auth` for `secs`; (ok/s, p50, p99, errors).
async fn throughput(addr: SocketAddr, conns: usize, secs: u64, auth: &str) -> (f64, f64, f64, u64) {
    let end = Instant::now() + Duration::from_secs(secs);
    let mut set = tokio::task::JoinSet::new();
    for c in 0..conns {
        let auth = auth.to_string();
        set.spawn(async move {
            let (mut lat, mut errors, mut n) = (Vec::new(), 0u64, 0u64);
            'conn: while Instant::now() < end {
                let Ok(s) = TcpStream::connect(addr).await else {
                    errors += 1;
                    continue;
                };
                let _ = s.set_nodelay(true);
                let (r, mut w) = s.into_split();
                let mut r = BufReader::new(r);
                while Instant::now() < end {
                    n += 1;
                    let req = request(
                        "POST",
                        "/",
                        &auth,
                        &send_body(&format!("m-{c}-{n}"), None),
                        false,
                    );
                    let t = Instant::now();
                    if w.write_all(&req).await.is_err() {
                        errors += 1;
                        continue 'conn;
                    }
                    match answer(&mut r).await {
                        Ok((200, b)) if !b.windows(8).any(|x| x == b"\"error\":") => {
                            lat.push(t.elapsed().as_micros() as u64)
                        }
                        Ok(_) => errors += 1,
                        Err(_) => {
                            errors += 1;
                            continue 'conn;
                        }
                    }
                }
            }
            (lat, errors)
        });
    }
    let t0 = Instant::now();
    let (mut all, mut errors) = (Vec::new(), 0);
    while let Some(Ok((l, e))) = set.join_next().await {
        all.extend(l);
        errors += e;
    }
    let rate = all.len() as f64 / t0.elapsed().as_secs_f64();
    let (p50, p99) = quantiles(all);
    (rate, p50, p99, errors)
}

/// Sends `n` messages as `auth` to `addr`, `conns` at a time.
async fn fill(addr: SocketAddr, n: usize, conns: usize, auth: &str) {
    let next = Arc::new(AtomicU64::new(0));
    let mut set = tokio::task::JoinSet::new();
    for _ in 0..conns {
        let (next, auth) = (next.clone(), auth.to_string());
        set.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i as usize >= n {
                    return;
                }
                let _ = call(
                    addr,
                    "POST",
                    "/",
                    &auth,
                    &send_body(&format!("fill-{i}"), None),
                )
                .await;
            }
        });
    }
    while set.join_next().await.is_some() {}
}

async fn total_listed(addr: SocketAddr, auth: &str) -> u64 {
    match call(
        addr,
        "POST",
        "/",
        auth,
        &rpc_body("ListTasks", json!({"pageSize": 1})),
    )
    .await
    {
        Ok((200, b)) => serde_json::from_slice::<Value>(&b)
            .ok()
            .and_then(|v| v["result"]["totalSize"].as_u64())
            .unwrap_or(0),
        _ => 0,
    }
}

/// A subscriber of an idle task at `sub`: the arrival time of each status
/// timestamp it gets.
async fn subscriber(
    sub: SocketAddr,
    via: SocketAddr,
) -> (String, Arc<Mutex<HashMap<String, Instant>>>) {
    let (_, b) = call(
        via,
        "POST",
        "/",
        "relay",
        &send_body(&format!("idle-{}", proxy::ids::random_id()), None),
    )
    .await
    .unwrap();
    let v: Value = serde_json::from_slice(&b).unwrap();
    let task = v["result"]["task"]["id"]
        .as_str()
        .expect("an idle task")
        .to_string();
    let seen: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let s = TcpStream::connect(sub).await.unwrap();
    let (r, mut w) = s.into_split();
    let body = rpc_body("SubscribeToTask", json!({"id": task}));
    w.write_all(&request("POST", "/", "relay", &body, false))
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    let got = seen.clone();
    tokio::spawn(async move {
        let _w = w;
        let mut r = BufReader::new(r);
        let mut tx = Some(tx);
        let mut line = String::new();
        while r.read_line(&mut line).await.is_ok_and(|n| n > 0) {
            if let Some(d) = line.trim().strip_prefix("data:") {
                let at = Instant::now();
                if let Ok(v) = serde_json::from_str::<Value>(d.trim()) {
                    let ts = v
                        .pointer("/result/statusUpdate/status/timestamp")
                        .and_then(Value::as_str);
                    if let Some(ts) = ts {
                        got.lock().unwrap().insert(ts.to_string(), at);
                    }
                }
                if let Some(tx) = tx.take() {
                    let _ = tx.send(());
                }
            }
            line.clear();
        }
    });
    tokio::time::timeout(Duration::from_secs(10), rx)
        .await
        .expect("a first event")
        .unwrap();
    (task, seen)
}

/// Relayed-event latency: `n` messages to the task of a subscriber at
/// `sub`, each sent through `send`; from sending to arrival (µs).
async fn relay_latency(
    sub: SocketAddr,
    send: SocketAddr,
    via: SocketAddr,
    n: usize,
) -> (Vec<u64>, usize) {
    let (task, seen) = subscriber(sub, via).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut sent = Vec::new();
    for i in 0..n {
        let t0 = Instant::now();
        let (_, b) = call(
            send,
            "POST",
            "/",
            "relay",
            &send_body(&format!("r-{i}"), Some(&task)),
        )
        .await
        .unwrap();
        let v: Value = serde_json::from_slice(&b).unwrap_or(Value::Null);
        if let Some(ts) = v
            .pointer("/result/task/status/timestamp")
            .and_then(Value::as_str)
        {
            sent.push((ts.to_string(), t0));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = seen.lock().unwrap();
    let lat: Vec<u64> = sent
        .iter()
        .filter_map(|(ts, t0)| {
            seen.get(ts)
                .map(|at| at.duration_since(*t0).as_micros() as u64)
        })
        .collect();
    let missed = sent.len() - lat.len();
    (lat, missed)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let a = args();
    let dir = std::env::temp_dir().join(format!("a2a-bench-instances-{}", proxy::ids::random_id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two fresh databases: the deployment's, and none else.
    let db = format!("bench{}", proxy::ids::random_id());
    {
        let mut c =
            postgres::Client::connect(&a.pg, postgres::NoTls).expect("the admin connection");
        c.batch_execute(&format!("CREATE DATABASE {db}")).unwrap();
    }
    let url = format!("{} dbname={db}", a.pg.replace("dbname=postgres", ""));
    let key = dir.join("credentials.key");
    std::fs::write(&key, format!("{}\n", "3c".repeat(32))).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let scratch = dir.clone();
    rt.block_on(async move {
        let ag = agent().await;
        let one = free_addr();
        let cfg = dir.join("one.toml");
        let data = dir.join("one-data");
        std::fs::write(&cfg, instance_toml(one, ag, &format!("data_dir = \"{}\"\n", data.display()))).unwrap();
        let _one = serve(&a.proxy_bin, &cfg, &dir.join("one.log"));
        let pgs: Vec<SocketAddr> = (0..3).map(|_| free_addr()).collect();
        let mut procs = Vec::new();
        for (i, addr) in pgs.iter().enumerate() {
            let f = dir.join(format!("pg{i}.toml"));
            let push = format!("postgres_url = \"{url}\"\ncredentials_key_file = \"{}\"\n", key.display());
            std::fs::write(&f, instance_toml(*addr, ag, &push)).unwrap();
            procs.push(serve(&a.proxy_bin, &f, &dir.join(format!("pg{i}.log"))));
        }
        for addr in std::iter::once(&one).chain(&pgs) {
            wait_health(*addr).await;
        }
        let mut nginxes = Vec::new();
        let mut ng_addrs = Vec::new();
        for (name, keepalive) in [("nginx", false), ("nginx-ka", true)] {
            let addr = free_addr();
            let nd = dir.join(name);
            std::fs::create_dir_all(&nd).unwrap();
            std::fs::write(nd.join("nginx.conf"), nginx_conf(&nd, addr, &pgs, keepalive)).unwrap();
            nginxes.push(Proc(
                Command::new(&a.nginx)
                    .arg("-p")
                    .arg(&nd)
                    .arg("-c")
                    .arg(nd.join("nginx.conf"))
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .expect("nginx"),
            ));
            wait_health(addr).await;
            ng_addrs.push(addr);
        }
        let (ng, ng_ka) = (ng_addrs[0], ng_addrs[1]);
        let targets = [("one", one), ("pg1", pgs[0]), ("nginx", ng)];
        println!("instances_bench: {} s x {} rounds, {} conns; 2 cores shared with other work", a.seconds, a.rounds, a.conns);

        // 1. Translated SendMessage.
        println!("\n1. translated SendMessage (v1.0 client, v0.3 agent), closed loop  [load {}]", loadavg());
        let mut rates: HashMap<&str, Vec<f64>> = HashMap::new();
        let mut lat: HashMap<&str, Vec<(f64, f64)>> = HashMap::new();
        for round in 0..a.rounds {
            for (name, addr) in targets.into_iter().chain([("nginx-ka", ng_ka)]) {
                let (r, p50, p99, err) = throughput(addr, a.conns, a.seconds, "load").await;
                println!("  round {round} {name:6} {r:8.0} req/s  p50 {p50:6.2} ms  p99 {p99:6.2} ms  errors {err}");
                rates.entry(name).or_default().push(r);
                lat.entry(name).or_default().push((p50, p99));
            }
        }
        let m = |n: &str| median(rates[n].clone());
        println!("  medians: one {:.0}  pg1 {:.0}  nginx(3) {:.0}  nginx-ka(3) {:.0} req/s; pg1/one {:.2}  nginx(3)/one {:.2}  nginx-ka(3)/one {:.2}  [load {}]",
            m("one"), m("pg1"), m("nginx"), m("nginx-ka"), m("pg1") / m("one"), m("nginx") / m("one"), m("nginx-ka") / m("one"), loadavg());

        // 2. ListTasks with 10,000 entries.
        println!("\n2. ListTasks, 10,000 entries in the caller's index, pages of 50  [load {}]", loadavg());
        fill(one, 10_000, a.conns, "lister").await;
        fill(ng, 10_000, a.conns, "lister").await;
        let end = Instant::now() + Duration::from_secs(60);
        while Instant::now() < end {
            let mut all = vec![total_listed(one, "lister").await];
            for p in &pgs {
                all.push(total_listed(*p, "lister").await);
            }
            if all.iter().all(|n| *n >= 10_000) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let mut sizes = Vec::new();
        for (name, addr) in targets {
            sizes.push(format!("{name} {}", total_listed(addr, "lister").await));
        }
        println!("  listed: {}", sizes.join(", "));
        let mut samples: HashMap<&str, Vec<u64>> = HashMap::new();
        let body = rpc_body("ListTasks", json!({}));
        for _ in 0..a.lists {
            for (name, addr) in targets {
                let t = Instant::now();
                let (s, b) = call(addr, "POST", "/", "lister", &body).await.unwrap();
                assert!(s == 200 && b.windows(7).any(|x| x == b"\"tasks\""), "{name}: {}", String::from_utf8_lossy(&b));
                samples.entry(name).or_default().push(t.elapsed().as_micros() as u64);
            }
        }
        let q: HashMap<&str, (f64, f64)> = samples.into_iter().map(|(k, v)| (k, quantiles(v))).collect();
        for (name, _) in targets {
            println!("  {name:6} p50 {:6.2} ms  p99 {:6.2} ms", q[name].0, q[name].1);
        }
        println!("  p99 ratios: pg1/one {:.2}  nginx(3)/one {:.2}  (target through PostgreSQL <= 2)  [load {}]",
            q["pg1"].1 / q["one"].1, q["nginx"].1 / q["one"].1, loadavg());

        // 3. Relayed-event latency.
        println!("\n3. relayed-event latency, message sent to the subscriber's event  [load {}]", loadavg());
        for (label, sub, send) in [
            ("one instance (embedded store)", one, one),
            ("same instance (PostgreSQL)", pgs[0], pgs[0]),
            ("across instances (PostgreSQL)", pgs[0], pgs[1]),
        ] {
            let (l, missed) = relay_latency(sub, send, send, a.relays).await;
            let (p50, p99) = quantiles(l.clone());
            println!("  {label:32} p50 {p50:6.2} ms  p99 {p99:6.2} ms  ({} events, {missed} missed)", l.len());
        }
        println!("  (target across instances: p99 <= 50 ms)  [load {}]", loadavg());
        drop(nginxes);
        drop(procs);
    });
    let _ = std::fs::remove_dir_all(&scratch);
    if let Ok(mut c) = postgres::Client::connect(&a.pg, postgres::NoTls) {
        let _ = c.batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"));
    }
}
