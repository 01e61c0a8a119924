//! Paths, upgrades and log lines a client shapes (issue #41, items 5-8):
//! - dot segments (`..`, `%2e%2e`, next to `%2f` or `\`) are resolved
//!   before routing; a path they take to another agent, or above the root,
//!   is refused, and the agent gets the resolved path;
//! - request-derived values never forge a log line;
//! - protocol upgrades (WebSocket) are refused unless the agent allows them;
//! - REST ids are encoded once on their way to the agent, and an id that
//!   would be a dot segment is refused.

use std::time::Duration;

use proxy::config::{Config, RawConfig};
use proxy::version::Version;
use serde_json::{json, Value};

use crate::support::*;

/// A fake agent answering every request with 200 `{}` (JSON-RPC: a task).
async fn recorder() -> FakeUpstream {
    FakeUpstream::start(|r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match req.get("id") {
            Some(id) => Reply::rpc_result(
                id,
                &json!({"kind": "task", "id": "t1", "contextId": "c1",
                    "status": {"state": "submitted"}}),
            ),
            None => Reply::json(200, "{}"),
        }
    })
    .await
}

fn two_agents(a: &FakeUpstream, b: &FakeUpstream) -> proxy::RunningProxy {
    let toml = format!(
        "listen = \"{}\"\nthreads = 1\n[push]\nenabled = false\n\
         [[agents]]\nname = \"a\"\nprefix = \"/a\"\n[agents.upstream]\nurl = \"{}\"\nversion = \"0.3\"\n\
         [[agents]]\nname = \"b\"\nprefix = \"/agentB\"\n[agents.upstream]\nurl = \"{}\"\nversion = \"0.3\"\n",
        free_local_addr().unwrap(),
        a.url(),
        b.url()
    );
    let config = Config::resolve(RawConfig::from_toml(&toml, "agents.toml").unwrap()).unwrap();
    proxy::start(config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dot_segments_never_cross_from_one_agent_to_another() {
    let (a, b) = (recorder().await, recorder().await);
    let px = two_agents(&a, &b);
    for path in [
        "/a/../agentB/x",
        "/a/%2e%2e/agentB/x",
        "/a/%2E%2e/agentB/x",
        "/a/.%2e/agentB/.well-known/agent-card.json",
        "/a/..%2fagentB/x",
        "/a/%2e%2e%2FagentB/x",
        "/a/x/../../agentB/x",
        "/a/../../x",
        "/a/..",
    ] {
        for method in ["GET", "POST"] {
            let r = send(px.addr, &request(method, path, JSON_V03, b"{}")).await;
            assert_eq!(r.status, 400, "{method} {path}: {}", r.text());
            assert_eq!(r.json()["error"]["code"], "bad_path", "{path}");
        }
    }
    assert!(
        a.calls().is_empty() && b.calls().is_empty(),
        "an agent was called"
    );
    // Dot segments that stay within the agent: resolved, then served.
    let r = get(px.addr, "/a/x/../y/./z", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let targets: Vec<String> = a.calls().iter().map(|c| c.target.clone()).collect();
    assert_eq!(targets.len(), 1, "{targets:?}");
    assert!(!targets[0].contains(".."), "{targets:?}");
    assert!(targets[0].ends_with("/y/z"), "{targets:?}");
    assert!(b.calls().is_empty());
    drop(px);

    // One agent on every path: a path above the root is refused.
    let px = proxy::start(config_for(&a.url(), Version::V03)).unwrap();
    for path in ["/..", "/%2e%2e/x", "/x/../../y"] {
        let r = get(px.addr, path, &[]).await;
        assert_eq!(r.status, 400, "{path}: {}", r.text());
    }
    assert_eq!(a.calls().len(), 1, "the agent was called again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgrades_are_refused_unless_the_agent_allows_them() {
    let agent = recorder().await;
    let px = proxy::start(config_for(&agent.url(), Version::V03)).unwrap();
    let ws: &[(&str, &str)] = &[
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("Sec-WebSocket-Version", "13"),
    ];
    for path in ["/ws", "/", "/v1/message:stream"] {
        let r = get(px.addr, path, ws).await;
        assert_eq!(r.status, 400, "{path}: {}", r.text());
        assert_eq!(r.json()["error"]["code"], "upgrade_refused");
    }
    let r = get(px.addr, "/x", &[("Upgrade", "h2c, websocket")]).await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert!(agent.calls().is_empty(), "the agent was called");
    // h2c (curl --http2 on http://) is served as HTTP/1.1.
    let r = get(
        px.addr,
        "/x",
        &[("Upgrade", "h2c"), ("Connection", "Upgrade")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(agent.calls().len(), 1);
    drop(px);

    let mut config = config_for(&agent.url(), Version::V03);
    config.allow_upgrade = true;
    let px = proxy::start(config).unwrap();
    let r = get(px.addr, "/ws", ws).await;
    assert_ne!(r.status, 400, "{}", r.text());
    let calls = agent.calls();
    assert_eq!(
        calls.len(),
        2,
        "the allowed upgrade did not reach the agent"
    );
    assert_eq!(calls[1].header("upgrade"), Some("websocket"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_ids_are_encoded_once_and_dot_ids_refused() {
    let agent = FakeUpstream::start(|_| {
        Reply::json(
            200,
            r#"{"id":"x","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}"#,
        )
    })
    .await;
    let px = proxy::start(config_for(&agent.url(), Version::V10)).unwrap();
    // A v0.3 REST client of a v1.0 agent: the id as the agent must get it.
    for (path, sent) in [
        ("/v1/tasks/a%20b", "/tasks/a%20b"),
        ("/v1/tasks/a%2Fb", "/tasks/a%2Fb"),
        ("/v1/tasks/caf%C3%A9", "/tasks/caf%C3%A9"),
        ("/v1/tasks/a.b", "/tasks/a.b"),
    ] {
        let before = agent.calls().len();
        let r = get(px.addr, path, JSON_V03).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text());
        let calls = agent.calls();
        assert_eq!(calls.len(), before + 1, "{path}");
        assert_eq!(calls[before].target, sent, "{path}");
    }
    let before = agent.calls().len();
    for path in [
        "/v1/tasks/%2e%2e:cancel",
        "/v1/tasks/.:cancel",
        "/v1/tasks/%2E:subscribe",
    ] {
        let r = post(px.addr, path, JSON_V03, b"{}").await;
        assert!(
            (400..500).contains(&r.status),
            "{path}: {} {}",
            r.status,
            r.text()
        );
    }
    assert_eq!(agent.calls().len(), before, "a dot id reached the agent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_value_never_forges_a_log_line() {
    let agent = recorder().await;
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let dir = fresh_dir("hostile-logline");
    let listen = free_local_addr().unwrap();
    let file = dir.with_extension("toml");
    std::fs::write(
        &file,
        format!(
            "listen = \"{listen}\"\nthreads = 1\n[upstream]\nurl = \"{}\"\nversion = \"0.3\"\n\
             [push]\ndata_dir = \"{}\"\nallow_hosts = [\"127.0.0.1\"]\n",
            agent.url(),
            dir.display()
        ),
    )
    .unwrap();
    let file_arg = file.display().to_string();
    let (child, rx) = crate::support::child::serve_logging(
        &["--config", &file_arg, "--log-format", "text"],
        "info",
    );
    // Killed however the test ends.
    let mut child = Binary(child);
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while health_within(listen, Duration::from_secs(1))
        .await
        .is_none()
    {
        if std::time::Instant::now() > end || child.0.try_wait().ok().flatten().is_some() {
            let said: Vec<String> = rx.try_iter().collect();
            panic!("the proxy did not start: {said:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let forged = "t1\r\n2026-12-07T00:00:00.000000Z  INFO proxy: FORGED \u{1b}[2J";
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "taskId": forged, "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": format!("{}/h", hook.url())}}}});
    let r = post(listen, "/", JSON_V10, body.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let lines = tokio::task::spawn_blocking(move || {
        crate::support::child::lines_until(&rx, Duration::from_secs(10), |l| {
            l.iter().any(|x| x.contains("push config intercepted"))
        })
    })
    .await
    .unwrap();
    drop(child);
    let logged = lines
        .iter()
        .find(|l| l.contains("push config intercepted"))
        .unwrap_or_else(|| panic!("no interception logged: {lines:?}"));
    assert!(logged.contains("t1\\r\\n2026"), "{logged}");
    assert!(
        !lines
            .iter()
            .any(|l| l.starts_with("2026-12-07T00:00:00.000000Z")),
        "a forged line: {lines:?}"
    );
    assert!(!lines.iter().any(|l| l.contains('\u{1b}')), "{lines:?}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&file);
}
