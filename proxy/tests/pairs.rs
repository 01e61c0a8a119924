//! Proxy scenarios under every pairing of client and agent versions (one
//! [`version_pairs!`] line per scenario, four tests each): whatever the
//! pairing, the agent receives its own version and the client its own, on
//! JSON-RPC and HTTP+JSON, unary calls, streams and errors; a same-version
//! pairing is passed through byte for byte.

#[macro_use]
mod support;

use std::sync::Arc;

use proxy::version::Version::{self, V03, V10};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;
use tokio::sync::Semaphore;
use translate::method::Method;

version_pairs! {
    jsonrpc_send_message,
    jsonrpc_stream,
    jsonrpc_task_not_found,
    rest_send_message,
}

fn proxy_for(agent: &FakeUpstream, version: Version) -> RunningProxy {
    proxy::start(config_for(&agent.url(), version)).unwrap()
}

fn header(v: Version) -> (&'static str, &'static str) {
    ("A2A-Version", v.as_str())
}

/// A user message saying "hi" in `v`'s JSON-RPC shape.
fn message(v: Version) -> Value {
    match v {
        V03 => json!({"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]}),
        V10 => json!({"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}),
    }
}

/// A JSON-RPC request of `method` in `v`.
fn rpc(v: Version, method: Method, params: Value) -> Vec<u8> {
    let name = method.name(v).unwrap();
    json!({"jsonrpc": "2.0", "id": 1, "method": name, "params": params})
        .to_string()
        .into_bytes()
}

/// A completed task t1 as `v`'s SendMessage result.
fn completed_result(v: Version) -> Value {
    match v {
        V03 => json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "completed"}}),
        V10 => json!({"task": {"id": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"}}}),
    }
}

/// The state of the task in a SendMessage result of `v`, checking the
/// result is in `v`'s shape.
fn result_state(v: Version, result: &Value) -> String {
    let state = match v {
        V03 => {
            assert_eq!(result["kind"], "task", "not a v0.3 result: {result}");
            &result["status"]["state"]
        }
        V10 => {
            assert!(result.get("kind").is_none(), "not a v1.0 result: {result}");
            &result["task"]["status"]["state"]
        }
    };
    state.as_str().unwrap_or_default().to_string()
}

fn completed(v: Version) -> &'static str {
    match v {
        V03 => "completed",
        V10 => "TASK_STATE_COMPLETED",
    }
}

/// The agent's request: its own method name, `A2A-Version` and message.
fn assert_agent_got(agent: &FakeUpstream, v: Version, method: Method) -> Value {
    let call = &agent.calls()[0];
    assert_eq!(call.header("a2a-version"), Some(v.as_str()));
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["method"], method.name(v).unwrap(), "{sent}");
    assert_eq!(sent["params"]["message"], message(v), "{sent}");
    sent
}

async fn jsonrpc_send_message(client: Version, agent: Version) {
    let answer = json!({"jsonrpc": "2.0", "id": 1, "result": completed_result(agent)});
    let answer_text = answer.to_string();
    let up = FakeUpstream::start(move |_| Reply::json(200, &answer_text)).await;
    let px = proxy_for(&up, agent);
    let req = rpc(
        client,
        Method::SendMessage,
        json!({"message": message(client)}),
    );
    let h = [("Content-Type", "application/json"), header(client)];
    let r = post(px.addr, "/", &h, &req).await;
    assert_eq!(r.status, 200, "{}", r.text());
    if client == agent {
        assert_eq!(up.calls()[0].body, req, "passed through as sent");
        assert_eq!(r.json(), answer, "answered as the agent said");
        return;
    }
    assert_agent_got(&up, agent, Method::SendMessage);
    let v = r.json();
    assert_eq!(v["id"], 1);
    assert_eq!(result_state(client, &v["result"]), completed(client));
}

async fn jsonrpc_stream(client: Version, agent: Version) {
    let event = match agent {
        V03 => json!({"kind": "status-update", "taskId": "t1", "contextId": "c1",
            "status": {"state": "completed"}, "final": true}),
        V10 => json!({"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED"}}}),
    };
    let frame = format!(
        "data: {}\n\n",
        json!({"jsonrpc": "2.0", "id": 1, "result": event})
    );
    let gate = Arc::new(Semaphore::new(0));
    let events = vec![frame.clone()];
    let up = FakeUpstream::start(move |_| Reply::Sse {
        events: events.clone(),
        gate: gate.clone(),
    })
    .await;
    let px = proxy_for(&up, agent);
    let req = rpc(
        client,
        Method::SendStreamingMessage,
        json!({"message": message(client)}),
    );
    let h = [
        ("Content-Type", "application/json"),
        ("Accept", "text/event-stream"),
        header(client),
    ];
    let mut s = open(px.addr, &request("POST", "/", &h, &req)).await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    if client == agent {
        assert_eq!(text, frame, "passed through as the agent sent it");
        return;
    }
    assert_agent_got(&up, agent, Method::SendStreamingMessage);
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .unwrap_or_else(|| panic!("no event in {text:?}"));
    let got: Value = serde_json::from_str(data.trim()).unwrap();
    let result = &got["result"];
    let state = match client {
        V03 => {
            assert_eq!(result["kind"], "status-update", "{got}");
            assert_eq!(result["final"], true, "{got}");
            &result["status"]["state"]
        }
        V10 => &result["statusUpdate"]["status"]["state"],
    };
    assert_eq!(state, completed(client), "{got}");
}

