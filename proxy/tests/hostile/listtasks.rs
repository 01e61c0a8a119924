//! Issue #20, findings 1 and 2: the ListTasks emulation toward a v0.3
//! agent lists per caller (a caller never sees another's tasks, the page's
//! tasks are asked of the agent with the lister's own credentials), and
//! its index stays small in memory, on disk and in what a list answers.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proto::v10 as p10;
use proxy::config::{Config, ListTasksMode};
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};

use crate::support::*;

const CARD_V03: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;

/// A v0.3 agent with access control: each task belongs to the
/// `Authorization` (and `X-Tenant`) it was created with; `tasks/get` and
/// REST `GET /v1/tasks/{id}` give it only to that owner (TaskNotFound /
/// 404 to anyone else). `message/send` makes a working task `t<n>` in
/// context `c1` (status timestamps in creation order) whose history holds
/// a message of `pad` bytes.
struct Agent {
    up: FakeUpstream,
    owners: Arc<Mutex<HashMap<String, String>>>,
}

fn owner_of(r: &Recorded) -> String {
    format!(
        "{}|{}",
        r.header("authorization").unwrap_or(""),
        r.header("x-tenant").unwrap_or("")
    )
}

fn v03_task(id: &str, n: usize, pad: &str) -> Value {
    json!({"kind": "task", "id": id, "contextId": "c1",
        "status": {"state": "working", "timestamp": format!("2025-01-01T00:{:02}:{:02}Z", n / 60 % 60, n % 60)},
        "history": [{"kind": "message", "messageId": format!("m{n}"), "role": "user",
            "parts": [{"kind": "text", "text": pad}]}]})
}

