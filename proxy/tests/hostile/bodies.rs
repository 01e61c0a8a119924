//! Untrusted request bodies: deep nesting and sizes past the limit, on
//! every translated binding. The proxy answers an error in the client's
//! version and keeps serving.

use std::time::Duration;

use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;

use crate::support::*;

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test]
async fn deeply_nested_bodies_get_an_error_and_the_proxy_lives_on() {
    let up =
        FakeUpstream::start(|_| Reply::json(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)).await;
    let addr = crate::support::free_local_addr().unwrap();
    let mut config = Config::new(addr, &up.url()).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    let px = proxy::start(config).unwrap();
    let deep = nested(200_000);
    let bodies = [
        // Small enough to be read before routing, and over 64 KiB.
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":{{"data":{}}}}}]}}}}}}"#,
            nested(5_000)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"data":{{"data":{deep}}}}}]}}}}}}"#
        ),
        format!(r#"{{"jsonrpc":"2.0","id":{deep},"method":"SendMessage"}}"#),
    ];
    for body in &bodies {
        let r = post(px.addr, "/", JSON_V10, body.as_bytes()).await;
        let v = r.json();
        assert!(v.get("error").is_some(), "status {}: {v}", r.status);
        let r = post(px.addr, "/message:send", JSON_V10, body.as_bytes()).await;
        assert!((400..500).contains(&r.status), "REST status {}", r.status);
    }
    // Nothing of these reached the agent untranslated.
    for call in up.calls() {
        let text = String::from_utf8_lossy(&call.body);
        assert!(!text.contains("SendMessage"), "the agent got a v1.0 body");
    }
    let h = get(px.addr, "/health", &[]).await;
    assert_eq!(h.status, 200);
}

#[tokio::test]
async fn a_body_past_the_limit_is_refused_before_it_is_read() {
    let up = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let addr = crate::support::free_local_addr().unwrap();
    let mut config = Config::new(addr, &up.url()).unwrap();
    config.threads = 1;
    config.limits.max_body_bytes = 64 * 1024;
    config.upstream_version = UpstreamVersion::Fixed(Version::V03);
    let px = proxy::start(config).unwrap();
    // Announced too large: 413 without reading (the client never sends it).
    let head = "POST / HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: 10000000\r\n\r\n";
    let r = tokio::time::timeout(Duration::from_secs(10), send(px.addr, head.as_bytes()))
        .await
        .expect("answered without the body");
    assert_eq!(r.status, 413);
    assert!(up.calls().is_empty());
}
