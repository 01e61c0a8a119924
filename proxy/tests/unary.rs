//! The translated unary JSON-RPC path (`proxy/src/upstream.rs`): the proxy
//! makes the upstream call itself over pooled keep-alive connections and
//! answers with a `Content-Length`. Real 127.0.0.1 sockets throughout.

mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use proxy::config::Config;
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::Value;
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

const V10_SEND: &[u8] = br#"{"jsonrpc":"2.0","id":"a","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
const V03_SEND: &[u8] = br#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
const V03_TASK: &str = r#"{"jsonrpc":"2.0","id":"a","result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}}"#;
const V10_TASK: &str = r#"{"jsonrpc":"2.0","id":7,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;

fn proxy_for(upstream: &str, version: Version, tweak: impl FnOnce(&mut Config)) -> RunningProxy {
    let mut config = config_for(upstream, version);
    tweak(&mut config);
    proxy::start(config).unwrap()
}

/// A request without `Connection: close` (the client keeps its connection).
fn keep_alive_post(headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = String::from("POST / HTTP/1.1\r\nHost: test\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// One request and its whole response on an open client connection.
async fn exchange(sock: &mut TcpStream, reader: &mut Reader, raw: &[u8]) -> Response {
    let fut = async {
        sock.write_all(raw).await.unwrap();
        let head = reader.head(sock).await.unwrap().expect("a response head");
        let (start, headers) = parse_head(&head);
        let status = start.split(' ').nth(1).unwrap().parse().unwrap();
        let body = reader.body(sock, &headers, false).await.unwrap();
        Response {
            status,
            headers,
            body,
        }
    };
    timeout(WAIT, fut).await.expect("response timed out")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn translated_answers_have_a_length_and_reuse_one_upstream_connection() {
    let up = FakeUpstream::start(|_| {
        Reply::json(200, V03_TASK).with_header("X-A2A-Extensions", "urn:e")
    })
    .await;
    let px = proxy_for(&up.url(), Version::V03, |_| {});
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    let mut reader = Reader::default();
    let raw = keep_alive_post(
        &[
            ("A2A-Version", "1.0"),
            ("Content-Type", "application/json"),
            ("A2A-Extensions", "urn:e"),
        ],
        V10_SEND,
    );
    for _ in 0..5 {
        // Several calls on one client connection.
        let r = exchange(&mut sock, &mut reader, &raw).await;
        assert_eq!(r.status, 200, "{}", r.text());
        assert_eq!(r.header("transfer-encoding"), None);
        assert_eq!(
            r.header("content-length"),
            Some(r.body.len().to_string().as_str())
        );
        let v = r.json();
        assert_eq!(v["id"], "a");
        assert_eq!(
            v["result"]["task"]["status"]["state"],
            "TASK_STATE_COMPLETED"
        );
        assert_eq!(r.header("a2a-extensions"), Some("urn:e"));
        assert_eq!(r.header("x-a2a-extensions"), None);
    }
    let calls = up.calls();
    assert_eq!(calls.len(), 5);
    for c in &calls {
        assert_eq!(c.header("a2a-version"), Some("0.3"));
        assert_eq!(c.header("x-a2a-extensions"), Some("urn:e"));
        assert_eq!(c.header("a2a-extensions"), None);
        assert_eq!(c.header("transfer-encoding"), None);
        assert_eq!(
            c.header("content-length"),
            Some(c.body.len().to_string().as_str())
        );
        let sent: Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(sent["method"], "message/send");
        assert_eq!(sent["params"]["message"]["role"], "user");
    }
    // Five calls, one upstream connection.
    assert_eq!(px.app.upstream_pool.opened(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_client_unary_answers_have_a_length_too() {
    let up = FakeUpstream::start(|_| Reply::json(200, V10_TASK)).await;
    let px = proxy_for(&up.url(), Version::V10, |_| {});
    let r = post(px.addr, "/", &[], V03_SEND).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("transfer-encoding"), None);
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    let v = r.json();
    assert_eq!(
        (v["id"].clone(), v["result"]["kind"].clone()),
        (7.into(), "task".into())
    );
    assert_eq!(v["result"]["status"]["state"], "completed");
    assert_eq!(up.calls()[0].header("a2a-version"), Some("1.0"));
}

/// An upstream that answers one request per connection, then closes it
/// (as a keep-alive timeout would); counts its connections.
async fn one_answer_per_connection(answer: &'static str) -> (SocketAddr, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let a = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            a.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut reader = Reader::default();
                let Ok(Some(head)) = reader.head(&mut s).await else {
                    return;
                };
                let (_, headers) = parse_head(&head);
                if reader.body(&mut s, &headers, false).await.is_err() {
                    return;
                }
                let out = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = s.write_all(out.as_bytes()).await;
                // Closed here, after the answer: idle in the proxy's pool.
            });
        }
    });
    (addr, accepted)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_closing_idle_connections_costs_no_call() {
    let (addr, accepted) = one_answer_per_connection(V03_TASK).await;
    let px = proxy_for(&format!("http://{addr}"), Version::V03, |_| {});
    for i in 0..3 {
        let r = post(px.addr, "/", &[("A2A-Version", "1.0")], V10_SEND).await;
        assert_eq!(r.status, 200, "call {i}: {}", r.text());
        assert_eq!(r.json()["result"]["task"]["id"], "t1");
    }
    assert_eq!(accepted.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_failures_are_errors_in_the_clients_version() {
    // Nothing listening: 502, v1.0 envelope with ErrorInfo, id echoed.
    let dead = format!("http://{}", support::free_local_addr().unwrap());
    let px = proxy_for(&dead, Version::V03, |c| {
        c.limits.connect_timeout = Duration::from_millis(500)
    });
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], V10_SEND).await;
    assert_eq!(r.status, 502, "{}", r.text());
    assert_eq!(
        r.header("content-length"),
        Some(r.body.len().to_string().as_str())
    );
    let v = r.json();
    assert_eq!(v["id"], "a");
    assert_eq!(v["error"]["code"], -32603);
    assert_eq!(v["error"]["data"][0]["reason"], "INTERNAL", "{v}");

    // An upstream that never answers: 504 in the v0.3 shape.
    let hang = FakeUpstream::start(|_| Reply::Hang).await;
    let px = proxy_for(&hang.url(), Version::V10, |c| {
        c.limits.read_timeout = Duration::from_millis(300)
    });
    let r = post(px.addr, "/", &[], V03_SEND).await;
    assert_eq!(r.status, 504, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], 7);
    assert_eq!(v["error"]["code"], -32603);
    assert!(
        v["error"]["data"].is_object(),
        "v0.3 data is free-form: {v}"
    );

    // Not HTTP at all: InvalidAgentResponse.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let junk = tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let mut b = [0u8; 4096];
            let _ = s.read(&mut b).await;
            let _ = s.write_all(b"SSH-2.0-OpenSSH\r\n\r\n").await;
        }
    });
    let px = proxy_for(&format!("http://{addr}"), Version::V03, |_| {});
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], V10_SEND).await;
    assert_eq!(r.status, 502, "{}", r.text());
    let v = r.json();
    assert_eq!(v["id"], "a");
    assert_eq!(v["error"]["code"], -32006, "{v}");
    junk.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_json_upstream_errors_keep_their_status_not_their_bytes() {
    let up = FakeUpstream::start(|_| Reply::Full {
        status: 503,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        body: b"overloaded".to_vec(),
    })
    .await;
    let px = proxy_for(&up.url(), Version::V03, |_| {});
    let r = post(px.addr, "/", &[("A2A-Version", "1.0")], V10_SEND).await;
    assert_eq!(r.status, 503);
    // The agent's own words are not the client's to read (they can name
    // internal hosts): an InvalidAgentResponse in the client's version.
    assert!(!r.text().contains("overloaded"), "{}", r.text());
    assert_eq!(r.header("content-type"), Some("application/json"));
    let v = r.json();
    assert_eq!(v["id"], "a");
    assert_eq!(v["error"]["code"], -32006, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_clients_get_translated_unary_answers_with_a_length() {
    let up = FakeUpstream::start(|_| Reply::json(200, V10_TASK)).await;
    let px = proxy_for(&up.url(), Version::V10, |_| {});
    let length = V03_SEND.len().to_string();
    let headers = [
        ("content-type", "application/json"),
        ("content-length", &length),
    ];
    let (status, head, got) = h2c_post(px.addr, &headers, V03_SEND).await;
    let length = head
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    assert_eq!(status, 200);
    assert_eq!(length, Some(got.len().to_string()));
    let v: Value = serde_json::from_slice(&got).unwrap();
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["kind"], "task", "{v}");
    let call = &up.calls()[0];
    assert_eq!(call.header("a2a-version"), Some("1.0"));
    let sent: Value = serde_json::from_slice(&call.body).unwrap();
    assert_eq!(sent["method"], "SendMessage");
    // Made by the proxy itself.
    assert_eq!(px.app.upstream_pool.opened(), 1);
}

/// A raw agent on 127.0.0.1 answering each request on a connection with
/// `head` then `body`, written in pieces of `piece` bytes.
async fn raw_answering(head: String, body: Vec<u8>, piece: usize) -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let (head, body) = (head.clone(), body.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut seen = Vec::new();
                // One request: its head, then its announced body.
                loop {
                    let Ok(Ok(n)) = timeout(WAIT, s.read(&mut buf)).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (k, v) = l.split_once(':')?;
                                k.eq_ignore_ascii_case("content-length")
                                    .then(|| v.trim().parse::<usize>().ok())?
                            })
                            .unwrap_or(0);
                        if seen.len() >= end + 4 + len {
                            break;
                        }
                    }
                }
                if s.write_all(head.as_bytes()).await.is_err() {
                    return;
                }
                for p in body.chunks(piece.max(1)) {
                    if s.write_all(p).await.is_err() {
                        return;
                    }
                }
                let _ = s.shutdown().await;
            });
        }
    });
    addr
}