impl Agent {
    async fn start(pad: usize) -> Agent {
        let owners: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let o = owners.clone();
        let next = Arc::new(AtomicUsize::new(0));
        let host = Arc::new(std::sync::OnceLock::<String>::new());
        let h = host.clone();
        let pad = Arc::new("x".repeat(pad));
        let up = FakeUpstream::start(move |r| {
            if r.target.starts_with("/.well-known/") {
                let card = CARD_V03.replace("UP", h.get().map(String::as_str).unwrap_or("?"));
                return Reply::json(200, &card);
            }
            if r.method == "GET" {
                // REST GetTask (v0.3 ProtoJSON).
                let id = r.target.trim_start_matches("/v1/tasks/");
                let id = id.split('?').next().unwrap_or_default();
                if o.lock().unwrap().get(id) != Some(&owner_of(r)) {
                    return Reply::json(404, r#"{"code":404,"message":"Task not found"}"#);
                }
                let body = json!({"id": id, "contextId": "c1",
                    "status": {"state": "TASK_STATE_WORKING"}});
                return Reply::json(200, &body.to_string());
            }
            let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
            let answer = match req["method"].as_str() {
                Some("message/send") => {
                    let n = next.fetch_add(1, Ordering::SeqCst) + 1;
                    let id = format!("t{n}");
                    o.lock().unwrap().insert(id.clone(), owner_of(r));
                    json!({"result": v03_task(&id, n, &pad)})
                }
                Some("tasks/get") => {
                    let id = req["params"]["id"].as_str().unwrap_or_default();
                    let n: usize = id.trim_start_matches('t').parse().unwrap_or(0);
                    if o.lock().unwrap().get(id) == Some(&owner_of(r)) {
                        json!({"result": v03_task(id, n, "agent-now")})
                    } else {
                        json!({"error": {"code": -32001, "message": "Task not found"}})
                    }
                }
                _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
            };
            let mut env = json!({"jsonrpc": "2.0", "id": req["id"]});
            for (k, v) in answer.as_object().unwrap() {
                env[k] = v.clone();
            }
            Reply::json(200, &env.to_string())
        })
        .await;
        host.set(up.addr.to_string()).unwrap();
        Agent { up, owners }
    }

    /// The agent's GetTask calls (JSON-RPC or REST) since `from`, as
    /// (task id, the Authorization they carried).
    fn gets(&self, from: usize) -> Vec<(String, Option<String>)> {
        self.up.calls()[from..]
            .iter()
            .filter_map(|c| {
                let auth = c.header("authorization").map(str::to_string);
                if c.method == "GET" {
                    let id = c.target.trim_start_matches("/v1/tasks/");
                    return Some((id.split('?').next()?.to_string(), auth));
                }
                let b: Value = serde_json::from_slice(&c.body).ok()?;
                (b["method"] == "tasks/get")
                    .then(|| (b["params"]["id"].as_str().unwrap().to_string(), auth))
            })
            .collect()
    }
}

struct Px {
    http: RunningProxy,
    grpc: GrpcServer,
}

fn proxy(agent: &Agent, tweak: impl FnOnce(&mut Config)) -> Px {
    let mut config = config_for(&agent.up.url(), Version::V03);
    let grpc_addr = crate::support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    tweak(&mut config);
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
    Px { http, grpc }
}

fn headers(auth: Option<&'static str>) -> Vec<(&'static str, &'static str)> {
    let mut h = vec![("A2A-Version", "1.0"), ("Content-Type", "application/json")];
    if let Some(a) = auth {
        h.push(("Authorization", a));
    }
    h
}

/// A v1.0 JSON-RPC call as `auth`; the whole answer.
async fn rpc(px: &Px, auth: Option<&'static str>, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let r = post(
        px.http.addr,
        "/",
        &headers(auth),
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

async fn send(px: &Px, auth: Option<&'static str>) -> String {
    let v = rpc(
        px,
        auth,
        "SendMessage",
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .await;
    v["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string()
}

fn ids(tasks: &Value) -> Vec<String> {
    let mut v: Vec<String> = tasks
        .as_array()
        .unwrap_or_else(|| panic!("no tasks array: {tasks}"))
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

async fn list_rpc(px: &Px, auth: Option<&'static str>, params: Value) -> Value {
    rpc(px, auth, "ListTasks", params).await
}

async fn list_rest(px: &Px, auth: Option<&'static str>, query: &str) -> Response {
    get(px.http.addr, &format!("/tasks{query}"), &headers(auth)).await
}

async fn list_grpc(
    px: &Px,
    auth: Option<&'static str>,
) -> Result<p10::ListTasksResponse, tonic::Status> {
    let mut c =
        p10::a2a_service_client::A2aServiceClient::connect(format!("http://{}", px.grpc.addr))
            .await
            .unwrap();
    let mut req = tonic::Request::new(p10::ListTasksRequest::default());
    if let Some(a) = auth {
        req.metadata_mut()
            .insert("authorization", a.parse().unwrap());
    }
    tokio::time::timeout(WAIT, c.list_tasks(req))
        .await
        .expect("gRPC ListTasks timed out")
        .map(|r| r.into_inner())
}

/// Finding 1: caller A's tasks are listed to A only, on every binding;
/// B and an anonymous caller see none of them (nor their history).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_never_lists_another_callers_tasks() {
    let agent = Agent::start(16).await;
    let px = proxy(&agent, |_| {});
    let mut mine = Vec::new();
    for _ in 0..3 {
        mine.push(send(&px, Some("Bearer a")).await);
    }
    mine.sort();
    let theirs = send(&px, Some("Bearer b")).await;

    for (auth, want) in [
        (Some("Bearer a"), mine.clone()),
        (Some("Bearer b"), vec![theirs.clone()]),
        (None, vec![]),
        (Some("Bearer a-but-not-quite"), vec![]),
    ] {
        let v = list_rpc(&px, auth, json!({})).await;
        assert_eq!(
            ids(&v["result"]["tasks"]),
            want,
            "JSON-RPC as {auth:?}: {v}"
        );
        assert_eq!(v["result"]["totalSize"], want.len(), "{v}");
        let r = list_rest(&px, auth, "").await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(
            ids(&r.json()["tasks"]),
            want,
            "REST as {auth:?}: {}",
            r.text()
        );
        let g = list_grpc(&px, auth).await.unwrap();
        let mut got: Vec<String> = g.tasks.iter().map(|t| t.id.clone()).collect();
        got.sort();
        assert_eq!(got, want, "gRPC as {auth:?}");
    }
    // The anonymous caller's own tasks are its own.
    let anon = send(&px, None).await;
    let v = list_rpc(&px, None, json!({})).await;
    assert_eq!(ids(&v["result"]["tasks"]), [anon], "{v}");
    let v = list_rpc(&px, Some("Bearer b"), json!({})).await;
    assert_eq!(ids(&v["result"]["tasks"]), [theirs], "{v}");
}

/// Finding 1: the page's tasks are asked of the agent with the lister's
/// own Authorization (and identity headers), at most `pageSize` of them,
/// and what the agent refuses that caller is left out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_is_fetched_with_the_listers_credentials() {
    let agent = Agent::start(16).await;
    let px = proxy(&agent, |c| {
        c.list_tasks.identity_headers = vec![http::HeaderName::from_static("x-tenant")];
    });
    let mut mine = Vec::new();
    for _ in 0..5 {
        mine.push(send(&px, Some("Bearer a")).await);
    }
    // JSON-RPC: every GetTask carried A's Authorization, one per listed task.
    let before = agent.up.calls().len();
    let v = list_rpc(&px, Some("Bearer a"), json!({"pageSize": 2})).await;
    assert_eq!(v["result"]["tasks"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["result"]["totalSize"], 5, "{v}");
    // What is listed is what the agent answered now, not what passed through.
    let text = &v["result"]["tasks"][0]["history"][0]["parts"][0]["text"];
    assert_eq!(text, "agent-now", "{v}");
    let gets = agent.gets(before);
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert!(
        gets.iter().all(|(_, a)| a.as_deref() == Some("Bearer a")),
        "{gets:?}"
    );
    // REST likewise (its GetTask), within pageSize.
    let before = agent.up.calls().len();
    let r = list_rest(&px, Some("Bearer a"), "?pageSize=3").await;
    assert_eq!(
        r.json()["tasks"].as_array().unwrap().len(),
        3,
        "{}",
        r.text()
    );
    let gets = agent.gets(before);
    assert_eq!(gets.len(), 3, "{gets:?}");
    assert!(
        gets.iter().all(|(_, a)| a.as_deref() == Some("Bearer a")),
        "{gets:?}"
    );

    // The agent takes t1 away from A: A's list leaves it out.
    agent
        .owners
        .lock()
        .unwrap()
        .insert(mine[0].clone(), "someone else".into());
    let v = list_rpc(&px, Some("Bearer a"), json!({"pageSize": 100})).await;
    let mut want = mine[1..].to_vec();
    want.sort();
    assert_eq!(ids(&v["result"]["tasks"]), want, "{v}");

    // An identity header is part of the caller: same Authorization, other
    // tenant, other scope; the tenant is forwarded on the GetTask.
    let h = [
        ("A2A-Version", "1.0"),
        ("Authorization", "Bearer a"),
        ("X-Tenant", "blue"),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let blue = post(px.http.addr, "/", &h, body.to_string().as_bytes())
        .await
        .json();
    let blue = blue["result"]["task"]["id"].as_str().unwrap().to_string();
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}});
    let before = agent.up.calls().len();
    let v = post(px.http.addr, "/", &h, list.to_string().as_bytes())
        .await
        .json();
    assert_eq!(
        ids(&v["result"]["tasks"]),
        std::slice::from_ref(&blue),
        "{v}"
    );
    let calls = agent.up.calls();
    assert_eq!(calls[before..].len(), 1);
    assert_eq!(calls[before].header("x-tenant"), Some("blue"));
    let v = list_rpc(&px, Some("Bearer a"), json!({})).await;
    assert!(!ids(&v["result"]["tasks"]).contains(&blue), "{v}");
}

/// pageSize over 100 is refused (InvalidParams, not capped), and the agent
/// is never asked for more tasks than the page holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn page_size_is_bounded_and_so_are_the_fetches() {
    let agent = Agent::start(16).await;
    let px = proxy(&agent, |_| {});
    for _ in 0..6 {
        send(&px, Some("Bearer a")).await;
    }
    let before = agent.up.calls().len();
    let v = list_rpc(&px, Some("Bearer a"), json!({"pageSize": 101})).await;
    assert_eq!(v["error"]["code"], -32602, "{v}");
    let r = list_rest(&px, Some("Bearer a"), "?pageSize=1000").await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(agent.up.calls().len(), before, "refused lists ask nothing");
    for size in [1usize, 4] {
        let before = agent.up.calls().len();
        let v = list_rpc(&px, Some("Bearer a"), json!({"pageSize": size})).await;
        assert_eq!(v["result"]["tasks"].as_array().unwrap().len(), size, "{v}");
        let gets = agent.gets(before);
        assert!(gets.len() <= size, "{size}: {gets:?}");
    }
}

/// `list_tasks = "off"`: UnsupportedOperation on every binding, nothing
/// asked of the agent; the card says nothing of a list. Per caller (the
/// default), the v1.0 card of the v0.3 agent describes the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_off_is_unsupported_and_the_card_tells_the_model() {
    let agent = Agent::start(16).await;
    let on = proxy(&agent, |_| {});
    let card = get(
        on.http.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await
    .json();
    let ext = card["capabilities"]["extensions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let entry = ext
        .iter()
        .find(|e| e["uri"] == "urn:a2a-compat-proxy:list-tasks:per-caller")
        .unwrap_or_else(|| panic!("no list-tasks extension: {card}"));
    let d = entry["description"].as_str().unwrap();
    assert!(d.contains("per caller") && d.contains("credentials"), "{d}");
    assert_eq!(entry["required"], false);
    // v0.3 clients get the agent's own card: no such entry.
    let card03 = get(
        on.http.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "0.3")],
    )
    .await
    .text();
    assert!(!card03.contains("list-tasks"), "{card03}");

