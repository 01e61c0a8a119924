//! REST (HTTP+JSON) across versions, end to end on 127.0.0.1: a v0.3 REST
//! client to a v1.0 REST agent and back, every operation; the fake upstream
//! records the translated request, the raw client sees the translated answer.

mod support;

use std::sync::Arc;

use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;
use tokio::sync::Semaphore;

fn proxy_for(upstream: &str, version: Version) -> RunningProxy {
    proxy::start(config_for(upstream, version)).unwrap()
}

struct Case {
    /// The client's request.
    method: &'static str,
    path: &'static str,
    body: &'static str,
    /// What the upstream must receive.
    up_method: &'static str,
    up_target: &'static str,
    up_body: Option<Value>,
    /// The upstream's answer.
    reply_status: u16,
    reply: &'static str,
    /// What the client must get.
    status: u16,
    answer: Value,
}

async fn run(upstream: Version, c: Case) {
    let reply = Reply::json(c.reply_status, c.reply);
    let up = FakeUpstream::start(move |_| reply.clone()).await;
    let px = proxy_for(&up.url(), upstream);
    let headers: &[(&str, &str)] = match upstream {
        // The client speaks the other version.
        Version::V03 => JSON_V10,
        Version::V10 => JSON_HEADER,
    };
    let r = send(
        px.addr,
        &request(c.method, c.path, headers, c.body.as_bytes()),
    )
    .await;
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{} {}: {calls:?}", c.method, c.path);
    let got = &calls[0];
    assert_eq!(
        (got.method.as_str(), got.target.as_str()),
        (c.up_method, c.up_target),
        "{} {}",
        c.method,
        c.path
    );
    assert_eq!(got.header("a2a-version"), Some(upstream.as_str()));
    match &c.up_body {
        Some(want) => {
            let sent: Value = serde_json::from_slice(&got.body).unwrap_or_else(|e| {
                panic!("{}: {e}: {:?}", c.path, String::from_utf8_lossy(&got.body))
            });
            assert_eq!(&sent, want, "{} {}", c.method, c.path);
        }
        None => assert!(got.body.is_empty(), "{}: {:?}", c.path, got.body),
    }
    assert_eq!(r.status, c.status, "{} {}: {}", c.method, c.path, r.text());
    assert_eq!(r.json(), c.answer, "{} {}", c.method, c.path);
}

const TASK_V10: &str = r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}"#;
const TASK_V03: &str = r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}"#;

fn task_v10() -> Value {
    serde_json::from_str(TASK_V10).unwrap()
}

const PUSH_V10: &str = r#"{"taskId":"t1","id":"c1","url":"https://cb.example/x"}"#;
const PUSH_V03: &str = r#"{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://cb.example/x"}}"#;

