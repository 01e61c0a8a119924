//! End-to-end tests of the proxy on real 127.0.0.1 sockets: a fake upstream
//! agent, the in-process proxy, a raw HTTP/1.1 client.

mod support;

use std::sync::Arc;
use std::time::Duration;

use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::Value;
use support::*;
use tokio::sync::Semaphore;
use tokio::time::timeout;

const CARD_V03: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP/rpc","transport":"JSONRPC"},{"url":"http://UP/rest","transport":"HTTP+JSON"}],"capabilities":{"streaming":true},"skills":[]}"#;

const CARD_V10: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://UP/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

fn card_reply(card: &str, up: &str) -> Reply {
    Reply::json(200, &card.replace("UP", up))
}

/// A fake upstream that serves `card` and answers everything else with `f`.
async fn upstream_with_card(
    card: &'static str,
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    agent_with_card(move |me| card.replace("UP", me), f).await
}

fn proxy_for(
    upstream: &str,
    version: Option<Version>,
    tweak: impl FnOnce(&mut Config),
) -> RunningProxy {
    let addr = support::free_local_addr().unwrap();
    let mut config = Config::new(addr, upstream).unwrap();
    config.threads = 1;
    config.upstream_version = match version {
        Some(v) => UpstreamVersion::Fixed(v),
        None => UpstreamVersion::Auto,
    };
    tweak(&mut config);
    proxy::start(config).unwrap()
}

/// An address nothing listens on.
fn dead_upstream() -> String {
    format!("http://{}", support::free_local_addr().unwrap())
}