    let off = proxy(&agent, |c| {
        c.list_tasks.mode = ListTasksMode::Off;
    });
    send(&off, Some("Bearer a")).await;
    let before = agent.up.calls().len();
    let v = list_rpc(&off, Some("Bearer a"), json!({})).await;
    assert_eq!(v["error"]["code"], -32004, "{v}");
    let r = list_rest(&off, Some("Bearer a"), "").await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(r.text().contains("UNSUPPORTED_OPERATION"), "{}", r.text());
    let s = list_grpc(&off, Some("Bearer a")).await.unwrap_err();
    assert_eq!(s.code(), tonic::Code::FailedPrecondition, "{s:?}");
    assert_eq!(agent.up.calls().len(), before);
    let card = get(
        off.http.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await
    .text();
    assert!(!card.contains("list-tasks"), "{card}");
}

/// The count bound evicts the oldest entries first (per the whole index).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_count_bound_evicts_the_oldest() {
    let agent = Agent::start(16).await;
    let px = proxy(&agent, |c| {
        c.limits.list_index.max_tasks = 3;
    });
    let mut made = Vec::new();
    for _ in 0..5 {
        made.push(send(&px, Some("Bearer a")).await);
    }
    let v = list_rpc(&px, Some("Bearer a"), json!({})).await;
    let mut want = made[2..].to_vec();
    want.sort();
    assert_eq!(ids(&v["result"]["tasks"]), want, "{v}");
    assert_eq!(v["result"]["totalSize"], 3, "{v}");
}

