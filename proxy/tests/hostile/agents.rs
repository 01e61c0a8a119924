//! Finding 6 (an agent answering garbage: nothing of it reaches the
//! client) and finding 7 (an agent trickling its answer: the whole answer
//! is bounded).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use proxy::config::Config;
use proxy::version::Version;
use proxy::RunningProxy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

use crate::support::*;

/// What the raw agent writes after reading a request head and body.
#[derive(Clone)]
enum Raw {
    /// These bytes at once, then close.
    Bytes(Vec<u8>),
    /// A head announcing `len` body bytes, then one byte every `every`
    /// (at most `len`, and for at most 60 s).
    Trickle { len: usize, every: Duration },
}

/// An agent on 127.0.0.1 that answers every request with `raw`.
async fn raw_agent(raw: Raw) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let raw = raw.clone();
            tokio::spawn(async move {
                let mut reader = Reader::default();
                let Ok(Ok(Some(head))) = timeout(WAIT, reader.head(&mut sock)).await else {
                    return;
                };
                let (_, headers) = parse_head(&head);
                let _ = timeout(WAIT, reader.body(&mut sock, &headers, false)).await;
                match raw {
                    Raw::Bytes(b) => {
                        let _ = sock.write_all(&b).await;
                    }
                    Raw::Trickle { len, every } => {
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n"
                        );
                        if sock.write_all(head.as_bytes()).await.is_err() {
                            return;
                        }
                        let start = Instant::now();
                        for _ in 0..len {
                            if start.elapsed() > Duration::from_secs(60)
                                || sock.write_all(b" ").await.is_err()
                            {
                                return;
                            }
                            tokio::time::sleep(every).await;
                        }
                    }
                }
            });
        }
    });
    (addr, task)
}

fn proxy_to(addr: SocketAddr, version: Version, tweak: impl FnOnce(&mut Config)) -> RunningProxy {
    let mut config = config_for(&format!("http://{addr}"), version);
    tweak(&mut config);
    proxy::start(config).unwrap()
}

const SEND_V10: &str = r#"{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
const SEND_V03: &str = r#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;

/// 10 KB of garbage naming an internal address and a marker.
fn garbage() -> Vec<u8> {
    let mut body = String::from("<html>internal error at 10.9.8.7:4431 SECRET-GARBAGE ");
    while body.len() < 10_000 {
        body.push_str("stack frame 0xdeadbeef SECRET-GARBAGE {\"kind\":\"task\"} ");
    }
    body.into_bytes()
}

