//! The push outbox against an agent that pushes more than a subscriber
//! that is down can take (issue #41, item 3), through a real proxy with
//! push on (embedded store): the outbox is bounded per config and in all
//! (`push.outbox_*`); a push beyond a bound is refused with a status the
//! agent may retry (429 / 503 with `Retry-After`, 413 for one that never
//! fits), stored nowhere; everything accepted is kept (across a restart)
//! and delivered, in order, once the subscriber is back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use proxy::config::OutboxBounds;
use proxy::version::Version;
use serde_json::{json, Value};

use super::push::{register_hook, start_proxy, v03_agent};
use crate::support::*;

/// A v0.3 agent's push about task t1: `n` in its status message, `pad`
/// bytes of padding.
fn notice(n: usize, pad: usize) -> Value {
    json!({"kind": "task", "id": "t1", "contextId": "c1",
        "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z",
            "message": {"kind": "message", "messageId": format!("m{n}"), "role": "agent",
                "parts": [{"kind": "text", "text": format!("n{n}")}]}},
        "metadata": {"pad": "p".repeat(pad)}})
}

/// What a delivered v1.0 body says its `n` is.
fn n_of(b: &Value) -> Option<String> {
    let parts = b["task"]["status"]["message"]["parts"].as_array()?;
    Some(parts.first()?["text"].as_str()?.to_string())
}

/// Bounds small enough to reach: 3 items (or 256 KiB) per config, 5 in all.
fn small(c: &mut proxy::config::Config) {
    c.push.outbox = OutboxBounds {
        config_items: 3,
        config_bytes: 256 * 1024,
        total_items: 5,
        total_bytes: 64 << 20,
    };
    // Down for a while: no dead letter frees the outbox meanwhile.
    c.push.max_attempts = 1000;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_outbox_refuses_pushes_retryably_and_keeps_what_it_accepted() {
    let (agent, seen) = v03_agent().await;
    let down = Arc::new(AtomicBool::new(true));
    // The `n` of each body the webhook took (answered 200), in order.
    let took: Arc<std::sync::Mutex<Vec<String>>> = Arc::default();
    let (d, t) = (down.clone(), took.clone());
    let hook = FakeUpstream::start(move |r| {
        if d.load(Ordering::SeqCst) {
            return Reply::json(503, "{}");
        }
        let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        t.lock().unwrap().push(n_of(&body).unwrap_or_default());
        Reply::json(200, "{}")
    })
    .await;
    let dir = fresh_dir("hostile-push-outbox");
    let mut px = start_proxy(&agent.url(), Version::V03, &dir, small);
    let (a, a_secret) = register_hook(&px, &hook, &seen, "t1").await;
    let (b, b_secret) = register_hook(&px, &hook, &seen, "t1").await;
    assert_ne!(a, b);
    let push = |path: String, secret: String, body: Value| {
        let addr = px.addr;
        async move { push_bearing(addr, &path, &secret, &body).await }
    };
    for n in 0..3 {
        let r = push(a.clone(), a_secret.clone(), notice(n, 10)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Config a is at its bound: refused, to retry later.
    let r = push(a.clone(), a_secret.clone(), notice(3, 10)).await;
    assert_eq!(r.status, 429, "{}", r.text());
    assert_eq!(r.header("retry-after"), Some("5"), "{:?}", r.headers);
    // One that could never fit: 413.
    let r = push(b.clone(), b_secret.clone(), notice(90, 300 * 1024)).await;
    assert_eq!(r.status, 413, "{}", r.text());
    for n in 10..12 {
        let r = push(b.clone(), b_secret.clone(), notice(n, 10)).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // Five in all: the whole outbox is at its bound.
    let r = push(b.clone(), b_secret.clone(), notice(12, 10)).await;
    assert_eq!(r.status, 503, "{}", r.text());
    assert_eq!(r.header("retry-after"), Some("5"), "{:?}", r.headers);
    // A restart on the same data: the bounds still hold.
    px.stop();
    drop(px);
    let px = start_proxy(&agent.url(), Version::V03, &dir, small);
    let addr = px.addr;
    let again = |path: &str, secret: &str, n| {
        let (path, secret) = (path.to_string(), secret.to_string());
        async move { push_bearing(addr, &path, &secret, &notice(n, 10)).await }
    };
    assert_eq!(again(&a, &a_secret, 3).await.status, 429);
    assert_eq!(again(&b, &b_secret, 12).await.status, 503);
    assert!(
        hook.recorded().iter().all(|r| {
            let v: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            !matches!(n_of(&v).as_deref(), Some("n3" | "n12" | "n90"))
        }),
        "a refused push was delivered"
    );
    // The subscriber is back: everything accepted arrives, each config's
    // in order, nothing refused among it.
    down.store(false, Ordering::SeqCst);
    let end = Instant::now() + Duration::from_secs(60);
    let delivered = loop {
        let got = took.lock().unwrap().clone();
        if got.len() >= 5 || Instant::now() > end {
            break got;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let of = |names: &[&str]| -> Vec<String> {
        delivered
            .iter()
            .filter(|n| names.contains(&n.as_str()))
            .cloned()
            .collect()
    };
    assert_eq!(of(&["n0", "n1", "n2"]), ["n0", "n1", "n2"], "{delivered:?}");
    assert_eq!(of(&["n10", "n11"]), ["n10", "n11"], "{delivered:?}");
    assert_eq!(delivered.len(), 5, "{delivered:?}");
    // Delivered: room again (bounded wait for the completions).
    let mut status = 0;
    for _ in 0..400 {
        status = again(&a, &a_secret, 3).await.status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(status, 200);
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