/// `v` is a v1.0 JSON-RPC error answer to `id`: its `code`, and the
/// `reason` of the ErrorInfo in its data.
fn assert_v10_error(v: &Value, id: impl Into<Value>, code: i64, reason: &str) {
    assert_eq!(v["id"], id.into(), "{v}");
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(v["error"]["data"][0]["reason"], reason, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_passthrough_is_byte_for_byte() {
    // Odd spacing, escapes and key order: any re-serialisation would show.
    let answer = "{ \"jsonrpc\":\"2.0\",  \"result\":{\"task\":{\"id\":\"t\\u0031\"}},\"id\":7 }\n";
    let up = upstream_with_card(CARD_V10, move |_| Reply::json(200, answer)).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let sent = b"{\"id\":7,  \"method\":\"SendMessage\",\"jsonrpc\":\"2.0\",\"params\":{\"message\":{\"messageId\":\"m\\u00e9\",\"parts\":[]}}}";
    let r = post(px.addr, "/rpc", JSON_V10, sent).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, answer.as_bytes());
    let calls = up.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].target, "/rpc");
    assert_eq!(calls[0].body, sent);
    assert_eq!(calls[0].header("a2a-version"), Some("1.0"));

    // v0.3 client, v0.3 upstream, a body over the 64 KiB prebuffer limit.
    let answer03 = "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"kind\":\"message\"}}";
    let up03 = upstream_with_card(CARD_V03, move |_| Reply::json(200, answer03)).await;
    let px03 = proxy_for(&up03.url(), Some(Version::V03), |_| {});
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"message/send\",\"params\":{{\"message\":{{\"kind\":\"message\",\"messageId\":\"m\",\"role\":\"user\",\"parts\":[{{\"kind\":\"text\",\"text\":\"{}\"}}]}}}}}}",
        "x".repeat(100_000)
    );
    let r = post(px03.addr, "/", JSON_HEADER, big.as_bytes()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, answer03.as_bytes());
    assert_eq!(up03.calls()[0].body, big.as_bytes());
    // Read whole to be routed, it goes whole: with its length.
    let length = big.len().to_string();
    assert_eq!(
        up03.calls()[0].header("content-length"),
        Some(length.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_passthrough_is_byte_for_byte() {
    let up = upstream_with_card(CARD_V10, |r| {
        let body = format!(
            "{{\"id\" : \"t1\", \"seen\":\"{} {}\"}}",
            r.method, r.target
        );
        Reply::json(200, &body).with_header("Content-Type", "application/a2a+json")
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let r = get(
        px.addr,
        "/acme/tasks/t1?historyLength=2",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.text(),
        "{\"id\" : \"t1\", \"seen\":\"GET /acme/tasks/t1?historyLength=2\"}"
    );
    // Tenant `v1` under a v1.0 header passes untouched too.
    let sent = b"{\"message\": {\"messageId\":\"m\"} }";
    let r = post(px.addr, "/v1/message:send", &[("A2A-Version", "1.0")], sent).await;
    assert_eq!(r.status, 200);
    let calls = up.calls();
    assert_eq!(calls[1].target, "/v1/message:send");
    assert_eq!(calls[1].body, sent);
    assert!(calls
        .iter()
        .all(|c| c.header("host") == Some(up.addr.to_string().as_str())));

    let up03 =
        upstream_with_card(CARD_V03, |_| Reply::json(200, "{\"task\":{\"id\":\"x\"}}")).await;
    let px03 = proxy_for(&up03.url(), Some(Version::V03), |_| {});
    let sent = b"{\"message\":{\"content\":[{\"text\":\"hi\"}]}}";
    let r = post(px03.addr, "/v1/message:send", &[], sent).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"{\"task\":{\"id\":\"x\"}}");
    assert_eq!(up03.calls()[0].body, sent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sse_events_arrive_one_by_one() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let events: Vec<String> = (1..=3)
        .map(|i| format!("data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"n\":{i}}}}}\n\n"))
        .collect();
    let evs = events.clone();
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: evs.clone(),
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}"#;
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("Accept", "text/event-stream")], body),
    )
    .await;
    assert_eq!(s.status, 200);
    assert_eq!(
        s.headers.get("content-type").map(String::as_str),
        Some("text/event-stream")
    );
    assert_eq!(
        s.headers.get("x-accel-buffering").map(String::as_str),
        Some("no")
    );
    assert_eq!(px.app.metrics.open_streams(), 1);
    let mut received = String::new();
    for (i, ev) in events.iter().enumerate() {
        // Event i+1 is only sent after event i arrived here: a buffering
        // proxy would time out.
        let want: String = events[..=i].concat();
        while received.len() < want.len() {
            let chunk = timeout(WAIT, s.reader.chunk(&mut s.sock))
                .await
                .unwrap_or_else(|_| panic!("event {} did not arrive", i + 1))
                .unwrap()
                .expect("stream ended early");
            received.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        assert_eq!(received, want, "event {ev:?}");
        gate.add_permits(1);
    }
    let end = timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .unwrap()
        .unwrap();
    assert!(end.is_none());
    drop(s);
    // logging() runs after the response ended.
    eventually(|| px.app.metrics.open_streams() == 0).await;
    assert_eq!(px.app.metrics.open_streams(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_ready_metrics() {
    let up = upstream_with_card(CARD_V10, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), None, |_| {});
    let r = get(px.addr, "/health", &[]).await;
    assert_eq!(
        (r.status, r.json()["status"].clone()),
        (200, Value::from("ok"))
    );
    let r = get(px.addr, "/ready", &[]).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["upstreamVersion"], "1.0");
    // Auto mode fetches the card as a v1.0 client would.
    let card_fetch = &up.recorded()[0];
    assert_eq!(card_fetch.target, "/.well-known/agent-card.json");
    assert_eq!(card_fetch.header("a2a-version"), Some("1.0"));

    let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#;
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], rpc).await;
    assert_eq!(r.status, 200);
    let r = get(px.addr, "/metrics", &[]).await;
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/plain"));
    let text = r.text();
    assert!(
        text.contains(
            "a2a_proxy_requests_total{agent=\"default\",method=\"GetTask\",direction=\"v10_v10\",binding=\"jsonrpc\",outcome=\"ok\"} 1"
        ),
        "{text}"
    );
    assert!(text
        .contains("a2a_proxy_requests_total{agent=\"default\",method=\"none\",direction=\"local\",binding=\"ready\",outcome=\"ok\"} 1"));
    assert!(text.contains("a2a_proxy_request_duration_seconds_count"));
    assert!(text.contains("a2a_proxy_open_streams{agent=\"default\"} 0"));

    let dead = dead_upstream();
    let px_down = proxy_for(&dead, None, |_| {});
    let r = get(px_down.addr, "/ready", &[]).await;
    assert_eq!(r.status, 503);
    // Anyone on the listener may ask: the reason names no address.
    let body = r.json();
    assert_eq!(body["reason"], "upstream agent unavailable", "{body}");
    assert_eq!(body["proxyReason"], "upstream_unavailable", "{body}");
    let port = dead.rsplit(':').next().unwrap().trim_end_matches('/');
    assert!(!r.text().contains(port), "{}", r.text());
    assert!(!r.text().contains("127.0.0.1"), "{}", r.text());
    assert_eq!(get(px_down.addr, "/health", &[]).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversize_body_is_413_in_the_clients_shape() {
    let up = upstream_with_card(CARD_V10, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |c| {
        c.limits.max_body_bytes = 1024
    });
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"SendMessage\",\"params\":{{\"x\":\"{}\"}}}}",
        "y".repeat(2000)
    );
    // JSON-RPC v1.0: envelope with ErrorInfo. The id is unknown (not read).
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], big.as_bytes()).await;
    assert_eq!(r.status, 413);
    let v = r.json();
    assert_eq!(v["jsonrpc"], "2.0");
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(
        v["error"]["data"][0]["@type"],
        "type.googleapis.com/google.rpc.ErrorInfo"
    );
    // REST v1.0: google.rpc.Status.
    let r = post(
        px.addr,
        "/message:send",
        &[("A2A-Version", "1.0")],
        big.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["error"]["code"], 413);
    assert_eq!(
        r.json()["error"]["details"][0]["domain"],
        "a2a-protocol.org"
    );
    // REST v0.3: bare {code, message}.
    let r = post(px.addr, "/v1/message:send", &[], big.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["code"], -32600);
    assert!(r.json()["message"].as_str().unwrap().contains("1024"));
    // Chunked (no Content-Length): caught while streaming the body.
    let mut raw = b"POST /message:send HTTP/1.1\r\nHost: t\r\nConnection: close\r\nA2A-Version: 1.0\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        raw.extend_from_slice(format!("{:x}\r\n{}\r\n", 600, "z".repeat(600)).as_bytes());
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    let r = send(px.addr, &raw).await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert_eq!(r.json()["error"]["code"], 413);
    assert!(up.calls().iter().all(|c| c.body.len() <= 1024));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_down_is_an_error_in_the_clients_shape() {
    let px = proxy_for(&dead_upstream(), Some(Version::V03), |c| {
        c.limits.connect_timeout = Duration::from_millis(500)
    });
    let r = post(
        px.addr,
        "/",
        &[],
        br#"{"jsonrpc":"2.0","id":0,"method":"tasks/get","params":{"id":"t"}}"#,
    )
    .await;
    assert_eq!(r.status, 502);
    let v = r.json();
    assert_eq!(v["id"], 0);
    assert_eq!(v["error"]["code"], -32603);
    assert!(
        v["error"]["data"].is_object(),
        "v0.3 data is free-form: {v}"
    );
    let r = get(px.addr, "/v1/tasks/t", &[]).await;
    assert_eq!(r.status, 502);
    assert_eq!(r.json()["code"], -32603);
    // v0.3 resubscribe gets an event stream even for errors.
    let r = post(
        px.addr,
        "/",
        &[],
        br#"{"jsonrpc":"2.0","id":"r","method":"tasks/resubscribe","params":{"id":"t"}}"#,
    )
    .await;
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert!(r.text().starts_with("data: {"), "{}", r.text());

    let px10 = proxy_for(&dead_upstream(), Some(Version::V10), |_| {});
    let r = get(px10.addr, "/tasks/t", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 502);
    assert_eq!(r.header("content-type"), Some("application/a2a+json"));
    assert_eq!(r.json()["error"]["status"], "UNAVAILABLE");
    assert_eq!(r.json()["error"]["details"][0]["reason"], "INTERNAL");

    // A hanging upstream: read timeout -> 504.
    let hang = upstream_with_card(CARD_V10, |_| Reply::Hang).await;
    let pxh = proxy_for(&hang.url(), Some(Version::V10), |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let r = post(
        pxh.addr,
        "/",
        &[("A2A-Version", "1.0")],
        br#"{"jsonrpc":"2.0","id":"h","method":"GetTask","params":{"id":"t"}}"#,
    )
    .await;
    assert_eq!(r.status, 504, "{}", r.text());
    assert_eq!(r.json()["id"], "h");
    assert_eq!(r.json()["error"]["data"][0]["reason"], "INTERNAL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_version_is_version_not_supported() {
    let up = upstream_with_card(CARD_V10, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    // JSON-RPC, v1.0 method: v1.0 envelope with ErrorInfo, id echoed.
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "2.0")],
        br#"{"jsonrpc":"2.0","id":9,"method":"SendMessage","params":{}}"#,
    )
    .await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_v10_error(&v, 9, -32009, "VERSION_NOT_SUPPORTED");
    // JSON-RPC, v0.3 method: v0.3 envelope (free-form data).
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "banana")],
        br#"{"jsonrpc":"2.0","id":"q","method":"message/send","params":{}}"#,
    )
    .await;
    let v = r.json();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::from("q"), Value::from(-32009))
    );
    assert!(v["error"]["data"].is_object());
    // REST: google.rpc.Status with HTTP 400.
    let r = get(px.addr, "/tasks/t", &[("A2A-Version", "0.2")]).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["status"], "FAILED_PRECONDITION");
    assert_eq!(
        r.json()["error"]["details"][0]["reason"],
        "VERSION_NOT_SUPPORTED"
    );
    // Query-parameter form.
    let r = get(px.addr, "/tasks/t?A2A-Version=9.9", &[]).await;
    assert_eq!(r.status, 400);
    assert!(up.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_jsonrpc_client_to_v10_agent_is_translated_both_ways() {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;
    let up = upstream_with_card(CARD_V10, move |_| {
        Reply::json(200, answer).with_header("A2A-Extensions", "urn:x")
    })
    .await;
    let px = proxy_for(&up.url(), None, |_| {});
    let req = br#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    let r = post(
        px.addr,
        "/rpc",
        &[
            ("Content-Type", "application/json"),
            ("X-A2A-Extensions", "urn:x"),
        ],
        req,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["kind"], "task", "{v}");
    assert_eq!(v["result"]["status"]["state"], "completed");
    assert_eq!(r.header("x-a2a-extensions"), Some("urn:x"));
    assert_eq!(r.header("a2a-extensions"), None);
    let call = &up.calls()[0];
    assert_eq!(call.header("a2a-version"), Some("1.0"));
    assert_eq!(call.header("a2a-extensions"), Some("urn:x"));
    assert_eq!(call.header("x-a2a-extensions"), None);
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["method"], "SendMessage");
    assert_eq!(sent["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(sent["params"]["message"]["parts"][0]["text"], "hi");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_streaming_client_to_v03_agent_gets_v10_events_one_by_one() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let events: Vec<String> = vec![
        r#"data: {"jsonrpc":"2.0","id":"s","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}}"#.to_string() + "\n\n",
        r#"data: {"jsonrpc":"2.0","id":"s","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"working"},"final":false}}"#.to_string() + "\r\n\r\n",
        r#"data: {"jsonrpc":"2.0","id":"s","result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}"#.to_string() + "\n\n",
    ];
    let evs = events.clone();
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: evs.clone(),
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}"#;
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body),
    )
    .await;
    assert_eq!(s.status, 200);
    let got = s.events(&gate, 3).await;
    assert_eq!(got[0]["id"], "s");
    assert_eq!(
        got[0]["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{}",
        got[0]
    );
    assert_eq!(
        got[1]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert!(got[1]["result"]["statusUpdate"].get("final").is_none());
    assert_eq!(
        got[2]["result"]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let sent: Value = serde_json::from_slice(&up.calls()[0].body).unwrap();
    assert_eq!(sent["method"], "message/stream");
    assert_eq!(sent["params"]["message"]["kind"], "message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn untranslatable_calls_get_errors_in_the_clients_shape() {
    let up = upstream_with_card(CARD_V03, |_| Reply::json(200, "{\"not\":\"json-rpc\"}")).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    // ListTasks has no v0.3 counterpart: answered here (nothing seen yet),
    // never sent upstream.
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "1.0")],
        br#"{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{}}"#,
    )
    .await;
    assert_eq!(r.status, 200);
    let v = r.json();
    assert_eq!(v["id"], 3);
    assert_eq!(v["result"]["tasks"], serde_json::json!([]), "{v}");
    assert_eq!(v["result"]["totalSize"], 0);
    assert!(up.calls().is_empty());
    // The upstream answers nonsense: InvalidAgentResponse -32006, id kept.
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "1.0")],
        br#"{"jsonrpc":"2.0","id":4,"method":"GetTask","params":{"id":"t"}}"#,
    )
    .await;
    let v = r.json();
    assert_v10_error(&v, 4, -32006, "INVALID_AGENT_RESPONSE");
    // No A2A method across versions: answered in the caller's dialect.
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "1.0")],
        br#"{"jsonrpc":"2.0","id":6,"method":"tasks/list"}"#,
    )
    .await;
    assert_eq!(r.json()["error"]["code"], -32601);
    assert_eq!(r.json()["error"]["data"][0]["reason"], "METHOD_NOT_FOUND");
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], b"{oops").await;
    assert_eq!(r.json()["error"]["code"], -32700);
    assert!(up
        .calls()
        .iter()
        .all(|c| !String::from_utf8_lossy(&c.body).contains("tasks/list")));
    // REST across versions is translated (tests/rest.rs); nonsense from
    // the agent is InvalidAgentResponse in the v1.0 REST shape.
    let r = get(px.addr, "/tasks/t", &[("A2A-Version", "1.0")]).await;
    assert_eq!(
        r.json()["error"]["details"][0]["reason"],
        "INVALID_AGENT_RESPONSE"
    );
    assert_eq!(r.status, 502, "{}", r.text());
    // A stream request the agent answers with nonsense JSON instead of a
    // stream: the same error and status, on both bindings.
    let r = post(
        px.addr,
        "/message:stream",
        JSON_V10,
        br#"{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}"#,
    )
    .await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(
        r.json()["error"]["details"][0]["reason"],
        "INVALID_AGENT_RESPONSE",
        "{}",
        r.text()
    );
    let r = post(
        px.addr,
        "/",
        &[("A2A-Version", "1.0")],
        br#"{"jsonrpc":"2.0","id":8,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}"#,
    )
    .await;
    let v = r.json();
    assert_eq!(v["id"], 8, "{v}");
    assert_eq!(v["error"]["code"], -32006, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn card_is_rewritten_and_revalidated_with_etags() {
    let up = {
        let host = Arc::new(std::sync::OnceLock::<String>::new());
        let h = host.clone();
        let up = FakeUpstream::start(move |r| {
            if r.header("if-none-match") == Some("\"up-1\"") {
                return Reply::Full {
                    status: 304,
                    headers: vec![("ETag".into(), "\"up-1\"".into())],
                    body: vec![],
                };
            }
            card_reply(CARD_V03, h.get().unwrap())
                .with_header("ETag", "\"up-1\"")
                .with_header("Cache-Control", "max-age=0")
        })
        .await;
        host.set(up.addr.to_string()).unwrap();
        up
    };
    let px = proxy_for(&up.url(), None, |c| {
        c.public_url =
            proxy::config::HttpUrl::parse("public_url", "https://agents.example.com/a2a").unwrap();
    });
    let r = get(px.addr, "/a2a/.well-known/agent-card.json", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("vary"), Some("A2A-Version"));
    let etag = r.header("etag").unwrap().to_string();
    let card = r.json();
    assert_eq!(card["url"], "https://agents.example.com/a2a/rpc");
    assert_eq!(
        card["additionalInterfaces"][1]["url"],
        "https://agents.example.com/a2a/rest"
    );
    assert_eq!(card["name"], "fake");
    // Legacy path, same card; conditional request -> 304.
    let r = get(
        px.addr,
        "/a2a/.well-known/agent.json",
        &[("If-None-Match", &etag)],
    )
    .await;
    assert_eq!(r.status, 304);
    assert_eq!(r.header("etag"), Some(etag.as_str()));
    assert!(r.body.is_empty());
    // max-age=0: each serve revalidated upstream with If-None-Match.
    let fetches = up.recorded();
    assert!(fetches.len() >= 2, "{fetches:?}");
    assert_eq!(fetches[1].header("if-none-match"), Some("\"up-1\""));
    // A v1.0 client of this v0.3 agent: a translated card with its own
    // ETag, JSON-RPC first, then its HTTP+JSON interface under its own
    // path (the proxy routes REST paths under it).
    let r = get(
        px.addr,
        "/a2a/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_ne!(r.header("etag"), Some(etag.as_str()));
    let card = r.json();
    let ifs = card["supportedInterfaces"].as_array().unwrap();
    assert_eq!(ifs.len(), 2, "{card}");
    assert_eq!(ifs[0]["url"], "https://agents.example.com/a2a/rpc");
    assert_eq!(ifs[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifs[0]["protocolVersion"], "1.0");
    assert_eq!(ifs[1]["url"], "https://agents.example.com/a2a/rest");
    assert_eq!(ifs[1]["protocolBinding"], "HTTP+JSON");

    // A v1.0 card: every supportedInterfaces URL is rewritten.
    let up10 = upstream_with_card(CARD_V10, |_| Reply::json(200, "{}")).await;
    let px10 = proxy_for(&up10.url(), None, |_| {});
    let r = get(
        px10.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(r.status, 200);
    let card = r.json();
    for i in 0..2 {
        let url = card["supportedInterfaces"][i]["url"].as_str().unwrap();
        assert!(url.starts_with(&px10.url()), "{url}");
    }
    // An explicit v0.3 client gets a v0.3 card pointing at the proxy.
    let card = card_as(px10.addr, "/.well-known/agent.json", "0.3").await;
    assert_eq!(card["url"], format!("{}/rpc", px10.url()));
    assert_eq!(card["preferredTransport"], "JSONRPC");
    assert!(card.get("supportedInterfaces").is_none(), "{card}");
    // A header-less one the hybrid card: the same v0.3 members, and the
    // v1.0 interfaces (tests/hostile/cards.rs covers it in full).
    let r = get(px10.addr, "/.well-known/agent.json", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let hybrid = r.json();
    assert_eq!(hybrid["url"], card["url"]);
    assert_eq!(hybrid["preferredTransport"], "JSONRPC");
    assert!(hybrid["supportedInterfaces"].is_array(), "{hybrid}");
}

#[test]
fn start_and_stop_are_bounded() {
    let addr = support::free_local_addr().unwrap();
    let mut config = Config::new(addr, "http://127.0.0.1:9").unwrap();
    config.threads = 1;
    let started = std::time::Instant::now();
    let mut px = proxy::start(config).unwrap();
    px.stop();
    assert!(started.elapsed() < Duration::from_secs(10));
    // The listener goes away shortly after run() returns.
    let closed = (0..50).any(|_| {
        let refused =
            std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err();
        if !refused {
            std::thread::sleep(Duration::from_millis(20));
        }
        refused
    });
    assert!(closed, "{addr} still accepts connections after stop()");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_cross_version_bodies_are_read_whole_and_translated() {
    let answer = r#"{"jsonrpc":"2.0","id":"big","result":{"message":{"messageId":"r1","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}}"#;
    let up = upstream_with_card(CARD_V10, move |_| Reply::json(200, answer)).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let text = "x".repeat(150_000);
    let req = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"message/send","params":{{"message":{{"kind":"message","messageId":"m1","role":"user","parts":[{{"kind":"text","text":"{text}"}}]}}}}}}"#
    );
    let r = post(px.addr, "/", &[], req.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["result"]["kind"], "message", "{v}");
    assert_eq!(v["result"]["role"], "agent");
    let call = &up.calls()[0];
    // Read whole before routing, sent whole: with its length.
    let length = call.body.len().to_string();
    assert_eq!(call.header("content-length"), Some(length.as_str()));
    assert_eq!(call.header("transfer-encoding"), None);
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["method"], "SendMessage");
    assert_eq!(
        sent["params"]["message"]["parts"][0]["text"]
            .as_str()
            .map(str::len),
        Some(150_000)
    );

    // A large v1.0 call without the header: the method wins, bytes untouched.
    let req10 = format!(
        r#"{{"jsonrpc":"2.0","id":"big","method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}}}}}"#
    );
    let r = post(px.addr, "/", &[], req10.as_bytes()).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body, answer.as_bytes());
    assert_eq!(up.calls()[1].body, req10.as_bytes());

    // A large body with an unknown method: -32601 in the header's dialect.
    let bad = format!(r#"{{"jsonrpc":"2.0","id":"u","method":"nope","params":{{"x":"{text}"}}}}"#);
    let r = post(px.addr, "/", &[], bad.as_bytes()).await;
    let v = r.json();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::from("u"), Value::from(-32601)),
        "{v}"
    );

    // Chunked, without a length: read whole the same way, then translated.
    let mut raw = b"POST / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for piece in req.as_bytes().chunks(16 * 1024) {
        raw.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        raw.extend_from_slice(piece);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    let r = send(px.addr, &raw).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["role"], "agent");
    let call = up.calls().pop().unwrap();
    let length = call.body.len().to_string();
    assert_eq!(call.header("content-length"), Some(length.as_str()));
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["method"], "SendMessage");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_stream_ends_with_an_error_frame() {
    // The second event never comes (no permits): the read timeout fires.
    let gate = Arc::new(Semaphore::new(0));
    let events = vec![
        "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"kind\":\"task\"}}\n\n".to_string(),
        "data: never\n\n".to_string(),
    ];
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: events.clone(),
        gate: gate.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let body = br#"{"jsonrpc":"2.0","id":5,"method":"message/stream","params":{}}"#;
    let mut s = open(px.addr, &request("POST", "/", &[], body)).await;
    assert_eq!(s.status, 200);
    let mut text = String::new();
    while let Ok(Some(c)) = timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .expect("no end")
    {
        text.push_str(std::str::from_utf8(&c).unwrap());
    }
    let frames: Vec<&str> = text.split("\n\n").filter(|f| !f.is_empty()).collect();
    assert_eq!(frames.len(), 2, "{text:?}");
    let last: Value = serde_json::from_str(frames[1].strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(last["id"], 5);
    assert_eq!(last["error"]["code"], -32603);
    assert_eq!(last["error"]["data"]["proxyReason"], "upstream_timeout");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extended_cards_point_at_the_proxy() {
    let up = {
        let host = Arc::new(std::sync::OnceLock::<String>::new());
        let h = host.clone();
        let up = FakeUpstream::start(move |r| {
            let card = CARD_V10.replace("UP", h.get().unwrap());
            if r.target == "/" {
                Reply::json(
                    200,
                    &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{card}}}"#),
                )
            } else {
                card_reply(CARD_V10, h.get().unwrap())
            }
        })
        .await;
        host.set(up.addr.to_string()).unwrap();
        up
    };
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let r = get(px.addr, "/extendedAgentCard", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 200);
    let url = r.json()["supportedInterfaces"][1]["url"].clone();
    assert_eq!(url, format!("{}/rest", px.url()));
    let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#;
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], rpc).await;
    let v = r.json();
    assert_eq!(v["id"], 1);
    assert_eq!(
        v["result"]["supportedInterfaces"][0]["url"],
        format!("{}/rpc", px.url())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_end_at_their_maximum_duration() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let events = vec![
        "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"kind\":\"task\"}}\n\n".to_string(),
        "data: {\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{\"late\":true}}\n\n".to_string(),
    ];
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: events.clone(),
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |c| {
        c.limits.stream_max_duration = Duration::from_millis(200)
    });
    let body = br#"{"jsonrpc":"2.0","id":8,"method":"message/stream","params":{}}"#;
    let mut s = open(px.addr, &request("POST", "/", &[], body)).await;
    let first = timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(first.starts_with(b"data: "));
    tokio::time::sleep(Duration::from_millis(300)).await;
    gate.add_permits(1);
    let mut text = String::new();
    while let Ok(Some(c)) = timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .expect("no end")
    {
        text.push_str(std::str::from_utf8(&c).unwrap());
    }
    assert!(!text.contains("late"), "{text}");
    let last: Value = serde_json::from_str(text.trim().strip_prefix("data: ").unwrap()).unwrap();
    assert_eq!(last["id"], 8);
    assert_eq!(last["error"]["data"]["proxyReason"], "stream_max_duration");
}