fn answer(status: u16, ctype: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn assert_clean(text: &str, agent: SocketAddr) {
    let head: String = text.chars().take(300).collect();
    assert!(
        !text.contains("SECRET-GARBAGE"),
        "agent bytes echoed: {head}"
    );
    assert!(
        !text.contains("10.9.8.7"),
        "internal address echoed: {head}"
    );
    assert!(!text.contains("deadbeef"), "agent bytes echoed: {head}");
    assert!(
        !text.contains(&agent.to_string()),
        "agent address echoed: {head}"
    );
    assert!(text.len() < 1024, "error body of {} bytes", text.len());
}

#[tokio::test]
async fn garbage_from_the_agent_never_reaches_the_client() {
    for (status, ctype) in [
        (200, "application/json"),
        (500, "text/html"),
        (200, "text/plain"),
    ] {
        let (agent, task) = raw_agent(Raw::Bytes(answer(status, ctype, &garbage()))).await;
        let px = proxy_to(agent, Version::V03, |_| {});
        // JSON-RPC, v1.0 client → v0.3 agent (translated).
        let r = post(px.addr, "/", JSON_V10, SEND_V10.as_bytes()).await;
        let text = r.text();
        assert_clean(&text, agent);
        let v: serde_json::Value = serde_json::from_str(&text).expect("a JSON error");
        assert!(v.get("error").is_some(), "{text}");
        // REST, v1.0 client → v0.3 agent.
        let r = post(
            px.addr,
            "/message:send",
            JSON_V10,
            br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#,
        )
        .await;
        assert!(r.status >= 400, "status {}", r.status);
        assert_clean(&r.text(), agent);
        task.abort();
    }
}

#[tokio::test]
async fn an_unreachable_agent_is_not_named_to_the_client() {
    // Nothing listens there.
    let agent: SocketAddr = "127.0.0.1:9".parse().unwrap();
    let px = proxy_to(agent, Version::V03, |_| {});
    let r = post(px.addr, "/", JSON_V10, SEND_V10.as_bytes()).await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert!(!r.text().contains("127.0.0.1:9"), "{}", r.text());
}

/// Seconds until the proxy's answer to `raw` is complete (or the
/// connection ends), at most 30.
async fn seconds_to_answer(addr: SocketAddr, raw: &[u8]) -> (Duration, Vec<u8>) {
    let start = Instant::now();
    let mut sock = TcpStream::connect(addr).await.unwrap();
    sock.write_all(raw).await.unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match timeout(Duration::from_secs(30), sock.read(&mut buf)).await {
            Err(_) | Ok(Ok(0)) | Ok(Err(_)) => return (start.elapsed(), got),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn a_trickled_answer_is_bounded_as_a_whole() {
    // 400 bytes at one per 100 ms: 40 s; every gap well under the read
    // timeout of 1 s, the whole answer bounded at 3 s.
    let (agent, task) = raw_agent(Raw::Trickle {
        len: 400,
        every: Duration::from_millis(100),
    })
    .await;
    let px = proxy_to(agent, Version::V03, |c| {
        c.limits.read_timeout = Duration::from_secs(1);
        c.limits.answer_timeout = Duration::from_secs(3);
    });
    let headers = [("Content-Type", "application/json"), ("A2A-Version", "1.0")];
    // Translated (v1.0 client): the proxy's own call; the client gets a
    // timeout error in its version.
    let (took, got) = seconds_to_answer(
        px.addr,
        &request("POST", "/", &headers, SEND_V10.as_bytes()),
    )
    .await;
    assert!(
        took < Duration::from_secs(12),
        "translated call held {took:?}"
    );
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 504"), "{text}");
    // Passed through (v0.3 client, v0.3 agent): cut at the bound.
    let (took, _) = seconds_to_answer(
        px.addr,
        &request("POST", "/", JSON_HEADER, SEND_V03.as_bytes()),
    )
    .await;
    assert!(
        took < Duration::from_secs(12),
        "passed-through call held {took:?}"
    );
    task.abort();
}

/// Low finding: a JSON-RPC id of 30 digits was answered as a float.
#[tokio::test]
async fn a_30_digit_id_comes_back_exactly_as_sent() {
    let up = FakeUpstream::start(|r| {
        let req: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let body = serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": {
            "kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"}}});
        Reply::json(200, &body.to_string())
    })
    .await;
    let px = proxy_to(up.addr, Version::V03, |_| {});
    let raw = "123456789012345678901234567890";
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"GetTask","params":{{"id":"t1"}}}}"#);
    let r = post(px.addr, "/", JSON_V10, body.as_bytes()).await;
    let text = r.text();
    assert!(text.contains(&format!(r#""id":{raw}"#)), "{text}");
    assert!(!text.contains("e29"), "{text}");
    // The agent saw an id it can echo exactly (a string of the proxy's).
    let sent: serde_json::Value = serde_json::from_slice(&up.calls()[0].body).unwrap();
    assert!(sent["id"].is_string(), "{sent}");
}

/// Low finding: a JSON-RPC body over 64 KiB was routed by its header
/// alone, so a v1.0 method under no (= 0.3) header reached a v0.3 agent
/// untranslated.
#[tokio::test]
async fn a_large_body_is_routed_by_its_method_not_its_header() {
    let up = FakeUpstream::start(|r| {
        let req: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let result = match req["method"].as_str() {
            Some("message/send") => serde_json::json!({"kind": "task", "id": "t1",
                "contextId": "c1", "status": {"state": "submitted"}}),
            _ => serde_json::json!({"echo": req["method"]}),
        };
        Reply::rpc_result(&req["id"], &result)
    })
    .await;
    let px = proxy_to(up.addr, Version::V03, |_| {});
    let big = "x".repeat(100 * 1024);
    // A v1.0 method, no A2A-Version header (0.3 by the header).
    let v10 = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"{big}"}}]}}}}}}"#
    );
    let r = post(px.addr, "/", JSON_HEADER, v10.as_bytes()).await;
    let seen: serde_json::Value = serde_json::from_slice(&up.calls()[0].body).unwrap();
    assert_eq!(
        seen["method"], "message/send",
        "the agent got the other version"
    );
    assert_eq!(seen["params"]["message"]["parts"][0]["kind"], "text");
    let v = r.json();
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_SUBMITTED",
        "{v}"
    );
    // The agent's own version and a method of neither version pass as
    // they are, byte for byte.
    for method in ["message/send", "x-vendor/custom"] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"{method}","params":{{"message":{{"kind":"message","messageId":"m2","role":"user","parts":[{{"kind":"text","text":"{big}"}}]}}}}}}"#
        );
        let _ = post(px.addr, "/", JSON_HEADER, body.as_bytes()).await;
        let last = up.calls().last().unwrap().body.clone();
        assert_eq!(last, body.as_bytes(), "{method} changed on its way");
    }
}

