//! The upstream client's retry rule (`proxy/src/upstream/retry.rs`), one
//! test per row, on real 127.0.0.1 sockets: a scripted agent counts the
//! requests it received, and each test checks that count and what the
//! client got. JSON-RPC (a v1.0 client, a v0.3 agent) and HTTP+JSON (a
//! v0.3 client, a v1.0 agent) calls, card fetches and the proxy's own task
//! fetches.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::Value;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the agent does with one request it read.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// Closes the connection without a byte of answer.
    Close,
    /// Never answers (holds the connection until the proxy closes it).
    Stall,
    /// Answers with this status and JSON body, keeping the connection.
    Answer(u16, &'static str),
    /// Answers, then closes the connection (an idle close).
    AnswerThenClose(u16, &'static str),
}

/// A scripted agent: the n-th request it counts gets `script[n]` (the last
/// one past the end). Card fetches get a 404 unless `cards` is set (then
/// they are counted and scripted too).
struct Agent {
    addr: std::net::SocketAddr,
    received: Arc<AtomicUsize>,
    accepted: Arc<AtomicUsize>,
    /// Connections the agent closed after an answer.
    closed: Arc<AtomicUsize>,
    _task: AbortOnDrop,
}

impl Agent {
    async fn start(script: Vec<Act>, cards: bool) -> Agent {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let accepted = Arc::new(AtomicUsize::new(0));
        let closed = Arc::new(AtomicUsize::new(0));
        let (r, a, c) = (received.clone(), accepted.clone(), closed.clone());
        let script = Arc::new(script);
        let task = tokio::spawn(async move {
            while let Ok((s, _)) = l.accept().await {
                a.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(s, script.clone(), cards, r.clone(), c.clone()));
            }
        });
        Agent {
            addr,
            received,
            accepted,
            closed,
            _task: AbortOnDrop(task),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn received(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }
}

async fn answer(s: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    let out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(out.as_bytes()).await
}

async fn serve(
    mut s: TcpStream,
    script: Arc<Vec<Act>>,
    cards: bool,
    received: Arc<AtomicUsize>,
    closed: Arc<AtomicUsize>,
) {
    let mut reader = Reader::default();
    loop {
        let Ok(Some(head)) = reader.head(&mut s).await else {
            return;
        };
        let (start, headers) = parse_head(&head);
        if reader.body(&mut s, &headers, false).await.is_err() {
            return;
        }
        if !cards && start.contains("/.well-known/") {
            if answer(&mut s, 404, "{}").await.is_err() {
                return;
            }
            continue;
        }
        let n = received.fetch_add(1, Ordering::SeqCst);
        let act = script[n.min(script.len() - 1)];
        match act {
            Act::Close => return,
            Act::Stall => {
                let mut sink = [0u8; 1024];
                let _ = tokio::time::timeout(Duration::from_secs(30), s.read(&mut sink)).await;
                return;
            }
            Act::Answer(status, body) => {
                if answer(&mut s, status, body).await.is_err() {
                    return;
                }
            }
            Act::AnswerThenClose(status, body) => {
                let _ = answer(&mut s, status, body).await;
                drop(s);
                closed.fetch_add(1, Ordering::SeqCst);
                return;
            }
        }
    }
}

fn proxy_for(upstream: &str, version: Version, tweak: impl FnOnce(&mut Config)) -> RunningProxy {
    let mut config = config_for(upstream, version);
    config.limits.connect_timeout = Duration::from_millis(500);
    tweak(&mut config);
    proxy::start(config).unwrap()
}

// JSON-RPC: a v1.0 client, a v0.3 agent (every call translated).
const SEND: &[u8] = br#"{"jsonrpc":"2.0","id":"s","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
const GET: &[u8] = br#"{"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id":"t1"}}"#;
const CANCEL: &[u8] = br#"{"jsonrpc":"2.0","id":"c","method":"CancelTask","params":{"id":"t1"}}"#;
const V03_TASK: &str = r#"{"jsonrpc":"2.0","id":"x","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}}"#;

async fn rpc(px: &RunningProxy, body: &[u8]) -> Response {
    post(px.addr, "/", &[("A2A-Version", "1.0")], body).await
}

/// The proxy's reason for an error (`proxyReason` of its ErrorInfo).
fn reason(r: &Response) -> String {
    let v = r.json();
    let data = &v["error"]["data"];
    let info = if data.is_array() { &data[0] } else { data };
    info["metadata"]["proxyReason"]
        .as_str()
        .or_else(|| info["proxyReason"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connect_is_unreachable_and_nothing_is_received() {
    let dead = format!("http://{}", support::free_local_addr().unwrap());
    let px = proxy_for(&dead, Version::V03, |_| {});
    for body in [SEND, GET] {
        let r = rpc(&px, body).await;
        assert_eq!(r.status, 502, "{}", r.text());
        assert_eq!(reason(&r), "upstream_unavailable", "{}", r.text());
        assert_eq!(r.json()["error"]["message"], "upstream agent unavailable");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pooled_connection_closed_while_idle_carries_no_send() {
    // Each connection answers one call, then the agent closes it: the next
    // send goes on a new connection, and each is received once.
    let agent = Agent::start(vec![Act::AnswerThenClose(200, V03_TASK)], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    for i in 1..=3 {
        let r = rpc(&px, SEND).await;
        assert_eq!(r.status, 200, "call {i}: {}", r.text());
        assert_eq!(r.json()["result"]["task"]["id"], "t1");
        assert_eq!(agent.received(), i);
        // The close has reached the proxy's side before the next call.
        assert!(eventually(|| agent.closed.load(Ordering::SeqCst) == i).await);
    }
    assert_eq!(agent.accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_lost_after_the_write_is_not_sent_again_and_its_outcome_is_unknown() {
    for body in [SEND, CANCEL] {
        let agent = Agent::start(vec![Act::Close, Act::Answer(200, V03_TASK)], false).await;
        let px = proxy_for(&agent.url(), Version::V03, |_| {});
        let r = rpc(&px, body).await;
        assert_eq!(agent.received(), 1, "{}", r.text());
        assert_eq!(r.status, 502, "{}", r.text());
        assert_eq!(reason(&r), "outcome_unknown", "{}", r.text());
        let message = r.json()["error"]["message"].as_str().unwrap().to_string();
        assert!(message.contains("unknown"), "{message}");
        assert_ne!(message, "upstream agent unavailable");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_lost_after_the_write_is_asked_once_more() {
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, V03_TASK)], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    let r = rpc(&px, GET).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["id"], "t1", "{}", r.text());
    assert_eq!(agent.received(), 2);
    // Once more only: a read lost twice is unavailable.
    let agent = Agent::start(vec![Act::Close], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    let r = rpc(&px, GET).await;
    assert_eq!(agent.received(), 2);
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(reason(&r), "upstream_unavailable", "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_with_no_answer_in_time_is_not_sent_again_and_its_outcome_is_unknown() {
    let agent = Agent::start(vec![Act::Stall], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let r = rpc(&px, SEND).await;
    assert_eq!(agent.received(), 1);
    assert_eq!(r.status, 504, "{}", r.text());
    assert_eq!(reason(&r), "outcome_unknown", "{}", r.text());
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("unknown"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_with_no_answer_in_time_is_a_timeout_and_not_sent_again() {
    let agent = Agent::start(vec![Act::Stall], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let r = rpc(&px, GET).await;
    assert_eq!(agent.received(), 1);
    assert_eq!(r.status, 504, "{}", r.text());
    assert_eq!(reason(&r), "upstream_timeout", "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declined_and_failed_answers_are_the_answer_and_never_sent_again() {
    let invalid_params =
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad params"}}"#;
    let no_method =
        r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no such method"}}"#;
    let internal = r#"{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"boom"}}"#;
    // (agent's status and body, the client's status and JSON-RPC code)
    let rows = [
        (400, invalid_params, -32602),
        (200, invalid_params, -32602),
        (200, no_method, -32601),
        (404, "{}", -32006),
        (500, internal, -32603),
        (503, "{}", -32006),
    ];
    for (status, body, code) in rows {
        for call in [SEND, GET] {
            let agent = Agent::start(vec![Act::Answer(status, body)], false).await;
            let px = proxy_for(&agent.url(), Version::V03, |_| {});
            let r = rpc(&px, call).await;
            assert_eq!(agent.received(), 1, "{status} {body}: {}", r.text());
            let v = r.json();
            assert_eq!(v["error"]["code"], code, "{status} {body}: {v}");
            assert_ne!(reason(&r), "outcome_unknown", "{v}");
        }
    }
}

// HTTP+JSON: a v0.3 client, a v1.0 agent.
const REST_SEND: &[u8] =
    br#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}"#;
const V10_TASK: &str = r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}"#;

async fn rest(px: &RunningProxy, send: bool) -> Response {
    let json = [("Content-Type", "application/json")];
    if send {
        post(px.addr, "/v1/message:send", &json, REST_SEND).await
    } else {
        get(px.addr, "/v1/tasks/t1", &json).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_calls_follow_the_same_rule() {
    let up = |script| async move {
        let agent = Agent::start(script, false).await;
        let px = proxy_for(&agent.url(), Version::V10, |c| {
            c.limits.read_timeout = Duration::from_millis(300)
        });
        (agent, px)
    };
    // Lost after the write: a send is not sent again, a read is.
    let (agent, px) = up(vec![Act::Close, Act::Answer(200, V10_TASK)]).await;
    let r = rest(&px, true).await;
    assert_eq!((agent.received(), r.status), (1, 502), "{}", r.text());
    assert!(r.text().contains("unknown"), "{}", r.text());
    let (agent, px) = up(vec![Act::Close, Act::Answer(200, V10_TASK)]).await;
    let r = rest(&px, false).await;
    assert_eq!((agent.received(), r.status), (2, 200), "{}", r.text());
    assert_eq!(r.json()["id"], "t1");
    // No answer in time: neither is sent again; the send's outcome is
    // unknown.
    let (agent, px) = up(vec![Act::Stall]).await;
    let r = rest(&px, true).await;
    assert_eq!((agent.received(), r.status), (1, 504), "{}", r.text());
    assert!(r.text().contains("unknown"), "{}", r.text());
    let (agent, px) = up(vec![Act::Stall]).await;
    let r = rest(&px, false).await;
    assert_eq!((agent.received(), r.status), (1, 504), "{}", r.text());
    assert!(!r.text().contains("unknown"), "{}", r.text());
    // Declined (4xx) and failed (5xx): the answer, once.
    let not_found = r#"{"error":{"code":404,"status":"NOT_FOUND","message":"task t1 not found","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#;
    for (status, body) in [(404, not_found), (500, "{}"), (503, "{}")] {
        for send in [true, false] {
            let (agent, px) = up(vec![Act::Answer(status, body)]).await;
            let r = rest(&px, send).await;
            assert_eq!(agent.received(), 1, "{status}: {}", r.text());
            assert_eq!(r.status, status, "{}", r.text());
        }
    }
    // Refused: unreachable, nothing received.
    let dead = format!("http://{}", support::free_local_addr().unwrap());
    let px = proxy_for(&dead, Version::V10, |_| {});
    let r = rest(&px, true).await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert!(!r.text().contains("unknown"), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_fetch_lost_after_the_write_is_asked_once_more() {
    let card = r#"{"name":"a","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://agent.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"skills":[]}"#;
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, card)], true).await;
    let px = proxy_for(&agent.url(), Version::V10, |_| {});
    let r = get(px.addr, "/.well-known/agent-card.json", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v: Value = r.json();
    assert_eq!(v["name"], "a", "{v}");
    assert_eq!(agent.received(), 2);
}

// Streams: the head of a stream follows the same rule.
const STREAM_SEND: &[u8] = br#"{"jsonrpc":"2.0","id":"ss","method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
// A v0.3 client's resubscribe to a v1.0 agent (a v1.0 client's through a
// v0.3 agent first fetches the task, a call of its own).
const RESUBSCRIBE: &[u8] =
    br#"{"jsonrpc":"2.0","id":"sub","method":"tasks/resubscribe","params":{"id":"t1"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_send_with_no_answer_in_time_is_not_sent_again_and_its_outcome_is_unknown() {
    let agent = Agent::start(vec![Act::Stall], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let r = rpc(&px, STREAM_SEND).await;
    assert_eq!(agent.received(), 1, "{}", r.text());
    assert!(r.text().contains("outcome_unknown"), "{}", r.text());
    assert!(r.text().contains("unknown"), "{}", r.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_lost_after_the_write_is_asked_once_more() {
    let agent = Agent::start(vec![Act::Close], false).await;
    let px = proxy_for(&agent.url(), Version::V10, |_| {});
    let r = post(px.addr, "/", JSON_HEADER, RESUBSCRIBE).await;
    assert_eq!(agent.received(), 2, "{}", r.text());
    assert!(r.text().contains("upstream_unavailable"), "{}", r.text());
    // A streaming send lost after the write is not.
    let agent = Agent::start(vec![Act::Close], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    let r = rpc(&px, STREAM_SEND).await;
    assert_eq!(agent.received(), 1, "{}", r.text());
    assert!(r.text().contains("outcome_unknown"), "{}", r.text());
}

// The proxy's own task fetches: a v1.0 subscription to a v0.3 agent first
// asks the agent for the task (a GetTask, a read).
const SUBSCRIBE: &[u8] =
    br#"{"jsonrpc":"2.0","id":"sub","method":"SubscribeToTask","params":{"id":"t1"}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxys_own_task_fetch_lost_after_the_write_is_asked_once_more() {
    // The first GetTask's connection ends after the request is read; the
    // second is answered a finished task, which the subscription is then
    // refused for (nothing to subscribe to), without a subscribe sent.
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, V03_TASK)], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    let r = rpc(&px, SUBSCRIBE).await;
    assert_eq!(agent.received(), 2, "{}", r.text());
    assert!(r.text().contains("terminal state"), "{}", r.text());
    assert_eq!(r.json()["error"]["code"], -32004, "{}", r.text());
    // The same over HTTP+JSON (the task asked with a GET).
    let task = r#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}"#;
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, task)], false).await;
    let px = proxy_for(&agent.url(), Version::V03, |_| {});
    let r = get(px.addr, "/tasks/t1:subscribe", &[("A2A-Version", "1.0")]).await;
    assert_eq!(agent.received(), 2, "{}", r.text());
    assert!(r.text().contains("terminal state"), "{}", r.text());
}

// One client: the card fetch goes on the pool of the translated calls.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_card_fetch_and_a_translated_call_share_one_keep_alive_connection() {
    // A v1.0 agent (version auto: its card is fetched) and a v0.3 client's
    // GetTask, translated: the card's connection carries the call.
    // Its interface on a host not allowed: the calls go to upstream.url.
    let card = r#"{"name":"a","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://agent.example/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{},"skills":[]}"#;
    let task = r#"{"jsonrpc":"2.0","id":"x","result":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
    let agent = Agent::start(vec![Act::Answer(200, card), Act::Answer(200, task)], true).await;
    let px = proxy_for(&agent.url(), Version::V10, |c| {
        c.upstream_version = UpstreamVersion::Auto
    });
    let r = get(px.addr, "/.well-known/agent-card.json", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let get_v03 = br#"{"jsonrpc":"2.0","id":"g","method":"tasks/get","params":{"id":"t1"}}"#;
    let r = post(px.addr, "/", JSON_HEADER, get_v03).await;
    assert_v03_completed(&r);
    assert_eq!(agent.received(), 2);
    assert_eq!(agent.accepted.load(Ordering::SeqCst), 1);
    assert_eq!(px.app.upstream_pool.opened(), 1);
}

// The gRPC bridge (a gRPC client of an agent with no gRPC interface,
// served over the agent's JSON-RPC interface) sends through the same
// client, under the same table.

/// A proxy with a gRPC listener in front of the scripted agent (a v0.3
/// JSON-RPC agent without a card: its `upstream.url` is the interface).
fn grpc_proxy_for(agent: &Agent) -> support::grpc_agent::GrpcFront {
    let mut config = config_for(&agent.url(), Version::V03);
    config.limits.connect_timeout = Duration::from_millis(500);
    support::grpc_agent::GrpcFront::start(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grpc_bridge_follows_the_same_rule() {
    // A bridged SendMessage whose connection ends after the request was
    // written: not sent again, its outcome unknown.
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, V03_TASK)], false).await;
    let px = grpc_proxy_for(&agent);
    let send = grpc::v10_send_request("hi");
    let s = px.v10().await.send_message(send).await.unwrap_err();
    assert_eq!(agent.received(), 1, "{s:?}");
    assert_eq!(s.code(), tonic::Code::Unknown, "{s:?}");
    let info = support::grpc::error_info(&s);
    assert_eq!(
        info.metadata.get("proxyReason").map(String::as_str),
        Some("outcome_unknown"),
        "{info:?}"
    );
    // A bridged GetTask lost the same way is asked once more, and answered.
    let agent = Agent::start(vec![Act::Close, Act::Answer(200, V03_TASK)], false).await;
    let px = grpc_proxy_for(&agent);
    let get = grpc::v10_get_task("t1");
    let task = px.v10().await.get_task(get).await.unwrap().into_inner();
    assert_eq!(task.id, "t1");
    assert_eq!(agent.received(), 2);
}