// ---------------------------------------------------------------- finding 2: the binary

/// VmRSS of a process, in bytes.
fn rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn dir_size(dir: &std::path::Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let m = e.metadata().unwrap();
        n += if m.is_dir() {
            dir_size(&e.path())
        } else {
            m.len()
        };
    }
    n
}

const MIB: u64 = 1024 * 1024;

/// Finding 2: 120 SendMessage calls whose answers carry ~3 MiB tasks leave
/// the binary's memory, its push data dir and a ListTasks answer small:
/// only summaries are indexed (in memory and in the store). Before the fix
/// the index kept every answer (RSS and data dir grew by ~3 MiB per call).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_mib_tasks_leave_the_binary_and_its_data_dir_small() {
    let agent = Agent::start(3 * MIB as usize).await;
    let dir = std::env::temp_dir().join(format!("a2a-hostile-listtasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let data = dir.join("data");
    let addr = crate::support::free_local_addr().unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"{addr}\"\nthreads = 2\n[upstream]\nurl = \"{}\"\nversion = \"0.3\"\n[push]\ndata_dir = \"{}\"\n",
            agent.up.url(),
            data.display()
        ),
    )
    .unwrap();
    let bin = serve_binary(&config, addr).await;
    let pid = bin.0.id();
    let started_rss = rss(pid);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
        "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
    .to_string();
    let h = [
        ("A2A-Version", "1.0"),
        ("Content-Type", "application/json"),
        ("Authorization", "Bearer a"),
    ];
    for i in 0..120 {
        let r = tokio::time::timeout(Duration::from_secs(60), async {
            post(addr, "/", &h, body.as_bytes()).await
        })
        .await
        .unwrap_or_else(|_| panic!("call {i} timed out"));
        assert_eq!(r.status, 200);
        assert!(
            r.body.len() > 3 * MIB as usize,
            "call {i}: {}",
            r.body.len()
        );
    }
    // Written behind every 500 ms.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let rss_after = rss(pid);
    let disk = dir_size(&data);
    eprintln!(
        "listtasks figures: rss at start {} MiB, after 120 calls {} MiB; data dir {} KiB",
        started_rss / MIB,
        rss_after / MIB,
        disk / 1024,
    );
    assert!(rss_after < 200 * MIB, "RSS {} MiB", rss_after / MIB);
    assert!(disk < 50 * MIB, "data dir {} MiB", disk / MIB);
    let list =
        json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {"pageSize": 100}})
            .to_string();
    let r = post(addr, "/", &h, list.as_bytes()).await;
    assert_eq!(r.status, 200);
    eprintln!("listtasks figures: ListTasks answer {} bytes", r.body.len());
    assert!(
        r.body.len() < MIB as usize,
        "ListTasks answered {} bytes",
        r.body.len()
    );
    let v = r.json();
    let shown = &r.text()[..r.text().len().min(300)];
    assert_eq!(v["result"]["totalSize"], 120, "{shown}");
    // The page: the agent's current (small) answers, not the 3 MiB ones
    // that passed through.
    let listed = v["result"]["tasks"].as_array().map(Vec::len);
    assert_eq!(listed, Some(100), "{shown}");
    drop(bin);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An agent that never answers the page's GetTask calls holds a ListTasks