/// What a scripted agent does with one request.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Act {
    /// Answers and keeps the connection.
    Answer,
    /// Answers, then closes the connection (it goes idle-dead in the
    /// proxy's pool).
    AnswerThenClose,
    /// Reads the request and closes without a byte of answer.
    Vanish,
}

/// An agent that answers JSON-RPC `method`s by `script(connection number,
/// request number on it, method)` and records every method it read.
async fn scripted_agent(
    script: fn(usize, usize, &str) -> Act,
) -> (SocketAddr, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        for conn in 0.. {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let log = log.clone();
            tokio::spawn(async move {
                let mut reader = Reader::default();
                for n in 0.. {
                    let Ok(Ok(Some(head))) = timeout(WAIT, reader.head(&mut sock)).await else {
                        return;
                    };
                    let (_, headers) = parse_head(&head);
                    let Ok(Ok(body)) = timeout(WAIT, reader.body(&mut sock, &headers, false)).await
                    else {
                        return;
                    };
                    let req: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                    let method = req["method"].as_str().unwrap_or("").to_string();
                    log.lock().unwrap().push(method.clone());
                    let act = script(conn, n, &method);
                    if act == Act::Vanish {
                        return;
                    }
                    let result = serde_json::json!({"kind": "task", "id": "t1", "contextId": "c1",
                        "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"}});
                    let out =
                        serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": result})
                            .to_string();
                    if sock
                        .write_all(&answer(200, "application/json", out.as_bytes()))
                        .await
                        .is_err()
                        || act == Act::AnswerThenClose
                    {
                        return;
                    }
                }
            });
        }
    });
    (addr, seen)
}

const GET_V10: &str = r#"{"jsonrpc":"2.0","id":8,"method":"GetTask","params":{"id":"t1"}}"#;

async fn v10_call(px: &RunningProxy, body: &str) -> Response {
    post(px.addr, "/", JSON_V10, body.as_bytes()).await
}

/// A proxy toward a v0.3 agent that answers its first request and, on
/// the same connection, reads the second and closes without an answer;
/// the methods the agent read.
async fn behind_an_agent_vanishing_at_its_second_request(
) -> (RunningProxy, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let (agent, seen) = scripted_agent(|conn, n, _| match (conn, n) {
        (0, 1) => Act::Vanish,
        _ => Act::Answer,
    })
    .await;
    (proxy_to(agent, Version::V03, |_| {}), seen)
}

