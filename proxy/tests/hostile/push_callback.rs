//! The push callback route against unauthenticated and greedy agents
//! (issue #41, item 2), through a real proxy with push on: a callback's id
//! and secret are checked from its head, before a byte of its body is
//! read; callbacks count against `limits.max_connections`; the bytes read
//! at once across callbacks are bounded (`push.callback_read_bytes`).

use std::time::Duration;

use proxy::version::Version;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::push::{metric, register_hook, start_proxy, v03_agent, webhook};
use crate::support::*;

/// Generous bound on an answer the proxy gives from a request head.
const AT_ONCE: Duration = Duration::from_secs(20);

/// A v0.3 agent's push of a Task t1 (status working) whose JSON is about
/// `bytes` long.
fn task_body(bytes: usize) -> Vec<u8> {
    let pad = "p".repeat(bytes.saturating_sub(200));
    json!({"kind": "task", "id": "t1", "contextId": "c1",
        "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"},
        "metadata": {"pad": pad}})
    .to_string()
    .into_bytes()
}

/// The head of a callback POST to `path` announcing `length` body bytes.
fn head(path: &str, secret: &str, length: usize) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\n\
         Authorization: Bearer {secret}\r\nContent-Length: {length}\r\n\r\n"
    )
    .into_bytes()
}

/// Reads a whole answer from `sock` (the connection then closed, or its
/// length read): its status, whether the proxy closed the connection, the
/// raw answer. Panics after [`AT_ONCE`].
async fn answer(sock: &mut TcpStream) -> (u16, bool, String) {
    let read = async {
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = sock.read(&mut buf).await.unwrap_or(0);
            if n == 0 {
                return (got, true);
            }
            got.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&got).to_string();
            if let Some((h, body)) = text.split_once("\r\n\r\n") {
                let len = h
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if body.len() >= len {
                    return (got, false);
                }
            }
        }
    };
    let (got, closed) = tokio::time::timeout(AT_ONCE, read)
        .await
        .expect("no answer from the request head");
    let text = String::from_utf8_lossy(&got).to_string();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, closed, text)
}