/// no longer than one connect + read timeout: the tasks it did not give
/// are left out. (100 hanging fetches, 8 at a time, would take 13 read
/// timeouts.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_agent_does_not_hold_a_list() {
    let n = Arc::new(AtomicUsize::new(0));
    let host = Arc::new(std::sync::OnceLock::<String>::new());
    let h = host.clone();
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            let card = CARD_V03.replace("UP", h.get().map(String::as_str).unwrap_or("?"));
            return Reply::json(200, &card);
        }
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        if req["method"] != "message/send" {
            return Reply::Hang;
        }
        let k = n.fetch_add(1, Ordering::SeqCst) + 1;
        let task = v03_task(&format!("t{k}"), k, "x");
        Reply::rpc_result(&req["id"], &task)
    })
    .await;
    host.set(up.addr.to_string()).unwrap();
    let agent = Agent {
        up,
        owners: Arc::default(),
    };
    let px = proxy(&agent, |c| {
        c.limits.connect_timeout = Duration::from_millis(200);
        c.limits.read_timeout = Duration::from_millis(300);
    });
    for _ in 0..100 {
        send(&px, Some("Bearer a")).await;
    }
    let started = Instant::now();
    let v = list_rpc(&px, Some("Bearer a"), json!({"pageSize": 100})).await;
    let took = started.elapsed();
    assert_eq!(v["result"]["tasks"], json!([]), "{v}");
    assert_eq!(v["result"]["totalSize"], 100, "{v}");
    assert!(took < Duration::from_millis(2500), "the list took {took:?}");
}
