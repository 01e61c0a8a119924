//! Several instances are one proxy (issue #36), behind a real load
//! balancer with the REAL SDKs: nginx round-robin in front of three proxy
//! instances (each a `serve` child process) on one private PostgreSQL
//! cluster, in front of a2a-sdk 0.3 and 1.x echo agents (push on) and the
//! a2a-sdk 0.3 TCK agent (`tests/tck/sut_v03.py`, for idle tasks).
//!
//! One deployment serves every case (processes are reused):
//! 1. the whole SDK client scenario (`tests/sdk/client_v*.py`) of both
//!    SDK clients on both bindings against both agents through nginx,
//!    checked by the same checks as through one instance
//!    (`support::scenario::check_run`, as `interop.rs` does);
//! 2. ListTasks: a task sent through one instance is listed to its
//!    caller through another, to no other caller (`instances_client_v10.py`);
//! 3. a subscription to an idle task through one instance ends with its
//!    completion sent through another, on JSON-RPC and REST, and `/metrics`
//!    counts the events that came from elsewhere;
//! 4. push config create / get / list / delete spread over the instances,
//!    and deliveries, v1.0 subscriber of the v0.3 agent and v0.3 subscriber
//!    of the v1.0 agent (the agents call back through nginx);
//! 5. one instance SIGKILLed while calls go on through nginx: every later
//!    call succeeds on the others, nothing accepted is lost (the push
//!    outbox drains, no dead letter, every notification of a task sent
//!    clear of the kill reaches its webhook, every such task is listed).

#[path = "../../proxy/tests/support/pg.rs"]
mod pg;
#[macro_use]
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use e2e::peer::{run_client_with, start_agent_with, start_sdk_agent, Agent, Child, ClientRun};
use e2e::sdk::{python_v03, python_v10, repo_root, sdk_script};
use serde_json::{json, Value};
use support::scenario::{check_run, Binding, Sdk};

/// Set in a child process of this test: it is a proxy instance serving
/// the config file the variable names.
const INSTANCE_ENV: &str = "A2A_E2E_INSTANCE_CONFIG";
const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);
/// Bound of one call or wait.
const WAIT: Duration = Duration::from_secs(30);

/// Not a test: the entry point of an instance's child process (this test
/// binary run again with [`INSTANCE_ENV`] set), the proxy's own `serve`.
/// Without the variable it does nothing.
#[test]
fn instance_process() {
    let Ok(config) = std::env::var(INSTANCE_ENV) else {
        return;
    };
    use clap::Parser;
    let cli = proxy::cli::Cli::parse_from(["a2a-compat-proxy", "serve", "--config", &config]);
    let code = match &cli.command {
        proxy::cli::Command::Serve(args) => proxy::cli::serve::main(args),
        _ => 2,
    };
    std::process::exit(code);
}

// ---- The deployment ----

/// One proxy instance: a child process serving `config` on `addr`.
struct Instance {
    addr: SocketAddr,
    config: PathBuf,
    child: Option<Child>,
}