fn j(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_rest_client_to_v10_rest_agent_every_operation() {
    let cases = vec![
        Case {
            method: "POST",
            path: "/v1/message:send",
            body: r#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}"#,
            up_method: "POST",
            up_target: "/message:send",
            // No `configuration`: proto3 `blocking` is false, return at once.
            up_body: Some(
                json!({"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}),
            ),
            reply_status: 200,
            reply: r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}}"#,
            status: 200,
            answer: json!({"task": j(TASK_V03)}),
        },
        Case {
            method: "GET",
            path: "/v1/tasks/t1?historyLength=2",
            body: "",
            up_method: "GET",
            up_target: "/tasks/t1?historyLength=2",
            up_body: None,
            reply_status: 200,
            reply: TASK_V10,
            status: 200,
            answer: j(TASK_V03),
        },
        Case {
            method: "POST",
            path: "/v1/tasks/t1:cancel",
            body: r#"{"name":"tasks/t1"}"#,
            up_method: "POST",
            up_target: "/tasks/t1:cancel",
            up_body: Some(json!({"id":"t1"})),
            reply_status: 200,
            reply: TASK_V10,
            status: 200,
            answer: j(TASK_V03),
        },
        Case {
            method: "POST",
            path: "/v1/tasks/t1/pushNotificationConfigs",
            body: PUSH_V03,
            up_method: "POST",
            up_target: "/tasks/t1/pushNotificationConfigs",
            up_body: Some(j(PUSH_V10)),
            reply_status: 200,
            reply: PUSH_V10,
            status: 200,
            answer: j(PUSH_V03),
        },
        Case {
            method: "GET",
            path: "/v1/tasks/t1/pushNotificationConfigs/c1",
            body: "",
            up_method: "GET",
            up_target: "/tasks/t1/pushNotificationConfigs/c1",
            up_body: None,
            reply_status: 200,
            reply: PUSH_V10,
            status: 200,
            answer: j(PUSH_V03),
        },
        Case {
            method: "GET",
            path: "/v1/tasks/t1/pushNotificationConfigs",
            body: "",
            up_method: "GET",
            up_target: "/tasks/t1/pushNotificationConfigs",
            up_body: None,
            reply_status: 200,
            reply: r#"{"configs":[{"taskId":"t1","id":"c1","url":"https://cb.example/x"}]}"#,
            status: 200,
            answer: json!({"configs":[j(PUSH_V03)]}),
        },
        Case {
            method: "DELETE",
            path: "/v1/tasks/t1/pushNotificationConfigs/c1",
            body: "",
            up_method: "DELETE",
            up_target: "/tasks/t1/pushNotificationConfigs/c1",
            up_body: None,
            reply_status: 200,
            reply: "{}",
            status: 200,
            answer: json!({}),
        },
        Case {
            method: "GET",
            path: "/v1/tasks/nope",
            body: "",
            up_method: "GET",
            up_target: "/tasks/nope",
            up_body: None,
            reply_status: 404,
            reply: r#"{"error":{"code":404,"status":"NOT_FOUND","message":"task nope not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#,
            status: 404,
            answer: json!({"code":-32001,"message":"task nope not found"}),
        },
        // A v1.0 400 covers several v0.3 statuses: the error's reason
        // names the v0.3 one (409 for a task that cannot be canceled).
        Case {
            method: "POST",
            path: "/v1/tasks/t9:cancel",
            body: "",
            up_method: "POST",
            up_target: "/tasks/t9:cancel",
            up_body: Some(json!({"id":"t9"})),
            reply_status: 400,
            reply: r#"{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}"#,
            status: 409,
            answer: json!({"code":-32002,"message":"Task cannot be canceled"}),
        },
    ];
    for c in cases {
        run(Version::V10, c).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_rest_client_to_v03_rest_agent_every_operation() {
    let cases = vec![
        Case {
            method: "POST",
            path: "/message:send",
            body: r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
            up_method: "POST",
            up_target: "/v1/message:send",
            // An absent `blocking` is blocking for a2a-python 0.3 agents.
            up_body: Some(
                json!({"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]},"configuration":{"blocking":true}}),
            ),
            reply_status: 200,
            reply: r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}}"#,
            status: 200,
            answer: json!({"task": task_v10()}),
        },
        Case {
            method: "GET",
            path: "/tenant-a/tasks/t1?historyLength=2",
            body: "",
            up_method: "GET",
            up_target: "/v1/tasks/t1?historyLength=2",
            up_body: None,
            reply_status: 200,
            reply: TASK_V03,
            status: 200,
            answer: task_v10(),
        },
        Case {
            method: "POST",
            path: "/tasks/t1:cancel",
            body: "{}",
            up_method: "POST",
            up_target: "/v1/tasks/t1:cancel",
            up_body: Some(json!({"name":"tasks/t1"})),
            reply_status: 200,
            reply: TASK_V03,
            status: 200,
            answer: task_v10(),
        },
        Case {
            method: "POST",
            path: "/tasks/t1/pushNotificationConfigs",
            body: r#"{"id":"c1","url":"https://cb.example/x"}"#,
            up_method: "POST",
            up_target: "/v1/tasks/t1/pushNotificationConfigs",
            // The request message a2a-python 0.3 reads (MAPPING-FACTS 114).
            up_body: Some(json!({"parent": "tasks/t1", "configId": "c1", "config": j(PUSH_V03)})),
            reply_status: 200,
            reply: PUSH_V03,
            status: 200,
            answer: j(PUSH_V10),
        },
        Case {
            method: "GET",
            path: "/tasks/t1/pushNotificationConfigs/c1",
            body: "",
            up_method: "GET",
            up_target: "/v1/tasks/t1/pushNotificationConfigs/c1",
            up_body: None,
            reply_status: 200,
            reply: PUSH_V03,
            status: 200,
            answer: j(PUSH_V10),
        },
        Case {
            method: "GET",
            path: "/tasks/t1/pushNotificationConfigs",
            body: "",
            up_method: "GET",
            up_target: "/v1/tasks/t1/pushNotificationConfigs",
            up_body: None,
            reply_status: 200,
            reply: r#"{"configs":[{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://cb.example/x"}}]}"#,
            status: 200,
            answer: json!({"configs":[j(PUSH_V10)]}),
        },
        Case {
            method: "POST",
            path: "/tasks/t9:cancel",
            body: "",
            up_method: "POST",
            up_target: "/v1/tasks/t9:cancel",
            up_body: Some(json!({"name":"tasks/t9"})),
            reply_status: 409,
            reply: r#"{"message":"Task cannot be canceled"}"#,
            status: 400,
            answer: json!({"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task cannot be canceled","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}),
        },
        Case {
            method: "DELETE",
            path: "/tasks/t1/pushNotificationConfigs/c1",
            body: "",
            up_method: "DELETE",
            up_target: "/v1/tasks/t1/pushNotificationConfigs/c1",
            up_body: None,
            reply_status: 200,
            reply: "{}",
            status: 200,
            answer: json!({}),
        },
        Case {
            method: "GET",
            path: "/tasks/nope",
            body: "",
            up_method: "GET",
            up_target: "/v1/tasks/nope",
            up_body: None,
            reply_status: 404,
            reply: r#"{"code":-32001,"message":"task nope not found"}"#,
            status: 404,
            answer: json!({"error":{"code":404,"status":"NOT_FOUND","message":"task nope not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}),
        },
    ];
    for c in cases {
        run(Version::V03, c).await;
    }
}

/// Opens an SSE stream and collects `n` of its `data` values, granting
/// the next upstream event after each.
async fn events(addr: std::net::SocketAddr, raw: &[u8], gate: &Semaphore, n: usize) -> Vec<Value> {
    let mut s = open(addr, raw).await;
    assert_eq!(s.status, 200);
    assert!(s.headers["content-type"].starts_with("text/event-stream"));
    s.events(gate, n).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_rest_stream_from_v03_rest_agent_event_by_event() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let evs: Vec<String> = vec![
        r#"data: {"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}"#.to_string() + "\n\n",
        ": keep-alive\n\n".to_string() + r#"data: {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"final":false}}"# + "\n\n",
        r#"data: {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}"#.to_string() + "\n\n",
    ];
    // Resubscribing, a v0.3 agent starts with updates; its REST GetTask
    // answers the task itself.
    let sub: Vec<String> = vec![
        r#"data: {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"final":true}}"#.to_string() + "\n\n",
    ];
    let up = FakeUpstream::start(move |r| match r.target.as_str() {
        "/v1/tasks/t1" => Reply::json(
            200,
            r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}"#,
        ),
        "/v1/tasks/t1:subscribe" => Reply::Sse {
            events: sub.clone(),
            gate: g.clone(),
        },
        _ => Reply::Sse {
            events: evs.clone(),
            gate: g.clone(),
        },
    })
    .await;
    let px = proxy_for(&up.url(), Version::V03);
    let body = br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}"#;
    let raw = request("POST", "/message:stream", &[("A2A-Version", "1.0")], body);
    let got = events(px.addr, &raw, &gate, 3).await;
    assert_eq!(
        got[0],
        json!({"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}})
    );
    assert_eq!(
        got[1],
        json!({"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}})
    );
    assert_eq!(
        got[2],
        json!({"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}})
    );
    let call = &up.calls()[0];
    assert_eq!(
        (call.method.as_str(), call.target.as_str()),
        ("POST", "/v1/message:stream")
    );
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["message"]["content"][0]["text"], "go");
    // The stream's events went into the ListTasks index: the task is
    // listed, as the agent's REST GetTask has it now.
    let r = get(px.addr, "/tasks", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let listed = r.json();
    assert_eq!(listed["tasks"][0]["id"], "t1", "{listed}");
    assert_eq!(
        listed["tasks"][0]["status"]["state"], "TASK_STATE_WORKING",
        "{listed}"
    );
    let asked = &up.calls()[1];
    assert_eq!(
        (asked.method.as_str(), asked.target.as_str()),
        ("GET", "/v1/tasks/t1")
    );

    // Subscribe by POST (v1.0 spec text) goes to the v0.3 GET; the v1.0
    // stream starts with the Task (fetched by the proxy), then the updates.
    let raw = request(
        "POST",
        "/tasks/t1:subscribe",
        &[("A2A-Version", "1.0")],
        b"{}",
    );
    let got = events(px.addr, &raw, &gate, 2).await;
    assert_eq!(
        got[0],
        json!({"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}})
    );
    assert_eq!(
        got[1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    // (calls[1] is the list's GetTask.)
    let calls = up.calls();
    assert_eq!(
        (calls[2].method.as_str(), calls[2].target.as_str()),
        ("GET", "/v1/tasks/t1")
    );
    assert_eq!(
        (calls[3].method.as_str(), calls[3].target.as_str()),
        ("GET", "/v1/tasks/t1:subscribe")
    );
    assert!(calls[3].body.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_rest_subscribe_to_v10_rest_agent_event_by_event() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let evs: Vec<String> = vec![
        r#"data: {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-01-02T03:04:05.500Z"}}}"#.to_string() + "\n\n",
        r#"data: {"artifactUpdate":{"taskId":"t1","contextId":"c1","artifact":{"artifactId":"a1","parts":[{"text":"out"}]}}}"#.to_string() + "\n\n",
    ];
    let up = FakeUpstream::start(move |_| Reply::Sse {
        events: evs.clone(),
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Version::V10);
    let raw = request("GET", "/v1/tasks/t1:subscribe", &[], b"");
    let got = events(px.addr, &raw, &gate, 2).await;
    assert_eq!(got[0]["statusUpdate"]["taskId"], "t1");
    assert_eq!(
        got[0]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        got[0]["statusUpdate"]["status"]["timestamp"],
        "2025-01-02T03:04:05.500Z"
    );
    assert_eq!(got[1]["artifactUpdate"]["artifact"]["artifactId"], "a1");
    assert_eq!(
        got[1]["artifactUpdate"]["artifact"]["parts"][0]["text"],
        "out"
    );
    let call = &up.calls()[0];
    assert_eq!(
        (call.method.as_str(), call.target.as_str()),
        ("GET", "/tasks/t1:subscribe")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_made_rest_errors_are_in_the_clients_shape() {
    let up = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    // v1.0 client, v0.3 agent: ListTasks is answered locally; bad params
    // are a v1.0 REST INVALID_ARGUMENT.
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(px.addr, "/tasks?pageSize=0", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["code"], 400, "{v}");
    assert_eq!(v["error"]["status"], "INVALID_ARGUMENT", "{v}");
    assert!(up.calls().is_empty());
    // Malformed JSON.
    let r = post(
        px.addr,
        "/message:send",
        &[("A2A-Version", "1.0")],
        b"{nope",
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    assert_eq!(
        r.json()["error"]["status"],
        "INVALID_ARGUMENT",
        "{}",
        r.text()
    );
    // A bad query value.
    let r = get(
        px.addr,
        "/tasks/t1?historyLength=lots",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.text());
    // An unusable agent answer: 502, never its 200 over an error body.
    let r = get(px.addr, "/tasks/t1", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(
        r.json()["error"]["details"][0]["reason"],
        "INVALID_AGENT_RESPONSE"
    );
    assert!(
        up.calls().len() == 1,
        "only the last call reached the agent"
    );

    // v0.3 client, v1.0 agent: the bare v0.3 shape.
    let px = proxy_for(&up.url(), Version::V10);
    let r = post(px.addr, "/v1/message:send", &[], b"[1]").await;
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.json();
    assert_eq!(v["code"], -32600, "{v}");
    assert!(v["message"].is_string());
    // The agent down.
    let dead = format!("http://{}", support::free_local_addr().unwrap());
    let px = proxy_for(&dead, Version::V10);
    let r = get(px.addr, "/v1/tasks/t1", &[]).await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(r.json()["code"], -32603);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_card_both_ways() {
    let card03 = r#"{"protocolVersion":"0.3.0","name":"fake","description":"d","url":"http://agent.example/rest","preferredTransport":"HTTP+JSON","version":"1.0.0","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s1","name":"s","description":"sd","tags":["t"]}]}"#;
    let up = FakeUpstream::start(move |_| Reply::json(200, card03)).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(px.addr, "/extendedAgentCard", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["name"], "fake", "{v}");
    assert_eq!(v["skills"][0]["id"], "s1", "{v}");
    assert_eq!(
        v["supportedInterfaces"][0]["protocolBinding"], "HTTP+JSON",
        "{v}"
    );
    let call = &up.calls()[0];
    assert_eq!(
        (call.method.as_str(), call.target.as_str()),
        ("GET", "/v1/card")
    );

    // An interface this proxy fronts is stamped as on the public card: a
    // v1.0 client finds a 1.0 interface there (at the proxy).
    let here = Arc::new(std::sync::OnceLock::<String>::new());
    let h = here.clone();
    let up = FakeUpstream::start(move |_| {
        let url = h.get().cloned().unwrap_or_default();
        Reply::json(200, &card03.replace("http://agent.example/rest", &url))
    })
    .await;
    here.set(up.url()).unwrap();
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(px.addr, "/extendedAgentCard", &[("A2A-Version", "1.0")]).await;
    let v = r.json();
    let interfaces = v["supportedInterfaces"].as_array().unwrap();
    assert!(!interfaces.is_empty(), "{v}");
    for i in interfaces {
        assert_eq!(i["protocolVersion"], "1.0", "{v}");
        assert!(i["url"].as_str().unwrap().starts_with(&px.url()), "{v}");
    }

    let card10 = r#"{"name":"fake","description":"d","version":"1.0.0","supportedInterfaces":[{"url":"http://agent.example/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s1","name":"s","description":"sd","tags":["t"]}]}"#;
    let up = FakeUpstream::start(move |_| Reply::json(200, card10)).await;
    let px = proxy_for(&up.url(), Version::V10);
    let r = get(px.addr, "/v1/card", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["name"], "fake", "{v}");
    assert_eq!(v["protocolVersion"], "0.3.0", "{v}");
    assert!(
        !v.to_string().contains("agent.example"),
        "card points at the proxy: {v}"
    );
    assert_eq!(v["skills"][0]["tags"][0], "t", "{v}");
    let call = &up.calls()[0];
    assert_eq!(
        (call.method.as_str(), call.target.as_str()),
        ("GET", "/extendedAgentCard")
    );
}

/// An agent without the extended-card route answers a framework 404 (no
/// A2A error in it): the client learns the operation is unsupported, not
/// that a task is missing; a bare 404 on a task path still means the task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_404_is_a_missing_route_unless_the_path_names_a_task() {
    let up = FakeUpstream::start(|_| Reply::json(404, r#"{"detail":"Not Found"}"#)).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(px.addr, "/extendedAgentCard", &[("A2A-Version", "1.0")]).await;
    let v = r.json();
    assert_eq!(
        v["error"]["details"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{v}"
    );
    assert_ne!(r.status, 404, "{v}");
    let r = get(px.addr, "/tasks/t1", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(r.json()["error"]["details"][0]["reason"], "TASK_NOT_FOUND");

    let up = FakeUpstream::start(|_| {
        Reply::json(
            404,
            r#"{"error":{"code":404,"status":"NOT_FOUND","message":"Not Found"}}"#,
        )
    })
    .await;
    let px = proxy_for(&up.url(), Version::V10);
    let r = get(px.addr, "/v1/card", &[]).await;
    assert_eq!(r.json()["code"], -32004, "{}", r.text());
    let r = post(
        px.addr,
        "/v1/message:send",
        &[],
        br#"{"request":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]}}"#,
    )
    .await;
    assert_eq!(r.json()["code"], -32004, "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_headers_take_each_sides_spelling() {
    let reply = Reply::json(200, TASK_V03).with_header("X-A2A-Extensions", "urn:x:ext");
    let up = FakeUpstream::start(move |_| reply.clone()).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(
        px.addr,
        "/tasks/t1",
        &[("A2A-Version", "1.0"), ("A2A-Extensions", "urn:x:ext")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json(), task_v10());
    assert_eq!(r.header("a2a-extensions"), Some("urn:x:ext"));
    assert_eq!(r.header("x-a2a-extensions"), None);
    let call = &up.calls()[0];
    assert_eq!(call.header("x-a2a-extensions"), Some("urn:x:ext"));
    assert_eq!(call.header("a2a-extensions"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_rest_list_tasks_of_a_v03_agent_lists_tasks_seen() {
    // The v0.3 agent answers GET /v1/tasks/{id} with that task (ProtoJSON).
    let up = FakeUpstream::start(|r| {
        let id = r.target.trim_start_matches("/v1/tasks/").split('?').next().unwrap_or("").to_string();
        let n = id.trim_start_matches('t').to_string();
        Reply::json(
            200,
            &format!(
                r#"{{"id":"{id}","contextId":"c{n}","status":{{"state":"TASK_STATE_WORKING","timestamp":"2025-01-01T00:00:0{n}Z"}}}}"#
            ),
        )
    })
    .await;
    let px = proxy_for(&up.url(), Version::V03);
    let h = [("A2A-Version", "1.0")];
    for id in ["t1", "t2"] {
        let r = get(px.addr, &format!("/tasks/{id}"), &h).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let seen = up.calls().len();
    let r = get(px.addr, "/tasks?pageSize=1", &h).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["tasks"][0]["id"], "t2", "{v}");
    assert_eq!(v["tasks"][0]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(v["totalSize"], 2);
    let token = v["nextPageToken"].as_str().unwrap().to_string();
    let r = get(px.addr, &format!("/tasks?pageSize=1&pageToken={token}"), &h).await;
    assert_eq!(r.json()["tasks"][0]["id"], "t1", "{}", r.text());
    let r = get(px.addr, "/tasks?contextId=c1", &h).await;
    assert_eq!(r.json()["totalSize"], 1, "{}", r.text());
    // ListTasks itself never reaches the agent; each listed task is asked
    // for (t2, then t1, then c1's t1), nothing more.
    let calls = up.calls();
    let asked: Vec<&str> = calls[seen..].iter().map(|c| c.target.as_str()).collect();
    assert_eq!(
        asked,
        ["/v1/tasks/t2", "/v1/tasks/t1", "/v1/tasks/t1"],
        "{asked:?}"
    );
}

/// A v1.0 JSON POST of `body` to `target`, sent in chunks of `piece` bytes.
fn chunked_v10_post(target: &str, body: &str, piece: usize) -> Vec<u8> {
    let mut raw = format!(
        "POST {target} HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\n\
        Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    for piece in body.as_bytes().chunks(piece) {
        raw.push_str(&format!(
            "{:x}\r\n{}\r\n",
            piece.len(),
            std::str::from_utf8(piece).unwrap()
        ));
    }
    raw.push_str("0\r\n\r\n");
    raw.into_bytes()
}

/// A cross-version REST body is translated whole whatever its size or
/// framing: 200 KiB sent chunked reaches the v0.3 agent translated; past
/// `limits.max_body_bytes` it is 413 in the client's shape and the agent
/// is not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_and_chunked_bodies_are_translated_up_to_the_limit() {
    let task = r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}"#;
    let up = FakeUpstream::start(move |_| Reply::json(200, &format!(r#"{{"task":{task}}}"#))).await;
    let addr = support::free_local_addr().unwrap();
    let mut config = Config::new(addr, &up.url()).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    config.limits.max_body_bytes = 300 * 1024;
    let px = proxy::start(config).unwrap();
    let message = |text: &str| {
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}})
            .to_string()
    };
    let chunked = |body: &str| chunked_v10_post("/message:send", body, 16 * 1024);
    let big = "x".repeat(200 * 1024);
    let r = send(px.addr, &chunked(&message(&big))).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let calls = up.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].target, "/v1/message:send");
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(
        sent["message"]["content"][0]["text"].as_str().map(str::len),
        Some(big.len())
    );

    let too_big = "y".repeat(400 * 1024);
    let r = send(px.addr, &chunked(&message(&too_big))).await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.json()["error"]["message"].is_string(), "{}", r.text());
    assert_eq!(
        up.calls().len(),
        1,
        "the agent was called for an oversize body"
    );
}

/// All of one SSE response, to its end.
async fn whole_stream(addr: std::net::SocketAddr, raw: &[u8]) -> String {
    let mut s = open(addr, raw).await;
    assert_eq!(s.status, 200);
    s.rest().await
}

/// A REST stream that fails midway ends with an `event: error` frame holding
/// the REST error body in the client's version; an agent's own mid-stream
/// error event (a2a-python 1.x) is translated like its error answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_streams_end_with_error_events_in_the_clients_shape() {
    // A v0.3 agent that stalls after its first event: the read timeout.
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let stalled = FakeUpstream::start(move |_| Reply::Sse {
        events: vec![
            r#"data: {"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_SUBMITTED"}}}"#.to_string() + "\n\n",
            "data: never\n\n".to_string(),
        ],
        gate: g.clone(),
    })
    .await;
    let addr = support::free_local_addr().unwrap();
    let mut config = Config::new(addr, &stalled.url()).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    config.limits.read_timeout = std::time::Duration::from_millis(300);
    let px = proxy::start(config).unwrap();
    let body = br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}"#;
    let raw = request("POST", "/message:stream", &[("A2A-Version", "1.0")], body);
    let text = whole_stream(px.addr, &raw).await;
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert_eq!(frames.len(), 2, "{text:?}");
    assert!(frames[0].starts_with("data: {\"task\""), "{text:?}");
    let last = frames[1]
        .strip_prefix("event: error\ndata: ")
        .unwrap_or_else(|| panic!("{text:?}"));
    let v: Value = serde_json::from_str(last).unwrap();
    assert_eq!(v["error"]["status"], "DEADLINE_EXCEEDED", "{v}");
    assert!(v["error"]["details"][0]["reason"].is_string(), "{v}");
    drop(px);

    // A v1.0 agent's `event: error` for a v0.3 client: its code, v0.3 shape.
    let gate = Arc::new(Semaphore::new(8));
    let g = gate.clone();
    let failing = FakeUpstream::start(move |_| Reply::Sse {
        events: vec![
            r#"data: {"task":{"id":"t2","contextId":"c2","status":{"state":"TASK_STATE_WORKING"}}}"#.to_string() + "\n\n",
            "event: error\n".to_string()
                + r#"data: {"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#
                + "\n\n",
        ],
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&failing.url(), Version::V10);
    let body = br#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"go"}]}}"#;
    let raw = request("POST", "/v1/message:stream", &[], body);
    let text = whole_stream(px.addr, &raw).await;
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert_eq!(frames.len(), 2, "{text:?}");
    let (head, data) = frames[1].split_once("data: ").unwrap();
    assert_eq!(head, "event: error\n", "{text:?}");
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["code"], -32001, "{v}");
    assert_eq!(v["message"], "Task not found", "{v}");
}

/// A same-version REST stream whose message is large and sent chunked
/// reaches the agent byte for byte (with a length) and its events come
/// back as they are, on the proxy's own streaming call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_chunked_same_version_stream_passes_through() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let evs: Vec<String> = vec![
        r#"data: {"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}"#
            .to_string()
            + "\n\n",
        r#"data: {"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}"#.to_string() + "\n\n",
    ];
    let up = FakeUpstream::start(move |_| Reply::Sse {
        events: evs.clone(),
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Version::V10);
    let big = "z".repeat(150 * 1024);
    let body = json!({"message": {"messageId": "m1", "role": "ROLE_USER",
        "parts": [{"text": big}]}})
    .to_string();
    let raw = chunked_v10_post("/message:stream", &body, 10 * 1024);
    let got = events(px.addr, &raw, &gate, 2).await;
    assert_eq!(got[0]["task"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(
        got[1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let call = &up.calls()[0];
    assert_eq!(call.target, "/message:stream");
    assert_eq!(call.body, body.as_bytes());
    assert_eq!(
        call.header("content-length"),
        Some(body.len().to_string().as_str())
    );
}

/// A v1.0 REST subscribe to a task a v0.3 agent does not know is 404
/// TaskNotFound, answered from the proxy's GetTask; no stream is opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_rest_subscribe_to_an_unknown_v03_task_is_not_found() {
    let up =
        FakeUpstream::start(|_| Reply::json(404, r#"{"code":-32001,"message":"Task not found"}"#))
            .await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = post(
        px.addr,
        "/tasks/nope:subscribe",
        &[("A2A-Version", "1.0")],
        b"",
    )
    .await;
    assert_eq!(r.status, 404, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND", "{v}");
    let targets: Vec<String> = up.calls().iter().map(|c| c.target.clone()).collect();
    assert_eq!(targets, ["/v1/tasks/nope"]);
}

/// A v0.3 REST subscribe that the v1.0 agent refuses before any event
/// (unknown task: 404 google.rpc.Status; finished task: 400
/// UNSUPPORTED_OPERATION) reaches the client as the v0.3 REST error body
/// with a2a-python 0.3's status for it (404, 501), which is where a2a-python 0.3's REST client
/// reads errors.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_rest_subscribe_refused_by_the_v10_agent_is_a_v03_error() {
    let up = FakeUpstream::start(|req| {
        if req.target.contains("/nope:") {
            Reply::json(
                404,
                r#"{"error":{"code":404,"status":"NOT_FOUND","message":"Task not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#,
            )
        } else {
            Reply::json(
                400,
                r#"{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"Task t1 is in terminal state","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}"#,
            )
        }
    })
    .await;
    let px = proxy_for(&up.url(), Version::V10);
    for (path, status, code) in [
        ("/v1/tasks/nope:subscribe", 404, -32001),
        ("/v1/tasks/t1:subscribe", 501, -32004),
    ] {
        let r = post(px.addr, path, &[], b"").await;
        assert_eq!(r.status, status, "{path}: {}", r.text());
        let v = r.json();
        assert_eq!(v["code"], code, "{path}: {v}");
        assert!(v["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
        assert!(v.get("error").is_none(), "v0.3 shape: {v}");
    }
    let targets: Vec<String> = up.calls().iter().map(|c| c.target.clone()).collect();
    assert_eq!(targets, ["/tasks/nope:subscribe", "/tasks/t1:subscribe"]);
}

/// EDGE-CASES 30 over HTTP+JSON: both spellings read and merged, one
/// header in each side's spelling (as over JSON-RPC, `proxy.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_headers_of_both_spellings_are_merged() {
    let reply = Reply::json(200, TASK_V03)
        .with_header("X-A2A-Extensions", "urn:x")
        .with_header("A2A-Extensions", "urn:y");
    let up = FakeUpstream::start(move |_| reply.clone()).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(
        px.addr,
        "/tasks/t1",
        &[
            ("A2A-Version", "1.0"),
            ("A2A-Extensions", "urn:a"),
            ("X-A2A-Extensions", "urn:b"),
        ],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let call = &up.calls()[0];
    let sent = call.header("x-a2a-extensions").unwrap_or_default();
    assert!(sent.contains("urn:a") && sent.contains("urn:b"), "{sent:?}");
    assert_eq!(call.header("a2a-extensions"), None);
    let back = r.header("a2a-extensions").unwrap_or_default();
    assert!(back.contains("urn:x") && back.contains("urn:y"), "{back:?}");
    assert_eq!(r.header("x-a2a-extensions"), None);
}