/// A v1.0 client's SendStreamingMessage toward a v0.3 agent, over the
/// proxy's own streaming call.
const V10_STREAM: &[u8] = br#"{"jsonrpc":"2.0","id":5,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;

/// A v0.3 agent's first stream event (a Task, working).
const V03_WORKING: &str = "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"kind\":\"task\",\"id\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"working\"}}}\n\n";

/// The last `data:` frame of an SSE text, as JSON.
fn last_frame(text: &str) -> Value {
    let data = text
        .split("\n\n")
        .filter_map(|ev| ev.trim().strip_prefix("data: "))
        .last()
        .unwrap_or_else(|| panic!("no data frame in {text:?}"));
    serde_json::from_str(data).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_a_translated_stream_closes_it() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: vec![V03_WORKING.to_string(), V03_WORKING.to_string()],
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], V10_STREAM),
    )
    .await;
    assert_eq!(s.status, 200);
    let first = timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        std::str::from_utf8(&first)
            .unwrap()
            .contains("TASK_STATE_WORKING"),
        "{first:?}"
    );
    assert_eq!(px.app.metrics.open_streams(), 1);
    // The client leaves while the agent has nothing to send: the proxy
    // notices without waiting for the agent.
    drop(s);
    eventually(|| px.app.metrics.open_streams() == 0).await;
    assert_eq!(px.app.metrics.open_streams(), 0);
    gate.add_permits(1);
    // And it goes on serving.
    let r = get(px.addr, "/health", &[]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaving_before_the_agent_answers_its_stream_closes_the_call() {
    let closed = Arc::new(Semaphore::new(0));
    let c = closed.clone();
    let up = upstream_with_card(CARD_V03, move |_| Reply::HangUntilClosed {
        closed: c.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |c| {
        c.limits.read_timeout = Duration::from_secs(20)
    });
    let mut sock = tokio::net::TcpStream::connect(px.addr).await.unwrap();
    let req = request("POST", "/", &[("A2A-Version", "1.0")], V10_STREAM);
    tokio::io::AsyncWriteExt::write_all(&mut sock, &req)
        .await
        .unwrap();
    // The agent has the translated request and says nothing.
    let asked = || {
        up.calls()
            .iter()
            .any(|r| r.body.windows(14).any(|w| w == b"message/stream"))
    };
    assert!(eventually(asked).await);
    drop(sock);
    // The proxy closes its call well before the read timeout.
    let gone = timeout(Duration::from_secs(3), closed.acquire()).await;
    assert!(
        gone.is_ok(),
        "the agent's connection stayed open after the client left"
    );
    let r = get(px.addr, "/health", &[]).await;
    assert_eq!(r.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_translated_stream_ends_at_its_maximum_duration_in_the_clients_shape() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let up = upstream_with_card(CARD_V03, move |_| Reply::Sse {
        events: vec![
            V03_WORKING.to_string(),
            V03_WORKING.replace("working", "completed"),
        ],
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |c| {
        c.limits.stream_max_duration = Duration::from_millis(200)
    });
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], V10_STREAM),
    )
    .await;
    assert_eq!(s.status, 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    gate.add_permits(1);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    assert!(!text.contains("COMPLETED"), "{text}");
    let last = last_frame(&text);
    assert_eq!(last["jsonrpc"], "2.0");
    assert_eq!(last["id"], 5);
    assert!(last["error"]["code"].is_i64(), "{last}");
    assert!(
        last.to_string().contains("stream_max_duration"),
        "no reason in {last}"
    );
    assert!(last.get("result").is_none(), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cutting_a_translated_stream_short_ends_it_with_an_error_frame() {
    let event = V03_WORKING;
    let cut = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
        event.len()
    );
    let up = upstream_with_card(CARD_V03, move |_| Reply::Cut(cut.clone().into_bytes())).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], V10_STREAM),
    )
    .await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    let last = last_frame(&text);
    assert_eq!(last["id"], 5);
    assert!(last["error"]["code"].is_i64(), "{last}");
    assert!(
        last.to_string().contains("upstream_unavailable"),
        "no reason in {last}"
    );
    eventually(|| px.app.metrics.open_streams() == 0).await;
    assert_eq!(px.app.metrics.open_streams(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_over_max_connections_get_503_in_the_clients_shape() {
    let gate = Arc::new(Semaphore::new(0));
    let g = gate.clone();
    let up = upstream_with_card(CARD_V10, move |_| Reply::Sse {
        events: vec!["data: {}\n\n".into(), "data: {}\n\n".into()],
        gate: g.clone(),
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V10), |c| {
        c.limits.max_connections = 1
    });
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{}}"#;
    let mut held = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body),
    )
    .await;
    assert_eq!(held.status, 200);
    let r = get(px.addr, "/tasks/t", &[("A2A-Version", "1.0")]).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.json()["error"]["status"], "UNAVAILABLE");
    // Local endpoints are not counted.
    assert_eq!(get(px.addr, "/health", &[]).await.status, 200);
    assert_eq!(px.app.in_flight(), 1);
    gate.add_permits(1);
    while let Ok(Some(_)) = timeout(WAIT, held.reader.chunk(&mut held.sock))
        .await
        .expect("no end")
    {}
    drop(held);
    // Once the stream is done the slot is free again.
    let free = eventually(|| px.app.in_flight() == 0).await;
    assert!(free);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_clients_are_served_on_the_same_port() {
    let answer = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"id\":\"t\"}}";
    let up = upstream_with_card(CARD_V10, move |_| Reply::json(200, answer)).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t"}}"#;
    let headers = [("a2a-version", "1.0"), ("content-type", "application/json")];
    let (status, _, got) = h2c_post(px.addr, &headers, body).await;
    assert_eq!(status, 200);
    assert_eq!(got, answer.as_bytes());
    assert_eq!(
        up.calls()[0].body,
        br#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"t"}}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_resubscribe_error_from_v10_upstream_arrives_as_sse() {
    // a2a-python 1.x answers SubscribeToTask of a terminal task with plain
    // JSON; a2a-python 0.3 clients read tasks/resubscribe only as SSE.
    let answer = r#"{"error":{"code":-32004,"message":"Task t is in terminal state: TASK_STATE_COMPLETED","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org","metadata":{}}]},"id":"r","jsonrpc":"2.0"}"#;
    let up = upstream_with_card(CARD_V10, move |_| Reply::json(200, answer)).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let r = post(
        px.addr,
        "/",
        &[],
        br#"{"jsonrpc":"2.0","id":"r","method":"tasks/resubscribe","params":{"id":"t"}}"#,
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let text = r.text();
    let data = text
        .strip_prefix("data: ")
        .and_then(|t| t.strip_suffix("\n\n"))
        .unwrap_or_else(|| panic!("one SSE data frame: {text:?}"));
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["id"], "r");
    assert_eq!(v["error"]["code"], -32004);
    assert!(
        v["error"]["data"].is_object() || v["error"].get("data").is_none(),
        "{v}"
    );

    // A v0.3 non-streaming call keeps its JSON answer.
    let r = post(
        px.addr,
        "/",
        &[],
        br#"{"jsonrpc":"2.0","id":"r","method":"tasks/get","params":{"id":"t"}}"#,
    )
    .await;
    assert!(
        r.header("content-type").is_some_and(|c| c.contains("json")),
        "{:?}",
        r.headers
    );
}

/// A listed task is the agent's answer now, not what passed through: a
/// v1.0 client's non-blocking SendMessage saw it submitted; ListTasks
/// (JSON-RPC and REST) asks the agent for it (tasks/get, REST GetTask) and
/// shows it completed with its artifact; the index learns the new state,
/// so a status filter finds it. Each list asks once per listed task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_list_tasks_shows_what_the_agent_says_now() {
    let up = upstream_with_card(CARD_V03, |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let (id, state, artifacts) = match (r.method.as_str(), req["method"].as_str()) {
            (_, Some("message/send")) => (req["id"].clone(), "submitted", serde_json::json!([])),
            ("POST", _) => (req["id"].clone(), "completed", serde_json::json!([{"artifactId": "a1", "parts": [{"kind": "text", "text": "done"}]}])),
            // REST GET /v1/tasks/t1 (v0.3 ProtoJSON).
            _ => {
                return Reply::json(
                    200,
                    r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"artifactId":"a1","parts":[{"text":"done"}]}]}"#,
                )
            }
        };
        let task = serde_json::json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": state}, "artifacts": artifacts});
        Reply::rpc_result(&id, &task)
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let h = [("A2A-Version", "1.0"), ("Content-Type", "application/json")];
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}"#;
    let r = post(px.addr, "/", &h, send.as_bytes()).await;
    assert_eq!(
        r.json()["result"]["task"]["status"]["state"],
        "TASK_STATE_SUBMITTED",
        "{}",
        r.text()
    );
    // Seen submitted: a filter on the completed state finds nothing yet.
    let done = r#"{"jsonrpc":"2.0","id":"L","method":"ListTasks","params":{"status":"TASK_STATE_COMPLETED"}}"#;
    let v = post(px.addr, "/", &h, done.as_bytes()).await.json();
    assert_eq!(v["result"]["tasks"], serde_json::json!([]), "{v}");
    let list =
        r#"{"jsonrpc":"2.0","id":"L","method":"ListTasks","params":{"includeArtifacts":true}}"#;
    let v = post(px.addr, "/", &h, list.as_bytes()).await.json();
    assert_eq!(v["result"]["tasks"][0]["id"], "t1", "{v}");
    assert_eq!(
        v["result"]["tasks"][0]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
    assert_eq!(
        v["result"]["tasks"][0]["artifacts"][0]["artifactId"], "a1",
        "{v}"
    );
    assert_eq!(up.calls().len(), 2, "one send, one tasks/get");
    let v = post(px.addr, "/", &h, done.as_bytes()).await.json();
    assert_eq!(v["result"]["tasks"][0]["id"], "t1", "{v}");
    assert_eq!(up.calls().len(), 3);
    let r = get(
        px.addr,
        "/tasks?status=TASK_STATE_COMPLETED",
        &[("A2A-Version", "1.0")],
    )
    .await;
    assert_eq!(
        r.json()["tasks"][0]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{}",
        r.text()
    );
    let last = up.calls().pop().unwrap();
    assert_eq!(
        (last.method.as_str(), last.target.as_str()),
        ("GET", "/v1/tasks/t1")
    );
}