async fn jsonrpc_task_not_found(client: Version, agent: Version) {
    let answer = json!({"jsonrpc": "2.0", "id": 1,
        "error": {"code": -32001, "message": "task not found: t404"}});
    let answer_text = answer.to_string();
    let up = FakeUpstream::start(move |_| Reply::json(200, &answer_text)).await;
    let px = proxy_for(&up, agent);
    let req = rpc(client, Method::GetTask, json!({"id": "t404"}));
    let h = [("Content-Type", "application/json"), header(client)];
    let r = post(px.addr, "/", &h, &req).await;
    let v = r.json();
    let sent: Value = serde_json::from_slice(&up.calls()[0].body).unwrap();
    assert_eq!(sent["method"], Method::GetTask.name(agent).unwrap());
    assert_eq!(v["id"], 1, "{v}");
    assert_eq!(
        v["error"]["code"], -32001,
        "TaskNotFound in both versions: {v}"
    );
    assert!(v.get("result").is_none(), "{v}");
}

/// `v`'s HTTP+JSON SendMessage: its path and body.
fn rest_send(v: Version) -> (&'static str, Value) {
    match v {
        V03 => (
            "/v1/message:send",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                "content": [{"text": "hi"}]}}),
        ),
        V10 => (
            "/message:send",
            json!({"message": {"messageId": "m1", "role": "ROLE_USER",
                "parts": [{"text": "hi"}]}}),
        ),
    }
}

async fn rest_send_message(client: Version, agent: Version) {
    let answer = json!({"task": {"id": "t1", "contextId": "c1",
        "status": {"state": "TASK_STATE_COMPLETED"}}});
    let answer_text = answer.to_string();
    let up = FakeUpstream::start(move |_| Reply::json(200, &answer_text)).await;
    let px = proxy_for(&up, agent);
    let (path, body) = rest_send(client);
    let h = [("Content-Type", "application/json"), header(client)];
    let r = post(px.addr, path, &h, body.to_string().as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let call = &up.calls()[0];
    let (agent_path, agent_body) = rest_send(agent);
    assert_eq!(call.target, agent_path, "the agent's own REST path");
    assert_eq!(call.header("a2a-version"), Some(agent.as_str()));
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    let parts = if agent == V03 { "content" } else { "parts" };
    assert_eq!(
        sent["message"][parts], agent_body["message"][parts],
        "{sent}"
    );
    let v = r.json();
    assert_eq!(v["task"]["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(v["task"]["id"], "t1", "{v}");
}

/// A cross-version push-config call to an agent whose card says it has no
/// push notifications is PushNotificationNotSupported (-32003) in the
/// client's version, as a v1.0 agent answers, and the agent is not asked.
async fn push_configs_of_an_agent_without_push(client: Version, agent: Version) {
    let card = match agent {
        V03 => json!({"name": "a", "description": "d", "version": "1", "protocolVersion": "0.3.0",
            "url": "http://127.0.0.1:9/", "preferredTransport": "JSONRPC",
            "capabilities": {"pushNotifications": false}, "defaultInputModes": [],
            "defaultOutputModes": [], "skills": []}),
        V10 => json!({"name": "a", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/", "protocolBinding": "JSONRPC",
                "protocolVersion": "1.0"}],
            "capabilities": {"pushNotifications": false}, "defaultInputModes": [],
            "defaultOutputModes": [], "skills": []}),
    };
    let card = card.to_string();
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            Reply::json(200, &card)
        } else {
            Reply::json(200, r#"{"jsonrpc":"2.0","id":1,"result":[]}"#)
        }
    })
    .await;
    let px = proxy_for(&up, agent);
    let req = rpc(client, Method::ListPushConfigs, json!({"id": "t1"}));
    let h = [("Content-Type", "application/json"), header(client)];
    let v = post(px.addr, "/", &h, &req).await.json();
    if client == agent {
        assert_eq!(up.calls().len(), 1, "the agent's own to answer");
        return;
    }
    assert_eq!(v["error"]["code"], -32003, "{v}");
    let (path, h) = match client {
        V03 => ("/v1/tasks/t1/pushNotificationConfigs", [header(client)]),
        V10 => ("/tasks/t1/pushNotificationConfigs", [header(client)]),
    };
    let r = get(px.addr, path, &h).await;
    assert!(r.status >= 400, "{} {}", r.status, r.text());
    assert!(
        r.text().contains("32003") || r.text().contains("PUSH_NOTIFICATION_NOT_SUPPORTED"),
        "{}",
        r.text()
    );
    assert!(up.calls().is_empty(), "the agent is not asked");
}

version_pairs! {
    push_configs_of_an_agent_without_push,
}