impl Instance {
    fn start(addr: SocketAddr, config: PathBuf, log: &Path) -> Instance {
        let exe = std::env::current_exe().expect("the test binary");
        let log = std::fs::File::create(log).expect("instance log");
        let child = Child::spawn(
            &format!("instance {addr}"),
            Command::new(exe)
                .args([
                    "instance_process",
                    "--exact",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(INSTANCE_ENV, &config)
                .env("RUST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(log),
        );
        let i = Instance {
            addr,
            config,
            child: Some(child),
        };
        let end = Instant::now() + Duration::from_secs(60);
        while get(addr, "/health").0 != 200 {
            assert!(Instant::now() < end, "instance {addr} did not start");
            std::thread::sleep(Duration::from_millis(100));
        }
        i
    }

    /// SIGKILL, no goodbye.
    fn kill(&mut self) {
        self.child = None;
    }
}

/// nginx, round-robin over the instances, on `addr`.
struct Nginx {
    addr: SocketAddr,
    _child: Child,
}

fn nginx_bin() -> Option<PathBuf> {
    ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

impl Nginx {
    fn start(bin: &Path, dir: &Path, upstreams: &[SocketAddr]) -> Nginx {
        let addr = e2e::free_local_addr().expect("port");
        let d = dir.display();
        std::fs::create_dir_all(dir.join("tmp")).unwrap();
        let servers: String = upstreams
            .iter()
            .map(|u| format!("    server {u} max_fails=1 fail_timeout=30s;\n"))
            .collect();
        // No keep-alive to the instances: a call never rides a connection
        // to a dead one, and a refused connect goes to the next server.
        let conf = format!(
            "{user}worker_processes 1;\ndaemon off;\nerror_log {d}/error.log warn;\npid {d}/nginx.pid;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log {d}/access.log;\n\
               client_body_temp_path {d}/tmp/body;\n  proxy_temp_path {d}/tmp/proxy;\n\
               fastcgi_temp_path {d}/tmp/fcgi;\n  uwsgi_temp_path {d}/tmp/uwsgi;\n  scgi_temp_path {d}/tmp/scgi;\n\
               upstream proxies {{\n{servers}  }}\n\
               server {{\n    listen {addr};\n    client_max_body_size 16m;\n\
                 location / {{\n      proxy_pass http://proxies;\n      proxy_http_version 1.1;\n\
                   proxy_set_header Connection \"close\";\n      proxy_set_header Host $http_host;\n\
                   proxy_buffering off;\n      proxy_request_buffering on;\n\
                   proxy_connect_timeout 2s;\n      proxy_read_timeout 120s;\n\
                   proxy_next_upstream error timeout;\n    }}\n  }}\n}}\n",
            user = if is_root() { "user root;\n" } else { "" },
        );
        let file = dir.join("nginx.conf");
        std::fs::write(&file, conf).unwrap();
        let child = Child::spawn(
            "nginx",
            Command::new(bin)
                .arg("-p")
                .arg(dir)
                .arg("-c")
                .arg(&file)
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        assert!(
            e2e::peer::wait_for_port(addr, Duration::from_secs(10)),
            "nginx did not listen: {}",
            std::fs::read_to_string(dir.join("error.log")).unwrap_or_default()
        );
        Nginx {
            addr,
            _child: child,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// A webhook on 127.0.0.1 answering 200 to every POST, recording
/// `(path, headers (lowercase names), body)` as they come.
type Hooks = Arc<Mutex<Vec<(String, Vec<(String, String)>, Value)>>>;

fn webhook() -> (SocketAddr, Hooks) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let seen: Hooks = Arc::default();
    let s = seen.clone();
    std::thread::spawn(move || {
        for c in l.incoming().flatten() {
            let s = s.clone();
            std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(WAIT));
                if let Some((head, body)) = read_message(&c) {
                    let mut lines = head.lines();
                    let path = lines
                        .next()
                        .unwrap_or("")
                        .split(' ')
                        .nth(1)
                        .unwrap_or("")
                        .to_string();
                    let headers = lines
                        .filter_map(|l| l.split_once(':'))
                        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                        .collect();
                    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    s.lock().unwrap().push((path, headers, body));
                }
                let mut c = c;
                let _ = c.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    (addr, seen)
}

/// One HTTP/1.1 message's head and body (Content-Length or chunked).
fn read_message(c: &TcpStream) -> Option<(String, Vec<u8>)> {
    let mut r = BufReader::new(c);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    let lower = head.to_ascii_lowercase();
    let header = |name: &str| {
        lower.lines().find_map(|l| {
            l.strip_prefix(&format!("{name}:"))
                .map(|v| v.trim().to_string())
        })
    };
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).ok()?;
            let n = usize::from_str_radix(size.trim(), 16).ok()?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(n, 0);
        r.read_exact(&mut body).ok()?;
    } else {
        r.read_to_end(&mut body).ok()?;
    }
    Some((head, body))
}

/// One call (`Connection: close`); its status and body (0 and empty when
/// it failed).
fn call(
    addr: SocketAddr,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, Vec<u8>) {
    let Ok(mut c) = TcpStream::connect_timeout(&addr, Duration::from_secs(5)) else {
        return (0, Vec::new());
    };
    let _ = c.set_read_timeout(Some(WAIT));
    let mut req = format!(
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    let mut bytes = req.into_bytes();
    bytes.extend_from_slice(body);
    if c.write_all(&bytes).is_err() {
        return (0, Vec::new());
    }
    match read_message(&c) {
        Some((head, body)) => {
            let status = head
                .split(' ')
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            (status, body)
        }
        None => (0, Vec::new()),
    }
}

fn get(addr: SocketAddr, target: &str) -> (u16, Vec<u8>) {
    call(addr, "GET", target, &[], b"")
}

/// A JSON-RPC call at `path` (v1.0 when `v10`, as `auth`); the answer.
fn rpc(
    addr: SocketAddr,
    path: &str,
    v10: bool,
    auth: &str,
    method: &str,
    params: Value,
) -> (u16, Value) {
    let a = format!("Bearer {auth}");
    let mut h = vec![
        ("Content-Type", "application/json"),
        ("Authorization", a.as_str()),
    ];
    if v10 {
        h.push(("A2A-Version", "1.0"));
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let (status, out) = call(addr, "POST", path, &h, body.to_string().as_bytes());
    (status, serde_json::from_slice(&out).unwrap_or(Value::Null))
}

fn metric(text: &str, name: &str, agent: &str) -> u64 {
    let start = format!("{name}{{agent=\"{agent}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&start))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Polls `f` every 50 ms until it holds or `limit` passes; whether it held.
fn eventually(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    loop {
        if f() {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct Deployment {
    _cluster: pg::Cluster,
    /// The push store of each agent: `a03`, `a10`, `tck`.
    dbs: Vec<(&'static str, String)>,
    agents: Vec<Agent>,
    instances: Vec<Instance>,
    nginx: Nginx,
    dir: PathBuf,
}

impl Drop for Deployment {
    fn drop(&mut self) {
        self.instances.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn instance_config(
    addr: SocketAddr,
    public: SocketAddr,
    key: &Path,
    agents: &[(&str, String, &str, String)],
) -> String {
    let mut t = format!(
        "listen = \"{addr}\"\nthreads = 1\npublic_url = \"http://{public}\"\n\
         [push]\ncallback_url = \"http://{public}\"\nallow_hosts = [\"127.0.0.1\"]\n\
         credentials_key_file = \"{}\"\nlease_ms = 2000\nbackoff_initial_ms = 100\nbackoff_max_ms = 500\n\
         [limits]\nread_timeout_ms = 20000\n",
        key.display()
    );
    for (name, url, version, db) in agents {
        t.push_str(&format!(
            "[[agents]]\nname = \"{name}\"\nprefix = \"/{name}\"\n[agents.upstream]\nurl = \"{url}\"\nversion = \"{version}\"\n\
             [agents.push]\npostgres_url = \"{db}\"\n"
        ));
    }
    t
}

/// The deployment; `None` (the test then does nothing) without PostgreSQL
/// or nginx here (under CI, `.ci/run` installs both: missing, it fails).
fn deployment() -> Option<Deployment> {
    if pg::skipped() {
        return None;
    }
    let Some(nginx) = nginx_bin() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "nginx not found under CI: .ci/run installs it"
        );
        eprintln!("skipped: nginx not found (apt-get install nginx, as .ci/run does)");
        return None;
    };
    let cluster = pg::Cluster::start();
    let dir = std::env::temp_dir().join(format!("a2a-e2e-instances-{}", proxy::ids::random_id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("credentials.key");
    std::fs::write(&key, format!("{}\n", "7e".repeat(32))).unwrap();
    let a03 = start_sdk_agent("agent", "v03", &["--rest", "--push"], AGENT_START);
    let a10 = start_sdk_agent("agent", "v10", &["--rest", "--push"], AGENT_START);
    let tck = start_agent_with(
        &python_v03(),
        &repo_root().join("tests/tck/sut_v03.py"),
        &[],
        AGENT_START,
    );
    let dbs = vec![
        ("a03", cluster.fresh_db()),
        ("a10", cluster.fresh_db()),
        ("tck", cluster.fresh_db()),
    ];
    let agents_cfg = [
        ("a03", a03.url(), "0.3", dbs[0].1.clone()),
        ("a10", a10.url(), "1.0", dbs[1].1.clone()),
        ("tck", tck.url(), "0.3", dbs[2].1.clone()),
    ];
    let addrs: Vec<SocketAddr> = (0..3)
        .map(|_| e2e::free_local_addr().expect("port"))
        .collect();
    // nginx first (its port is every instance's public and callback URL);
    // it refuses nothing while the instances start.
    let nginx = Nginx::start(&nginx, &dir.join("nginx"), &addrs);
    let mut instances = Vec::new();
    for (n, addr) in addrs.iter().enumerate() {
        let f = dir.join(format!("instance-{n}.toml"));
        std::fs::write(&f, instance_config(*addr, nginx.addr, &key, &agents_cfg)).unwrap();
        instances.push(Instance::start(
            *addr,
            f,
            &dir.join(format!("instance-{n}.log")),
        ));
    }
    Some(Deployment {
        _cluster: cluster,
        dbs,
        agents: vec![a03, a10, tck],
        instances,
        nginx,
        dir,
    })
}

impl Deployment {
    fn base(&self, i: usize, agent: &str) -> String {
        format!("http://{}/{agent}", self.instances[i].addr)
    }

    fn db(&self, agent: &str) -> String {
        self.dbs
            .iter()
            .find(|(n, _)| *n == agent)
            .unwrap()
            .1
            .clone()
    }

    fn count(&self, agent: &str, sql: &str) -> i64 {
        let mut c = postgres::Client::connect(&self.db(agent), postgres::NoTls).unwrap();
        c.query_one(sql, &[]).unwrap().get(0)
    }
}

// ---- The cases ----

/// 1. The whole client scenario through nginx, checked as through one.
fn client_scenarios(d: &Deployment, failed: &mut Vec<String>) {
    let runs: Vec<(Sdk, Sdk, Binding)> = [Sdk::V03, Sdk::V10]
        .into_iter()
        .flat_map(|c| [Sdk::V03, Sdk::V10].into_iter().map(move |a| (c, a)))
        .flat_map(|(c, a)| {
            [Binding::JsonRpc, Binding::Rest]
                .into_iter()
                .map(move |b| (c, a, b))
        })
        .collect();
    // Two clients at a time (the box has two cores).
    for pair in runs.chunks(2) {
        let handles: Vec<_> = pair
            .iter()
            .map(|&(client, agent, binding)| {
                let base = format!(
                    "{}/{}",
                    d.nginx.url(),
                    if agent == Sdk::V03 { "a03" } else { "a10" }
                );
                std::thread::spawn(move || {
                    let env: &[(&str, &str)] = match binding {
                        Binding::JsonRpc => &[],
                        Binding::Rest => &[("A2A_BINDING", "HTTP+JSON")],
                    };
                    let t = Instant::now();
                    let run = run_client_with(
                        &client.python(),
                        &client.script("client"),
                        &base,
                        env,
                        CLIENT_RUN,
                    );
                    (client, agent, binding, base, run, t.elapsed())
                })
            })
            .collect();
        for h in handles {
            let (client, agent, binding, base, run, took) = h.join().unwrap();
            let label = format!(
                "{client:?} client -> nginx -> 3 instances ({binding:?}) -> {agent:?} agent"
            );
            let checked = std::panic::catch_unwind(|| {
                check_run(&label, client, agent, binding, &run, &base, took)
            });
            if let Err(e) = checked {
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .unwrap_or_else(|| "panicked".into());
                failed.push(msg);
            }
        }
    }
}

fn instances_client(scenario: &str, a: &str, b: &str, binding: &str) -> ClientRun {
    run_client_with(
        &python_v10(),
        &sdk_script("instances_client_v10.py"),
        scenario,
        &[
            ("A2A_BINDING", binding),
            ("A2A_INSTANCES_B", b),
            ("A2A_INSTANCES_A", a),
        ],
        CLIENT_RUN,
    )
}

/// 2. and 3. ListTasks and an idle task's subscription across instances.
fn lists_and_relays(d: &Deployment, failed: &mut Vec<String>) {
    let before = metric(
        &String::from_utf8_lossy(&get(d.instances[0].addr, "/metrics").1),
        "a2a_proxy_relay_remote_events_total",
        "tck",
    );
    for binding in ["JSONRPC", "HTTP+JSON"] {
        for (scenario, agent) in [("list", "a03"), ("relay", "tck")] {
            let (a, b) = (d.base(0, agent), d.base(1, agent));
            let run = instances_client(scenario, &a, &b, binding);
            let bad: Vec<_> = run.steps.iter().filter(|s| s["ok"] != true).collect();
            if run.steps.len() < 3 || !bad.is_empty() || !run.status.is_some_and(|s| s.success()) {
                failed.push(format!("{scenario} over {binding}: {}", run.raw));
            }
            if let Some(s) = run.step("list_other") {
                eprintln!("{binding}: listed by another instance after {} ms", s["ms"]);
            }
        }
    }
    let after = metric(
        &String::from_utf8_lossy(&get(d.instances[0].addr, "/metrics").1),
        "a2a_proxy_relay_remote_events_total",
        "tck",
    );
    if after <= before {
        failed.push(format!(
            "no relayed event from another instance counted on instance 0 ({before} -> {after})"
        ));
    }
}

/// The webhook's bodies for `path`.
fn hooked(hooks: &Hooks, path: &str) -> Vec<(Vec<(String, String)>, Value)> {
    hooks
        .lock()
        .unwrap()
        .iter()
        .filter(|(p, _, _)| p == path)
        .map(|(_, h, b)| (h.clone(), b.clone()))
        .collect()
}

fn header<'a>(h: &'a [(String, String)], name: &str) -> Option<&'a str> {
    h.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// 4. Push configs spread over the instances, and deliveries.
fn push_configs(d: &Deployment, hook: SocketAddr, hooks: &Hooks, failed: &mut Vec<String>) {
    let at = |i: usize| d.instances[i].addr;
    let mut check = |ok: bool, what: String| {
        if !ok {
            failed.push(what);
        }
    };
    // A v1.0 subscriber of the v0.3 agent: created inline through 0.
    let url1 = format!("http://{hook}/v10-one");
    let (_, r) = rpc(
        at(0),
        "/a03/",
        true,
        "alice",
        "SendMessage",
        json!({
        "message": {"role": "ROLE_USER", "messageId": "m-push-1", "parts": [{"text": "hello push"}]},
        "configuration": {"taskPushNotificationConfig": {"url": url1, "token": "tok-1"}}}),
    );
    let task = r["result"]["task"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    check(
        r["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED",
        format!("push send: {r}"),
    );
    let delivered = eventually(WAIT, || {
        hooked(hooks, "/v10-one")
            .iter()
            .any(|(_, b)| b["task"]["status"]["state"] == "TASK_STATE_COMPLETED")
    });
    let got = hooked(hooks, "/v10-one");
    check(
        delivered,
        format!("v1.0 webhook: no completed task: {got:?}"),
    );
    for (h, b) in &got {
        check(
            header(h, "content-type") == Some("application/a2a+json")
                && header(h, "x-a2a-notification-token") == Some("tok-1")
                && b["task"]["id"] == task.as_str(),
            format!("v1.0 webhook body {h:?} {b}"),
        );
    }
    // A second config through 1, read through 2 and 0, deleted through 1.
    let url2 = format!("http://{hook}/v10-two");
    let (_, r) = rpc(
        at(1),
        "/a03/",
        true,
        "alice",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c2", "url": url2, "token": "tok-2"}),
    );
    check(
        r["result"]["id"] == "c2" && r["result"]["url"] == url2.as_str(),
        format!("create c2: {r}"),
    );
    let (_, r) = rpc(
        at(2),
        "/a03/",
        true,
        "alice",
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c2"}),
    );
    check(
        r["result"]["url"] == url2.as_str() && r["result"]["token"] == "tok-2",
        format!("get c2 elsewhere: {r}"),
    );
    let (_, r) = rpc(
        at(0),
        "/a03/",
        true,
        "alice",
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task}),
    );
    let urls: Vec<&str> = r["result"]["configs"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["url"].as_str()).collect())
        .unwrap_or_default();
    check(
        urls.len() == 2 && urls.contains(&url1.as_str()) && urls.contains(&url2.as_str()),
        format!("list elsewhere: {r}"),
    );
    check(
        !r.to_string().contains("/a2a-proxy/push/"),
        format!("the proxy's callback shown: {r}"),
    );
    let (_, r) = rpc(
        at(1),
        "/a03/",
        true,
        "alice",
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c2"}),
    );
    check(r.get("error").is_none(), format!("delete c2: {r}"));
    // The delete leaves the shared store before it is answered: another
    // instance asked at once no longer knows it.
    let r = rpc(
        at(2),
        "/a03/",
        true,
        "alice",
        "GetTaskPushNotificationConfig",
        json!({"taskId": task, "id": "c2"}),
    )
    .1;
    let gone = r["error"]["code"] == -32001;
    check(gone, format!("get deleted c2 elsewhere: {r}"));

    // A v0.3 subscriber of the v1.0 agent, through nginx.
    let url3 = format!("http://{hook}/v03-hook");
    let (_, r) = rpc(
        d.nginx.addr,
        "/a10/",
        false,
        "alice",
        "message/send",
        json!({
        "message": {"kind": "message", "messageId": "m-push-3", "role": "user", "parts": [{"kind": "text", "text": "hello push"}]},
        "configuration": {"blocking": true, "pushNotificationConfig": {"url": url3, "token": "v03-tok"}}}),
    );
    let task3 = r["result"]["id"].as_str().unwrap_or_default().to_string();
    check(!task3.is_empty(), format!("v0.3 push send: {r}"));
    let delivered = eventually(WAIT, || {
        hooked(hooks, "/v03-hook")
            .iter()
            .any(|(_, b)| b["status"]["state"] == "completed")
    });
    let got = hooked(hooks, "/v03-hook");
    check(
        delivered,
        format!("v0.3 webhook: no completed task: {got:?}"),
    );
    for (h, b) in &got {
        check(
            header(h, "content-type") == Some("application/json")
                && header(h, "x-a2a-notification-token") == Some("v03-tok")
                && b["kind"] == "task"
                && b["id"] == task3.as_str()
                && !b.to_string().contains("TASK_STATE_"),
            format!("v0.3 webhook body {h:?} {b}"),
        );
    }
}

/// A v1.0 JSON-RPC SubscribeToTask of `task` (TCK agent) as `auth` at
/// `addr`, its head read; the stream.
fn subscribe(addr: SocketAddr, task: &str, auth: &str) -> BufReader<TcpStream> {
    let c = TcpStream::connect(addr).expect("connect");
    c.set_read_timeout(Some(WAIT)).unwrap();
    let body =
        json!({"jsonrpc": "2.0", "id": "sub", "method": "SubscribeToTask", "params": {"id": task}})
            .to_string();
    let req = format!(
        "POST /tck/ HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\n\
         Authorization: Bearer {auth}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    (&c).write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(c);
    let mut line = String::new();
    while r.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
        line.clear();
    }
    r
}

/// The states of the events read from a stream until `stop` holds for the
/// last one, or the stream ends or fails.
fn states(r: &mut BufReader<TcpStream>, stop: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    while r.read_line(&mut line).is_ok_and(|n| n > 0) {
        if let Some(d) = line.trim().strip_prefix("data:") {
            let v: Value = serde_json::from_str(d.trim()).unwrap_or(Value::Null);
            let s = v
                .pointer("/result/task/status/state")
                .or_else(|| v.pointer("/result/statusUpdate/status/state"))
                .and_then(Value::as_str)
                .unwrap_or(if v.get("error").is_some() {
                    "error"
                } else {
                    "?"
                })
                .to_string();
            out.push(s);
            if out.last().is_some_and(|s| stop(s)) {
                break;
            }
        }
        line.clear();
    }
    out
}

/// 5. One instance SIGKILLed while calls go on through nginx.
fn kill_one_mid_run(d: &mut Deployment, hook: SocketAddr, hooks: &Hooks, failed: &mut Vec<String>) {
    let ng = d.nginx.addr;
    // A relayed subscription of an idle task on a survivor, one on the
    // instance to be killed.
    let (_, r) = rpc(
        d.instances[0].addr,
        "/tck/",
        true,
        "sue",
        "SendMessage",
        json!({
        "message": {"role": "ROLE_USER", "messageId": "tck-input-required-kill", "parts": [{"text": "x"}]}}),
    );
    let idle = r["result"]["task"]["id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut survivor = subscribe(d.instances[0].addr, &idle, "sue");
    let mut doomed = subscribe(d.instances[2].addr, &idle, "sue");
    let first = (
        states(&mut survivor, |_| true),
        states(&mut doomed, |_| true),
    );
    if first.0 != ["TASK_STATE_INPUT_REQUIRED"] || first.1 != ["TASK_STATE_INPUT_REQUIRED"] {
        failed.push(format!("subscriptions before the kill: {first:?} ({r})"));
    }
    // Each call: a v1.0 SendMessage to the v0.3 echo agent with its own
    // webhook path; (started, answered, status, task id, path).
    type Sent = (Instant, Instant, u16, String, String);
    let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = {
        let (sent, stop) = (sent.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 90 {
                n += 1;
                let path = format!("/kill-{n}");
                let t = Instant::now();
                let (status, r) = rpc(
                    ng,
                    "/a03/",
                    true,
                    "kim",
                    "SendMessage",
                    json!({
                    "message": {"role": "ROLE_USER", "messageId": format!("m-kill-{n}"), "parts": [{"text": "hi"}]},
                    "configuration": {"taskPushNotificationConfig": {"url": format!("http://{hook}{path}"), "token": "k"}}}),
                );
                let id = r["result"]["task"]["id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                sent.lock()
                    .unwrap()
                    .push((t, Instant::now(), status, id, path));
                std::thread::sleep(Duration::from_millis(30));
            }
        })
    };
    std::thread::sleep(Duration::from_secs(3));
    let killed_at = Instant::now();
    d.instances[2].kill();
    std::thread::sleep(Duration::from_secs(3));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    load.join().unwrap();
    let sent = sent.lock().unwrap().clone();
    let clear = |s: &Sent| s.1 + Duration::from_secs(1) < killed_at || s.0 > killed_at;
    let before = sent.iter().filter(|s| s.1 < killed_at).count();
    eprintln!("{} calls, {before} before the kill", sent.len());
    if before < 5 || sent.len() - before < 5 {
        failed.push(format!(
            "the load did not straddle the kill: {} calls, {before} before",
            sent.len()
        ));
    }
    // Every call made after the kill succeeded on the others.
    for s in sent.iter().filter(|s| s.0 > killed_at) {
        if s.2 != 200 || s.3.is_empty() {
            failed.push(format!("a call after the kill failed: {} {}", s.2, s.4));
        }
    }
    // Nothing accepted is lost: the outbox drains (the killed instance's
    // leases run out and the others deliver), no dead letter, and every
    // task sent clear of the kill got its completion at its webhook.
    let drained = eventually(Duration::from_secs(60), || {
        d.count("a03", "SELECT COUNT(*) FROM push_outbox") == 0
    });
    if !drained {
        failed.push(format!(
            "push outbox not drained: {} left",
            d.count("a03", "SELECT COUNT(*) FROM push_outbox")
        ));
    }
    let dead = d.count("a03", "SELECT COUNT(*) FROM push_dead");
    if dead != 0 {
        failed.push(format!("{dead} dead letters"));
    }
    for s in sent.iter().filter(|s| clear(s) && s.2 == 200) {
        let done = hooked(hooks, &s.4)
            .iter()
            .any(|(_, b)| b["task"]["status"]["state"] == "TASK_STATE_COMPLETED");
        if !done {
            failed.push(format!("no completion delivered for {} ({})", s.3, s.4));
        }
    }
    // Every task answered clear of the kill is listed to its caller.
    let (_, r) = rpc(
        ng,
        "/a03/",
        true,
        "kim",
        "ListTasks",
        json!({"pageSize": 100}),
    );
    let listed: Vec<&str> = r["result"]["tasks"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["id"].as_str()).collect())
        .unwrap_or_default();
    for s in sent.iter().filter(|s| clear(s) && s.2 == 200) {
        if !listed.contains(&s.3.as_str()) {
            failed.push(format!("{} not listed after the kill", s.3));
        }
    }
    // The subscriber on a survivor is served to the task's end, completed
    // through another survivor; the killed instance's lost its connection.
    let (_, r) = rpc(
        d.instances[1].addr,
        "/tck/",
        true,
        "sue",
        "SendMessage",
        json!({
        "message": {"role": "ROLE_USER", "messageId": "tck-complete-kill", "taskId": idle, "parts": [{"text": "x"}]}}),
    );
    let got = states(&mut survivor, |s| s == "error");
    if got.last().map(String::as_str) != Some("TASK_STATE_COMPLETED")
        || got.iter().any(|s| s == "error")
    {
        failed.push(format!(
            "the survivor's subscriber after the kill: {got:?} ({r})"
        ));
    }
    let lost = states(&mut doomed, |_| true);
    if lost.contains(&"TASK_STATE_COMPLETED".to_string()) {
        failed.push(format!("the killed instance's subscriber got {lost:?}"));
    }
    // And the survivors go on: calls through nginx all succeed.
    for n in 0..10 {
        let (status, r) = rpc(
            ng,
            "/a03/",
            true,
            "kim",
            "SendMessage",
            json!({
            "message": {"role": "ROLE_USER", "messageId": format!("m-after-{n}"), "parts": [{"text": "hi"}]}}),
        );
        if status != 200 || r["result"]["task"]["status"]["state"] != "TASK_STATE_COMPLETED" {
            failed.push(format!("call {n} after the kill: {status} {r}"));
        }
    }
    let _ = &d.instances[2].config;
}

#[test]
fn three_instances_behind_nginx_are_one_proxy() {
    let Some(mut d) = deployment() else { return };
    let (hook, hooks) = webhook();
    let mut failed = Vec::new();
    let t = Instant::now();
    client_scenarios(&d, &mut failed);
    eprintln!("client scenarios: {:?}", t.elapsed());
    lists_and_relays(&d, &mut failed);
    push_configs(&d, hook, &hooks, &mut failed);
    // Each instance names the shared store it runs on.
    for i in &d.instances {
        let (_, body) = get(i.addr, "/ready");
        let r: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let stores: Vec<&Value> = ["a03", "a10", "tck"]
            .iter()
            .map(|a| &r["agents"][a]["pushStore"])
            .collect();
        if stores
            .iter()
            .any(|s| s["backend"] != "postgres" || s["reachable"] != true)
        {
            failed.push(format!("/ready of {}: {r}", i.addr));
        }
    }
    kill_one_mid_run(&mut d, hook, &hooks, &mut failed);
    let _ = &d.agents;
    if !failed.is_empty() {
        for (n, _) in d.instances.iter().enumerate() {
            let log = std::fs::read_to_string(d.dir.join(format!("instance-{n}.log")))
                .unwrap_or_default();
            eprintln!(
                "--- instance {n} log (tail)\n{}",
                &log[log.len().saturating_sub(3000)..]
            );
        }
    }
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
