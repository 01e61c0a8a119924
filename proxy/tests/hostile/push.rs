//! Hostile webhooks and agents against the push layer (issue #20, findings
//! 8 and 10), through a real proxy with push on (temp data dir):
//! - webhook URLs spelling a non-public address (numeric IPv4 forms, IPv6
//!   forms embedding IPv4, zone ids, local names) are refused at
//!   registration on every binding, and the agent is never called;
//! - a target the policy refuses at delivery goes to the dead letters
//!   after one attempt, not after every retry;
//! - an agent's push naming another task than its config's is refused,
//!   stored nowhere and delivered to no one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use proxy::config::{Config, PushBackend};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};

use crate::support::*;

/// A proxy with push on at `dir` for an agent of `version`; `tune` last.
pub(super) fn start_proxy(
    upstream: &str,
    version: Version,
    dir: &std::path::Path,
    tune: impl FnOnce(&mut Config),
) -> RunningProxy {
    let mut config = config_for(upstream, version);
    config.push.enabled = true;
    config.push.backend = PushBackend::Embedded(dir.to_path_buf());
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    config.push.max_attempts = 10;
    config.push.backoff_initial = Duration::from_millis(50);
    config.push.backoff_max = Duration::from_millis(200);
    tune(&mut config);
    proxy::start(config).unwrap()
}

/// A v0.3 JSON-RPC agent: message/send answers task t1, a config set is
/// echoed; keeps the last push config it was given.
pub(super) async fn v03_agent() -> (FakeUpstream, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let result = match req["method"].as_str() {
            Some("message/send") => {
                let cfg = &req["params"]["configuration"]["pushNotificationConfig"];
                if cfg.is_object() {
                    *s.lock().unwrap() = Some(cfg.clone());
                }
                json!({"kind": "task", "id": "t1", "contextId": "c1",
                    "status": {"state": "submitted", "timestamp": "2024-03-15T18:30:00Z"}})
            }
            Some("tasks/pushNotificationConfig/set") => req["params"].clone(),
            _ => json!({}),
        };
        Reply::rpc_result(&req["id"], &result)
    })
    .await;
    (agent, seen)
}

/// A webhook receiver answering 200.
pub(super) async fn webhook() -> FakeUpstream {
    FakeUpstream::start(|_| Reply::json(200, "{}")).await
}

async fn jsonrpc_v10(addr: std::net::SocketAddr, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    post(addr, "/", JSON_V10, body.to_string().as_bytes())
        .await
        .json()
}

async fn rest_v10(addr: std::net::SocketAddr, path: &str, body: Value) -> Response {
    post(addr, path, JSON_V10, body.to_string().as_bytes()).await
}

fn send_message_with(url: &str) -> Value {
    json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": url, "token": "client-tok"}}})
}

/// A v1.0 client registers webhook `{hook}/h` inline in a SendMessage
/// through `px`, answered task `task`: the callback path and the secret
/// the agent was given (`seen`).
pub(super) async fn register_hook(
    px: &RunningProxy,
    hook: &FakeUpstream,
    seen: &Seen,
    task: &str,
) -> (String, String) {
    let r = jsonrpc_v10(
        px.addr,
        "SendMessage",
        send_message_with(&format!("{}/h", hook.url())),
    )
    .await;
    assert_eq!(r["result"]["task"]["id"], task, "{r}");
    callback_of(px.addr, seen)
}

/// A push metric of `/metrics` (`name{labels}` exactly), 0 when absent.
pub(super) async fn metric(px: &RunningProxy, series: &str) -> u64 {
    let text = get(px.addr, "/metrics", &[]).await.text();
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0)
}

const DEAD: &str = "a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"dead_letter\"}";
const FAILED: &str = "a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"failed\"}";

/// Waits (bounded) until `hook` got a body satisfying `done`.
async fn hooks_until(hook: &FakeUpstream, done: impl Fn(&Value) -> bool) -> Vec<Value> {
    recorded_until(hook, done)
        .await
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap_or(Value::Null))
        .collect()
}