/// A task the agent no longer gives (TaskNotFound to tasks/get) is left
/// out of the list; `totalSize` still counts what the index holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_list_tasks_leaves_out_what_the_agent_no_longer_gives() {
    let up = upstream_with_card(CARD_V03, |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        match req["method"].as_str() {
            Some("message/send") => {
                let task = serde_json::json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "submitted"}});
                Reply::rpc_result(&req["id"], &task)
            }
            _ => Reply::json(200, &serde_json::json!({"jsonrpc": "2.0", "id": req["id"],
                "error": {"code": -32001, "message": "Task not found"}}).to_string()),
        }
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let h = [("A2A-Version", "1.0"), ("Content-Type", "application/json")];
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true}}}"#;
    let r = post(px.addr, "/", &h, send.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let list = r#"{"jsonrpc":"2.0","id":"L","method":"ListTasks","params":{}}"#;
    let v = post(px.addr, "/", &h, list.as_bytes()).await.json();
    assert_eq!(v["result"]["tasks"], serde_json::json!([]), "{v}");
    assert_eq!(v["result"]["totalSize"], 1, "{v}");
    let methods: Vec<Value> = up
        .calls()
        .iter()
        .filter_map(|c| serde_json::from_slice::<Value>(&c.body).ok())
        .map(|b| b["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            serde_json::json!("message/send"),
            serde_json::json!("tasks/get")
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_list_tasks_of_a_v03_agent_answers_from_tasks_seen() {
    // The v0.3 agent answers each message/send with a task named after the
    // message id, in context c1 or c2, status timestamps in send order.
    // tasks/get of t<n> answers the same task.
    let up = upstream_with_card(CARD_V03, |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let n: u32 = match req["method"].as_str() {
            Some("tasks/get") => req["params"]["id"].as_str().unwrap_or("?").trim_start_matches('t').parse().unwrap_or(0),
            _ => {
                let mid = req["params"]["message"]["messageId"].as_str().unwrap_or("?");
                mid.trim_start_matches('m').parse().unwrap_or(0)
            }
        };
        let ctx = if n.is_multiple_of(2) { "c2" } else { "c1" };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"kind":"task","id":"t{n}","contextId":"{ctx}","status":{{"state":"completed","timestamp":"2025-01-01T00:00:0{n}Z"}},"artifacts":[{{"artifactId":"a","parts":[{{"kind":"text","text":"x"}}]}}]}}}}"#,
            req["id"]
        );
        Reply::json(200, &body)
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let h = [("A2A-Version", "1.0"), ("Content-Type", "application/json")];
    for n in 1..=3 {
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{n},"method":"SendMessage","params":{{"message":{{"messageId":"m{n}","role":"ROLE_USER","parts":[{{"text":"hi"}}]}}}}}}"#
        );
        let r = post(px.addr, "/rpc", &h, req.as_bytes()).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    let calls_before = up.calls().len();
    let list = |params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":"L","method":"ListTasks","params":{params}}}"#)
    };
    let r = post(px.addr, "/rpc", &h, list(r#"{"pageSize":2}"#).as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], "L");
    let ids: Vec<&str> = v["result"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t3", "t2"], "{v}");
    assert_eq!(
        v["result"]["tasks"][0]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert!(v["result"]["tasks"][0].get("artifacts").is_none(), "{v}");
    assert_eq!(v["result"]["totalSize"], 3);
    let token = v["result"]["nextPageToken"].as_str().unwrap().to_string();
    assert!(!token.is_empty());
    let r = post(
        px.addr,
        "/rpc",
        &h,
        list(&format!(r#"{{"pageSize":2,"pageToken":"{token}"}}"#)).as_bytes(),
    )
    .await;
    let v = r.json();
    assert_eq!(v["result"]["tasks"][0]["id"], "t1", "{v}");
    assert_eq!(v["result"]["nextPageToken"], "");
    let r = post(
        px.addr,
        "/rpc",
        &h,
        list(r#"{"contextId":"c1","includeArtifacts":true}"#).as_bytes(),
    )
    .await;
    let v = r.json();
    assert_eq!(v["result"]["totalSize"], 2, "{v}");
    assert!(v["result"]["tasks"][0]["artifacts"].is_array());
    // Each listed task was asked of the agent (2 + 1 + 2), nothing else.
    let calls = up.calls();
    assert_eq!(calls.len(), calls_before + 5);
    for c in &calls[calls_before..] {
        let b: Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(b["method"], "tasks/get", "{b}");
    }
    // Bad params: -32602 in the v1.0 shape; the agent is never asked.
    let r = post(px.addr, "/rpc", &h, list(r#"{"pageSize":0}"#).as_bytes()).await;
    let v = r.json();
    assert_eq!(v["error"]["code"], -32602, "{v}");
    assert_eq!(v["id"], "L");
    assert_eq!(up.calls().len(), calls_before + 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_version_batches_are_refused_in_the_clients_shape() {
    let up = upstream_with_card(CARD_V03, |_| Reply::json(200, "[]")).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}]"#;
    let r = post(px.addr, "/", JSON_V10, batch).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_v10_error(&v, Value::Null, -32600, "INVALID_REQUEST");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("batches"), "{v}");
    assert!(up.calls().is_empty());
}

/// A v0.3 agent whose tasks/get answers task t1 (working) and whose
/// other calls stream `events(id)` as SSE `data` frames (the next one at
/// each `gate` permit), `id` being the request's JSON-RPC id as written.
async fn v03_subscribable(gate: Arc<Semaphore>, events: fn(&str) -> Vec<String>) -> FakeUpstream {
    upstream_with_card(CARD_V03, move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let id = req["id"].to_string();
        match req["method"].as_str() {
            Some("tasks/get") => Reply::json(
                200,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"kind":"task","id":"t1","contextId":"c1","status":{{"state":"working"}}}}}}"#
                ),
            ),
            _ => Reply::Sse {
                events: events(&id).iter().map(|e| format!("data: {e}\n\n")).collect(),
                gate: gate.clone(),
            },
        }
    })
    .await
}

/// A v0.3 event of JSON-RPC id `id`: task t1 completed, the final one.
fn completed_t1(id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"kind":"status-update","taskId":"t1","contextId":"c1","status":{{"state":"completed"}},"final":true}}}}"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_subscribe_to_a_v03_agent_starts_with_the_task() {
    // The v0.3 agent's resubscribe starts with a status update (as a2a-python
    // 0.3 does); v1.0 requires the Task first, so the proxy asks tasks/get.
    let gate = Arc::new(Semaphore::new(0));
    let up = v03_subscribable(gate.clone(), |_| vec![completed_t1("\"s\"")]).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":"s","method":"SubscribeToTask","params":{"id":"t1"}}"#;
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body),
    )
    .await;
    assert_eq!(s.status, 200);
    let got = s.events(&gate, 2).await;
    assert_eq!(got[0]["id"], "s");
    assert_eq!(got[0]["result"]["task"]["id"], "t1", "{}", got[0]);
    assert_eq!(
        got[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert_eq!(
        got[1]["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{}",
        got[1]
    );
    let methods: Vec<String> = up
        .calls()
        .iter()
        .map(|c| {
            serde_json::from_slice::<Value>(&c.body).unwrap()["method"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(methods, ["tasks/get", "tasks/resubscribe"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_subscribe_keeps_a_v03_agents_own_first_task() {
    // An agent that starts with the Task itself: no second copy.
    let gate = Arc::new(Semaphore::new(0));
    let up = v03_subscribable(gate.clone(), |_| {
        vec![
            r#"{"jsonrpc":"2.0","id":"s","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}"#.to_string(),
            completed_t1("\"s\""),
        ]
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":"s","method":"SubscribeToTask","params":{"id":"t1"}}"#;
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body),
    )
    .await;
    let got = s.events(&gate, 2).await;
    assert!(got[0]["result"]["task"].is_object(), "{}", got[0]);
    assert!(got[1]["result"]["statusUpdate"].is_object(), "{}", got[1]);
}

/// JSON-RPC 2.0 ids are strings, numbers or null: any other id is
/// InvalidRequest (with a null id) in the client's version, and the agent
/// is not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_with_an_id_of_the_wrong_type_are_invalid() {
    let up = upstream_with_card(CARD_V03, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    for id in [r#"{"bad":"type"}"#, "[1]", "true"] {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"t1"}}}}"#);
        let r = post(px.addr, "/", &[("A2A-Version", "1.0")], body.as_bytes()).await;
        let v = r.json();
        assert_v10_error(&v, Value::Null, -32600, "INVALID_REQUEST");
    }
    assert!(up.calls().is_empty(), "the agent was called");

    let up = upstream_with_card(CARD_V10, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), Some(Version::V10), |_| {});
    let body = br#"{"jsonrpc":"2.0","id":[1],"method":"message/send","params":{}}"#;
    let r = post(px.addr, "/", &[], body).await;
    let v = r.json();
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["id"], Value::Null, "{v}");
    assert!(!v["error"]["data"].is_array(), "v0.3 shape: {v}");
    assert!(up.calls().is_empty(), "the agent was called");
}

/// v1.0 refuses SubscribeToTask for a finished task (UnsupportedOperation)
/// and an unknown one (TaskNotFound); a v0.3 agent is asked for the task
/// first, and its stream is never opened for either.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_subscribe_to_a_finished_or_unknown_v03_task_is_refused() {
    let up = upstream_with_card(CARD_V03, move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let id = &req["id"];
        match req["params"]["id"].as_str() {
            Some("done") => Reply::json(
                200,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"kind":"task","id":"done","contextId":"c1","status":{{"state":"completed"}}}}}}"#
                ),
            ),
            _ => Reply::json(
                200,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32001,"message":"Task not found"}}}}"#
                ),
            ),
        }
    })
    .await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    for (task, code) in [("done", -32004), ("nope", -32001)] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"s","method":"SubscribeToTask","params":{{"id":"{task}"}}}}"#
        );
        let r = post(px.addr, "/", &[("A2A-Version", "1.0")], body.as_bytes()).await;
        let v = r.json();
        assert_eq!(v["id"], "s", "{v}");
        assert_eq!(v["error"]["code"], code, "{task}: {v}");
        assert!(v.get("result").is_none(), "{v}");
    }
    let methods: Vec<String> = up
        .calls()
        .iter()
        .map(|c| {
            let v: Value = serde_json::from_slice(&c.body).unwrap();
            v["method"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(methods, ["tasks/get", "tasks/get"]);
}

/// EDGE-CASES 30: both spellings of the extension header are read and
/// merged, and the agent gets one header in its own spelling (the client
/// one in its own), however the client spelled them; the same on
/// HTTP+JSON (`rest.rs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_headers_of_both_spellings_are_merged() {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
    let up = upstream_with_card(CARD_V10, move |_| {
        Reply::json(200, answer)
            .with_header("A2A-Extensions", "urn:x")
            .with_header("X-A2A-Extensions", "urn:y")
    })
    .await;
    let px = proxy_for(&up.url(), None, |_| {});
    let req = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}"#;
    let r = post(
        px.addr,
        "/rpc",
        &[
            ("Content-Type", "application/json"),
            ("X-A2A-Extensions", "urn:a"),
            ("A2A-Extensions", "urn:b"),
        ],
        req,
    )
    .await;
    assert_v03_completed(&r);
    let call = &up.calls()[0];
    let sent = call.header("a2a-extensions").unwrap_or_default();
    assert!(sent.contains("urn:a") && sent.contains("urn:b"), "{sent:?}");
    assert_eq!(call.header("x-a2a-extensions"), None);
    let back = r.header("x-a2a-extensions").unwrap_or_default();
    assert!(back.contains("urn:x") && back.contains("urn:y"), "{back:?}");
    assert_eq!(r.header("a2a-extensions"), None);
}