/// How many message/send requests the agent read (`seen`).
fn sends(seen: &std::sync::Mutex<Vec<String>>) -> usize {
    let seen = seen.lock().unwrap();
    seen.iter().filter(|m| *m == "message/send").count()
}

/// #21 (retry only what cannot have acted): a SendMessage written on a
/// reused connection that then ends without an answer is not sent again;
/// the client is told the outcome is unknown.
#[tokio::test]
async fn a_send_that_may_have_arrived_is_not_sent_twice() {
    let (px, seen) = behind_an_agent_vanishing_at_its_second_request().await;
    let r = v10_call(&px, GET_V10).await;
    assert!(r.json()["result"].is_object(), "{}", r.text());
    let r = v10_call(&px, SEND_V10).await;
    assert_eq!(r.status, 502, "{}", r.text());
    let text = r.text();
    assert!(text.contains("unknown"), "{text}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sends = sends(&seen);
    assert_eq!(sends, 1, "the agent got the send {sends} times");
}

/// A read written on a reused connection that ends without an answer is
/// asked once more on a new connection.
#[tokio::test]
async fn a_read_that_may_have_arrived_is_asked_again() {
    let (px, seen) = behind_an_agent_vanishing_at_its_second_request().await;
    let _ = v10_call(&px, GET_V10).await;
    let r = v10_call(&px, GET_V10).await;
    assert!(r.json()["result"].is_object(), "{}", r.text());
    assert_eq!(seen.lock().unwrap().len(), 3, "{:?}", seen.lock().unwrap());
}

/// A pooled connection the agent closed while it was idle is never
/// written to: the send goes out once, on a new connection, and is
/// answered.
#[tokio::test]
async fn a_connection_closed_while_idle_is_not_written_to() {
    let (agent, seen) = scripted_agent(|conn, _, _| match conn {
        0 => Act::AnswerThenClose,
        _ => Act::Answer,
    })
    .await;
    let px = proxy_to(agent, Version::V03, |_| {});
    let _ = v10_call(&px, GET_V10).await;
    // The agent's close reaches the proxy's pooled socket.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = v10_call(&px, SEND_V10).await;
    assert!(r.json()["result"].is_object(), "{}", r.text());
    let sends = sends(&seen);
    assert_eq!(sends, 1, "the agent got the send {sends} times");
}

/// The whole-answer bound is not a stream's: a stream longer than
/// `answer_timeout`, passed through or translated, goes on to its end.
#[tokio::test]
async fn a_stream_outlives_the_answer_timeout() {
    let gate = std::sync::Arc::new(tokio::sync::Semaphore::new(0));
    let g = gate.clone();
    let up = FakeUpstream::start(move |_| {
        let events = (0..8)
            .map(|i| {
                let last = i == 7;
                format!(
                    "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"final\":{last},\"status\":{{\"state\":\"working\"}}}}}}\n\n"
                )
            })
            .collect();
        Reply::Sse {
            events,
            gate: g.clone(),
        }
    })
    .await;
    let px = proxy_to(up.addr, Version::V03, |c| {
        c.limits.read_timeout = Duration::from_secs(1);
        c.limits.answer_timeout = Duration::from_secs(1);
    });
    let pace = tokio::spawn(async move {
        for _ in 0..40 {
            tokio::time::sleep(Duration::from_millis(300)).await;
            gate.add_permits(1);
        }
    });
    let stream_v03 = br#"{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
    let stream_v10 = br#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    for (body, headers) in [
        (&stream_v03[..], vec![("Content-Type", "application/json")]),
        (
            &stream_v10[..],
            vec![("Content-Type", "application/json"), ("A2A-Version", "1.0")],
        ),
    ] {
        let mut s = open(px.addr, &request("POST", "/", &headers, body)).await;
        let text = timeout(Duration::from_secs(15), s.rest())
            .await
            .expect("stream ended");
        let events = text.matches("data:").count();
        assert_eq!(events, 8, "{text}");
    }
    pace.abort();
}