/// Spellings of a non-public address (finding 8), each once as the
/// attacker sent it.
const HOSTILE: &[&str] = &[
    "http://[::7f00:1]/h",
    "http://[64:ff9b::7f00:1]/h",
    "http://[64:ff9b:1::a00:1]/h",
    "http://[2002:7f00:1::]/h",
    "http://[::ffff:7f00:1]/h",
    "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/h",
    "http://[fe80::1%25lo]/h",
    "http://2130706433/h",
    "http://0x7f000001/h",
    "http://127.1/h",
    "http://017700000001/h",
    "http://0/h",
    "http://127.0.0.1./h",
    "http://0x7f.0.0.1:8080/h",
    "http://localhost./h",
    "http://api.localhost/h",
    "http://100.64.0.1/h",
    "http://198.18.0.1/h",
    "http://240.0.0.1/h",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_urls_spelling_a_private_address_are_refused_at_registration() {
    let (agent, seen) = v03_agent().await;
    let dir = fresh_dir("hostile-push-spellings");
    let px = start_proxy(&agent.url(), Version::V03, &dir, |c| {
        c.push.allow_hosts.clear()
    });
    for url in HOSTILE {
        let r = jsonrpc_v10(px.addr, "SendMessage", send_message_with(url)).await;
        assert_eq!(r["error"]["code"], -32602, "SendMessage {url}: {r}");
        assert!(r.get("result").is_none(), "{url}: {r}");
        let r = jsonrpc_v10(
            px.addr,
            "CreateTaskPushNotificationConfig",
            json!({"taskId": "t1", "id": "c1", "url": url}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "Create {url}: {r}");
        let msg = r["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.starts_with("webhook url"), "{url}: {r}");
    }
    // HTTP+JSON: the same refusal as for a plain private address, as a
    // v1.0 REST error.
    for url in [
        "http://[::ffff:7f00:1]/h",
        "http://2130706433/h",
        "http://127.1/h",
    ] {
        let r = rest_v10(
            px.addr,
            "/tasks/t1/pushNotificationConfigs",
            json!({"url": url}),
        )
        .await;
        assert_eq!(r.status, 400, "REST create {url}: {}", r.text());
        let r = rest_v10(px.addr, "/message:send", send_message_with(url)).await;
        assert_eq!(r.status, 400, "REST send {url}: {}", r.text());
        let e = r.json();
        assert_eq!(e["error"]["status"], "INVALID_ARGUMENT", "{url}: {e}");
    }
    assert!(seen.lock().unwrap().is_none());
    assert!(agent.calls().is_empty(), "the agent was called");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A config registered while `push.allow_hosts` let its target in; the
/// proxy restarts on the same data without it: the policy now refuses the
/// target at every send, so the notification is dead-lettered after one
/// attempt (not after `push.max_attempts`), and the webhook gets nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_refused_at_delivery_is_dead_lettered_after_one_attempt() {
    let (agent, seen) = v03_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-push-refused-at-delivery");
    let mut px = start_proxy(&agent.url(), Version::V03, &dir, |_| {});
    let (path, secret) = register_hook(&px, &hook, &seen, "t1").await;
    px.stop();
    drop(px);

    let px = start_proxy(&agent.url(), Version::V03, &dir, |c| {
        c.push.allow_hosts.clear()
    });
    let task = json!({"kind": "task", "id": "t1", "contextId": "c1",
        "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"}});
    let r = push_bearing(px.addr, &path, &secret, &task).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let end = Instant::now() + Duration::from_secs(20);
    while metric(&px, DEAD).await == 0 && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(metric(&px, DEAD).await, 1, "never dead-lettered");
    assert_eq!(
        metric(&px, FAILED).await,
        1,
        "attempts before the dead letter"
    );
    assert!(hook.recorded().is_empty(), "the refused webhook was called");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// v0.3 bodies (finding 10): a v0.3 agent's push to the callback of task
/// t1's config naming task t2, in each shape the callback reads, is
/// refused; the webhook only ever gets t1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v03_push_naming_another_task_is_refused() {
    let (agent, seen) = v03_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-push-other-task-v03");
    let px = start_proxy(&agent.url(), Version::V03, &dir, |_| {});
    let (path, secret) = register_hook(&px, &hook, &seen, "t1").await;
    let status = json!({"state": "working", "timestamp": "2024-03-15T18:30:00Z"});
    let other = |mut v: Value| {
        v["contextId"] = json!("c2");
        v
    };
    for body in [
        other(json!({"kind": "task", "id": "t2", "status": status})),
        other(json!({"id": "t2", "status": status})),
        other(json!({"kind": "status-update", "taskId": "t2", "status": status, "final": false})),
        other(json!({"kind": "artifact-update", "taskId": "t2",
            "artifact": {"artifactId": "a1", "parts": [{"kind": "text", "text": "secret of t2"}]}})),
        other(
            json!({"kind": "message", "messageId": "m2", "role": "agent", "taskId": "t2",
            "parts": [{"kind": "text", "text": "secret of t2"}]}),
        ),
        // t1 on top, t2 inside.
        json!({"kind": "task", "id": "t1", "contextId": "c1", "status": status,
            "history": [{"kind": "message", "messageId": "m2", "role": "agent",
                "taskId": "t2", "parts": [{"kind": "text", "text": "secret of t2"}]}]}),
    ] {
        let r = push_bearing(px.addr, &path, &secret, &body).await;
        assert!((400..500).contains(&r.status), "{body}: {}", r.text());
        assert!(!r.text().contains("t2"), "{}", r.text());
    }
    // A push about t1 still goes through, and is the only delivery: a
    // refused push stored would have been delivered first (per-config order).
    let good = json!({"kind": "task", "id": "t1", "contextId": "c1", "status": status});
    let r = push_bearing(px.addr, &path, &secret, &good).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let got = hooks_until(&hook, |b| b["task"]["id"] == "t1").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["task"]["id"], "t1", "{got:?}");
    assert!(!format!("{got:?}").contains("t2"), "{got:?}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// v1.0 bodies (finding 10): a v1.0 agent's StreamResponse pushes to the
/// callback of task t9's config (a v0.3 subscriber) naming task t8 in each
/// member are refused; the webhook only ever gets t9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v10_push_naming_another_task_is_refused() {
    let (agent, seen) = pushing_v10_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-push-other-task-v10");
    let px = start_proxy(&agent.url(), Version::V10, &dir, |_| {});
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"pushNotificationConfig": {
            "url": format!("{}/h", hook.url()), "token": "v03-tok"}}}});
    let r = post(px.addr, "/", JSON_HEADER, send.to_string().as_bytes()).await;
    assert_eq!(r.json()["result"]["id"], "t9", "{}", r.text());
    let (path, secret) = callback_of(px.addr, &seen);
    let status = json!({"state": "TASK_STATE_WORKING", "timestamp": "2024-03-15T18:31:00Z"});
    let leak = json!([{"text": "secret of t8"}]);
    for body in [
        json!({"task": {"id": "t8", "contextId": "c8", "status": status}}),
        json!({"statusUpdate": {"taskId": "t8", "contextId": "c8", "status": status}}),
        json!({"status_update": {"task_id": "t8", "context_id": "c8", "status": status}}),
        json!({"artifactUpdate": {"taskId": "t8", "contextId": "c8",
            "artifact": {"artifactId": "a1", "parts": leak}}}),
        json!({"message": {"messageId": "m8", "role": "ROLE_AGENT", "taskId": "t8",
            "contextId": "c8", "parts": leak}}),
        // t9 named by the event, t8 by its status message.
        json!({"statusUpdate": {"taskId": "t9", "contextId": "c9", "status": {
            "state": "TASK_STATE_WORKING", "message": {"messageId": "m8",
                "role": "ROLE_AGENT", "taskId": "t8", "parts": leak}}}}),
    ] {
        let r = push_bearing(px.addr, &path, &secret, &body).await;
        assert!((400..500).contains(&r.status), "{body}: {}", r.text());
    }
    let good = json!({"statusUpdate": {"taskId": "t9", "contextId": "c9", "status": status}});
    let r = push_bearing(px.addr, &path, &secret, &good).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let got = hooks_until(&hook, |b| b["id"] == "t9").await;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        (got[0]["kind"].as_str(), got[0]["id"].as_str()),
        (Some("task"), Some("t9")),
        "{got:?}"
    );
    assert!(!format!("{got:?}").contains("t8"), "{got:?}");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Same version with `push.intercept_same_version` (finding 10): the
/// agent's bytes go on untranslated, and are checked all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_version_push_naming_another_task_is_refused() {
    let (agent, seen) = pushing_v10_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-push-other-task-same");
    let px = start_proxy(&agent.url(), Version::V10, &dir, |c| {
        c.push.intercept_same_version = true
    });
    let (path, secret) = register_hook(&px, &hook, &seen, "t9").await;
    let status = json!({"state": "TASK_STATE_WORKING"});
    for body in [
        json!({"statusUpdate": {"taskId": "t8", "contextId": "c8", "status": status}}),
        json!({"task": {"id": "t8", "contextId": "c8", "status": status}}),
        json!({"jsonrpc": "2.0", "result": {"task": {"id": "t8", "status": status}}}),
    ] {
        let r = push_bearing(px.addr, &path, &secret, &body).await;
        assert!((400..500).contains(&r.status), "{body}: {}", r.text());
    }
    let good = json!({"statusUpdate": {"taskId": "t9", "contextId": "c9", "status": status}});
    let r = push_bearing(px.addr, &path, &secret, &good).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let got = hooks_until(&hook, |b| b["statusUpdate"]["taskId"] == "t9").await;
    assert_eq!(got, vec![good]);
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
