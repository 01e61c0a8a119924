//! Push notifications across versions, end to end on 127.0.0.1: a v1.0
//! client registers a webhook through the proxy with a (fake, scripted) v0.3
//! agent; the agent's callbacks to the proxy are authenticated, made
//! durable, translated and delivered to the client's real webhook listener
//! with the client's own token and authentication; retries, dead letters,
//! restart and refusals.

#[path = "support/pg.rs"]
mod pg;
mod support;

use std::path::PathBuf;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proxy::config::{Config, PushBackend, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;

/// A webhook that answers `fail_first` requests with 503, then 200.
async fn webhook(fail_first: usize) -> FakeUpstream {
    let n = Arc::new(AtomicUsize::new(0));
    FakeUpstream::start(move |_| {
        if n.fetch_add(1, Ordering::SeqCst) < fail_first {
            Reply::json(503, "{}")
        } else {
            Reply::json(200, "{}")
        }
    })
    .await
}

/// A webhook answering 503 until its switch is set, then 200.
async fn webhook_down() -> (FakeUpstream, Arc<std::sync::atomic::AtomicBool>) {
    let up = Arc::new(std::sync::atomic::AtomicBool::new(false));
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

fn v10(method: &str, params: Value) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
        .to_string()
        .into_bytes()
}

async fn call_v10(px: &RunningProxy, method: &str, params: Value) -> Value {
    call_v10_at(px.addr, method, params).await
}

async fn call_v10_at(addr: std::net::SocketAddr, method: &str, params: Value) -> Value {
    post(addr, "/", JSON_V10, &v10(method, params)).await.json()
}

/// A v1.0 SendMessage ("hi", message `message_id`) through `px`: the id
/// of the task it answered.
async fn send_hi(px: &RunningProxy, message_id: &str) -> String {
    let r = call_v10(
        px,
        "SendMessage",
        json!({"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .await;
    let id = r["result"]["task"]["id"].as_str();
    id.unwrap_or_else(|| panic!("{r}")).to_string()
}

/// Registers the webhook inline in SendMessage; returns the callback path
/// and secret the agent was given.
async fn register(
    px: &RunningProxy,
    agent_seen: &Arc<Mutex<Option<Value>>>,
    hook: &str,
) -> (String, String) {
    register_at(px.addr, agent_seen, hook).await
}

async fn register_at(
    addr: std::net::SocketAddr,
    agent_seen: &Arc<Mutex<Option<Value>>>,
    hook: &str,
) -> (String, String) {
    let base = format!("http://{addr}");
    let r = call_v10_at(
        addr,
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "client-tok",
                "authentication": {"scheme": "Bearer", "credentials": "client-cred"}}}}),
    )
    .await;
    assert_eq!(r["result"]["task"]["id"], "t1", "{r}");
    let cfg = agent_seen
        .lock()
        .unwrap()
        .clone()
        .expect("agent got a push config");
    let url = cfg["url"].as_str().unwrap().to_string();
    let prefix = format!("{base}/a2a-proxy/push/");
    assert!(url.starts_with(&prefix), "agent was given {url}");
    assert!(cfg.get("authentication").is_none(), "{cfg}");
    let secret = cfg["token"].as_str().unwrap().to_string();
    assert_ne!(secret, "client-tok");
    assert!(secret.len() >= 32);
    (url[base.len()..].to_string(), secret)
}

fn v03_task(state: &str) -> Vec<u8> {
    json!({"kind": "task", "id": "t1", "contextId": "c1",
        "status": {"state": state, "timestamp": "2024-03-15T18:30:00Z"}})
    .to_string()
    .into_bytes()
}

async fn callback(px: &RunningProxy, path: &str, token: &str, body: &[u8]) -> Response {
    post(
        px.addr,
        path,
        &[
            ("Content-Type", "application/json"),
            ("X-A2A-Notification-Token", token),
        ],
        body,
    )
    .await
}