/// Same-version JSON-RPC calls are the proxy's own and hand the agent's
/// answer on as it comes: one larger than `limits.max_event_bytes` (which
/// bounds only what is translated) arrives whole and unchanged, with the
/// agent's length; one of no length arrives whole too, chunked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_same_version_answer_of_any_size_is_handed_on_as_it_comes() {
    let text = "x".repeat(3 << 20);
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":7,"result":{{"kind":"task","id":"t1","contextId":"c1","status":{{"state":"completed","message":{{"kind":"message","messageId":"m","role":"agent","parts":[{{"kind":"text","text":"{text}"}}]}}}}}}}}"#
    );
    let body = answer.into_bytes();
    let sized = raw_answering(
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        ),
        body.clone(),
        16 * 1024,
    )
    .await;
    let mut chunked = Vec::new();
    for c in body.chunks(100_000) {
        chunked.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
        chunked.extend_from_slice(c);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let no_length = raw_answering(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            .into(),
        chunked,
        16 * 1024,
    )
    .await;
    for (agent, length) in [(sized, Some(body.len())), (no_length, None)] {
        let px = proxy_for(&format!("http://{agent}"), Version::V03, |c| {
            c.limits.max_event_bytes = 1 << 20;
        });
        let r = post(px.addr, "/", JSON_HEADER, V03_SEND).await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body.len(), body.len());
        assert!(r.body == body, "not the agent's bytes");
        assert_eq!(
            r.header("content-length")
                .map(|v| v.parse::<usize>().unwrap()),
            length
        );
        // Made by the proxy itself, not pingora's proxy loop.
        assert_eq!(px.app.upstream_pool.opened(), 1);
    }
}