/// A client's JSON-RPC id past 64 bits comes back as written in the error
/// of a call that failed (here: the agent is not there), as it does in
/// the agent's answers: the id the agent would have seen is the proxy's
/// token, and the error is written for the id the client sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_id_survives_a_failed_call() {
    let px = proxy_for(&dead_upstream(), Some(Version::V10), |_| {});
    let raw = "123456789012345678901234567890";
    let req =
        format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"tasks/get","params":{{"id":"t1"}}}}"#);
    let r = post(px.addr, "/rpc", JSON_HEADER, req.as_bytes()).await;
    let text = r.text();
    assert!(text.contains(r#""error""#), "{text}");
    assert!(text.contains(&format!(r#""id":{raw}"#)), "{text}");
    assert!(!text.contains("a2a-proxy-id-"), "{text}");
}

/// A v1.0 subscription toward a v0.3 agent with a JSON-RPC id past 64 bits:
/// the first Task the proxy writes itself carries the id as the client
/// wrote it, as the agent's translated events do (the codec frames both).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_id_survives_in_a_subscriptions_first_task() {
    let up = v03_subscribable(Arc::new(Semaphore::new(0)), |id| vec![completed_t1(id)]).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let raw = "123456789012345678901234567890";
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{raw},"method":"SubscribeToTask","params":{{"id":"t1"}}}}"#
    );
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body.as_bytes()),
    )
    .await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    assert!(text.contains("TASK_STATE_COMPLETED"), "{text}");
    assert_eq!(text.matches(&format!(r#""id":{raw}"#)).count(), 2, "{text}");
    assert!(!text.contains("a2a-proxy-id-"), "{text}");
}

/// A v1.0 stream toward a v0.3 agent, its JSON-RPC id past 64 bits, cut
/// by the agent after its head: the last error frame carries the id as the
/// client wrote it (rendered by the call's codec, as its events are).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_id_survives_in_a_cut_streams_error_frame() {
    let event = V03_WORKING;
    let cut = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{event}\r\n",
        event.len()
    );
    let up = upstream_with_card(CARD_V03, move |_| Reply::Cut(cut.clone().into_bytes())).await;
    let px = proxy_for(&up.url(), Some(Version::V03), |_| {});
    let raw = "123456789012345678901234567890";
    let body = std::str::from_utf8(V10_STREAM)
        .unwrap()
        .replace(r#""id":5"#, &format!(r#""id":{raw}"#));
    let mut s = open(
        px.addr,
        &request("POST", "/", &[("A2A-Version", "1.0")], body.as_bytes()),
    )
    .await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    let last = text
        .split("\n\n")
        .filter_map(|ev| ev.trim().strip_prefix("data: "))
        .last()
        .unwrap_or_else(|| panic!("no data frame in {text:?}"));
    assert!(last.contains(r#""error""#), "{last}");
    assert!(last.contains(&format!(r#""id":{raw}"#)), "{last}");
    assert!(!text.contains("a2a-proxy-id-"), "{text}");
}

/// A same-version JSON-RPC call that pingora's proxy loop passes on, its
/// id past 64 bits, toward an agent that is not there: the error carries
/// the id as the client wrote it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_id_survives_a_passed_on_call_that_cannot_connect() {
    let req =
        format!(r#"{{"jsonrpc":"2.0","id":{RAW_ID},"method":"GetTask","params":{{"id":"t1"}}}}"#);
    dead_agent_error_keeps_the_id("/rpc", &req).await;
}

/// A 30-digit JSON-RPC id, past 64 bits.
const RAW_ID: &str = "123456789012345678901234567890";

/// `body` (a v1.0 call with id [`RAW_ID`]) posted at `path` to a proxy
/// whose v1.0 agent is not there: a JSON-RPC error with the id as written.
async fn dead_agent_error_keeps_the_id(path: &str, body: &str) {
    let px = proxy_for(&dead_upstream(), Some(Version::V10), |_| {});
    let text = post(px.addr, path, JSON_V10, body.as_bytes()).await.text();
    assert!(text.contains(r#""error""#), "{text}");
    assert!(text.contains(&format!(r#""id":{RAW_ID}"#)), "{text}");
}

/// A same-version stream (a call of the proxy's own, sent as it came), its
/// id past 64 bits, toward an agent that is not there: the error carries
/// the id as the client wrote it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exact_id_survives_a_same_version_stream_that_cannot_connect() {
    let body = std::str::from_utf8(V10_STREAM)
        .unwrap()
        .replace(r#""id":5"#, &format!(r#""id":{RAW_ID}"#));
    dead_agent_error_keeps_the_id("/", &body).await;
}

/// A card refetch that hangs stalls only the call that started it: while a
/// copy of the card is held, every other call uses it at once instead of
/// queueing behind the refetch (which here would last the 60 s read
/// timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_card_refetch_stalls_no_other_call() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let me = Arc::new(std::sync::OnceLock::<String>::new());
    let fetches = Arc::new(AtomicUsize::new(0));
    let (m, n) = (me.clone(), fetches.clone());
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            if n.fetch_add(1, Ordering::SeqCst) > 0 {
                return Reply::Hang;
            }
            let card = CARD_V03.replace("UP", m.get().map(String::as_str).unwrap_or("?"));
            return Reply::json(200, &card).with_header("Cache-Control", "max-age=1");
        }
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let answer = serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result":
            {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}});
        Reply::json(200, &answer.to_string())
    })
    .await;
    me.set(up.addr.to_string()).unwrap();
    let px = proxy_for(&up.url(), None, |c| {
        c.limits.read_timeout = Duration::from_secs(60);
    });
    let addr = px.addr;
    let call = move || async move {
        let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
        post(addr, "/", &[("A2A-Version", "1.0")], rpc).await
    };
    let r = call().await;
    assert_eq!(r.json()["result"]["task"]["id"], "t1", "{}", r.text());
    assert_eq!(fetches.load(Ordering::SeqCst), 1);

    // The copy expires; the next call refetches it, and the agent hangs.
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let first = tokio::spawn(call());
    for _ in 0..500 {
        if fetches.load(Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "no refetch started");
    for _ in 0..3 {
        let r = timeout(Duration::from_secs(20), call())
            .await
            .expect("a call waited behind the hanging card refetch");
        assert_eq!(r.json()["result"]["task"]["id"], "t1", "{}", r.text());
    }
    assert_eq!(fetches.load(Ordering::SeqCst), 2, "one refetch at a time");
    first.abort();
}