/// Whether the proxy closes `sock` (bounded).
async fn closes(sock: &mut TcpStream) -> bool {
    let mut buf = [0u8; 1024];
    let wait = async {
        loop {
            match sock.read(&mut buf).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(AT_ONCE, wait).await.unwrap_or(false)
}

const READING: &str = "a2a_proxy_push_callback_read_bytes{agent=\"default\"}";

/// Whether the bytes of callback bodies being read at `px` come to `n`
/// (waited for, bounded).
async fn reading_reaches(px: &proxy::RunningProxy, n: u64) -> bool {
    for _ in 0..400 {
        if metric(px, READING).await == n {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

/// Sends a callback head (and `body_part` of its body) on a new connection.
async fn send_head(addr: std::net::SocketAddr, head: &[u8], body_part: &[u8]) -> TcpStream {
    let mut sock = TcpStream::connect(addr).await.unwrap();
    sock.write_all(head).await.unwrap();
    sock.write_all(body_part).await.unwrap();
    sock
}

/// An unknown id, a wrong secret, a body larger than the limits by its
/// own account: each answered from the head at once, the announced body
/// never sent, the connection then closed (its body is left unread).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callbacks_head_is_checked_before_its_body_is_read() {
    let (agent, seen) = v03_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-callback-head");
    let px = start_proxy(&agent.url(), Version::V03, &dir, |c| {
        // A proxy that waited for the bodies would answer after this.
        c.limits.body_timeout = Duration::from_secs(600);
        c.limits.max_body_bytes = 8 << 20;
        c.push.callback_read_bytes = 6 << 20;
    });
    let (path, secret) = register_hook(&px, &hook, &seen, "t1").await;
    let unknown = format!("/a2a-proxy/push/{}", "0".repeat(32));
    for (target, token, length, want) in [
        (unknown.as_str(), secret.as_str(), 4 << 20, 404),
        (path.as_str(), "not-the-secret", 4 << 20, 401),
        (path.as_str(), "", 1 << 20, 401),
        // Over limits.max_body_bytes (8 MiB), and over the callbacks'
        // read budget (6 MiB).
        (path.as_str(), secret.as_str(), 9 << 20, 413),
        (path.as_str(), secret.as_str(), (6 << 20) + 1, 413),
    ] {
        let mut sock = send_head(px.addr, &head(target, token, length), b"{").await;
        let (status, closed, text) = answer(&mut sock).await;
        assert_eq!(status, want, "{target} {token:?} {length}: {text}");
        assert!(closed || closes(&mut sock).await, "kept open: {text}");
        assert!(!text.contains(&secret), "{text}");
    }
    // A callback of no body at all keeps its connection.
    let mut sock = send_head(px.addr, &head(&unknown, "x", 0), b"").await;
    let (status, closed, text) = answer(&mut sock).await;
    assert_eq!((status, closed), (404, false), "{text}");
    sock.write_all(&head(&unknown, "x", 0)).await.unwrap();
    assert_eq!(answer(&mut sock).await.0, 404);
    assert!(hook.recorded().is_empty());
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `limits.max_connections = 2`, two callbacks whose bodies are still
/// coming hold both slots: a third callback (even to an unknown id) and a
/// JSON-RPC call are refused 503 with `Retry-After`, their bodies unread;
/// once the two end (both accepted), the slots are free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callbacks_count_against_max_connections() {
    let (agent, seen) = v03_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-callback-connections");
    let px = start_proxy(&agent.url(), Version::V03, &dir, |c| {
        c.limits.max_connections = 2;
        c.limits.body_timeout = Duration::from_secs(600);
    });
    let (path, secret) = register_hook(&px, &hook, &seen, "t1").await;
    // Its slot is given back when its access line is written (bounded).
    for _ in 0..400 {
        let text = get(px.addr, "/metrics", &[]).await.text();
        let logged = text.lines().any(|l| {
            l.starts_with("a2a_proxy_requests_total{") && l.contains("method=\"SendMessage\"")
        });
        if logged {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let body = task_body(4096);
    let (start, rest) = body.split_at(body.len() - 10);
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(send_head(px.addr, &head(&path, &secret, body.len()), start).await);
    }
    // Both counted in, past their head checks: their bytes are reserved.
    let both = 2 * body.len() as u64;
    assert!(
        reading_reaches(&px, both).await,
        "the two callbacks are not being read"
    );
    let unknown = format!("/a2a-proxy/push/{}", "0".repeat(32));
    let mut sock = send_head(px.addr, &head(&unknown, "x", 1 << 20), b"{").await;
    let (status, closed, text) = answer(&mut sock).await;
    assert_eq!(status, 503, "{text}");
    assert!(
        text.to_ascii_lowercase().contains("retry-after: "),
        "{text}"
    );
    assert!(closed || closes(&mut sock).await, "kept open: {text}");
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}});
    let r = post(px.addr, "/", JSON_V10, rpc.to_string().as_bytes()).await;
    assert_eq!(r.status, 503, "{}", r.text());
    for mut sock in held {
        sock.write_all(rest).await.unwrap();
        let (status, _, text) = answer(&mut sock).await;
        assert_eq!(status, 200, "{text}");
    }
    let mut sock = send_head(px.addr, &head(&unknown, "x", 0), b"").await;
    assert_eq!(answer(&mut sock).await.0, 404, "slots given back");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `push.callback_read_bytes = 256 KiB`: while one authenticated callback
/// of 200 KiB is being read, a second one of 200 KiB is not (its bytes
/// stay in the socket); it is read and accepted once the first is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bytes_read_at_once_across_callbacks_are_bounded() {
    let (agent, seen) = v03_agent().await;
    let hook = webhook().await;
    let dir = fresh_dir("hostile-callback-budget");
    let px = start_proxy(&agent.url(), Version::V03, &dir, |c| {
        c.limits.body_timeout = Duration::from_secs(600);
        c.push.callback_read_bytes = 256 * 1024;
    });
    let (path, secret) = register_hook(&px, &hook, &seen, "t1").await;
    let body = task_body(200 * 1024);
    let (start, last) = body.split_at(body.len() - 1);
    let mut first = send_head(px.addr, &head(&path, &secret, body.len()), start).await;
    // The first one's bytes reserved.
    assert!(reading_reaches(&px, body.len() as u64).await);
    let mut second = send_head(px.addr, &head(&path, &secret, body.len()), &body).await;
    let mut probe = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_secs(1), second.read(&mut probe)).await;
    assert!(
        early.is_err(),
        "the second callback was answered while the first held the budget"
    );
    first.write_all(last).await.unwrap();
    let (status, _, text) = answer(&mut first).await;
    assert_eq!(status, 200, "{text}");
    let (status, _, text) = answer(&mut second).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(metric(&px, READING).await, 0, "given back");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
