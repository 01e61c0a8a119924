//! Relayed subscriptions (issue #22 item 6), end to end with the REAL
//! a2a-sdk 0.3 agent (`tests/tck/sut_v03.py`, the TCK's scenarios on
//! a2a-sdk 0.3): a v1.0 client subscribes to a task idle in
//! `input-required`, which a2a-sdk 0.3 refuses to resubscribe
//! (TaskNotFound); the task is then completed by a v1.0 SendMessage
//! through the proxy, and the subscription must end with the completed
//! state, on JSON-RPC, REST and gRPC. Everything on 127.0.0.1; every wait
//! bounded. The venv is made by `tests/sdk/setup.sh` when missing.

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use proto::v10 as p10;
use proxy::config::{Config, UpstreamVersion};
use proxy::grpc::GrpcServer;
use serde_json::{json, Value};
use support::*;
use tokio::time::timeout;
use tokio_stream::StreamExt;

/// Bound of one whole subscription in these tests (the agent is a Python
/// process on a shared machine).
const STREAM: Duration = Duration::from_secs(30);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The a2a-sdk 0.3 agent; killed on drop.
struct Agent {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_agent() -> Agent {
    let python = root().join(".venv-v03/bin/python");
    if !python.exists() {
        let ok = Command::new("bash")
            .arg(root().join("tests/sdk/setup.sh"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tests/sdk/setup.sh could not make the a2a-sdk venvs");
    }
    let mut child = Command::new(python)
        .arg(root().join("tests/tck/sut_v03.py"))
        .args(["--port", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the a2a-sdk 0.3 agent");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { return };
            if let Some(p) = line.strip_prefix("PORT ") {
                let _ = tx.send(p.trim().parse::<u16>().ok());
                break;
            }
        }
        for _ in lines {}
    });
    let port = rx
        .recv_timeout(Duration::from_secs(60))
        .ok()
        .flatten()
        .expect("the agent printed no port");
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let mut agent = Agent { child, addr };
    for _ in 0..300 {
        if std::net::TcpStream::connect(addr).is_ok() {
            return agent;
        }
        if let Ok(Some(s)) = agent.child.try_wait() {
            panic!("the agent exited: {s}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = agent.child.kill();
    panic!("the agent never listened");
}

struct Px {
    http: proxy::RunningProxy,
    grpc: GrpcServer,
    _agent: Agent,
}

fn proxy_for(agent: Agent) -> Px {
    let mut config = Config::new(
        support::free_local_addr().unwrap(),
        &format!("http://{}", agent.addr),
    )
    .unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(proxy::version::Version::V03);
    config.push.enabled = false;
    config.limits.read_timeout = Duration::from_secs(20);
    let grpc_addr = support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
    Px {
        http,
        grpc,
        _agent: agent,
    }
}

const V10: &[(&str, &str)] = &[("content-type", "application/json"), ("a2a-version", "1.0")];

/// A v1.0 JSON-RPC SendMessage through the proxy; its result.
async fn send(addr: SocketAddr, message_id: &str, task: Option<&str>) -> Value {
    let mut message = json!({"role": "ROLE_USER", "messageId": message_id,
                             "parts": [{"text": "hello"}]});
    if let Some(t) = task {
        message["taskId"] = json!(t);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": message}});
    let r = timeout(STREAM, post(addr, "/", V10, body.to_string().as_bytes()))
        .await
        .expect("SendMessage answered");
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"].clone()
}

/// An idle task (input-required) of the agent.
async fn idle_task(addr: SocketAddr) -> String {
    let r = send(addr, "tck-input-required-relay", None).await;
    assert_eq!(
        r.pointer("/task/status/state"),
        Some(&json!("TASK_STATE_INPUT_REQUIRED")),
        "{r}"
    );
    r.pointer("/task/id").unwrap().as_str().unwrap().to_string()
}

/// The state an event carries (`/result` stripped for JSON-RPC).
fn state_of(event: &Value) -> Option<&str> {
    let e = event.get("result").unwrap_or(event);
    e.pointer("/task/status/state")
        .or_else(|| e.pointer("/statusUpdate/status/state"))
        .and_then(Value::as_str)
}

/// Subscribes over an HTTP binding (`raw`: the request), completes the task,
/// and checks the stream: the Task first, then the relayed completion, last.
async fn subscribe_http(px: &Px, task: &str, raw: Vec<u8>, jsonrpc: bool) {
    let addr = px.http.addr;
    let mut s = open(addr, &raw).await;
    assert_eq!(s.status, 200);
    let first = s.first_event(STREAM).await;
    let events = datas(&first);
    assert_eq!(
        events.first().and_then(state_of),
        Some("TASK_STATE_INPUT_REQUIRED"),
        "{first}"
    );
    let done = send(addr, "tck-complete-relay", Some(task)).await;
    assert_eq!(
        done.pointer("/task/status/state"),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    let rest = timeout(STREAM, s.rest()).await.expect("the stream ended");
    let all: Vec<Value> = events.into_iter().chain(datas(&rest)).collect();
    let last = all.last().unwrap();
    assert_eq!(
        state_of(last),
        Some("TASK_STATE_COMPLETED"),
        "{first}{rest}"
    );
    for e in &all {
        assert!(e.get("error").is_none(), "an error event: {first}{rest}");
        if jsonrpc {
            assert_eq!(e["id"], json!("sub"), "{e}");
        }
    }
    let update = all
        .iter()
        .find(|e| e.get("result").unwrap_or(e).get("statusUpdate").is_some())
        .expect("a status update");
    let u = update.get("result").unwrap_or(update);
    assert_eq!(u.pointer("/statusUpdate/taskId"), Some(&json!(task)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_jsonrpc_subscription_to_an_idle_v03_task_ends_with_its_completion() {
    let px = proxy_for(start_agent());
    let task = idle_task(px.http.addr).await;
    let body = json!({"jsonrpc": "2.0", "id": "sub", "method": "SubscribeToTask",
                      "params": {"id": task}});
    let raw = request("POST", "/", V10, body.to_string().as_bytes());
    subscribe_http(&px, &task, raw, true).await;
    let closed = support::eventually(|| px.http.app.relay.open() == 0).await;
    assert!(closed, "the subscription is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rest_subscription_to_an_idle_v03_task_ends_with_its_completion() {
    let px = proxy_for(start_agent());
    let task = idle_task(px.http.addr).await;
    let target = format!("/tasks/{task}:subscribe");
    let raw = request("POST", &target, &[("a2a-version", "1.0")], b"");
    subscribe_http(&px, &task, raw, false).await;
    let closed = support::eventually(|| px.http.app.relay.open() == 0).await;
    assert!(closed, "the subscription is closed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_subscription_to_an_idle_v03_task_ends_with_its_completion() {
    use p10::stream_response::Payload;
    let px = proxy_for(start_agent());
    let task = idle_task(px.http.addr).await;
    let mut client =
        p10::a2a_service_client::A2aServiceClient::connect(format!("http://{}", px.grpc.addr))
            .await
            .unwrap();
    let req = p10::SubscribeToTaskRequest {
        id: task.clone(),
        ..Default::default()
    };
    let mut stream = timeout(STREAM, client.subscribe_to_task(req))
        .await
        .expect("subscribed")
        .expect("subscribe accepted")
        .into_inner();
    let first = timeout(STREAM, stream.next())
        .await
        .expect("a first reply")
        .expect("not ended")
        .expect("not an error");
    let state = |p: &Option<Payload>| match p {
        Some(Payload::Task(t)) => t.status.as_ref().map(|s| s.state),
        Some(Payload::StatusUpdate(u)) => u.status.as_ref().map(|s| s.state),
        _ => None,
    };
    assert_eq!(
        state(&first.payload),
        Some(p10::TaskState::InputRequired as i32)
    );
    send(px.http.addr, "tck-complete-relay", Some(&task)).await;
    let mut replies = Vec::new();
    let read = async {
        while let Some(r) = stream.next().await {
            replies.push(r);
        }
    };
    timeout(STREAM, read).await.expect("the stream ended");
    let last = replies.last().expect("relayed replies");
    let last = last.as_ref().expect("not an error");
    assert_eq!(
        state(&last.payload),
        Some(p10::TaskState::Completed as i32),
        "{replies:?}"
    );
    assert!(replies.iter().all(Result::is_ok), "{replies:?}");
    assert!(
        support::eventually(|| px.http.app.relay.open() == 0).await,
        "the subscription is closed"
    );
}

/// A fake v0.3 JSON-RPC agent: task `t1` is idle (input-required) for the
/// caller `Bearer a`; another caller's `tasks/get` fails (500, so the
/// proxy cannot tell the task); every resubscribe is refused with
/// TaskNotFound (as a2a-sdk 0.3 does); a message completes `t1`.
async fn fake_v03_agent() -> FakeUpstream {
    FakeUpstream::start(|r| {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let id = body["id"].clone();
        let task = |state: &str, ts: &str| {
            json!({"kind": "task", "id": "t1", "contextId": "c1",
                   "status": {"state": state, "timestamp": ts}})
        };
        match body["method"].as_str() {
            Some("tasks/get") if r.header("authorization") == Some("Bearer a") => {
                let t = task("input-required", "2026-01-01T00:00:01Z");
                Reply::rpc_result(&id, &t)
            }
            Some("tasks/get") => Reply::json(500, "{}"),
            Some("tasks/resubscribe") => {
                let e = json!({"jsonrpc": "2.0", "id": id,
                               "error": {"code": -32001, "message": "Task not found"}});
                Reply::Sse {
                    events: vec![format!("data: {e}\n\n")],
                    gate: std::sync::Arc::new(tokio::sync::Semaphore::new(0)),
                }
            }
            Some("message/send") => {
                let t = task("completed", "2026-01-01T00:00:02Z");
                Reply::rpc_result(&id, &t)
            }
            _ => Reply::json(404, "{}"),
        }
    })
    .await
}

fn fake_proxy(up: &FakeUpstream, tune: impl FnOnce(&mut Config)) -> proxy::RunningProxy {
    let mut config = config_for(&up.url(), proxy::version::Version::V03);
    config.push.enabled = false;
    tune(&mut config);
    proxy::start(config).unwrap()
}

fn subscribe_as(token: &str) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": "sub", "method": "SubscribeToTask",
                      "params": {"id": "t1"}});
    let auth = format!("Bearer {token}");
    let headers = [
        ("content-type", "application/json"),
        ("a2a-version", "1.0"),
        ("authorization", auth.as_str()),
    ];
    request("POST", "/", &headers, body.to_string().as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_subscriber_the_agent_answered_the_task_gets_relayed_events() {
    let up = fake_v03_agent().await;
    let px = fake_proxy(&up, |_| {});
    let mut a = open(px.addr, &subscribe_as("a")).await;
    let first = a.first_event(STREAM).await;
    assert_eq!(
        datas(&first).first().and_then(state_of),
        Some("TASK_STATE_INPUT_REQUIRED")
    );
    // Caller b: the agent would not say (500) whether b may read t1, so
    // b's subscription is not relayed: it gets the agent's refusal.
    let mut b = open(px.addr, &subscribe_as("b")).await;
    let b_text = timeout(STREAM, b.rest()).await.expect("b's stream ended");
    assert!(
        assert_refused(&b_text),
        "b got something other than the agent's refusal: {b_text}"
    );
    assert!(
        support::eventually(|| px.app.relay.open() == 1).await,
        "only a's subscription is open"
    );
    send(px.addr, "m-complete", Some("t1")).await;
    let rest = timeout(STREAM, a.rest()).await.expect("a's stream ended");
    let events = datas(&rest);
    assert_eq!(
        events.last().and_then(state_of),
        Some("TASK_STATE_COMPLETED"),
        "{rest}"
    );
    assert!(!b_text.contains("COMPLETED"));
}

/// A stream that is nothing but the agent's TaskNotFound.
fn assert_refused(text: &str) -> bool {
    let events = datas(text);
    events.len() == 1 && events[0].pointer("/error/code") == Some(&json!(-32001))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relayed_subscription_waits_at_most_relay_max_wait() {
    let up = fake_v03_agent().await;
    let px = fake_proxy(&up, |c| c.limits.relay.max_wait = Duration::from_secs(1));
    let mut a = open(px.addr, &subscribe_as("a")).await;
    let text = timeout(STREAM, a.rest()).await.expect("the stream ended");
    let events = datas(&text);
    assert_eq!(
        events.first().and_then(state_of),
        Some("TASK_STATE_INPUT_REQUIRED"),
        "{text}"
    );
    // Ended by the bound, with the proxy's error event in the client's
    // version (not the agent's TaskNotFound).
    let code = events.last().unwrap().pointer("/error/code").cloned();
    assert!(code.is_some() && code != Some(json!(-32001)), "{text}");
    assert!(support::eventually(|| px.app.relay.open() == 0).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_max_subscriptions_zero_passes_the_refusal_on() {
    let up = fake_v03_agent().await;
    let px = fake_proxy(&up, |c| c.limits.relay.max_subscriptions = 0);
    let mut a = open(px.addr, &subscribe_as("a")).await;
    let text = timeout(STREAM, a.rest()).await.expect("the stream ended");
    let events = datas(&text);
    assert_eq!(events.len(), 2, "{text}");
    assert_eq!(events[0].pointer("/result/task/id"), Some(&json!("t1")));
    assert_eq!(
        events[1].pointer("/error/code"),
        Some(&json!(-32001)),
        "{text}"
    );
}