/// A large same-version answer trickled slower than the whole answer's
/// bound is cut there, not held for as long as the agent keeps writing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_same_version_answer_is_bounded_as_a_whole() {
    let body = vec![b' '; 200 * 1024];
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    // 200 KiB in 1 KiB pieces with no pause is fast; the agent below
    // pauses between pieces instead.
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent = l.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let (head, body) = (head.clone(), body.clone());
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                let _ = timeout(WAIT, s.read(&mut buf)).await;
                let _ = s.write_all(head.as_bytes()).await;
                for p in body.chunks(1024) {
                    if s.write_all(p).await.is_err() {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            });
        }
    });
    let px = proxy_for(&format!("http://{agent}"), Version::V03, |c| {
        c.limits.read_timeout = Duration::from_secs(1);
        c.limits.answer_timeout = Duration::from_secs(2);
    });
    let started = std::time::Instant::now();
    let mut s = TcpStream::connect(px.addr).await.unwrap();
    s.write_all(&request("POST", "/", JSON_HEADER, V03_SEND))
        .await
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    // Until the proxy closes the connection (bounded).
    while let Ok(Ok(n)) = timeout(Duration::from_secs(30), s.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    let took = started.elapsed();
    // 200 pieces at 100 ms would be 20 s.
    assert!(took < Duration::from_secs(10), "held {took:?}");
    let text = String::from_utf8_lossy(&got);
    assert!(
        text.starts_with("HTTP/1.1 200"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(got.len() < 200 * 1024, "the whole answer came");
}
