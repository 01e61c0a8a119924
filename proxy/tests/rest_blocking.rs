//! A v0.3 send that states no `blocking`, per binding (issue #22 item 5),
//! end to end on 127.0.0.1: a raw v0.3 client -> the proxy -> a fake v1.0
//! agent that returns at once (a submitted task) when asked
//! `returnImmediately: true` and otherwise answers the completed task. On
//! HTTP+JSON the v0.3 body is ProtoJSON, where proto3 `blocking` is false
//! when absent (a2a-python 0.3's REST server returns at once): the agent
//! must be asked `returnImmediately: true`. On JSON-RPC an absent
//! `blocking` blocks (every v0.3 SDK): the agent must not be.

mod support;

use proxy::version::Version;
use serde_json::{json, Value};
use support::*;

const MESSAGE_V03: &str = r#"{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}"#;

/// The fake v1.0 agent's task, submitted or completed.
fn task(state: &str) -> Value {
    json!({"id": "t1", "contextId": "c1", "status": {"state": state}})
}

/// Starts the fake v1.0 agent (REST and JSON-RPC) and the proxy before it.
async fn setup() -> (FakeUpstream, proxy::RunningProxy) {
    let up = FakeUpstream::start(|r| {
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let (config, rpc) = match r.target.as_str() {
            "/message:send" => (&body["configuration"], None),
            _ => (&body["params"]["configuration"], Some(body["id"].clone())),
        };
        let state = if config["returnImmediately"] == true {
            "TASK_STATE_SUBMITTED"
        } else {
            "TASK_STATE_COMPLETED"
        };
        let result = json!({ "task": task(state) });
        let out = match rpc {
            None => result,
            Some(id) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        };
        Reply::json(200, &out.to_string())
    })
    .await;
    let px = proxy::start(config_for(&up.url(), Version::V10)).unwrap();
    (up, px)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_send_without_blocking_returns_at_once_on_rest_and_blocks_on_jsonrpc() {
    let (up, px) = setup().await;
    // (v0.3 REST body's `configuration`, what the v1.0 agent must get, the state answered)
    let cases = [
        (None, None::<Value>, "TASK_STATE_SUBMITTED"),
        (Some("{}"), None, "TASK_STATE_SUBMITTED"),
        (
            Some(r#"{"acceptedOutputModes":["text/plain"]}"#),
            Some(json!(["text/plain"])),
            "TASK_STATE_SUBMITTED",
        ),
        (Some(r#"{"blocking":true}"#), None, "TASK_STATE_COMPLETED"),
    ];
    for (i, (configuration, modes, state)) in cases.into_iter().enumerate() {
        let body = match configuration {
            None => format!(r#"{{"message":{MESSAGE_V03}}}"#),
            Some(c) => format!(r#"{{"message":{MESSAGE_V03},"configuration":{c}}}"#),
        };
        let r = post(px.addr, "/v1/message:send", JSON_HEADER, body.as_bytes()).await;
        assert_eq!(r.status, 200, "{configuration:?}: {}", r.text());
        assert_eq!(
            r.json(),
            json!({ "task": task(state) }),
            "{configuration:?}: the v0.3 client's answer"
        );
        let calls = up.calls();
        assert_eq!(calls.len(), i + 1, "{calls:?}");
        let sent: Value = serde_json::from_slice(&calls[i].body).unwrap();
        let want = match (state, &modes) {
            ("TASK_STATE_COMPLETED", _) => Value::Null,
            (_, Some(m)) => json!({"acceptedOutputModes": m, "returnImmediately": true}),
            (_, None) => json!({"returnImmediately": true}),
        };
        assert_eq!(
            sent["configuration"], want,
            "{configuration:?}: what the v1.0 agent got: {sent}"
        );
    }

    // The same send on JSON-RPC: an absent `blocking` blocks there.
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    let r = post(px.addr, "/", JSON_HEADER, body.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["result"]["status"]["state"], "completed", "{v}");
    let calls = up.calls();
    assert_eq!(calls.len(), 5, "{calls:?}");
    let sent: Value = serde_json::from_slice(&calls[4].body).unwrap();
    assert!(
        sent["params"]["configuration"]["returnImmediately"].is_null(),
        "what the v1.0 agent got: {sent}"
    );
}