/// Waits (bounded) until the webhook has `n` requests.
async fn wait_hooks(hook: &FakeUpstream, n: usize, limit: Duration) -> Vec<Recorded> {
    let end = Instant::now() + limit;
    loop {
        let got = hook.recorded();
        if got.len() >= n || Instant::now() > end {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn metrics(px: &RunningProxy) -> String {
    get(px.addr, "/metrics", &[]).await.text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_agent_notifications_reach_a_v10_webhook_translated() {
    let (agent, seen) = v03_push_agent().await;
    let hook = webhook(0).await;
    let dir = fresh_dir("push-basic");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let hook_url = format!("{}/hook?x=1", hook.url());
    let (path, secret) = register(&px, &seen, &hook_url).await;

    // Forged callbacks: unknown id, wrong secret, no secret. None is delivered.
    let r = callback(
        &px,
        "/a2a-proxy/push/00112233445566778899aabbccddeeff",
        &secret,
        &v03_task("working"),
    )
    .await;
    assert_eq!(r.status, 404);
    let r = callback(&px, &path, "wrong", &v03_task("working")).await;
    assert_eq!(r.status, 401);
    let r = post(px.addr, &path, JSON_HEADER, &v03_task("working")).await;
    assert_eq!(r.status, 401);
    let r = callback(&px, &path, &secret, b"{not json").await;
    assert_eq!(r.status, 400);

    // Real ones, in order.
    for state in ["working", "completed"] {
        let r = callback(&px, &path, &secret, &v03_task(state)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let got = wait_hooks(&hook, 2, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 2, "{got:?}");
    for (rec, state) in got
        .iter()
        .zip(["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])
    {
        assert_eq!(
            (rec.method.as_str(), rec.target.as_str()),
            ("POST", "/hook?x=1")
        );
        assert_eq!(rec.header("content-type"), Some("application/a2a+json"));
        assert_eq!(rec.header("x-a2a-notification-token"), Some("client-tok"));
        assert_eq!(rec.header("authorization"), Some("Bearer client-cred"));
        let body: Value = serde_json::from_slice(&rec.body).unwrap();
        assert_eq!(body["task"]["id"], "t1");
        assert_eq!(body["task"]["status"]["state"], state, "{body}");
        assert!(body.get("kind").is_none() && body["task"].get("kind").is_none());
    }

    // Get / List show the subscriber's own values, never the proxy's.
    for (method, params, at) in [
        (
            "GetTaskPushNotificationConfig",
            json!({"taskId": "t1", "id": "cfg-1"}),
            "/result",
        ),
        (
            "ListTaskPushNotificationConfigs",
            json!({"taskId": "t1"}),
            "/result/configs/0",
        ),
    ] {
        let r = call_v10(&px, method, params).await;
        let c = r.pointer(at).unwrap_or_else(|| panic!("{method}: {r}"));
        assert_eq!(c["url"], hook_url, "{method}: {r}");
        assert_eq!(c["token"], "client-tok");
        assert_eq!(
            c["authentication"],
            json!({"scheme": "Bearer", "credentials": "client-cred"})
        );
        assert!(!r.to_string().contains(&secret));
    }

    let m = metrics(&px).await;
    assert!(
        m.contains("a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"delivered\"} 2"),
        "{m}"
    );
    assert!(
        m.contains("a2a_proxy_push_callbacks_total{agent=\"default\",outcome=\"rejected\"} 4"),
        "{m}"
    );

    // Delete: afterwards the callback is unknown.
    let r = call_v10(
        &px,
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": "t1", "id": "cfg-1"}),
    )
    .await;
    assert!(r.get("error").is_none(), "{r}");
    let end = Instant::now() + Duration::from_secs(5);
    loop {
        let r = callback(&px, &path, &secret, &v03_task("completed")).await;
        if r.status == 404 || Instant::now() > end {
            assert_eq!(r.status, 404);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_down_then_back_gets_everything_in_order() {
    let (agent, seen) = v03_push_agent().await;
    let hook = webhook(4).await;
    let dir = fresh_dir("push-retry");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let (path, secret) = register(&px, &seen, &format!("{}/h", hook.url())).await;
    let states = ["submitted", "working", "input-required", "completed"];
    for s in states {
        assert_eq!(
            callback(&px, &path, &secret, &v03_task(s)).await.status,
            200
        );
    }
    // 4 refused attempts of the first, then all four in order.
    let got = wait_hooks(&hook, 8, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 8, "{got:?}");
    let seq: Vec<String> = got
        .iter()
        .map(|r| {
            serde_json::from_slice::<Value>(&r.body).unwrap()["task"]["status"]["state"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        seq,
        ["TASK_STATE_SUBMITTED"; 5]
            .iter()
            .map(|s| s.to_string())
            .chain(
                [
                    "TASK_STATE_WORKING",
                    "TASK_STATE_INPUT_REQUIRED",
                    "TASK_STATE_COMPLETED"
                ]
                .map(String::from)
            )
            .collect::<Vec<_>>()
    );
    let m = metrics(&px).await;
    assert!(
        m.contains("a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"failed\"} 4"),
        "{m}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_limit_makes_a_dead_letter_and_later_items_still_go() {
    let (agent, seen) = v03_push_agent().await;
    let hook = webhook(2).await;
    let dir = fresh_dir("push-dead");
    let px = push_proxy(&agent.url(), &dir, |c| c.push.max_attempts = 2);
    let (path, secret) = register(&px, &seen, &format!("{}/h", hook.url())).await;
    assert_eq!(
        callback(&px, &path, &secret, &v03_task("working"))
            .await
            .status,
        200
    );
    assert_eq!(
        callback(&px, &path, &secret, &v03_task("completed"))
            .await
            .status,
        200
    );
    let got = wait_hooks(&hook, 3, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 3);
    let last: Value = serde_json::from_slice(&got[2].body).unwrap();
    assert_eq!(last["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let m = metrics(&px).await;
    assert!(
        m.contains("a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"dead_letter\"} 1"),
        "{m}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_deliveries_survive_a_restart() {
    let (agent, seen) = v03_push_agent().await;
    // Down for the whole life of the first proxy, up for the second.
    let (hook, up) = webhook_down().await;
    let dir = fresh_dir("push-restart");
    let slow = |c: &mut Config| {
        c.push.backoff_initial = Duration::from_secs(1);
        c.push.backoff_max = Duration::from_secs(1);
    };
    let mut px = push_proxy(&agent.url(), &dir, slow);
    let (path, secret) = register(&px, &seen, &format!("{}/h", hook.url())).await;
    for s in ["working", "completed"] {
        assert_eq!(
            callback(&px, &path, &secret, &v03_task(s)).await.status,
            200
        );
    }
    assert!(!wait_hooks(&hook, 1, Duration::from_secs(10))
        .await
        .is_empty());
    px.stop();
    drop(px);
    let refused = hook.recorded().len();

    up.store(true, Ordering::SeqCst);
    let px2 = push_proxy(&agent.url(), &dir, slow);
    let got = wait_hooks(&hook, refused + 2, Duration::from_secs(15)).await;
    let states: Vec<String> = got[refused..]
        .iter()
        .map(|r| {
            serde_json::from_slice::<Value>(&r.body).unwrap()["task"]["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        states,
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"],
        "after {refused} refused attempts"
    );
    drop(px2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v0.3 client registers `hook` inline in message/send through the proxy
/// at `addr`; returns the callback path and the secret the agent was given.
async fn register_v03_at(
    addr: std::net::SocketAddr,
    agent_seen: &Arc<Mutex<Option<Value>>>,
    hook: &str,
) -> (String, String) {
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"pushNotificationConfig": {"url": hook, "token": "v03-tok"}}}});
    let r = post(addr, "/", JSON_HEADER, send.to_string().as_bytes()).await;
    assert_eq!(r.json()["result"]["id"], "t9", "{}", r.text());
    callback_of(addr, agent_seen)
}

/// Tells the proxy its agent is of v1.0.
const V10_AGENT: fn(&mut Config) = |c| c.upstream_version = UpstreamVersion::Fixed(Version::V10);

/// A proxy started anew on `dir` toward the v1.0 `agent`, and the agent's
/// artifact update ("a1": "the answer") pushed through it to `callback`
/// (path, secret) and accepted: the proxy and the first `n` posts `hook`
/// got (checked to be `n`).
async fn artifact_after_restart(
    agent: &FakeUpstream,
    dir: &std::path::Path,
    (path, secret): (&str, &str),
    hook: &FakeUpstream,
    n: usize,
) -> (RunningProxy, Vec<Recorded>) {
    let px = push_proxy(&agent.url(), dir, V10_AGENT);
    let update = artifact_update("a1", "the answer");
    let r = push_bearing(px.addr, path, secret, &update).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let hooks = wait_hooks(hook, n, Duration::from_secs(10)).await;
    assert_eq!(hooks.len(), n);
    (px, hooks)
}

/// A v1.0 status update of t9: working, with an agent message.
fn working_with_message() -> Value {
    json!({"statusUpdate": {"taskId": "t9", "contextId": "c9",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2024-03-15T18:31:00Z",
            "message": {"messageId": "m-w", "role": "ROLE_AGENT", "taskId": "t9",
                "contextId": "c9", "parts": [{"text": "looking it up"}]}}}})
}

fn artifact_update(id: &str, text: &str) -> Value {
    json!({"artifactUpdate": {"taskId": "t9", "contextId": "c9",
        "artifact": {"artifactId": id, "parts": [{"text": text}]}}})
}

/// A v0.3 webhook of a v1.0 agent gets the full Task on every push, folded
/// from every push before it, across a proxy restart too: the fold
/// snapshot is stored with the item it produced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_webhook_tasks_keep_what_pushes_before_a_restart_contributed() {
    let (agent, seen) = pushing_v10_agent().await;
    let hook = webhook(0).await;
    let hook_url = format!("{}/v03hook", hook.url());
    let dir = fresh_dir("push-snapshot");
    let mut px = push_proxy(&agent.url(), &dir, V10_AGENT);
    let (path, secret) = register_v03_at(px.addr, &seen, &hook_url).await;

    let r = push_bearing(px.addr, &path, &secret, &working_with_message()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(wait_hooks(&hook, 1, Duration::from_secs(10)).await.len(), 1);
    px.stop();
    drop(px);

    let (px2, hooks) = artifact_after_restart(&agent, &dir, (&path, &secret), &hook, 2).await;
    let first: Value = serde_json::from_slice(&hooks[0].body).unwrap();
    assert_eq!(first["status"]["state"], "working", "{first}");
    let body: Value = serde_json::from_slice(&hooks[1].body).unwrap();
    assert_eq!(hooks[1].target, "/v03hook");
    assert_eq!(hooks[1].header("x-a2a-notification-token"), Some("v03-tok"));
    // A full v0.3 Task: the artifact, and what the push before the restart
    // contributed (its state and status message).
    assert_eq!(body["kind"], "task", "{body}");
    assert_eq!(
        (body["id"].as_str(), body["contextId"].as_str()),
        (Some("t9"), Some("c9")),
        "{body}"
    );
    assert_eq!(body["artifacts"][0]["artifactId"], "a1", "{body}");
    assert_eq!(
        body["artifacts"][0]["parts"][0],
        json!({"kind": "text", "text": "the answer"}),
        "{body}"
    );
    assert_eq!(body["status"]["state"], "working", "{body}");
    assert_eq!(
        body["status"]["timestamp"], "2024-03-15T18:31:00Z",
        "{body}"
    );
    assert_eq!(body["status"]["message"]["messageId"], "m-w", "{body}");
    assert_eq!(
        body["status"]["message"]["parts"][0]["text"], "looking it up",
        "{body}"
    );
    drop(px2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v0.3 gRPC client registers a webhook for task t9, which a v1.0 agent
/// already works on; the proxy restarts before the agent's first push.
/// That push (an artifact alone) still reaches the v0.3 webhook as the
/// whole task as it was at registration (its state, status message and
/// history) with the artifact folded in: the fold's starting point is
/// stored with the config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v03_grpc_webhook_registered_mid_task_keeps_the_task_across_a_restart() {
    use proto::v03 as p03;
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let result = match req["method"].as_str() {
            Some("GetTask") if req["params"]["id"] == "t9" => json!({"id": "t9", "contextId": "c9",
                "status": working_with_message()["statusUpdate"]["status"].clone(),
                "history": [{"messageId": "m-u", "role": "ROLE_USER", "parts": [{"text": "question"}]}]}),
            Some("CreateTaskPushNotificationConfig") => {
                *s.lock().unwrap() = Some(req["params"].clone());
                let mut cfg = req["params"].clone();
                cfg["id"] = json!("cfg-1");
                cfg
            }
            _ => return Reply::json(404, "{}"),
        };
        Reply::rpc_result(&req["id"], &result)
    })
    .await;
    let hook = webhook(0).await;
    let hook_url = format!("{}/grpc-mid", hook.url());
    let dir = fresh_dir("push-grpcseed");
    let mut px = push_proxy(&agent.url(), &dir, V10_AGENT);
    let grpc =
        proxy::grpc::GrpcServer::start(px.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let mut c = p03::a2a_service_client::A2aServiceClient::connect(format!("http://{}", grpc.addr))
        .await
        .unwrap();
    let req = p03::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t9".into(),
        config_id: String::new(),
        config: Some(p03::TaskPushNotificationConfig {
            name: "tasks/t9/pushNotificationConfigs/".into(),
            push_notification_config: Some(p03::PushNotificationConfig {
                url: hook_url.clone(),
                token: "mid-tok".into(),
                ..Default::default()
            }),
        }),
    };
    let got = c
        .create_task_push_notification_config(req)
        .await
        .unwrap()
        .into_inner();
    let shown = got.push_notification_config.unwrap_or_default();
    assert_eq!(
        (shown.url.as_str(), shown.token.as_str()),
        (hook_url.as_str(), "mid-tok")
    );
    let (path, secret) = callback_of(px.addr, &seen);
    drop(grpc);
    px.stop();
    drop(px);

    let (px2, hooks) = artifact_after_restart(&agent, &dir, (&path, &secret), &hook, 1).await;
    assert_eq!(hooks[0].target, "/grpc-mid");
    assert_eq!(hooks[0].header("x-a2a-notification-token"), Some("mid-tok"));
    let body: Value = serde_json::from_slice(&hooks[0].body).unwrap();
    assert_eq!(
        (body["kind"].as_str(), body["id"].as_str()),
        (Some("task"), Some("t9")),
        "{body}"
    );
    assert_eq!(body["status"]["state"], "working", "{body}");
    assert_eq!(body["status"]["message"]["messageId"], "m-w", "{body}");
    assert_eq!(body["history"][0]["messageId"], "m-u", "{body}");
    assert_eq!(body["artifacts"][0]["artifactId"], "a1", "{body}");
    drop(px2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn private_webhook_targets_are_refused_at_registration() {
    let (agent, seen) = v03_push_agent().await;
    let dir = fresh_dir("push-ssrf");
    let px = push_proxy(&agent.url(), &dir, |c| c.push.allow_hosts.clear());
    for url in [
        "http://127.0.0.1:9/h",
        "http://169.254.169.254/latest",
        "ftp://example.com/",
    ] {
        let r = call_v10(
            &px,
            "SendMessage",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                "configuration": {"taskPushNotificationConfig": {"url": url}}}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{url}: {r}");
    }
    assert!(seen.lock().unwrap().is_none());
    assert!(agent.calls().is_empty(), "the agent was never called");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The real SDK agent of version `v` (`flags` for `agent_{v}.py`) behind
/// a proxy fixed to that version, with data dir `name`, and a webhook. The
/// agent lives as long as the first value is kept.
async fn sdk_behind_proxy(
    v: &'static str,
    flags: &'static [&'static str],
    name: &str,
) -> (SdkAgent, FakeUpstream, PathBuf, RunningProxy) {
    let agent = tokio::task::spawn_blocking(move || sdk_agent(v, flags))
        .await
        .unwrap();
    let hook = webhook(0).await;
    let dir = fresh_dir(&format!("push-{name}"));
    let version = if v == "v03" {
        Version::V03
    } else {
        Version::V10
    };
    let px = push_proxy(&format!("http://127.0.0.1:{}", agent.port), &dir, |c| {
        c.upstream_version = UpstreamVersion::Fixed(version);
    });
    (agent, hook, dir, px)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_sdk_v03_agent_pushes_to_a_v10_webhook_through_the_proxy() {
    let agent = tokio::task::spawn_blocking(|| sdk_agent("v03", &["--push"]))
        .await
        .unwrap();
    let hook = webhook(0).await;
    let dir = fresh_dir("push-sdk");
    let px = push_proxy(&format!("http://127.0.0.1:{}", agent.port), &dir, |_| {});
    let hook_url = format!("{}/a2a-hook", hook.url());
    let r = call_v10(
        &px,
        "SendMessage",
        json!({"message": {"messageId": "m-push", "role": "ROLE_USER", "parts": [{"text": "hello push"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook_url, "token": "client-tok"}}}),
    )
    .await;
    let task = r["result"]["task"].clone();
    let task_id = task["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{r}");

    // The SDK posts its v0.3 Task to the proxy; the webhook gets v1.0.
    let got = recorded_until(&hook, |b| {
        b["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;
    assert!(!got.is_empty(), "no notification reached the webhook");
    for rec in &got {
        assert_eq!(rec.target, "/a2a-hook");
        assert_eq!(rec.header("content-type"), Some("application/a2a+json"));
        assert_eq!(rec.header("x-a2a-notification-token"), Some("client-tok"));
        let b: Value = serde_json::from_slice(&rec.body).unwrap();
        assert_eq!(b["task"]["id"], task_id.as_str(), "{b}");
        assert!(
            b["task"]["status"]["state"]
                .as_str()
                .unwrap_or_default()
                .starts_with("TASK_STATE_"),
            "{b}"
        );
    }
    let last: Value = serde_json::from_slice(&got.last().unwrap().body).unwrap();
    assert_eq!(
        last["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );

    // The SDK's own list of configs, seen through the proxy: the client's URL.
    let r = call_v10(
        &px,
        "ListTaskPushNotificationConfigs",
        json!({"taskId": task_id}),
    )
    .await;
    assert_eq!(r["result"]["configs"][0]["url"], hook_url, "{r}");
    assert_eq!(r["result"]["configs"][0]["token"], "client-tok", "{r}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// a2a-sdk 0.3 answers a push-config get with the task's first config
/// whatever id is asked: through the proxy a v1.0 client asking for its
/// second config gets that config, and an unknown id is TaskNotFound, as
/// from a v1.0 server, not the first config passed off as the one asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_get_of_a_second_config_at_the_real_sdk_v03_push_agent() {
    let (agent, hook, dir, px) = sdk_behind_proxy("v03", &["--push"], "sdkget2").await;
    let task_id = send_hi(&px, "m-get2").await;
    for (id, path, tok) in [("c1", "/one", "tok-1"), ("c2", "/two", "tok-2")] {
        let r = call_v10(
            &px,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": id, "url": format!("{}{path}", hook.url()), "token": tok}),
        )
        .await;
        assert_eq!(r["result"]["id"], id, "{r}");
    }
    // The agent itself, asked for c2, answers c1 (why the proxy settles).
    let direct = send(
        std::net::SocketAddr::from(([127, 0, 0, 1], agent.port)),
        &request(
            "POST",
            "/",
            &[("content-type", "application/json")],
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/get",
                "params": {"id": task_id, "pushNotificationConfigId": "c2"}})
            .to_string()
            .as_bytes(),
        ),
    )
    .await;
    let d = direct.json();
    assert_eq!(d["result"]["pushNotificationConfig"]["id"], "c1", "{d}");

    let r = call_v10(
        &px,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c2"}),
    )
    .await;
    assert_eq!(r["result"]["id"], "c2", "{r}");
    assert_eq!(r["result"]["url"], format!("{}/two", hook.url()), "{r}");
    assert_eq!(r["result"]["token"], "tok-2", "{r}");
    let r = call_v10(
        &px,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "c1"}),
    )
    .await;
    assert_eq!(r["result"]["url"], format!("{}/one", hook.url()), "{r}");
    let r = call_v10(
        &px,
        "GetTaskPushNotificationConfig",
        json!({"taskId": task_id, "id": "no-such"}),
    )
    .await;
    assert_eq!(r["error"]["code"], -32001, "{r}");
    assert!(r.get("result").is_none(), "{r}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same over the gRPC listener (the bridge to the agent's JSON-RPC):
/// configs created with a v1.0 gRPC client, each got back by its own id,
/// an unknown id NOT_FOUND (the agent alone would answer c1 for each).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_grpc_get_of_a_second_config_at_the_real_sdk_v03_push_agent() {
    use proto::v10 as p10;
    let (_agent, hook, dir, px) = sdk_behind_proxy("v03", &["--push"], "sdkgrpcget2").await;
    let grpc =
        proxy::grpc::GrpcServer::start(px.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let mut c = p10::a2a_service_client::A2aServiceClient::connect(format!("http://{}", grpc.addr))
        .await
        .unwrap();
    let task_id = send_hi(&px, "m-grpc-get2").await;
    for (id, path, tok) in [("c1", "/one", "tok-1"), ("c2", "/two", "tok-2")] {
        let req = p10::TaskPushNotificationConfig {
            task_id: task_id.clone(),
            id: id.into(),
            url: format!("{}{path}", hook.url()),
            token: tok.into(),
            ..Default::default()
        };
        let got = c
            .create_task_push_notification_config(req)
            .await
            .unwrap()
            .into_inner();
        assert_eq!(got.id, id, "{got:?}");
        assert_eq!(got.url, format!("{}{path}", hook.url()), "{got:?}");
    }
    let get = |id: &str| p10::GetTaskPushNotificationConfigRequest {
        task_id: task_id.clone(),
        id: id.into(),
        ..Default::default()
    };
    for (id, path, tok) in [("c2", "/two", "tok-2"), ("c1", "/one", "tok-1")] {
        let got = c
            .get_task_push_notification_config(get(id))
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            (got.id.as_str(), got.url, got.token.as_str()),
            (id, format!("{}{path}", hook.url()), tok)
        );
    }
    let err = c
        .get_task_push_notification_config(get("no-such"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::NotFound, "{err:?}");
    drop(grpc);
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v0.3 client registers a webhook for a task the real a2a-sdk 1.x
/// agent already works on: the first push the webhook gets is the whole
/// task as it was (working, with its history), the artifact folded in,
/// not a Task made of the artifact alone (state "unknown", no history).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v03_webhook_registered_mid_task_gets_the_whole_task() {
    let (_agent, hook, dir, px) = sdk_behind_proxy("v10", &["--push"], "sdk10mid").await;
    let hook_url = format!("{}/mid", hook.url());
    let v03 = |body: Value| async move {
        let h = [("Content-Type", "application/json")];
        post(px.addr, "/", &h, body.to_string().as_bytes())
            .await
            .json()
    };
    let r = v03(
        json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-mid", "role": "user",
            "parts": [{"kind": "text", "text": "slow mid"}]},
        "configuration": {"blocking": false}}}),
    )
    .await;
    let task_id = r["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();
    let r = v03(json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/set",
        "params": {"taskId": task_id, "pushNotificationConfig": {"url": hook_url, "token": "mid-tok"}}}))
    .await;
    assert_eq!(
        r["result"]["pushNotificationConfig"]["url"],
        hook_url.as_str(),
        "{r}"
    );
    let got = recorded_until(&hook, |b| b["status"]["state"] == "completed").await;
    assert!(!got.is_empty(), "no notification reached the webhook");
    for rec in &got {
        let b: Value = serde_json::from_slice(&rec.body).unwrap();
        assert_eq!(b["kind"], "task", "{b}");
        assert_ne!(b["status"]["state"], "unknown", "{b}");
        assert!(
            b["history"].as_array().is_some_and(|h| !h.is_empty()),
            "the task's history is lost: {b}"
        );
    }
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_sdk_v10_agent_pushes_to_a_v03_webhook_through_the_proxy() {
    let (_agent, hook, dir, px) = sdk_behind_proxy("v10", &["--push"], "sdk10").await;
    let hook_url = format!("{}/v03-hook", hook.url());
    // A v0.3 client: no A2A-Version header, v0.3 method and shapes.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-push", "role": "user",
            "parts": [{"kind": "text", "text": "hello push"}]},
        "configuration": {"blocking": true,
            "pushNotificationConfig": {"url": hook_url, "token": "v03-tok"}}}});
    let r = post(px.addr, "/", JSON_HEADER, body.to_string().as_bytes())
        .await
        .json();
    let task_id = r["result"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"))
        .to_string();

    let completed = |b: &Value| b["status"]["state"] == "completed";
    let got = recorded_until(&hook, completed).await;
    assert!(!got.is_empty(), "no notification reached the webhook");
    for rec in &got {
        assert_eq!(rec.target, "/v03-hook");
        assert_eq!(rec.header("content-type"), Some("application/json"));
        assert_eq!(rec.header("x-a2a-notification-token"), Some("v03-tok"));
        // v0.3 webhooks get the full Task on every push: the agent's
        // status and artifact updates arrive folded into the snapshot.
        let b: Value = serde_json::from_slice(&rec.body).unwrap();
        assert_eq!(b["kind"], "task", "{b}");
        assert_eq!(b["id"], task_id.as_str(), "{b}");
        assert!(
            b["contextId"].as_str().is_some_and(|c| !c.is_empty()),
            "{b}"
        );
        assert!(!b.to_string().contains("TASK_STATE_"), "{b}");
    }
    let last: Value = serde_json::from_slice(&got.last().unwrap().body).unwrap();
    assert!(completed(&last), "{last}");
    // The echo artifact came as an update; the last snapshot still has it.
    assert!(
        last["artifacts"][0]["parts"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hello push")),
        "{last}"
    );

    // A v0.3 get naming only the task (EDGE-CASES 19) finds the config the
    // message registered, shown with the subscriber's URL and token.
    let get = json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/pushNotificationConfig/get",
        "params": {"id": task_id}});
    let r = post(px.addr, "/", JSON_HEADER, get.to_string().as_bytes())
        .await
        .json();
    assert_eq!(r["result"]["taskId"], task_id.as_str(), "{r}");
    assert_eq!(
        r["result"]["pushNotificationConfig"]["url"], hook_url,
        "{r}"
    );
    assert_eq!(
        r["result"]["pushNotificationConfig"]["token"], "v03-tok",
        "{r}"
    );
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

fn metric(text: &str, line_start: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(line_start))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// A real PostgreSQL on loopback and the URL of a fresh database in it.
async fn pg_cluster() -> (pg::Cluster, String) {
    tokio::task::spawn_blocking(|| {
        let c = pg::Cluster::start();
        let url = c.fresh_db();
        (c, url)
    })
    .await
    .unwrap()
}

/// A proxy instance with its push store on the PostgreSQL at `url` (its
/// data dir unused), in front of `upstream`, of `version` when fixed.
async fn pg_proxy(url: &str, upstream: &str, version: Option<Version>) -> RunningProxy {
    let (url, upstream) = (url.to_string(), upstream.to_string());
    tokio::task::spawn_blocking(move || {
        push_proxy(&upstream, &fresh_dir("push-unused"), |c| {
            c.push.backend = PushBackend::Postgres(url);
            if let Some(v) = version {
                c.upstream_version = UpstreamVersion::Fixed(v);
            }
        })
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_deliver_each_notification_once_in_order() {
    if pg::skipped() {
        return;
    }
    let (cluster, url) = pg_cluster().await;
    let (agent, seen) = v03_push_agent().await;
    let hook = webhook(0).await;
    let a = pg_proxy(&url, &agent.url(), None).await;
    let b = pg_proxy(&url, &agent.url(), None).await;
    let (path, secret) = register(&a, &seen, &format!("{}/h", hook.url())).await;
    // A load balancer spreads the agent's callbacks over both instances.
    let n = 30;
    for i in 0..n {
        let px = if i % 2 == 0 { &a } else { &b };
        let body = json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "working", "timestamp": format!("2024-03-15T18:30:{i:02}Z")}});
        let r = callback(px, &path, &secret, body.to_string().as_bytes()).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let got = wait_hooks(&hook, n, Duration::from_secs(20)).await;
    // Give a duplicate time to show up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let got = if hook.recorded().len() > got.len() {
        hook.recorded()
    } else {
        got
    };
    let stamps: Vec<String> = got
        .iter()
        .map(|r| {
            let b: Value = serde_json::from_slice(&r.body).unwrap();
            b["task"]["status"]["timestamp"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let want: Vec<String> = (0..n)
        .map(|i| format!("2024-03-15T18:30:{i:02}Z"))
        .collect();
    assert_eq!(stamps, want, "each once, in order");
    let line = "a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"delivered\"} ";
    let (da, db) = (
        metric(&metrics(&a).await, line),
        metric(&metrics(&b).await, line),
    );
    assert_eq!(da + db, n as u64, "a delivered {da}, b delivered {db}");
    drop(a);
    drop(b);
    drop(cluster);
}

/// Two instances on one PostgreSQL take turns accepting a v1.0 agent's
/// pushes for a v0.3 webhook: each Task the webhook gets carries what
/// every earlier push contributed, whichever instance accepted it (the
/// second instance loads the snapshot; the first, its cached snapshot now
/// stale, folds again from the stored one).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_on_one_postgres_fold_one_v03_task() {
    if pg::skipped() {
        return;
    }
    let (cluster, url) = pg_cluster().await;
    let (agent, seen) = pushing_v10_agent().await;
    let hook = webhook(0).await;
    let a = pg_proxy(&url, &agent.url(), Some(Version::V10)).await;
    let b = pg_proxy(&url, &agent.url(), Some(Version::V10)).await;
    let (path, secret) = register_v03_at(a.addr, &seen, &format!("{}/h", hook.url())).await;
    let pushes = [
        (a.addr, working_with_message()),
        (b.addr, artifact_update("a1", "one")),
        (a.addr, artifact_update("a2", "two")),
    ];
    for (n, (addr, body)) in pushes.into_iter().enumerate() {
        let r = push_bearing(addr, &path, &secret, &body).await;
        assert_eq!(r.status, 200, "{}", r.text());
        // Delivered before the next push: the webhook's order is the
        // pushes' order.
        let got = wait_hooks(&hook, n + 1, Duration::from_secs(10)).await;
        assert_eq!(got.len(), n + 1);
    }
    let bodies: Vec<Value> = hook
        .recorded()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    assert_eq!(bodies.len(), 3);
    for (n, body) in bodies.iter().enumerate() {
        assert_eq!(body["kind"], "task", "{body}");
        assert_eq!(body["status"]["state"], "working", "{body}");
        assert_eq!(
            body["status"]["message"]["messageId"], "m-w",
            "push {n}: {body}"
        );
        let arts: Vec<&str> = body["artifacts"]
            .as_array()
            .map(|a| a.iter().filter_map(|x| x["artifactId"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(arts, ["a1", "a2"][..n], "push {n}: {body}");
    }
    drop(a);
    drop(b);
    drop(cluster);
}

/// One POST that may fail (the proxy can be killed under it): the status,
/// or `None` when the connection broke before a full status line.
async fn try_post(addr: std::net::SocketAddr, path: &str, token: &str, body: &[u8]) -> Option<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let io = async {
        let mut s = tokio::net::TcpStream::connect(addr).await?;
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             X-A2A-Notification-Token: {token}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        s.write_all(head.as_bytes()).await?;
        s.write_all(body).await?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await?;
        Ok::<_, std::io::Error>(out)
    };
    let out = tokio::time::timeout(WAIT, io).await.ok()?.ok()?;
    let line = out.split(|b| *b == b'\r').next()?;
    std::str::from_utf8(line)
        .ok()?
        .split(' ')
        .nth(1)?
        .parse()
        .ok()
}

/// kill -9 of the real binary while the agent is still posting callbacks
/// and the webhook is down: after a restart on the same data directory,
/// every notification the proxy answered 200 for reaches the webhook (at
/// least once), in the order they were accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_burst_loses_no_accepted_notification() {
    let (agent, seen) = v03_push_agent().await;
    let (hook, up) = webhook_down().await;
    let dir = fresh_dir("push-kill9");
    std::fs::create_dir_all(&dir).unwrap();
    let addr = support::free_local_addr().unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            "listen = \"{addr}\"\nthreads = 1\n[upstream]\nurl = \"{}\"\nversion = \"0.3\"\n\
             [push]\ndata_dir = \"{}\"\nallow_hosts = [\"127.0.0.1\"]\n\
             backoff_initial_ms = 50\nbackoff_max_ms = 200\n",
            agent.url(),
            dir.join("store").display()
        ),
    )
    .unwrap();
    let bin = serve_binary(&config, addr).await;
    let (path, secret) = register_at(addr, &seen, &format!("{}/h", hook.url())).await;

    // The agent posts numbered notifications back to back; the proxy is
    // killed once 25 of them were accepted, while later ones are in flight.
    const SENT: usize = 200;
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let (acc, p, s) = (accepted.clone(), path.clone(), secret.clone());
    let sender = tokio::spawn(async move {
        for n in 0..SENT {
            let body = json!({"kind": "task", "id": "t1", "contextId": "c1",
                "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"},
                "metadata": {"n": n}});
            match try_post(addr, &p, &s, body.to_string().as_bytes()).await {
                Some(200) => acc.lock().unwrap().push(n),
                Some(other) => panic!("callback {n} answered {other}"),
                None => return n,
            }
        }
        SENT
    });
    let end = Instant::now() + Duration::from_secs(30);
    while accepted.lock().unwrap().len() < 25 && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    drop(bin); // SIGKILL
    let broke_at = sender.await.unwrap();
    let accepted = accepted.lock().unwrap().clone();
    assert!(accepted.len() >= 25, "only {} accepted", accepted.len());
    assert!(broke_at < SENT, "the kill did not interrupt the burst");
    assert_eq!(accepted, (0..accepted.len()).collect::<Vec<_>>());
    let refused = hook.recorded().len();

    up.store(true, Ordering::SeqCst);
    let _bin = serve_binary(&config, addr).await;
    let end = Instant::now() + Duration::from_secs(30);
    let numbers = loop {
        let got: Vec<usize> = hook.recorded()[refused..]
            .iter()
            .filter_map(|r| {
                let v: Value = serde_json::from_slice(&r.body).ok()?;
                v["task"]["metadata"]["n"].as_u64().map(|n| n as usize)
            })
            .collect();
        let have = accepted.iter().all(|n| got.contains(n));
        if have || Instant::now() > end {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Each accepted number arrived; first arrivals keep the accepted order;
    // nothing arrived that was never sent (the one in flight at the kill
    // may or may not have been made durable).
    eprintln!(
        "accepted {}, burst broke at {broke_at}, {refused} refused before the kill, {} delivered after",
        accepted.len(),
        numbers.len()
    );
    let mut first = Vec::new();
    for n in &numbers {
        if !first.contains(n) {
            first.push(*n);
        }
    }
    let expect_max = broke_at;
    assert!(
        first.iter().all(|n| *n <= expect_max),
        "{first:?} (burst broke at {broke_at})"
    );
    assert_eq!(
        &first[..accepted.len()],
        &accepted[..],
        "after restart: {} deliveries, {} refused before the kill",
        numbers.len(),
        refused
    );
    let _ = std::fs::remove_dir_all(&dir);
}

async fn rest_call(
    px: &RunningProxy,
    method: &str,
    path: &str,
    version: &str,
    body: &str,
) -> Response {
    send(
        px.addr,
        &request(
            method,
            path,
            &[
                ("A2A-Version", version),
                ("Content-Type", "application/json"),
            ],
            body.as_bytes(),
        ),
    )
    .await
}

/// Over HTTP+JSON: a v1.0 client creates, reads, lists and deletes a push
/// config at a v0.3 REST agent; the agent only ever sees the proxy's
/// callback, the client only its own webhook; a callback is delivered
/// translated; after Delete the callback is gone.
/// A v0.3 REST agent storing one push config (`cfg-9` of task `t1`):
/// create, get, list and delete; `seen` is the config as it got it.
async fn v03_rest_push_agent() -> (FakeUpstream, Arc<Mutex<Option<Value>>>) {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        let stored = || {
            let cfg = s.lock().unwrap().clone().unwrap_or(Value::Null);
            json!({"name": "tasks/t1/pushNotificationConfigs/cfg-9", "pushNotificationConfig": cfg})
        };
        let body = match (r.method.as_str(), r.target.as_str()) {
            ("POST", "/v1/tasks/t1/pushNotificationConfigs") => {
                // Only the bare config is read (as a2a-js does).
                let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
                if v.get("config").is_some() || !v["pushNotificationConfig"].is_object() {
                    return Reply::json(400, r#"{"error":"not a TaskPushNotificationConfig"}"#);
                }
                let mut cfg = v["pushNotificationConfig"].clone();
                cfg["id"] = json!("cfg-9");
                *s.lock().unwrap() = Some(cfg);
                stored()
            }
            ("GET", "/v1/tasks/t1/pushNotificationConfigs/cfg-9") => stored(),
            ("GET", "/v1/tasks/t1/pushNotificationConfigs") => json!({"configs": [stored()]}),
            ("DELETE", "/v1/tasks/t1/pushNotificationConfigs/cfg-9") => json!({}),
            _ => return Reply::json(404, r#"{"error":"no route"}"#),
        };
        Reply::json(200, &body.to_string())
    })
    .await;
    (agent, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_v10_client_push_config_at_a_v03_push_agent() {
    let (agent, seen) = v03_rest_push_agent().await;
    let hook = webhook(0).await;
    let hook_url = format!("{}/hook", hook.url());
    let dir = fresh_dir("push-rest10");
    let px = push_proxy(&agent.url(), &dir, |_| {});

    let created = rest_call(
        &px,
        "POST",
        "/tasks/t1/pushNotificationConfigs",
        "1.0",
        &json!({"url": hook_url, "token": "client-tok",
            "authentication": {"scheme": "Bearer", "credentials": "client-cred"}})
        .to_string(),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.text());
    // The request-message form was refused, the bare config taken.
    let posts = || {
        agent
            .calls()
            .iter()
            .filter(|c| c.method == "POST")
            .map(|c| serde_json::from_slice::<Value>(&c.body).unwrap())
            .collect::<Vec<_>>()
    };
    let first = posts();
    assert_eq!(first.len(), 2, "{first:?}");
    assert_eq!(first[0]["parent"], "tasks/t1", "{first:?}");
    assert!(first[0]["config"]["pushNotificationConfig"].is_object());
    assert!(first[1].get("config").is_none(), "{first:?}");
    let agent_cfg = seen.lock().unwrap().clone().expect("agent got a config");
    let callback_url = proxy_callback(&px, &agent_cfg);
    assert!(agent_cfg.get("authentication").is_none(), "{agent_cfg}");
    let secret = agent_cfg["token"].as_str().unwrap().to_string();
    assert_ne!(secret, "client-tok");
    let want = |v: &Value| {
        assert_eq!(v["url"], json!(hook_url), "{v}");
        assert_eq!(v["token"], "client-tok", "{v}");
        assert_eq!(v["authentication"]["scheme"], "Bearer", "{v}");
        assert_eq!(v["authentication"]["credentials"], "client-cred", "{v}");
        assert_eq!(v["id"], "cfg-9", "{v}");
        assert_eq!(v["taskId"], "t1", "{v}");
    };
    want(&created.json());
    // Sealed at rest: the store file holds neither the token nor the
    // credentials in clear (and the key file is beside it).
    let stored = std::fs::read(dir.join("push.redb")).unwrap();
    for secret in [&b"client-tok"[..], b"client-cred"] {
        assert!(
            !stored.windows(secret.len()).any(|w| w == secret),
            "{} in clear in the store",
            String::from_utf8_lossy(secret)
        );
    }
    assert!(dir.join("credentials.key").exists());
    let got = rest_call(
        &px,
        "GET",
        "/tasks/t1/pushNotificationConfigs/cfg-9",
        "1.0",
        "",
    )
    .await;
    assert_eq!(got.status, 200, "{}", got.text());
    want(&got.json());
    let listed = rest_call(&px, "GET", "/tasks/t1/pushNotificationConfigs", "1.0", "").await;
    assert_eq!(listed.status, 200, "{}", listed.text());
    want(&listed.json()["configs"][0]);
    assert!(
        !listed.text().contains("/a2a-proxy/push/"),
        "{}",
        listed.text()
    );

    let path = &callback_url[px.url().len()..];
    let r = callback(&px, path, &secret, &v03_task("completed")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let hooks = wait_hooks(&hook, 1, Duration::from_secs(10)).await;
    assert_eq!(hooks.len(), 1);
    let body: Value = serde_json::from_slice(&hooks[0].body).unwrap();
    assert_eq!(
        body["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{body}"
    );
    assert_eq!(hooks[0].header("authorization"), Some("Bearer client-cred"));
    assert_eq!(
        hooks[0].header("x-a2a-notification-token"),
        Some("client-tok")
    );

    let deleted = rest_call(
        &px,
        "DELETE",
        "/tasks/t1/pushNotificationConfigs/cfg-9",
        "1.0",
        "",
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.text());
    let end = Instant::now() + Duration::from_secs(5);
    let status = loop {
        let st = callback(&px, path, &secret, &v03_task("working"))
            .await
            .status;
        if st == 404 || Instant::now() > end {
            break st;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status, 404, "the deleted config's callback still answers");

    // The form the agent took goes first from now on: one POST.
    let again = rest_call(
        &px,
        "POST",
        "/tasks/t1/pushNotificationConfigs",
        "1.0",
        &json!({"url": hook_url}).to_string(),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.text());
    let all = posts();
    assert_eq!(all.len(), 3, "{all:?}");
    assert!(all[2]["pushNotificationConfig"].is_object(), "{all:?}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v1.0 REST client registers a push config at the real a2a-sdk 0.3
/// agent's HTTP+JSON binding, which reads only the request-message form
/// `{parent, configId, config}`: the agent stores the proxy's callback;
/// the client sees its own webhook.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_v10_client_push_config_at_the_real_sdk_v03_rest_agent() {
    let (agent, hook, dir, px) = sdk_behind_proxy("v03", &["--push", "--rest"], "sdkrest").await;
    let hook_url = format!("{}/hook10", hook.url());
    let sent = rest_call(
        &px,
        "POST",
        "/message:send",
        "1.0",
        &json!({"message": {"messageId": "m-rest-push", "role": "ROLE_USER",
            "parts": [{"text": "hello"}]}})
        .to_string(),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.text());
    let task_id = sent.json()["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", sent.text()))
        .to_string();
    let path = format!("/tasks/{task_id}/pushNotificationConfigs");
    let created = rest_call(
        &px,
        "POST",
        &path,
        "1.0",
        &json!({"id": "cfg-r", "url": hook_url, "token": "rest-tok"}).to_string(),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.text());
    let c = created.json();
    assert_eq!(c["url"], hook_url.as_str(), "{c}");
    assert_eq!(c["token"], "rest-tok", "{c}");
    assert_eq!(c["id"], "cfg-r", "{c}");
    assert_eq!(c["taskId"], task_id.as_str(), "{c}");
    // What the agent itself stored, asked directly: the proxy's callback.
    let direct = send(
        std::net::SocketAddr::from(([127, 0, 0, 1], agent.port)),
        &request(
            "GET",
            &format!("/v1/tasks/{task_id}/pushNotificationConfigs/cfg-r"),
            &[],
            b"",
        ),
    )
    .await;
    assert_eq!(direct.status, 200, "{}", direct.text());
    let stored = direct.json();
    let url = stored["pushNotificationConfig"]["url"]
        .as_str()
        .unwrap_or_default();
    assert!(
        url.starts_with(&format!("{}/a2a-proxy/push/", px.url())),
        "{stored}"
    );
    let got = rest_call(&px, "GET", &format!("{path}/cfg-r"), "1.0", "").await;
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.json()["url"], hook_url.as_str(), "{}", got.text());
    // A second config, and an id the agent does not know: the agent
    // answers its first config for both; the client gets the asked one,
    // or 404 TASK_NOT_FOUND.
    let second = format!("{}/hook10b", hook.url());
    let created = rest_call(
        &px,
        "POST",
        &path,
        "1.0",
        &json!({"id": "cfg-s", "url": second, "token": "rest-tok-2"}).to_string(),
    )
    .await;
    assert_eq!(created.status, 200, "{}", created.text());
    let got = rest_call(&px, "GET", &format!("{path}/cfg-s"), "1.0", "").await;
    assert_eq!(got.status, 200, "{}", got.text());
    assert_eq!(got.json()["id"], "cfg-s", "{}", got.text());
    assert_eq!(got.json()["url"], second.as_str(), "{}", got.text());
    let got = rest_call(&px, "GET", &format!("{path}/no-such"), "1.0", "").await;
    assert_eq!(got.status, 404, "{}", got.text());
    assert_eq!(
        got.json()["error"]["details"][0]["reason"],
        "TASK_NOT_FOUND",
        "{}",
        got.text()
    );

    // List and delete: the agent's REST binding has neither (500 and 405,
    // asked directly); through the proxy they work, over its JSON-RPC.
    let agent_addr = std::net::SocketAddr::from(([127, 0, 0, 1], agent.port));
    let v1 = format!("/v1{path}");
    let direct = send(agent_addr, &request("GET", &v1, &[], b"")).await;
    assert_eq!(direct.status, 500, "{}", direct.text());
    let direct = send(
        agent_addr,
        &request("DELETE", &format!("{v1}/cfg-s"), &[], b""),
    )
    .await;
    assert_eq!(direct.status, 405, "{}", direct.text());
    let listed = |r: &Response| -> Vec<(String, String)> {
        let v = r.json();
        let configs = v["configs"].as_array().cloned().unwrap_or_default();
        configs
            .iter()
            .map(|c| {
                let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                (s("id"), s("url"))
            })
            .collect()
    };
    let l = rest_call(&px, "GET", &path, "1.0", "").await;
    assert_eq!(l.status, 200, "{}", l.text());
    assert_eq!(
        listed(&l),
        [
            ("cfg-r".to_string(), hook_url.clone()),
            ("cfg-s".to_string(), second.clone())
        ],
        "{}",
        l.text()
    );
    let d = rest_call(&px, "DELETE", &format!("{path}/cfg-s"), "1.0", "").await;
    assert_eq!(d.status, 200, "{}", d.text());
    let l = rest_call(&px, "GET", &path, "1.0", "").await;
    assert_eq!(
        listed(&l),
        [("cfg-r".to_string(), hook_url.clone())],
        "{}",
        l.text()
    );
    // The agent itself no longer has it.
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/list",
        "params": {"id": task_id}});
    let h = [("content-type", "application/json")];
    let r = send(
        agent_addr,
        &request("POST", "/", &h, rpc.to_string().as_bytes()),
    )
    .await;
    let ids: Vec<Value> = r.json()["result"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["pushNotificationConfig"]["id"].clone())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(ids, [json!("cfg-r")], "{}", r.text());
    // A task the agent does not know: its JSON-RPC error, as v1.0 REST.
    let l = rest_call(
        &px,
        "GET",
        "/tasks/no-such-task/pushNotificationConfigs",
        "1.0",
        "",
    )
    .await;
    assert_eq!(l.status, 404, "{}", l.text());
    assert_eq!(
        l.json()["error"]["details"][0]["reason"],
        "TASK_NOT_FOUND",
        "{}",
        l.text()
    );
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The callback URL the agent was given in `cfg`, checked to be the
/// proxy's own (under `px`'s `/a2a-proxy/push/`).
fn proxy_callback(px: &RunningProxy, cfg: &Value) -> String {
    let url = cfg["url"].as_str().unwrap_or_default().to_string();
    assert!(
        url.starts_with(&format!("{}/a2a-proxy/push/", px.url())),
        "agent was given {cfg}"
    );
    url
}

/// A v1.0 REST agent answering only `POST {route}`, with `answer` of the
/// body it got (each body kept, in order, in the list returned); anything
/// else is 404.
async fn v10_rest_agent(
    route: &'static str,
    answer: impl Fn(&Value) -> Value + Send + Sync + 'static,
) -> (FakeUpstream, Arc<Mutex<Vec<Value>>>) {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        if (r.method.as_str(), r.target.as_str()) != ("POST", route) {
            return Reply::json(404, r#"{"error":"no route"}"#);
        }
        let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        s.lock().unwrap().push(v.clone());
        Reply::json(200, &answer(&v).to_string())
    })
    .await;
    (agent, seen)
}

/// Over HTTP+JSON the other way: a v0.3 client's inline config in
/// `message:send` reaches a v1.0 REST agent as the proxy's callback; the
/// agent's v1.0 StreamResponse notification reaches the v0.3 webhook as a
/// bare v0.3 Task; a bad webhook URL is refused before the agent is called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_v03_client_inline_config_at_a_v10_agent() {
    let (agent, seen) = v10_rest_agent("/message:send", |_| {
        json!({"task": {"id": "t7", "contextId": "c7",
            "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": "2024-03-15T18:30:00Z"}}})
    })
    .await;
    let hook = webhook(0).await;
    let hook_url = format!("{}/v03hook", hook.url());
    let dir = fresh_dir("push-rest03");
    let px = push_proxy(&agent.url(), &dir, V10_AGENT);
    let send_body = |url: &str| {
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]},
            "configuration": {"pushNotification": {"url": url, "token": "v03-tok"}}})
        .to_string()
    };

    let refused = rest_call(
        &px,
        "POST",
        "/v1/message:send",
        "0.3",
        &send_body("ftp://127.0.0.1/x"),
    )
    .await;
    // a2a-python 0.3's REST status for InvalidParams.
    assert_eq!(refused.status, 422, "{}", refused.text());
    assert_eq!(refused.json()["code"], -32602, "{}", refused.text());
    assert!(
        agent.calls().is_empty(),
        "the agent was called for a refused webhook"
    );

    let sent = rest_call(
        &px,
        "POST",
        "/v1/message:send",
        "0.3",
        &send_body(&hook_url),
    )
    .await;
    assert_eq!(sent.status, 200, "{}", sent.text());
    assert_eq!(sent.json()["task"]["id"], "t7", "{}", sent.text());
    let cfg = seen.lock().unwrap().last().expect("agent got a config")["configuration"]
        ["taskPushNotificationConfig"]
        .clone();
    let callback_url = proxy_callback(&px, &cfg);
    let secret = cfg["token"].as_str().unwrap().to_string();
    assert_ne!(secret, "v03-tok");

    let note = json!({"statusUpdate": {"taskId": "t7", "contextId": "c7",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2024-03-15T18:31:00Z"}}});
    let path = &callback_url[px.url().len()..];
    let r = post(
        px.addr,
        path,
        &[
            ("Content-Type", "application/a2a+json"),
            ("Authorization", &format!("Bearer {secret}")),
        ],
        note.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let hooks = wait_hooks(&hook, 1, Duration::from_secs(10)).await;
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].target, "/v03hook");
    // The v0.3 webhook gets a Task (the update folded into what the proxy
    // knows of the task: here nothing yet, so id, context and status).
    let body: Value = serde_json::from_slice(&hooks[0].body).unwrap();
    assert_eq!(body["kind"], "task", "{body}");
    assert_eq!(
        (body["id"].as_str(), body["contextId"].as_str()),
        (Some("t7"), Some("c7")),
        "{body}"
    );
    assert_eq!(body["status"]["state"], "working", "{body}");
    assert_eq!(hooks[0].header("x-a2a-notification-token"), Some("v03-tok"));
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A v0.3 REST client's push-config create in each of the three body
/// forms v0.3 readers disagree on (the bare config, `{config}`, and the
/// request message a2a-python 0.3 sends) reaches a v1.0 REST agent as one
/// v1.0 TaskPushNotificationConfig with the proxy's callback and the id
/// the form carries; forms that contradict the path are refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_v03_client_push_config_body_forms_at_a_v10_agent() {
    let (agent, seen) = v10_rest_agent("/tasks/t1/pushNotificationConfigs", Value::clone).await;
    let hook = webhook(0).await;
    let hook_url = format!("{}/forms", hook.url());
    let dir = fresh_dir("push-forms");
    let px = push_proxy(&agent.url(), &dir, V10_AGENT);
    // The config named `name_id`, its own id `id`.
    let config = |name_id: &str, id: Option<&str>| {
        let mut pc = json!({"url": hook_url, "token": "form-tok"});
        if let Some(id) = id {
            pc["id"] = json!(id);
        }
        json!({"name": format!("tasks/t1/pushNotificationConfigs/{name_id}"),
            "pushNotificationConfig": pc})
    };
    let forms = [
        ("bare", config("c-bare", Some("c-bare")), "c-bare"),
        (
            "config",
            json!({"config": config("c-wrap", Some("c-wrap"))}),
            "c-wrap",
        ),
        (
            "request message",
            json!({"parent": "tasks/t1", "configId": "c-msg", "config": config("c-msg", None)}),
            "c-msg",
        ),
    ];
    for (i, (form, body, id)) in forms.iter().enumerate() {
        let r = rest_call(
            &px,
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "0.3",
            &body.to_string(),
        )
        .await;
        assert_eq!(r.status, 200, "{form}: {}", r.text());
        let got = seen.lock().unwrap()[i].clone();
        assert_eq!(got["taskId"], "t1", "{form}: {got}");
        assert_eq!(got["id"], *id, "{form}: {got}");
        let url = got["url"].as_str().unwrap_or_default();
        assert!(
            url.starts_with(&format!("{}/a2a-proxy/push/", px.url())),
            "{form}: {got}"
        );
        // The v0.3 answer: the subscriber's own webhook and token.
        let a = r.json();
        assert_eq!(
            a["pushNotificationConfig"]["url"],
            hook_url.as_str(),
            "{form}: {a}"
        );
        assert_eq!(
            a["pushNotificationConfig"]["token"], "form-tok",
            "{form}: {a}"
        );
        assert_eq!(a["pushNotificationConfig"]["id"], *id, "{form}: {a}");
    }
    for (bad, why) in [
        (
            json!({"parent": "tasks/t2", "config": config("c", None)}),
            "another task",
        ),
        (
            json!({"config": config("c", None), "extra": 1}),
            "an unknown member",
        ),
        (json!({"config": "x"}), "a config that is not an object"),
        (
            json!({"configId": 5, "config": config("c", None)}),
            "a numeric configId",
        ),
    ] {
        let r = rest_call(
            &px,
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "0.3",
            &bad.to_string(),
        )
        .await;
        assert_eq!(r.status, 422, "{why}: {}", r.text());
        assert_eq!(r.json()["code"], -32602, "{why}: {}", r.text());
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        3,
        "a refused form reached the agent"
    );
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `push.intercept_same_version`: a v0.3 client's config at a v0.3 agent
/// goes through the proxy's callback too (durable, retried, SSRF-checked),
/// and the webhook gets the agent's body byte for byte. Off (the default),
/// the same request reaches the agent untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_configs_are_intercepted_only_when_configured() {
    let send = |hook: &str| {
        json!({"jsonrpc": "2.0", "id": 3, "method": "message/send", "params": {
            "message": {"kind": "message", "messageId": "m1", "role": "user",
                "parts": [{"kind": "text", "text": "hi"}]},
            "configuration": {"pushNotificationConfig": {"url": hook, "token": "v03-tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "v03-cred"}}}}})
        .to_string()
    };
    let v03_headers = [("Content-Type", "application/json")];
    for intercept in [false, true] {
        let (agent, seen) = v03_push_agent().await;
        let hook = webhook(0).await;
        let hook_url = format!("{}/same", hook.url());
        let dir = fresh_dir("push-same");
        let px = push_proxy(&agent.url(), &dir, |c| {
            c.push.intercept_same_version = intercept;
        });
        let body = send(&hook_url);
        let r = post(px.addr, "/", &v03_headers, body.as_bytes()).await;
        assert_eq!(r.json()["result"]["id"], "t1", "{}", r.text());
        let agent_got = agent.calls()[0].body.clone();
        let cfg = seen.lock().unwrap().clone().expect("agent got a config");
        if !intercept {
            assert_eq!(
                agent_got,
                body.as_bytes(),
                "passthrough must be byte for byte"
            );
            assert_eq!(cfg["url"], json!(hook_url));
            continue;
        }
        let callback_url = proxy_callback(&px, &cfg);
        assert!(cfg.get("authentication").is_none(), "{cfg}");
        let get = json!({"jsonrpc": "2.0", "id": 4, "method": "tasks/pushNotificationConfig/get",
            "params": {"id": "t1", "pushNotificationConfigId": "cfg-1"}});
        let got = post(px.addr, "/", &v03_headers, get.to_string().as_bytes())
            .await
            .json();
        let c = &got["result"]["pushNotificationConfig"];
        assert_eq!(c["url"], json!(hook_url), "{got}");
        assert_eq!(c["token"], "v03-tok", "{got}");
        assert_eq!(c["authentication"]["schemes"], json!(["Bearer"]), "{got}");

        let secret = cfg["token"].as_str().unwrap().to_string();
        let note = br#"{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"},"metadata":{"z":1,"a":2}}"#;
        let r = callback(&px, &callback_url[px.url().len()..], &secret, note).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let hooks = wait_hooks(&hook, 1, Duration::from_secs(10)).await;
        assert_eq!(hooks.len(), 1);
        assert_eq!(hooks[0].body, note.to_vec(), "same-version body changed");
        assert_eq!(hooks[0].header("x-a2a-notification-token"), Some("v03-tok"));
        assert_eq!(hooks[0].header("content-type"), Some("application/json"));
        drop(px);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `push.intercept_same_version` over REST: a v0.3 REST client's config at
/// a v0.3 REST agent is swapped for the proxy's callback (and restored in
/// Get) only when configured; otherwise the agent gets the client's bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_rest_configs_are_intercepted_only_when_configured() {
    for intercept in [false, true] {
        let (agent, seen) = v03_rest_push_agent().await;
        let hook = webhook(0).await;
        let hook_url = format!("{}/same-rest", hook.url());
        let dir = fresh_dir("push-same-rest");
        let px = push_proxy(&agent.url(), &dir, |c| {
            c.push.intercept_same_version = intercept;
        });
        let body = json!({"name": "tasks/t1/pushNotificationConfigs/cfg-9",
            "pushNotificationConfig": {"url": hook_url, "token": "v03-tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "v03-cred"}}})
        .to_string();
        let created = rest_call(
            &px,
            "POST",
            "/v1/tasks/t1/pushNotificationConfigs",
            "0.3",
            &body,
        )
        .await;
        assert_eq!(created.status, 200, "{}", created.text());
        let cfg = seen.lock().unwrap().clone().expect("agent got a config");
        if !intercept {
            assert_eq!(
                agent.calls()[0].body,
                body.as_bytes(),
                "passthrough must be byte for byte"
            );
            assert_eq!(cfg["url"], json!(hook_url));
            drop(px);
            let _ = std::fs::remove_dir_all(&dir);
            continue;
        }
        let callback_url = proxy_callback(&px, &cfg);
        assert!(cfg.get("authentication").is_none(), "{cfg}");
        for answer in [
            created.json(),
            rest_call(
                &px,
                "GET",
                "/v1/tasks/t1/pushNotificationConfigs/cfg-9",
                "0.3",
                "",
            )
            .await
            .json(),
        ] {
            let c = &answer["pushNotificationConfig"];
            assert_eq!(c["url"], json!(hook_url), "{answer}");
            assert_eq!(c["token"], "v03-tok", "{answer}");
            assert_eq!(c["authentication"]["credentials"], "v03-cred", "{answer}");
        }
        let secret = cfg["token"].as_str().unwrap().to_string();
        let note = br#"{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}"#;
        let r = callback(&px, &callback_url[px.url().len()..], &secret, note).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let hooks = wait_hooks(&hook, 1, Duration::from_secs(10)).await;
        assert_eq!(hooks[0].body, note.to_vec(), "same-version body changed");
        assert_eq!(hooks[0].header("x-a2a-notification-token"), Some("v03-tok"));
        drop(px);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// `push.intercept_same_version` on REST: a config inline in a
/// same-version `message:send` (v0.3 `pushNotification`, v1.0
/// `taskPushNotificationConfig`) reaches the agent as the proxy's
/// callback; a message without one reaches it byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_rest_inline_configs_are_intercepted() {
    for v in [Version::V03, Version::V10] {
        let (path, task, message, config_key) = match v {
            Version::V03 => (
                "/v1/message:send",
                json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
                json!({"messageId": "m1", "role": "ROLE_USER", "content": [{"text": "hi"}]}),
                "pushNotification",
            ),
            Version::V10 => (
                "/message:send",
                json!({"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
                json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}),
                "taskPushNotificationConfig",
            ),
        };
        let reply = task.to_string();
        let agent = FakeUpstream::start(move |_| Reply::json(200, &reply)).await;
        let hook = webhook(0).await;
        let hook_url = format!("{}/inline", hook.url());
        let dir = fresh_dir("push-same-inline");
        let px = push_proxy(&agent.url(), &dir, |c| {
            c.push.intercept_same_version = true;
            c.upstream_version = UpstreamVersion::Fixed(v);
        });
        let plain = json!({"message": message}).to_string();
        let r = rest_call(&px, "POST", path, v.as_str(), &plain).await;
        assert_eq!(r.status, 200, "{v}: {}", r.text());
        assert_eq!(
            agent.calls()[0].body,
            plain.as_bytes(),
            "{v}: not byte for byte"
        );

        let with = json!({"message": message,
            "configuration": {config_key: {"url": hook_url, "token": "in-tok"}}});
        let r = rest_call(&px, "POST", path, v.as_str(), &with.to_string()).await;
        assert_eq!(r.status, 200, "{v}: {}", r.text());
        assert_eq!(r.json()["task"]["id"], "t1", "{v}: {}", r.text());
        let got: Value = serde_json::from_slice(&agent.calls()[1].body).unwrap();
        let cfg = &got["configuration"][config_key];
        let url = cfg["url"].as_str().unwrap_or_default();
        assert!(
            url.starts_with(&format!("{}/a2a-proxy/push/", px.url())),
            "{v}: agent was given {got}"
        );
        assert_ne!(cfg["token"], "in-tok", "{v}: {got}");
        assert_eq!(got["message"]["messageId"], "m1", "{v}: {got}");
        drop(px);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Deliveries reuse keep-alive connections to a webhook, and a connection
/// the webhook closed while idle is replaced without losing or doubling a
/// notification (this webhook closes every connection after two answers).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_reuse_webhook_connections_and_survive_their_close() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hook_addr = listener.local_addr().unwrap();
    let conns = Arc::new(AtomicUsize::new(0));
    let bodies: Arc<Mutex<Vec<Value>>> = Arc::default();
    let (c, b) = (conns.clone(), bodies.clone());
    let server = tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            let b = b.clone();
            tokio::spawn(async move {
                let mut reader = Reader::default();
                for _ in 0..2 {
                    let Ok(Some(head)) = reader.head(&mut sock).await else {
                        return;
                    };
                    let (_, headers) = parse_head(&head);
                    let Ok(body) = reader.body(&mut sock, &headers, false).await else {
                        return;
                    };
                    b.lock()
                        .unwrap()
                        .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                    if sock.write_all(ok).await.is_err() {
                        return;
                    }
                }
                // Closed without `Connection: close`, as an idle timeout does.
                let _ = sock.shutdown().await;
                let mut sink = [0u8; 64];
                let _ =
                    tokio::time::timeout(Duration::from_millis(100), sock.read(&mut sink)).await;
            });
        }
    });
    let (agent, seen) = v03_push_agent().await;
    let dir = fresh_dir("push-keepalive");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let (path, secret) = register(&px, &seen, &format!("http://{hook_addr}/h")).await;
    const N: u64 = 6;
    for n in 0..N {
        let body = json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "working"}, "metadata": {"n": n}});
        let r = callback(&px, &path, &secret, body.to_string().as_bytes()).await;
        assert_eq!(r.status, 200, "{}", r.text());
        // One at a time, so each delivery finds the previous connection idle.
        let end = Instant::now() + Duration::from_secs(10);
        while bodies.lock().unwrap().len() as u64 <= n && Instant::now() < end {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    let got: Vec<u64> = bodies
        .lock()
        .unwrap()
        .iter()
        .map(|v| v["task"]["metadata"]["n"].as_u64().unwrap_or(99))
        .collect();
    assert_eq!(got, (0..N).collect::<Vec<_>>(), "each once, in order");
    let opened = conns.load(Ordering::SeqCst);
    assert!(
        opened < N as usize,
        "{opened} connections for {N} deliveries: none was reused"
    );
    server.abort();
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An inline config in a JSON-RPC stream (the task is new, so its id comes
/// only with the first event): a Get right after the stream shows the
/// client's webhook and token, not the proxy's callback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inline_config_in_a_stream_learns_its_task_from_the_first_event() {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let gate = Arc::new(tokio::sync::Semaphore::new(8));
    let agent = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match req["method"].as_str() {
            Some("message/stream") => {
                let mut cfg = req["params"]["configuration"]["pushNotificationConfig"].clone();
                cfg["id"] = json!("cfg-s");
                *s.lock().unwrap() = Some(cfg);
                Reply::Sse {
                    events: vec![
                        r#"data: {"jsonrpc":"2.0","id":7,"result":{"kind":"task","id":"ts","contextId":"c1","status":{"state":"submitted"}}}"#.to_string() + "\n\n",
                        r#"data: {"jsonrpc":"2.0","id":7,"result":{"kind":"status-update","taskId":"ts","contextId":"c1","status":{"state":"completed"},"final":true}}"#.to_string() + "\n\n",
                    ],
                    gate: gate.clone(),
                }
            }
            Some("tasks/pushNotificationConfig/get") => {
                let cfg = s.lock().unwrap().clone();
                let result = json!({"taskId": "ts", "pushNotificationConfig": cfg});
                Reply::rpc_result(&req["id"], &result)
            }
            _ => Reply::json(404, "{}"),
        }
    })
    .await;
    let dir = fresh_dir("push-stream");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let hook = "http://127.0.0.1:9/stream-hook";
    let body = v10(
        "SendStreamingMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
            "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "s-tok"}}}),
    );
    let r = post(px.addr, "/", JSON_V10, &body).await;
    assert_eq!(r.status, 200);
    assert!(r.text().contains("TASK_STATE_COMPLETED"), "{}", r.text());
    let cfg = seen.lock().unwrap().clone().expect("agent got a config");
    assert!(
        cfg["url"].as_str().unwrap().contains("/a2a-proxy/push/"),
        "{cfg}"
    );
    let got = call_v10(
        &px,
        "GetTaskPushNotificationConfig",
        json!({"taskId": "ts", "id": "cfg-s"}),
    )
    .await;
    assert_eq!(got["result"]["url"], hook, "{got}");
    assert_eq!(got["result"]["token"], "s-tok", "{got}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The ListTasks index lives in the push store: tasks a caller saw before
/// a restart are listed to it after it, with no other traffic in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_survives_a_restart() {
    // message/send makes t1 (submitted); tasks/get answers it working.
    let agent = FakeUpstream::start(|r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let state = match req["method"].as_str() {
            Some("message/send") => "submitted",
            _ => "working",
        };
        let task = json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": state, "timestamp": "2024-03-15T18:30:00Z"}});
        Reply::rpc_result(&req["id"], &task)
    })
    .await;
    let dir = fresh_dir("push-tasks");
    let mut px = push_proxy(&agent.url(), &dir, |_| {});
    let r = call_v10(
        &px,
        "SendMessage",
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}),
    )
    .await;
    assert_eq!(r["result"]["task"]["id"], "t1", "{r}");
    let listed = call_v10(&px, "ListTasks", json!({})).await;
    assert_eq!(listed["result"]["tasks"][0]["id"], "t1", "{listed}");
    px.stop();
    drop(px);

    // The same (anonymous) caller lists it after the restart: the entry
    // came back from the store with its scope (keyed from the data dir's
    // credentials key), and the task is asked of the agent.
    let px2 = push_proxy(&agent.url(), &dir, |_| {});
    let calls_before = agent.calls().len();
    let listed = call_v10(&px2, "ListTasks", json!({"contextId": "c1"})).await;
    assert_eq!(listed["result"]["tasks"][0]["id"], "t1", "{listed}");
    assert_eq!(
        listed["result"]["tasks"][0]["status"]["state"], "TASK_STATE_WORKING",
        "{listed}"
    );
    let asked = &agent.calls()[calls_before..];
    assert_eq!(asked.len(), 1);
    let b: Value = serde_json::from_slice(&asked[0].body).unwrap();
    assert_eq!(b["method"], "tasks/get", "{b}");
    assert_eq!(b["params"]["id"], "t1", "{b}");
    // Another caller does not see it.
    let other = post(
        px2.addr,
        "/",
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("Authorization", "Bearer someone-else"),
        ],
        &v10("ListTasks", json!({})),
    )
    .await
    .json();
    assert_eq!(other["result"]["tasks"], json!([]), "{other}");
    drop(px2);
    let _ = std::fs::remove_dir_all(&dir);
}

// ---- Several instances on one PostgreSQL (issue #25) ----

/// A webhook on 127.0.0.1 that answers every POST 200 after `delay`
/// (connections served concurrently); records the bodies' `n` (a v1.0
/// StreamResponse's task metadata) with their arrival time, at arrival.
struct SlowHook {
    url: String,
    seen: Arc<Mutex<Vec<(u64, Instant)>>>,
    _task: AbortOnDrop,
}

impl SlowHook {
    async fn start(delay: Duration) -> SlowHook {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/h", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<(u64, Instant)>>> = Arc::default();
        let s = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut sock, _)) = listener.accept().await {
                let s = s.clone();
                tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt;
                    let mut reader = Reader::default();
                    while let Ok(Some(head)) = reader.head(&mut sock).await {
                        let (_, headers) = parse_head(&head);
                        let Ok(body) = reader.body(&mut sock, &headers, false).await else {
                            return;
                        };
                        let v: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                        if let Some(n) = v["task"]["metadata"]["n"].as_u64() {
                            s.lock().unwrap().push((n, Instant::now()));
                        }
                        tokio::time::sleep(delay).await;
                        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                        if sock.write_all(ok).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        SlowHook {
            url,
            seen,
            _task: AbortOnDrop(task),
        }
    }

    fn numbers(&self) -> Vec<u64> {
        self.seen.lock().unwrap().iter().map(|(n, _)| *n).collect()
    }

    /// Waits (bounded) until every number below `n` arrived.
    async fn wait_all(&self, n: u64, limit: Duration) -> Vec<u64> {
        let end = Instant::now() + limit;
        loop {
            let got = self.numbers();
            if (0..n).all(|k| got.contains(&k)) || Instant::now() > end {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// [`Self::wait_all`], then `grace` more for late posts (duplicates):
    /// every number that arrived by then.
    async fn wait_all_then(&self, n: u64, limit: Duration, grace: Duration) -> Vec<u64> {
        let got = self.wait_all(n, limit).await;
        tokio::time::sleep(grace).await;
        let now = self.numbers();
        if now.len() > got.len() {
            now
        } else {
            got
        }
    }
}

fn numbered(n: u64) -> Vec<u8> {
    json!({"kind": "task", "id": "t1", "contextId": "c1",
        "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"},
        "metadata": {"n": n}})
    .to_string()
    .into_bytes()
}

/// The numbers in order of first arrival, and those that arrived more
/// than once with their count.
fn tally(got: &[u64]) -> (Vec<u64>, Vec<(u64, usize)>) {
    let mut count = std::collections::BTreeMap::new();
    let mut first = Vec::new();
    for n in got {
        let c = count.entry(*n).or_insert(0);
        if *c == 0 {
            first.push(*n);
        }
        *c += 1;
    }
    let dups = count.into_iter().filter(|(_, c)| *c > 1).collect();
    (first, dups)
}

/// Issue #25: two live instances, a slow webhook (0.25 s per answer) and
/// a backlog for one config that takes far longer than one lease (2 s) to
/// deliver: the instance holding the run renews its leases, so the other
/// never posts any of it: every notification arrives exactly once, in
/// order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_live_instances_and_a_slow_webhook_post_a_long_backlog_once_each() {
    live_instances_post_a_long_backlog_once_each(2).await;
}

/// The same with three instances taking the notifications in turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_live_instances_and_a_slow_webhook_post_a_long_backlog_once_each() {
    live_instances_post_a_long_backlog_once_each(3).await;
}

async fn live_instances_post_a_long_backlog_once_each(instances: usize) {
    if pg::skipped() {
        return;
    }
    let (cluster, url) = pg_cluster().await;
    let (agent, seen) = v03_push_agent().await;
    let hook = SlowHook::start(Duration::from_millis(250)).await;
    let start = |url: String, upstream: String| {
        tokio::task::spawn_blocking(move || {
            push_proxy(&upstream, &fresh_dir("push-unused"), |c| {
                c.push.backend = PushBackend::Postgres(url);
                c.push.lease = Duration::from_millis(2000);
            })
        })
    };
    let mut proxies = Vec::new();
    for _ in 0..instances {
        proxies.push(start(url.clone(), agent.url()).await.unwrap());
    }
    let (path, secret) = register(&proxies[0], &seen, &hook.url).await;
    const N: u64 = 24; // about 6 s of posts: three leases
    for n in 0..N {
        let px = &proxies[n as usize % instances];
        let r = callback(px, &path, &secret, &numbered(n)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Then time for a duplicate to show up (one more lease).
    let got = hook
        .wait_all_then(N, Duration::from_secs(60), Duration::from_millis(2500))
        .await;
    let (first, dups) = tally(&got);
    eprintln!(
        "{instances} instances: {} posts for {N} notifications, duplicated: {dups:?}",
        got.len()
    );
    assert_eq!(first, (0..N).collect::<Vec<_>>(), "nothing lost, in order");
    assert!(dups.is_empty(), "posted more than once: {dups:?}");
    let line = "a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"delivered\"} ";
    let mut delivered = Vec::new();
    for px in &proxies {
        delivered.push(metric(&metrics(px).await, line));
    }
    let total: u64 = delivered.iter().sum();
    assert_eq!(total, N, "delivered per instance: {delivered:?}");
    drop(proxies);
    drop(cluster);
}

/// Issue #25: kill -9 of the instance delivering a backlog: the other
/// instance takes its items over once the killed one's lease (3 s) runs
/// out, not a minute later; nothing is lost, first arrivals keep the
/// order, and only what was in flight at the kill may arrive twice. Both
/// binaries are given a libpq key=value connection string.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_delivering_instance_is_taken_over_within_the_lease() {
    if pg::skipped() {
        return;
    }
    let (cluster, url) = pg_cluster().await;
    assert!(url.starts_with("host="), "a libpq string: {url}");
    let (agent, seen) = v03_push_agent().await;
    let hook = SlowHook::start(Duration::from_millis(200)).await;
    let dir = fresh_dir("push-pg-kill9");
    std::fs::create_dir_all(&dir).unwrap();
    let config = |name: &str, addr: std::net::SocketAddr| {
        let f = dir.join(name);
        std::fs::write(
            &f,
            format!(
                "listen = \"{addr}\"\nthreads = 1\n[upstream]\nurl = \"{}\"\nversion = \"0.3\"\n\
                 [push]\npostgres_url = \"{url}\"\nallow_hosts = [\"127.0.0.1\"]\n\
                 backoff_initial_ms = 50\nbackoff_max_ms = 200\nlease_ms = 3000\n",
                agent.url(),
            ),
        )
        .unwrap();
        f
    };
    let (addr_a, addr_b) = (
        support::free_local_addr().unwrap(),
        support::free_local_addr().unwrap(),
    );
    let a = serve_binary(&config("a.toml", addr_a), addr_a).await;
    let (path, secret) = register_at(addr_a, &seen, &hook.url).await;
    const N: u64 = 30; // 6 s of posts
    for n in 0..N {
        let r = try_post(addr_a, &path, &secret, &numbered(n)).await;
        assert_eq!(r, Some(200), "callback {n}");
    }
    // a is delivering (and leasing) the backlog; b comes up meanwhile.
    let end = Instant::now() + Duration::from_secs(20);
    while hook.numbers().len() < 3 && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(hook.numbers().len() >= 3, "a delivers");
    let b = serve_binary(&config("b.toml", addr_b), addr_b).await;
    let before = hook.numbers().len();
    assert!(
        before < N as usize - 5,
        "the backlog outlasts b's start: {before}"
    );
    drop(a); // SIGKILL
    let killed = Instant::now();
    let at_kill = hook.numbers().len();
    let got = hook
        .wait_all_then(N, Duration::from_secs(30), Duration::from_millis(500))
        .await;
    let first_after = hook
        .seen
        .lock()
        .unwrap()
        .get(at_kill)
        .map(|(_, t)| t.duration_since(killed));
    let (first, dups) = tally(&got);
    eprintln!(
        "{at_kill} posted before the kill, first post after it {first_after:?}, {} posts for {N}, duplicated: {dups:?}",
        got.len()
    );
    assert_eq!(first, (0..N).collect::<Vec<_>>(), "nothing lost, in order");
    let first_after = first_after.expect("b posted after the kill");
    assert!(
        first_after < Duration::from_secs(3 + 5),
        "taken over after {first_after:?} (lease 3 s)"
    );
    // At most the post in flight at the kill (and one whose completion
    // was not yet written) arrive again.
    assert!(
        dups.iter().all(|(_, c)| *c == 2) && dups.len() <= 2,
        "{dups:?}"
    );
    drop(b);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The agent's W3C trace context on a push reaches the subscriber with the
/// delivery; a malformed one is not passed on, and none is made up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_trace_context_reaches_the_webhook() {
    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let (agent, seen) = v03_push_agent().await;
    let hook = webhook(0).await;
    let dir = fresh_dir("push-trace");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let (path, secret) = register(&px, &seen, &format!("{}/h", hook.url())).await;
    let pushes: [&[(&str, &str)]; 3] = [
        &[
            ("traceparent", PARENT),
            ("tracestate", "vendor=abc,other=1"),
        ],
        &[
            ("traceparent", "00-XYZ-not-a-context"),
            ("tracestate", "vendor=abc"),
        ],
        &[],
    ];
    for (extra, state) in pushes.iter().zip(["submitted", "working", "completed"]) {
        let mut h = vec![
            ("Content-Type", "application/json"),
            ("X-A2A-Notification-Token", secret.as_str()),
        ];
        h.extend_from_slice(extra);
        let r = post(px.addr, &path, &h, &v03_task(state)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let got = wait_hooks(&hook, 3, Duration::from_secs(10)).await;
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[0].header("traceparent"), Some(PARENT));
    assert_eq!(got[0].header("tracestate"), Some("vendor=abc,other=1"));
    for rec in &got[1..] {
        assert_eq!(rec.header("traceparent"), None, "{rec:?}");
        assert_eq!(rec.header("tracestate"), None, "{rec:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The HTTP+JSON twin of
/// `inline_config_in_a_stream_learns_its_task_from_the_first_event`: an
/// inline config in a v1.0 REST stream to a v0.3 REST agent learns its task
/// from the stream's first event too, so a Get right after the stream shows
/// the client's webhook and token, not the proxy's callback.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_inline_config_in_a_stream_learns_its_task_from_the_first_event() {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let gate = Arc::new(tokio::sync::Semaphore::new(8));
    let agent = FakeUpstream::start(move |r| match (r.method.as_str(), r.target.as_str()) {
        ("POST", "/v1/message:stream") => {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let mut cfg = req["configuration"]["pushNotification"].clone();
            cfg["id"] = json!("cfg-s");
            *s.lock().unwrap() = Some(cfg);
            Reply::Sse {
                events: vec![
                    r#"data: {"task":{"id":"ts","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}"#.to_string() + "\n\n",
                    r#"data: {"statusUpdate":{"taskId":"ts","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}"#.to_string() + "\n\n",
                ],
                gate: gate.clone(),
            }
        }
        ("GET", "/v1/tasks/ts/pushNotificationConfigs/cfg-s") => {
            let cfg = s.lock().unwrap().clone().unwrap_or(Value::Null);
            let body = json!({"name": "tasks/ts/pushNotificationConfigs/cfg-s", "pushNotificationConfig": cfg});
            Reply::json(200, &body.to_string())
        }
        _ => Reply::json(404, r#"{"error":"no route"}"#),
    })
    .await;
    let dir = fresh_dir("push-reststream");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let hook = "http://127.0.0.1:9/rest-stream-hook";
    let body = json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "s-tok"}}});
    let r = rest_call(&px, "POST", "/message:stream", "1.0", &body.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("TASK_STATE_COMPLETED"), "{}", r.text());
    let cfg = seen.lock().unwrap().clone().expect("agent got a config");
    assert!(
        cfg["url"].as_str().unwrap().contains("/a2a-proxy/push/"),
        "{cfg}"
    );
    let got = rest_call(
        &px,
        "GET",
        "/tasks/ts/pushNotificationConfigs/cfg-s",
        "1.0",
        "",
    )
    .await;
    assert_eq!(got.status, 200, "{}", got.text());
    let got = got.json();
    assert_eq!(got["url"], hook, "{got}");
    assert_eq!(got["token"], "s-tok", "{got}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
