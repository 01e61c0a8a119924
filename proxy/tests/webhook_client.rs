//! Webhook delivery to an `http://` webhook (`proxy/src/push/webhook.rs`):
//! the answer read past its informational heads (a `100 Continue` is no
//! answer), its chunked body read so the connection is kept, on real
//! 127.0.0.1 sockets.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use support::*;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;

/// A webhook answering every post with `100 Continue`, then a 200 with a
/// chunked body, keeping the connection; counts connections and posts.
async fn webhook() -> (std::net::SocketAddr, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let posts = Arc::new(AtomicUsize::new(0));
    let (a, p) = (accepted.clone(), posts.clone());
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            a.fetch_add(1, Ordering::SeqCst);
            let p = p.clone();
            tokio::spawn(async move {
                let mut reader = Reader::default();
                loop {
                    let Ok(Some(head)) = reader.head(&mut s).await else {
                        return;
                    };
                    let (_, headers) = parse_head(&head);
                    if reader.body(&mut s, &headers, false).await.is_err() {
                        return;
                    }
                    p.fetch_add(1, Ordering::SeqCst);
                    let answer = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n";
                    if s.write_all(answer).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, accepted, posts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_answer_after_100_continue_is_the_final_one_and_its_connection_kept() {
    let (agent, seen) = v03_push_agent().await;
    let (hook, accepted, posts) = webhook().await;
    let dir = fresh_dir("webhook");
    let px = push_proxy(&agent.url(), &dir, |_| {});
    let send = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": format!("http://{hook}/h"), "token": "tok"}}}});
    let r = post(px.addr, "/", JSON_V10, send.to_string().as_bytes()).await;
    assert_eq!(r.json()["result"]["task"]["id"], "t1", "{}", r.text());
    let (path, secret) = callback_of(px.addr, &seen);
    for state in ["working", "completed"] {
        let body = json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": state, "timestamp": "2024-03-15T18:30:00Z"}});
        let r = post(
            px.addr,
            &path,
            &[
                ("Content-Type", "application/json"),
                ("X-A2A-Notification-Token", &secret),
            ],
            body.to_string().as_bytes(),
        )
        .await;
        assert_eq!(r.status, 200, "{}", r.text());
        // Delivered (and counted so) before the next one.
        let n = if state == "working" { 1 } else { 2 };
        assert!(
            eventually(|| posts.load(Ordering::SeqCst) >= n).await,
            "post {n} not received"
        );
    }
    // Each delivered once (a 100 is no failure), on one connection.
    let delivered = "a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"delivered\"} 2";
    let mut m = String::new();
    for _ in 0..250 {
        m = get(px.addr, "/metrics", &[]).await.text();
        if m.contains(delivered) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(m.contains(delivered), "{m}");
    assert!(
        m.contains("a2a_proxy_push_deliveries_total{agent=\"default\",outcome=\"failed\"} 0"),
        "{m}"
    );
    assert_eq!(posts.load(Ordering::SeqCst), 2);
    assert_eq!(accepted.load(Ordering::SeqCst), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
