//! Several instances on one PostgreSQL store are one proxy (issue #36),
//! with fake agents on 127.0.0.1 and a private PostgreSQL cluster: the
//! ListTasks index recorded by one instance listed by the others to the
//! same caller, within the same bounds and in the same order; relayed
//! subscriptions of idle tasks getting what other instances relay, in
//! order, once each, to the task's end; a second credentials key refused
//! at start; PostgreSQL down mid-run and back; PostgreSQL away at start;
//! a NOTIFY storm. (The same through nginx with the real SDKs:
//! `tests/tests/instances.rs`.)

#[path = "support/pg.rs"]
mod pg;
mod support;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proxy::config::{Config, PushBackend};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;
use tokio::time::timeout;

/// Bound of one whole stream or wait in these tests.
const LONG: Duration = Duration::from_secs(30);

/// One PostgreSQL database and the key file its instances share.
struct Deployment {
    cluster: pg::Cluster,
    url: String,
    key: PathBuf,
    dir: PathBuf,
}

impl Drop for Deployment {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn write_key(path: &std::path::Path, byte: u8) {
    let hex: String = std::iter::repeat_n(format!("{byte:02x}"), 32).collect();
    std::fs::write(path, format!("{hex}\n")).unwrap();
}

/// A private cluster, a fresh database and a key file; `None` (the test
/// then does nothing) when there is no PostgreSQL here.
async fn deployment() -> Option<Deployment> {
    if pg::skipped() {
        return None;
    }
    let (cluster, url) = tokio::task::spawn_blocking(|| {
        let c = pg::Cluster::start();
        let url = c.fresh_db();
        (c, url)
    })
    .await
    .unwrap();
    let dir = fresh_dir("instances");
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("credentials.key");
    write_key(&key, 0x5a);
    Some(Deployment {
        cluster,
        url,
        key,
        dir,
    })
}

/// The config of one instance of `d` in front of `upstream` (a v0.3
/// agent), `tune` last.
fn instance_config(d: &Deployment, upstream: &str, tune: impl FnOnce(&mut Config)) -> Config {
    let mut c = config_for(upstream, proxy::version::Version::V03);
    c.push.enabled = true;
    c.push.backend = PushBackend::Postgres(d.url.clone());
    c.push.credentials_key_file = Some(d.key.clone());
    c.push.allow_hosts = vec!["127.0.0.1".into()];
    c.push.backoff_initial = Duration::from_millis(50);
    c.push.backoff_max = Duration::from_millis(200);
    c.limits.read_timeout = Duration::from_secs(10);
    tune(&mut c);
    c
}

/// Starts a config off the async workers (the store's client is sync).
async fn start(config: Config) -> std::io::Result<RunningProxy> {
    tokio::task::spawn_blocking(move || proxy::start(config))
        .await
        .unwrap()
}

async fn instance(d: &Deployment, upstream: &str) -> RunningProxy {
    let c = instance_config(d, upstream, |_| {});
    start(c).await.expect("instance")
}

/// A fake v0.3 agent keeping its tasks, on both bindings. A message
/// without a task id makes a task, idle in `input-required`; one naming a
/// task moves it to the state its text names. `tasks/get` (and REST
/// `GET /v1/tasks/{id}`) answers a task as it is now; every resubscribe is
/// refused, as a2a-sdk 0.3 refuses an idle task's (JSON-RPC: TaskNotFound;
/// REST: a stream broken off before its first event).
/// Status timestamps grow with every change.
async fn tasks_agent() -> FakeUpstream {
    tasks_agent_keeping(Seen::default()).await
}

/// [`tasks_agent`], keeping in `seen` the last push config it was sent.
async fn tasks_agent_keeping(seen: Seen) -> FakeUpstream {
    let tasks: Arc<Mutex<HashMap<String, Value>>> = Arc::default();
    let clock = Arc::new(AtomicU64::new(0));
    let card = |host: &str| {
        json!({"name": "tasks", "url": format!("http://{host}/"), "version": "1",
               "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
               "additionalInterfaces": [
                   {"url": format!("http://{host}/"), "transport": "JSONRPC"},
                   {"url": format!("http://{host}"), "transport": "HTTP+JSON"}],
               "capabilities": {"streaming": true, "pushNotifications": true},
               "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
               "skills": []})
        .to_string()
    };
    agent_with_card(card, move |r| {
        let task_of = |id: &str, state: &str| {
            let t = clock.fetch_add(1, Ordering::SeqCst);
            json!({"kind": "task", "id": id, "contextId": "c1",
                   "status": {"state": state,
                              "timestamp": format!("2026-01-01T{:02}:{:02}:{:02}Z", t / 3600 % 24, t / 60 % 60, t % 60)}})
        };
        if r.target.ends_with(":subscribe") {
            // As a2a-sdk 0.3's REST binding does for an idle task: the
            // stream breaks off before its first event.
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
            return Reply::Cut(head.as_bytes().to_vec());
        }
        if r.method == "GET" {
            let id = r.target.trim_start_matches("/v1/tasks/");
            let id = id.split('?').next().unwrap_or_default();
            return match tasks.lock().unwrap().get(id) {
                // The v0.3 HTTP+JSON shape (the proto's JSON).
                Some(t) => {
                    let state = t["status"]["state"].as_str().unwrap_or_default();
                    let state = format!("TASK_STATE_{}", state.to_uppercase().replace('-', "_"));
                    let mut t = t.clone();
                    t["status"]["state"] = json!(state);
                    t.as_object_mut().map(|o| o.remove("kind"));
                    Reply::json(200, &t.to_string())
                }
                None => Reply::json(404, r#"{"code":-32001,"message":"Task not found"}"#),
            };
        }
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let id = body["id"].clone();
        let p = &body["params"];
        match body["method"].as_str() {
            Some("message/send") => {
                let cfg = &p["configuration"]["pushNotificationConfig"];
                if cfg.is_object() {
                    *seen.lock().unwrap() = Some(cfg.clone());
                }
                let m = &p["message"];
                let text = m["parts"][0]["text"].as_str().unwrap_or_default().to_string();
                let task = match m["taskId"].as_str() {
                    Some(t) => task_of(t, &text),
                    None => {
                        let n = tasks.lock().unwrap().len();
                        task_of(&format!("task-{n}-{}", proxy::ids::random_id()), "input-required")
                    }
                };
                let key = task["id"].as_str().unwrap().to_string();
                tasks.lock().unwrap().insert(key, task.clone());
                Reply::rpc_result(&id, &task)
            }
            Some("tasks/get") => {
                let t = tasks.lock().unwrap().get(p["id"].as_str().unwrap_or("")).cloned();
                match t {
                    Some(t) => Reply::rpc_result(&id, &t),
                    None => Reply::json(200, &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Task not found"}}).to_string()),
                }
            }
            Some("message/stream") => {
                // "storm N": N working updates of the task at once, then
                // its completion.
                let text = p["message"]["parts"][0]["text"].as_str().unwrap_or_default();
                let t = p["message"]["taskId"].as_str().unwrap_or("t").to_string();
                let n: usize = text.strip_prefix("storm ").and_then(|n| n.parse().ok()).unwrap_or(1);
                let pad = "x".repeat(512);
                let mut events: Vec<String> = (0..n)
                    .map(|i| {
                        let ts = format!("2026-01-02T00:00:{:02}.{:06}Z", i / 1_000_000, i % 1_000_000);
                        let u = json!({"kind": "status-update", "taskId": t, "contextId": "c1", "final": false,
                                       "status": {"state": "working", "timestamp": ts}, "metadata": {"pad": pad}});
                        format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": u}))
                    })
                    .collect();
                let done = json!({"kind": "status-update", "taskId": t, "contextId": "c1", "final": true,
                                  "status": {"state": "completed", "timestamp": "2026-01-03T00:00:00Z"}});
                events.push(format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": done})));
                let gate = Arc::new(tokio::sync::Semaphore::new(events.len()));
                Reply::Sse { events, gate }
            }
            Some("tasks/resubscribe") => {
                let e = json!({"jsonrpc": "2.0", "id": id,
                               "error": {"code": -32001, "message": "Task not found"}});
                Reply::Sse {
                    events: vec![format!("data: {e}\n\n")],
                    gate: Arc::new(tokio::sync::Semaphore::new(0)),
                }
            }
            _ => Reply::json(404, "{}"),
        }
    })
    .await
}

fn v10_headers(auth: &str) -> Vec<(&'static str, String)> {
    vec![
        ("Content-Type", "application/json".into()),
        ("A2A-Version", "1.0".into()),
        ("Authorization", format!("Bearer {auth}")),
    ]
}

/// A v1.0 JSON-RPC call as `auth`; the answer.
async fn rpc(addr: SocketAddr, auth: &str, method: &str, params: Value) -> Value {
    let h = v10_headers(auth);
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    post(addr, "/", &h, body.to_string().as_bytes())
        .await
        .json()
}

/// A v1.0 SendMessage of `text` as `auth` (to `task` when given); its task.
async fn send_text(addr: SocketAddr, auth: &str, task: Option<&str>, text: &str) -> Value {
    let mut m = json!({"role": "ROLE_USER", "messageId": proxy::ids::random_id(),
                       "parts": [{"text": text}]});
    if let Some(t) = task {
        m["taskId"] = json!(t);
    }
    let r = rpc(addr, auth, "SendMessage", json!({"message": m})).await;
    r["result"]["task"].clone()
}

/// The ids `auth`'s ListTasks at `addr` answers, in order.
async fn listed(addr: SocketAddr, auth: &str) -> Vec<String> {
    let r = rpc(addr, auth, "ListTasks", json!({})).await;
    r["result"]["tasks"]
        .as_array()
        .unwrap_or_else(|| panic!("{r}"))
        .iter()
        .filter_map(|t| t["id"].as_str().map(str::to_string))
        .collect()
}

/// Polls `what` (at most `limit`) until `done`; the last value and when.
async fn until<T>(
    limit: Duration,
    mut what: impl FnMut() -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send>>,
    done: impl Fn(&T) -> bool,
) -> (T, Duration) {
    let t0 = Instant::now();
    loop {
        let v = what().await;
        if done(&v) || t0.elapsed() > limit {
            return (v, t0.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn metric(text: &str, name: &str) -> u64 {
    text.lines()
        .find(|l| l.starts_with(name) && !l.starts_with('#'))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

async fn metrics_text(addr: SocketAddr) -> String {
    get(addr, "/metrics", &[]).await.text()
}

/// What one instance records, every other lists to the same caller (and
/// to no one else) within a second; with `list_index_max_tasks`, every
/// instance lists the same newest entries in the same order, however the
/// sends were spread, and the store keeps no more than the bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_one_instance_records_every_instance_lists_to_the_same_caller() {
    let Some(d) = deployment().await else { return };
    let agent = tasks_agent().await;
    let mut px = Vec::new();
    for _ in 0..3 {
        let c = instance_config(&d, &agent.url(), |c| c.limits.list_index.max_tasks = 4);
        px.push(start(c).await.expect("instance"));
    }
    let addrs: Vec<SocketAddr> = px.iter().map(|p| p.addr).collect();
    let t1 = send_text(addrs[0], "alice", None, "hello").await;
    let t1 = t1["id"].as_str().expect("a task").to_string();
    assert_eq!(listed(addrs[0], "alice").await, std::slice::from_ref(&t1));
    for &other in &addrs[1..] {
        let want = t1.clone();
        let (ids, took) = until(
            LONG,
            || Box::pin(listed(other, "alice")),
            |ids| ids.contains(&want),
        )
        .await;
        assert_eq!(ids, std::slice::from_ref(&t1), "listed by {other}");
        eprintln!("listed by another instance after {took:?}");
        assert!(took < Duration::from_secs(5), "{took:?} (the bound is 1 s)");
    }
    for &a in &addrs {
        assert!(
            listed(a, "bob").await.is_empty(),
            "bob sees alice's task at {a}"
        );
    }
    // Five more, spread over the instances: the newest four, everywhere.
    let mut sent = vec![t1];
    for i in 0..5 {
        let t = send_text(addrs[i % 3], "alice", None, "more").await;
        sent.push(t["id"].as_str().unwrap().to_string());
    }
    let want: Vec<String> = sent.iter().rev().take(4).cloned().collect();
    for &a in &addrs {
        let w = want.clone();
        let (ids, _) = until(LONG, || Box::pin(listed(a, "alice")), |ids| *ids == w).await;
        assert_eq!(ids, want, "at {a}");
    }
    let url = d.url.clone();
    let rows: i64 = tokio::task::spawn_blocking(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        c.query_one("SELECT COUNT(*) FROM push_tasks", &[])
            .unwrap()
            .get(0)
    })
    .await
    .unwrap();
    assert!(rows <= 5, "{rows} rows kept for a bound of 4");
    let m = metrics_text(addrs[1]).await;
    assert!(metric(&m, "a2a_proxy_list_tasks_remote_total") >= 1, "{m}");
    drop(px);
}

/// What an event says: its kind and state (`/result` stripped).
fn kind_state(event: &Value) -> (String, String) {
    let e = event.get("result").unwrap_or(event);
    for k in ["task", "statusUpdate", "artifactUpdate"] {
        if let Some(x) = e.get(k) {
            let s = x.pointer("/status/state").and_then(Value::as_str);
            return (k.into(), s.unwrap_or_default().into());
        }
    }
    ("?".into(), format!("{e}"))
}

fn subscribe_rpc(auth: &str, task: &str) -> Vec<u8> {
    let h = v10_headers(auth);
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let body = json!({"jsonrpc": "2.0", "id": "sub", "method": "SubscribeToTask",
                      "params": {"id": task}});
    request("POST", "/", &h, body.to_string().as_bytes())
}

fn subscribe_rest(auth: &str, task: &str) -> Vec<u8> {
    let a = format!("Bearer {auth}");
    let h = [("A2A-Version", "1.0"), ("Authorization", a.as_str())];
    request("POST", &format!("/tasks/{task}:subscribe"), &h, b"")
}

/// A subscription to an idle task on one instance gets, in order and once
/// each, what two other instances relay for it, up to its completion,
/// on JSON-RPC and REST at once; each counts what came from elsewhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_subscription_gets_what_other_instances_relay_in_order() {
    let Some(d) = deployment().await else { return };
    let agent = tasks_agent().await;
    let a = instance(&d, &agent.url()).await;
    let b = instance(&d, &agent.url()).await;
    let c = instance(&d, &agent.url()).await;
    let t = send_text(a.addr, "alice", None, "hello").await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    let t = t["id"].as_str().unwrap().to_string();
    let mut on_a = open(a.addr, &subscribe_rpc("alice", &t)).await;
    let mut on_c = open(c.addr, &subscribe_rest("alice", &t)).await;
    assert_eq!((on_a.status, on_c.status), (200, 200));
    let (first_a, first_c) = (on_a.first_event(LONG).await, on_c.first_event(LONG).await);
    for first in [&first_a, &first_c] {
        let k = datas(first).first().map(kind_state);
        assert_eq!(
            k,
            Some(("task".into(), "TASK_STATE_INPUT_REQUIRED".into())),
            "{first}"
        );
    }
    // Worked on through b, completed through c.
    let w = send_text(b.addr, "alice", Some(&t), "working").await;
    assert_eq!(w["status"]["state"], "TASK_STATE_WORKING", "{w}");
    let done = send_text(c.addr, "alice", Some(&t), "completed").await;
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    let want: Vec<(String, String)> = [
        ("task", "TASK_STATE_INPUT_REQUIRED"),
        ("statusUpdate", "TASK_STATE_WORKING"),
        ("statusUpdate", "TASK_STATE_COMPLETED"),
        ("task", "TASK_STATE_COMPLETED"),
    ]
    .iter()
    .map(|(k, s)| (k.to_string(), s.to_string()))
    .collect();
    for (name, first, s) in [("a", &first_a, &mut on_a), ("c", &first_c, &mut on_c)] {
        let rest = timeout(LONG, s.rest()).await.expect("the stream ended");
        let all: Vec<Value> = datas(first).into_iter().chain(datas(&rest)).collect();
        let got: Vec<(String, String)> = all.iter().map(kind_state).collect();
        if got != want {
            for p in [&a, &b, &c] {
                eprintln!("{}", get(p.addr, "/ready", &[]).await.text());
                eprintln!("{}", metrics_text(p.addr).await);
            }
        }
        assert_eq!(got, want, "on {name}: {first}{rest}");
    }
    let m = metrics_text(a.addr).await;
    assert_eq!(metric(&m, "a2a_proxy_relay_remote_events_total"), 3, "{m}");
    let m = metrics_text(c.addr).await;
    assert_eq!(metric(&m, "a2a_proxy_relay_remote_events_total"), 1, "{m}");
    for p in [&a, &c] {
        assert!(eventually(|| p.app.relay.open() == 0).await);
    }
    // The shared store, as /ready tells it.
    let r = get(a.addr, "/ready", &[]).await.json();
    assert_eq!(r["pushStore"]["backend"], "postgres", "{r}");
    assert_eq!(r["pushStore"]["shared"], true, "{r}");
    assert_eq!(r["pushStore"]["reachable"], true, "{r}");
    drop((a, b, c));
}

/// An instance with another credentials key, or none where the others
/// have one, is refused at start, naming the key file; two instances
/// without a key file agree on the scopes all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_credentials_key_is_refused_at_start() {
    let Some(d) = deployment().await else { return };
    let agent = tasks_agent().await;
    let first = instance(&d, &agent.url()).await;
    let other = d.dir.join("other.key");
    write_key(&other, 0x33);
    let o = other.clone();
    let err = start(instance_config(&d, &agent.url(), |c| {
        c.push.credentials_key_file = Some(o)
    }))
    .await
    .err()
    .expect("another key refused");
    let msg = err.to_string();
    assert!(
        msg.contains(&other.display().to_string()) && msg.contains("another credentials key"),
        "{msg}"
    );
    let err = start(instance_config(&d, &agent.url(), |c| {
        c.push.credentials_key_file = None
    }))
    .await
    .err()
    .expect("no key refused");
    assert!(
        err.to_string().contains("push.credentials_key_file"),
        "{err}"
    );
    // The same key again is fine.
    let again = instance(&d, &agent.url()).await;
    drop((first, again));

    // Without a key file, on another database: one deployment secret.
    let url = tokio::task::block_in_place(|| d.cluster.fresh_db());
    let keyless = |url: String| {
        let mut c = instance_config(&d, &agent.url(), |c| c.push.credentials_key_file = None);
        c.push.backend = PushBackend::Postgres(url);
        c
    };
    let x = start(keyless(url.clone())).await.expect("keyless x");
    let y = start(keyless(url)).await.expect("keyless y");
    let t = send_text(x.addr, "carol", None, "hi").await;
    let t = t["id"].as_str().unwrap().to_string();
    let (ids, _) = until(
        LONG,
        || Box::pin(listed(y.addr, "carol")),
        |ids| ids.contains(&t),
    )
    .await;
    assert_eq!(ids, [t]);
    drop((x, y));
}

/// A webhook answering 503 until its switch is set, then 200.
async fn switched_webhook() -> (FakeUpstream, Arc<AtomicBool>) {
    let up = Arc::new(AtomicBool::new(false));
    let u = up.clone();
    let hook = FakeUpstream::start(move |_| {
        if u.load(Ordering::SeqCst) {
            Reply::json(200, "{}")
        } else {
            Reply::json(503, "{}")
        }
    })
    .await;
    (hook, up)
}

/// PostgreSQL down mid-run: callbacks are refused (503), never accepted
/// and lost; ListTasks answers what each instance has; /ready and
/// /metrics say the store is away. Back: nothing accepted before is lost
/// (delivered in order), what was recorded meanwhile reaches the other
/// instance, callbacks are accepted again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_down_mid_run_and_back_loses_nothing_accepted() {
    let Some(d) = deployment().await else { return };
    if !d.cluster.owned() {
        return; // cannot stop a server we did not start
    }
    let seen = Seen::default();
    let agent = tasks_agent_keeping(seen.clone()).await;
    let (hook, hook_up) = switched_webhook().await;
    // Retried while the webhook and the store are away, never given up.
    let tune = |c: &mut Config| c.push.max_attempts = 10_000;
    let a = start(instance_config(&d, &agent.url(), tune))
        .await
        .unwrap();
    let b = start(instance_config(&d, &agent.url(), tune))
        .await
        .unwrap();
    let r = rpc(
        a.addr,
        "alice",
        "SendMessage",
        json!({"message": {"role": "ROLE_USER", "messageId": "m1", "parts": [{"text": "hi"}]},
               "configuration": {"taskPushNotificationConfig": {"url": format!("{}/h", hook.url()), "token": "tok"}}}),
    )
    .await;
    let t1 = r["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    let (path, secret) = callback_of(a.addr, &seen);
    let id = t1.clone();
    let push = move |n: u32| {
        json!({"kind": "task", "id": id, "contextId": "c1",
               "status": {"state": "working", "timestamp": format!("2026-01-01T00:00:{n:02}Z")}})
    };
    for n in 0..5 {
        let r = push_bearing(b.addr, &path, &secret, &push(n)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // t1 is listed everywhere before the store goes.
    let (ids, _) = until(
        LONG,
        || Box::pin(listed(b.addr, "alice")),
        |i| !i.is_empty(),
    )
    .await;
    assert_eq!(ids, std::slice::from_ref(&t1));

    let cluster = &d.cluster;
    tokio::task::block_in_place(|| cluster.pause());
    let r = push_bearing(b.addr, &path, &secret, &push(9)).await;
    assert_eq!(
        r.status,
        503,
        "not accepted while the store is away: {}",
        r.text()
    );
    assert!(!r.text().contains("host="), "{}", r.text());
    // What a has it still lists (the agent answers the task itself).
    assert_eq!(listed(a.addr, "alice").await, std::slice::from_ref(&t1));
    let (ready, _) = until(
        LONG,
        || Box::pin(async move { get(a.addr, "/ready", &[]).await.json() }),
        |r| r["pushStore"]["reachable"] == false,
    )
    .await;
    assert_eq!(ready["pushStore"]["reachable"], false, "{ready}");
    let m = metrics_text(a.addr).await;
    assert!(
        m.contains("a2a_proxy_shared_store_up{agent=\"default\"} 0"),
        "{m}"
    );
    // Recorded while the store is away: kept, written when it is back.
    let r = rpc(a.addr, "dave", "GetTask", json!({"id": t1})).await;
    assert_eq!(r["result"]["id"], t1.as_str(), "{r}");

    tokio::task::block_in_place(|| cluster.resume());
    hook_up.store(true, Ordering::SeqCst);
    let end = Instant::now() + LONG;
    let stamps = loop {
        let got: Vec<String> = hook
            .recorded()
            .iter()
            .filter(|r| r.header("x-a2a-notification-token").is_some())
            .filter_map(|r| {
                let b: Value = serde_json::from_slice(&r.body).ok()?;
                b.pointer("/task/status/timestamp")?
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        // An item retried while the webhook refused repeats; one after
        // another, in order.
        let mut firsts = got;
        firsts.dedup();
        if firsts.len() >= 5 || Instant::now() > end {
            break firsts;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let want: Vec<String> = (0..5)
        .map(|n| format!("2026-01-01T00:00:{n:02}Z"))
        .collect();
    assert_eq!(stamps, want, "every accepted push, in order");
    let (ids, _) = until(LONG, || Box::pin(listed(b.addr, "dave")), |i| !i.is_empty()).await;
    assert_eq!(
        ids,
        std::slice::from_ref(&t1),
        "dave's entry, recorded on a while the store was away"
    );
    let (r, _) = until(
        LONG,
        || {
            let (path, secret, body) = (path.clone(), secret.clone(), push(20));
            Box::pin(async move { push_bearing(b.addr, &path, &secret, &body).await.status })
        },
        |s| *s == 200,
    )
    .await;
    assert_eq!(r, 200, "callbacks accepted again");
    let (ready, _) = until(
        LONG,
        || Box::pin(async move { get(a.addr, "/ready", &[]).await.json() }),
        |r| r["pushStore"]["reachable"] == true,
    )
    .await;
    assert_eq!(ready["pushStore"]["reachable"], true, "{ready}");
    drop((a, b));
}

/// The config file of a `serve` binary instance of `d` on `addr` in front
/// of `upstream`, with `extra` lines in `[limits]`.
fn binary_config(
    d: &Deployment,
    name: &str,
    addr: SocketAddr,
    upstream: &str,
    url: &str,
    extra: &str,
) -> PathBuf {
    let f = d.dir.join(name);
    std::fs::write(
        &f,
        format!(
            "listen = \"{addr}\"\nthreads = 1\n[upstream]\nurl = \"{upstream}\"\nversion = \"0.3\"\n\
             [push]\npostgres_url = \"{url}\"\ncredentials_key_file = \"{}\"\nallow_hosts = [\"127.0.0.1\"]\n\
             [limits]\nread_timeout_ms = 10000\n{extra}",
            d.key.display()
        ),
    )
    .unwrap();
    f
}

/// PostgreSQL away at start: the instance says so (naming the key, never
/// the connection string), waits without crashing, and starts serving
/// once it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_away_at_start_is_waited_for() {
    let Some(d) = deployment().await else { return };
    if !d.cluster.owned() {
        return;
    }
    let agent = tasks_agent().await;
    let addr = free_local_addr().unwrap();
    let url = format!("{} password=sekrit-pw", d.url);
    let f = binary_config(&d, "a.toml", addr, &agent.url(), &url, "");
    tokio::task::block_in_place(|| d.cluster.pause());
    let (mut child, log) = child::serve_logging(&["--config", f.to_str().unwrap()], "warn");
    let lines = tokio::task::block_in_place(|| {
        child::lines_until(&log, LONG, |l| {
            l.iter().filter(|l| l.contains("push.postgres_url")).count() >= 2
        })
    });
    assert!(
        lines
            .iter()
            .filter(|l| l.contains("push.postgres_url"))
            .count()
            >= 2,
        "{lines:?}"
    );
    assert!(
        lines
            .iter()
            .all(|l| !l.contains("sekrit-pw") && !l.contains("panicked")),
        "{lines:?}"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "still waiting, not exited"
    );
    assert!(health_within(addr, Duration::from_millis(500))
        .await
        .is_none());
    tokio::task::block_in_place(|| d.cluster.resume());
    let end = Instant::now() + LONG;
    while health_within(addr, Duration::from_secs(1)).await.is_none() && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        health_within(addr, Duration::from_secs(2)).await.is_some(),
        "serving once PostgreSQL answers"
    );
    let t = send_text(addr, "alice", None, "hello").await;
    assert_eq!(t["status"]["state"], "TASK_STATE_INPUT_REQUIRED", "{t}");
    let _ = child.kill();
    let _ = child.wait();
}

/// VmRSS of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let kb = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    kb * 1024
}

/// The largest VmRSS of `pids` seen until `stop`, sampled every 20 ms.
fn sample_rss(pids: Vec<u32>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Vec<u64>> {
    std::thread::spawn(move || {
        let mut max = vec![0; pids.len()];
        while !stop.load(Ordering::Relaxed) {
            for (m, p) in max.iter_mut().zip(&pids) {
                *m = (*m).max(rss(*p));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        max
    })
}

/// Whether the events of an SSE text are in order: every status update's
/// timestamp later than the one before (so none repeats). Compared as
/// instants: a translated timestamp is written with as few fraction digits
/// as it needs (`00.001Z` before `00.001001Z`), so its text does not sort.
fn in_order(text: &str) -> bool {
    let stamps: Vec<chrono::DateTime<chrono::FixedOffset>> = datas(text)
        .iter()
        .filter_map(|e| {
            e.pointer("/result/statusUpdate/status/timestamp")
                .and_then(Value::as_str)
                .map(|t| {
                    chrono::DateTime::parse_from_rfc3339(t)
                        .unwrap_or_else(|e| panic!("timestamp {t}: {e}"))
                })
        })
        .collect();
    stamps.windows(2).all(|w| w[0] < w[1])
}

/// A NOTIFY storm, 10,000 relayed events a second for one task (and
/// notifications that are not the proxy's), at an instance with
/// subscribers of that task, and a storm of events an agent streams
/// through one instance for a subscriber on another: memory stays
/// bounded on both, both keep answering, the subscribers' streams stay
/// in order and end, and the event table is pruned to its bound.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notify_storm_stays_bounded_on_every_instance() {
    use proxy::push::pg_shared::{task_key, RELAY_CHANNEL, RELAY_KEEP_BYTES};
    let Some(d) = deployment().await else { return };
    let agent = tasks_agent().await;
    let (aa, ab) = (free_local_addr().unwrap(), free_local_addr().unwrap());
    let extra = "relay_max_wait_secs = 20\n";
    let fa = binary_config(&d, "a.toml", aa, &agent.url(), &d.url, extra);
    let fb = binary_config(&d, "b.toml", ab, &agent.url(), &d.url, extra);
    let a = serve_binary(&fa, aa).await;
    let b = serve_binary(&fb, ab).await;
    let t = send_text(aa, "alice", None, "hello").await;
    let t = t["id"].as_str().unwrap().to_string();
    // Warm both up, then the baseline.
    for _ in 0..20 {
        let _ = listed(aa, "alice").await;
        let _ = listed(ab, "alice").await;
    }
    let (pa, pb) = (a.0.id(), b.0.id());
    let base = (rss(pa), rss(pb));

    // 1. Straight into the store: 50,000 rows at up to 10,000 a second
    // (as fast as this box allows, at most 20 s), 4 KB each (200 MB in
    // all), each notified, with junk between.
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_rss(vec![pa, pb], stop.clone());
    let url = d.url.clone();
    let task = t.clone();
    let storm = std::thread::spawn(move || {
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        let key = task_key(&task);
        let pad = "y".repeat(4000);
        let t0 = Instant::now();
        let mut n: u64 = 0;
        while n < 50_000 && t0.elapsed() < Duration::from_secs(20) {
            // 100 rows a transaction, each notified; 100 of those a second.
            let mut tx = c.transaction().unwrap();
            let (from, to) = (n as i64 + 1, n as i64 + 100);
            n += 100;
            tx.execute(
                "WITH e AS (SELECT g, '2026-01-02T00:00:' || lpad((g / 1000000)::text, 2, '0') || '.' \
                   || lpad((g % 1000000)::text, 6, '0') || 'Z' AS ts \
                   FROM generate_series($1::bigint, $2::bigint) g), \
                 ins AS (INSERT INTO relay_events (task_id, origin, state, ts, lost, events, bytes) \
                   SELECT $3, 'i-storm', 'TASK_STATE_WORKING', ts, FALSE, ev, length(ev) FROM \
                   (SELECT ts, json_build_object('statusUpdate', json_build_object('taskId', $3::text, \
                      'status', json_build_object('state', 'TASK_STATE_WORKING', 'timestamp', ts), \
                      'metadata', json_build_object('pad', $4::text)))::text AS ev FROM e ORDER BY g) x \
                   RETURNING id) \
                 SELECT pg_notify($5, id::text || ':' || $6) FROM (SELECT id FROM ins ORDER BY id) o",
                &[&from, &to, &task, &pad, &RELAY_CHANNEL, &key],
            )
            .unwrap();
            for junk in [
                "junk",
                "1:zzzz",
                ":",
                "99999999999999999999:abc",
                &"9:0000000000000000,".repeat(300),
            ] {
                tx.execute("SELECT pg_notify($1, $2)", &[&RELAY_CHANNEL, &junk])
                    .unwrap();
            }
            tx.commit().unwrap();
            let due = Duration::from_millis(n * 1000 / 10_000);
            if let Some(w) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(w);
            }
        }
        (n, t0.elapsed())
    });
    // One subscriber on b reads nothing after its first event (what b
    // holds for it must stay within relay_max_buffer_bytes); others come
    // and go meanwhile, each stream in order.
    let mut idle = open(ab, &subscribe_rpc("alice", &t)).await;
    let _ = idle.first_event(LONG).await;
    let mut streams = 0;
    while !storm.is_finished() {
        let mut s = open(ab, &subscribe_rpc("alice", &t)).await;
        assert_eq!(s.status, 200);
        let mut text = s.first_event(LONG).await;
        let read = async {
            while let Ok(Some(c)) = s.reader.chunk(&mut s.sock).await {
                text.push_str(&String::from_utf8_lossy(&c));
                if text.len() > 2 << 20 {
                    break;
                }
            }
        };
        let _ = timeout(Duration::from_millis(700), read).await;
        assert!(in_order(&text), "out of order on b");
        streams += 1;
        assert!(
            health_within(ab, Duration::from_secs(5)).await.is_some(),
            "b answers during the storm"
        );
    }
    let (rows, took) = tokio::task::spawn_blocking(move || storm.join().unwrap())
        .await
        .unwrap();
    drop(idle);
    stop.store(true, Ordering::Relaxed);
    let max = sampler.join().unwrap();
    let rate = rows as f64 / took.as_secs_f64();
    eprintln!("storm: {rows} rows in {took:?} ({rate:.0}/s), {streams} subscriptions; rss base {base:?} max {max:?}");
    assert!(rows >= 40_000, "the storm's volume: {rows} rows");
    let bound = 40 << 20;
    assert!(
        max[1] < base.1 + bound,
        "b grew by {} bytes",
        max[1] - base.1
    );
    let m = metrics_text(ab).await;
    assert!(metric(&m, "a2a_proxy_relay_remote_events_total") > 0, "{m}");

    // 2. Through the proxy: the agent streams 20,000 updates of the task
    // at once to a v1.0 client on a; a subscriber waits on b.
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = sample_rss(vec![pa, pb], stop.clone());
    let mut sub = open(ab, &subscribe_rpc("alice", &t)).await;
    let first = sub.first_event(LONG).await;
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": "SendStreamingMessage",
        "params": {"message": {"role": "ROLE_USER", "messageId": "m-storm", "taskId": t,
                               "parts": [{"text": "storm 20000"}]}}});
    let h = v10_headers("alice");
    let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut st = open(aa, &request("POST", "/", &h, body.to_string().as_bytes())).await;
    let streamed = timeout(LONG, st.rest())
        .await
        .expect("the agent's stream ended");
    assert!(
        streamed.contains("TASK_STATE_COMPLETED"),
        "{}",
        &streamed[streamed.len().saturating_sub(500)..]
    );
    let rest = timeout(LONG, sub.rest())
        .await
        .expect("b's subscriber ended");
    stop.store(true, Ordering::Relaxed);
    let max2 = sampler.join().unwrap();
    let all = format!("{first}{rest}");
    let last = datas(&all).last().cloned().unwrap_or(Value::Null);
    eprintln!(
        "through a: rss max {max2:?}; b's subscriber got {} events, last {}",
        datas(&all).len(),
        kind_state(&last).1
    );
    assert!(in_order(&all), "b's subscriber out of order");
    // It ends: with the task's completion, or told it fell behind.
    assert!(
        last.pointer("/result/task/status/state") == Some(&json!("TASK_STATE_COMPLETED"))
            || last.get("error").is_some(),
        "{last}"
    );
    assert!(
        max2[0] < base.0 + bound,
        "a grew by {} bytes",
        max2[0] - base.0
    );
    assert!(
        max2[1] < base.1 + bound,
        "b grew by {} bytes",
        max2[1] - base.1
    );

    // The table is pruned to its bound.
    let url = d.url.clone();
    let end = Instant::now() + LONG;
    loop {
        let u = url.clone();
        let bytes: i64 = tokio::task::spawn_blocking(move || {
            let mut c = postgres::Client::connect(&u, postgres::NoTls).unwrap();
            c.query_one(
                "SELECT COALESCE(SUM(bytes), 0)::BIGINT FROM relay_events",
                &[],
            )
            .unwrap()
            .get(0)
        })
        .await
        .unwrap();
        if bytes <= RELAY_KEEP_BYTES {
            break;
        }
        assert!(
            Instant::now() < end,
            "relay_events still holds {bytes} bytes"
        );
        // An instance prunes after it writes; a write of its own comes with
        // any relayed event.
        let _ = send_text(aa, "alice", Some(&t), "working").await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    drop((a, b));
}
