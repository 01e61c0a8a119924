//! Unit tests of `crate::tasks::relay`.

use super::*;
use std::time::Duration;

use crate::sse::sse_frame;

fn relay(max: usize, buffer: usize) -> Arc<Relay> {
    Arc::new(Relay::new(RelayLimits {
        max_subscriptions: max,
        max_wait: Duration::from_secs(5),
        max_buffer_bytes: buffer,
    }))
}

fn task(id: &str, state: &str, ts: &str) -> Value {
    json!({"id": id, "contextId": "c", "status": {"state": state, "timestamp": ts},
               "artifacts": [{"artifactId": "a", "parts": [{"text": "x"}]}]})
}

fn soon() -> Instant {
    Instant::now() + Duration::from_secs(5)
}

fn event(n: Next) -> Value {
    match n {
        Next::Event(b) => serde_json::from_slice(&b).unwrap(),
        other => panic!("not an event: {other:?}"),
    }
}

#[tokio::test]
async fn relays_what_follows_and_ends_at_a_terminal_state() {
    let r = relay(4, 1 << 20);
    let mut s = r.subscribe("t1").unwrap();
    s.starts_at(&task(
        "t1",
        "TASK_STATE_INPUT_REQUIRED",
        "2026-01-01T00:00:01Z",
    ));
    // The same status again (a GetTask of the idle task): not news.
    r.publish_value(
        "GetTask",
        &task("t1", "TASK_STATE_INPUT_REQUIRED", "2026-01-01T00:00:01Z"),
    );
    // Another task's answer: not this subscriber's.
    r.publish_value(
        "SendMessage",
        &json!({"task": task("t2", "TASK_STATE_COMPLETED", "2026-01-01T00:00:02Z")}),
    );
    let u = json!({"statusUpdate": {"taskId": "t1", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:02Z"}}});
    r.publish_envelope(
        "SendStreamingMessage",
        json!({"jsonrpc": "2.0", "id": 9, "result": u})
            .to_string()
            .as_bytes(),
    );
    let a = json!({"artifactUpdate": {"taskId": "t1", "artifact": {"artifactId": "a"}}});
    r.publish_result("SendStreamingMessage", a.to_string().as_bytes());
    // An older status arriving late: skipped.
    r.publish_value(
        "GetTask",
        &task("t1", "TASK_STATE_SUBMITTED", "2026-01-01T00:00:00Z"),
    );
    let done = task("t1", "TASK_STATE_COMPLETED", "2026-01-01T00:00:03Z");
    r.publish_value("SendMessage", &json!({ "task": done }));
    assert_eq!(event(s.next(soon()).await), u);
    assert_eq!(event(s.next(soon()).await), a);
    let last = event(s.next(soon()).await);
    assert_eq!(
        last.pointer("/statusUpdate/status/state"),
        Some(&json!("TASK_STATE_COMPLETED"))
    );
    assert_eq!(last.pointer("/statusUpdate/contextId"), Some(&json!("c")));
    assert_eq!(event(s.next(soon()).await), json!({ "task": done }));
    assert!(matches!(s.next(soon()).await, Next::End));
}

#[tokio::test]
async fn waits_are_bounded_and_subscriptions_counted() {
    let r = relay(1, 1 << 20);
    let mut s = r.subscribe("t").unwrap();
    assert!(r.subscribe("u").is_none(), "over max_subscriptions");
    let until = Instant::now() + Duration::from_millis(20);
    assert!(matches!(s.next(until).await, Next::Expired));
    drop(s);
    assert_eq!(r.open(), 0);
    assert!(r.subs.lock().unwrap().is_empty());
    assert!(relay(0, 1).subscribe("t").is_none(), "0 turns relaying off");
    assert!(r.subscribe(&"x".repeat(MAX_ID_BYTES + 1)).is_none());
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_is_told() {
    let r = relay(4, 300);
    let mut s = r.subscribe("t").unwrap();
    for i in 0..10 {
        let ts = format!("2026-01-01T00:00:{i:02}Z");
        r.publish_value("GetTask", &task("t", "TASK_STATE_WORKING", &ts));
    }
    assert!(matches!(s.next(soon()).await, Next::Lost));
}

#[tokio::test]
async fn an_event_published_while_waiting_wakes_the_subscriber() {
    let r = relay(4, 1 << 20);
    let mut s = r.subscribe("t").unwrap();
    let r2 = r.clone();
    let publisher = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let done = task("t", "TASK_STATE_FAILED", "2026-01-01T00:00:03Z");
        r2.publish_value("CancelTask", &done);
    });
    let first = event(s.next(soon()).await);
    assert_eq!(
        first.pointer("/statusUpdate/status/state"),
        Some(&json!("TASK_STATE_FAILED"))
    );
    publisher.await.unwrap();
}

#[test]
fn refusals_are_told_from_live_streams() {
    assert!(refuses(
        200,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}"#
    ));
    assert!(!refuses(
        200,
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#
    ));
    assert!(refuses(404, br#"{"message":"Task not found"}"#));
    assert!(!refuses(404, br#"{"detail":"Not Found"}"#));
    assert!(!refuses(200, br#"{"result":{"kind":"status-update"}}"#));

    let sub = || relay(4, 1 << 20).subscribe("t").unwrap();
    // A refusal split over two pieces.
    let mut w = Watch::new(sub(), 1 << 16);
    assert!(matches!(
        w.piece(
            Some(Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",")),
            false
        ),
        Watched::Hold
    ));
    let rest = Bytes::from_static(b"\"id\":1,\"error\":{\"code\":-32001}}\n\n");
    assert!(matches!(w.piece(Some(rest), false), Watched::Refused(_)));
    // A live stream: everything held goes on.
    let mut w = Watch::new(sub(), 1 << 16);
    let ev = Bytes::from_static(b": hi\n\ndata: {\"result\":{}}\n\n");
    match w.piece(Some(ev.clone()), false) {
        Watched::Live(Some(b)) => assert_eq!(b, ev),
        _ => panic!("not live"),
    }
    // Over before its first event.
    let mut w = Watch::new(sub(), 1 << 16);
    assert!(matches!(w.piece(None, true), Watched::Refused(_)));
    let mut w = Watch::new(sub(), 1 << 16);
    assert!(w.failed().is_some());
    let mut w = Watch::new(sub(), 1 << 16);
    assert!(w
        .refused_answer(404, br#"{"detail":"Not Found"}"#)
        .is_none());
    assert_eq!(
        sse_frame(b"{\"a\":1}", Some(&json!(7))),
        Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"a\":1}}\n\n")
    );
}
