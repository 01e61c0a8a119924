//! `/ready` logs when an agent's readiness changes, not on every poll: the
//! proxy binary polled repeatedly against an agent that cannot give its
//! card, then can, with its log (stderr) read whole.

mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use support::child;
use support::*;

const CARD: &str = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://127.0.0.1:9/rpc","preferredTransport":"JSONRPC","capabilities":{},"skills":[]}"#;

/// GET /ready once the listener accepts (at most 10 s of tries).
async fn ready(addr: std::net::SocketAddr) -> Response {
    let end = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(Instant::now() < end, "the proxy never listened");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    get(addr, "/ready", &[]).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_logs_changes_not_every_poll() {
    let up = Arc::new(AtomicBool::new(false));
    let card_up = up.clone();
    let agent = FakeUpstream::start(move |_| {
        if card_up.load(Ordering::SeqCst) {
            Reply::json(200, CARD)
        } else {
            Reply::json(503, "{}")
        }
    })
    .await;
    let listen = support::free_local_addr().unwrap();
    let listen_at = listen.to_string();
    let args = [
        "--listen",
        &listen_at,
        "--upstream",
        &agent.url(),
        "--no-push",
    ];
    let (mut child, rx) = child::serve_logging(&args, "info");
    const POLLS: usize = 6;
    for _ in 0..POLLS {
        assert_eq!(ready(listen).await.status, 503);
    }
    up.store(true, Ordering::SeqCst);
    for _ in 0..POLLS {
        let r = ready(listen).await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    // The log as written, until every poll's access line is in (the
    // lines of one poll come before its own access line), at most 10 s.
    let polled = |lines: &[String]| {
        let n = lines
            .iter()
            .filter(|l| l.contains("binding=\"ready\""))
            .count();
        n >= 2 * POLLS
    };
    let lines = child::lines_until(&rx, Duration::from_secs(10), polled);
    let _ = child.kill();
    let _ = child.wait();
    let count = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    let not_ready: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("agent not ready"))
        .collect();
    assert_eq!(not_ready.len(), 1, "{lines:#?}");
    assert!(not_ready[0].contains("WARN"), "{not_ready:?}");
    assert!(
        not_ready[0].contains("card fetch"),
        "the detail: {not_ready:?}"
    );
    assert_eq!(count("agent ready"), 1, "{lines:#?}");
    // No other warning line per poll.
    assert!(count("WARN") < POLLS, "{lines:#?}");
    assert_eq!(count("binding=\"ready\""), 2 * POLLS, "{lines:#?}");
}

/// Several agents: `/ready` answers for all of them at once, and the log
/// names the one that is not ready once, not on every poll; the one that
/// is ready is logged once as such.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_agent_ready_logs_each_agent_once() {
    let good = FakeUpstream::start(|_| Reply::json(200, CARD)).await;
    let bad = FakeUpstream::start(|_| Reply::json(503, "{}")).await;
    let dir = fresh_dir("ready-log-agents");
    std::fs::create_dir_all(&dir).unwrap();
    let listen = support::free_local_addr().unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!(
            r#"listen = "{listen}"
threads = 1
[upstream]
version = "0.3"
[[agents]]
name = "good"
prefix = "/good"
[agents.upstream]
url = "{}"
[[agents]]
name = "bad"
prefix = "/bad"
[agents.upstream]
url = "{}"
"#,
            good.url(),
            bad.url()
        ),
    )
    .unwrap();
    let config = config.to_str().unwrap();
    let (mut child, rx) = child::serve_logging(&["--config", config, "--no-push"], "info");
    const POLLS: usize = 6;
    for _ in 0..POLLS {
        let r = ready(listen).await;
        assert_eq!(r.status, 503, "{}", r.text());
        let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["agents"]["good"]["status"], "ready", "{body}");
        assert_eq!(body["agents"]["bad"]["status"], "not ready", "{body}");
    }
    // Each agent has been asked POLLS times once the last answer is in;
    // the log lines of a poll are written before its answer. What came,
    // read for a moment more.
    let lines = child::lines_until(&rx, Duration::from_millis(500), |_| false);
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let of = |what: &str, agent: &str| {
        lines
            .iter()
            .filter(|l| l.contains(what) && l.contains(&format!("agent=\"{agent}\"")))
            .count()
    };
    assert_eq!(of("agent not ready", "bad"), 1, "{lines:#?}");
    assert_eq!(of("agent not ready", "good"), 0, "{lines:#?}");
    assert_eq!(of("agent ready", "good"), 1, "{lines:#?}");
    let warns = lines.iter().filter(|l| l.contains("WARN")).count();
    assert!(warns < POLLS, "{lines:#?}");
}
