//! Several agents behind one gRPC listener (issue #23), through the real
//! `serve` and `check-upstream` commands: two fake JSON-RPC agents of
//! different versions behind the shared `grpc.listen`, routed by the
//! call's `:authority` (tonic clients with the channel's origin set), each
//! answering its own calls with its own card; an authority no agent is
//! served at is refused with NOT_FOUND; each call's metrics carry its
//! agent; each call runs in the `a2a_call` span with the caller's trace
//! id, which goes on to the agent; agents with gRPC upstreams each call
//! their own; check-upstream checks every agent.

mod support;

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use proto::v03 as p03;
use proto::v10 as p10;
use proxy::version::Version;
use serde_json::{json, Value};
use support::grpc_agent::{always, GrpcAgent};
use support::*;

const CARD_V03: &str = r#"{"name":"alpha","description":"agent A","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP/rpc","transport":"JSONRPC"}],"capabilities":{"streaming":true},"skills":[]}"#;

const CARD_V10: &str = r#"{"name":"beta","description":"agent B","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"extendedAgentCard":true},"skills":[]}"#;

const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

/// A fake JSON-RPC agent of `card`'s version: card methods get the card,
/// every other call the task `task` in its version.
async fn fake(card: &'static str, v03: bool, task: &'static str) -> FakeUpstream {
    let host = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let h = host.clone();
    let agent = agent_with_card(
        move |me| card.replace("UP", me),
        move |r| {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let method = req["method"].as_str().unwrap_or("");
            let me = h.get().map(String::as_str).unwrap_or("?");
            let result = if method.contains("xtended") {
                serde_json::from_str(&card.replace("UP", me)).unwrap()
            } else if v03 {
                json!({"kind": "task", "id": task, "contextId": "c",
                    "status": {"state": "completed"}})
            } else {
                json!({"task": {"id": task, "contextId": "c",
                    "status": {"state": "TASK_STATE_COMPLETED"}}})
            };
            Reply::rpc_result(&req["id"], &result)
        },
    )
    .await;
    host.set(agent.addr.to_string()).unwrap();
    agent
}

/// `a2a-compat-proxy serve --config FILE` running; killed on drop. Its
/// stderr lines arrive on `lines`.
struct Serve {
    child: Child,
    lines: mpsc::Receiver<String>,
    dir: std::path::PathBuf,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A temporary directory holding `config` as `proxy.toml`.
fn config_file(name: &str, config: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = tls::temp_dir(&format!("agents-grpc-{name}"));
    let file = dir.join("proxy.toml");
    std::fs::File::create(&file)
        .unwrap()
        .write_all(config.as_bytes())
        .unwrap();
    (dir, file)
}

/// Starts `serve` on `config` with `RUST_LOG=rust_log` and JSON logs, and
/// waits (at most 15 s) until both `http` and `grpc` accept connections.
async fn serve(config: &str, rust_log: &str, http: SocketAddr, grpc: SocketAddr) -> Serve {
    let (dir, file) = config_file("serve", config);
    let args = ["--config", file.to_str().unwrap(), "--log-format", "json"];
    let (child, lines) = support::child::serve_logging(&args, rust_log);
    let s = Serve { child, lines, dir };
    let end = Instant::now() + Duration::from_secs(15);
    for addr in [http, grpc] {
        while tokio::net::TcpStream::connect(addr).await.is_err() {
            assert!(Instant::now() < end, "serve did not listen on {addr}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    s
}

/// A channel to the gRPC listener `g` whose calls say `authority`.
fn v10_send(text: &str) -> tonic::Request<p10::SendMessageRequest> {
    tonic::Request::new(grpc::v10_send_request(text))
}

fn v03_send(text: &str) -> tonic::Request<p03::SendMessageRequest> {
    tonic::Request::new(grpc::v03_send_request(text))
}

async fn v10_task_id(g: SocketAddr, authority: &str) -> String {
    let mut c =
        p10::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some(authority)).await);
    match c
        .send_message(v10_send("hi"))
        .await
        .unwrap()
        .into_inner()
        .payload
    {
        Some(p10::send_message_response::Payload::Task(t)) => t.id,
        other => panic!("{other:?}"),
    }
}

async fn v03_task_id(g: SocketAddr, authority: &str) -> String {
    let mut c =
        p03::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some(authority)).await);
    match c
        .send_message(v03_send("hi"))
        .await
        .unwrap()
        .into_inner()
        .payload
    {
        Some(p03::send_message_response::Payload::Task(t)) => t.id,
        other => panic!("{other:?}"),
    }
}

/// The one `a2a_proxy_requests_total` sample line holding every part.
fn sample<'a>(metrics: &'a str, parts: &[&str]) -> Option<&'a str> {
    metrics
        .lines()
        .find(|l| l.starts_with("a2a_proxy_requests_total{") && parts.iter().all(|p| l.contains(p)))
}

/// The config file's first lines: HTTP on `http`, gRPC on `g`, one
/// thread, push off.
fn listeners(http: SocketAddr, g: SocketAddr) -> String {
    format!("listen = \"{http}\"\nthreads = 1\n[grpc]\nlisten = \"{g}\"\n[push]\nenabled = false")
}

fn two_agents(http: SocketAddr, g: SocketAddr, a: &FakeUpstream, b: &FakeUpstream) -> String {
    format!(
        r#"{front}
[[agents]]
name = "a"
hosts = ["a.example"]
[agents.upstream]
url = "{}"
[[agents]]
name = "b"
hosts = ["b.example"]
[agents.upstream]
url = "{}"
"#,
        a.url(),
        b.url(),
        front = listeners(http, g),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_of_different_versions_behind_one_grpc_listener_by_authority() {
    let a = fake(CARD_V03, true, "ta").await;
    let b = fake(CARD_V10, false, "tb").await;
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();
    let _px = serve(&two_agents(http, g, &a, &b), "warn", http, g).await;
    let gp = g.port();

    // Each authority reaches its own agent, in either client version; the
    // port and the name's case do not matter.
    assert_eq!(v10_task_id(g, &format!("a.example:{gp}")).await, "ta");
    assert_eq!(v03_task_id(g, &format!("B.Example:{gp}")).await, "tb");
    assert_eq!(v10_task_id(g, "b.example").await, "tb");
    assert_eq!(a.calls().len(), 1, "{:?}", a.calls());
    assert_eq!(b.calls().len(), 2, "{:?}", b.calls());
    let sent: Value = serde_json::from_slice(&a.calls()[0].body).unwrap();
    assert_eq!(sent["method"], "message/send", "{sent}");
    for c in b.calls() {
        let sent: Value = serde_json::from_slice(&c.body).unwrap();
        assert_eq!(sent["method"], "SendMessage", "{sent}");
    }

    // Each agent's card over gRPC is its own, with its own interfaces
    // (its host, the shared gRPC listener's port), nothing of the other.
    let cases = [
        ("a.example", "alpha", "beta", b.addr),
        ("b.example", "beta", "alpha", a.addr),
    ];
    for (host, own, other, other_addr) in cases {
        let authority = format!("{host}:{gp}");
        let mut c03 = p03::a2a_service_client::A2aServiceClient::new(
            grpc::channel(g, Some(&authority)).await,
        );
        let card = c03
            .get_agent_card(p03::GetAgentCardRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(card.name, own, "{card:?}");
        let grpc: Vec<&str> = card
            .additional_interfaces
            .iter()
            .filter(|i| i.transport == "GRPC")
            .map(|i| i.url.as_str())
            .collect();
        assert_eq!(grpc, [format!("http://{host}:{gp}")], "{card:?}");
        assert!(
            card.url
                .starts_with(&format!("http://{host}:{}", http.port())),
            "{card:?}"
        );
        let text = format!("{card:?}");
        assert!(
            !text.contains(other) && !text.contains(&other_addr.to_string()),
            "{text}"
        );

        let mut c10 = p10::a2a_service_client::A2aServiceClient::new(
            grpc::channel(g, Some(&authority)).await,
        );
        let card = c10
            .get_extended_agent_card(p10::GetExtendedAgentCardRequest::default())
            .await
            .unwrap()
            .into_inner();
        assert_eq!(card.name, own, "{card:?}");
        let urls: Vec<(&str, &str)> = card
            .supported_interfaces
            .iter()
            .map(|i| (i.protocol_binding.as_str(), i.url.as_str()))
            .collect();
        assert!(
            urls.contains(&("GRPC", &format!("{host}:{gp}"))),
            "{urls:?}"
        );
        for (_, u) in &urls {
            assert!(u.contains(host), "{urls:?}");
        }
        let text = format!("{card:?}");
        assert!(
            !text.contains(other) && !text.contains(&other_addr.to_string()),
            "{text}"
        );
    }

    // An authority no agent is served at: NOT_FOUND naming it; no agent
    // is asked anything.
    let (calls_a, calls_b) = (a.recorded().len(), b.recorded().len());
    for authority in ["c.example:1", "127.0.0.1"] {
        let mut c =
            p10::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some(authority)).await);
        let s = c.send_message(v10_send("hi")).await.unwrap_err();
        assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
        assert!(s.message().contains(authority), "{s:?}");
        assert!(
            !s.message().contains(&a.addr.to_string())
                && !s.message().contains(&b.addr.to_string())
        );
        let mut c =
            p03::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some(authority)).await);
        let s = c
            .get_agent_card(p03::GetAgentCardRequest::default())
            .await
            .unwrap_err();
        assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
    }
    assert_eq!(a.recorded().len(), calls_a);
    assert_eq!(b.recorded().len(), calls_b);

    // Every gRPC call's metrics carry its agent.
    let text = get(http, "/metrics", &[]).await.text();
    let a_send = [
        "agent=\"a\"",
        "method=\"SendMessage\"",
        "binding=\"grpc\"",
        "outcome=\"ok\"} 1",
    ];
    assert!(sample(&text, &a_send).is_some(), "{text}");
    for direction in ["direction=\"v03_v10\"", "direction=\"v10_v10\""] {
        let b_send = [
            "agent=\"b\"",
            "method=\"SendMessage\"",
            direction,
            "binding=\"grpc\"",
            "outcome=\"ok\"} 1",
        ];
        assert!(sample(&text, &b_send).is_some(), "{text}");
    }
    assert!(
        sample(
            &text,
            &[
                "agent=\"a\"",
                "method=\"GetExtendedAgentCard\"",
                "binding=\"grpc\""
            ]
        )
        .is_some(),
        "{text}"
    );
    assert!(
        sample(
            &text,
            &[
                "agent=\"b\"",
                "method=\"GetExtendedAgentCard\"",
                "binding=\"grpc\""
            ]
        )
        .is_some(),
        "{text}"
    );
}

/// The stderr lines of `px` until `done` holds for the lines read (at
/// most 15 s).
fn lines_until(px: &Serve, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let end = Instant::now() + Duration::from_secs(15);
    let mut out = Vec::new();
    while !done(&out) {
        let Some(left) = end.checked_duration_since(Instant::now()) else {
            break;
        };
        match px.lines.recv_timeout(left) {
            Ok(l) => out.extend(serde_json::from_str::<Value>(&l).ok()),
            Err(_) => break,
        }
    }
    out
}

fn closes(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|v| v["fields"]["message"] == "close" && v["span"]["name"] == "call")
        .collect()
}

/// With the call span on, each gRPC call runs in an `a2a_call` span naming
/// the caller's trace id, its agent (by authority, or the listener's
/// default agent), the A2A method, the gRPC path, and the final status;
/// the caller's `traceparent` and `tracestate` reach the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_calls_run_in_the_call_span_with_the_callers_trace_id() {
    let a = fake(CARD_V03, true, "ta").await;
    let b = fake(CARD_V10, false, "tb").await;
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();
    // A catch-all agent (the gRPC default) and one served by host.
    let config = format!(
        r#"{front}
[[agents]]
name = "all"
[agents.upstream]
url = "{}"
[[agents]]
name = "b"
hosts = ["b.example"]
[agents.upstream]
url = "{}"
"#,
        a.url(),
        b.url(),
        front = listeners(http, g),
    );
    let px = serve(&config, "info,a2a_call=debug", http, g).await;
    let traceparent = format!("00-{TRACE_ID}-00f067aa0ba902b7-01");

    let mut c =
        p10::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some("b.example")).await);
    let mut req = v10_send("hi");
    req.metadata_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    req.metadata_mut()
        .insert("tracestate", "k=v".parse().unwrap());
    c.send_message(req).await.unwrap();
    // An authority of no agent's host: the default agent.
    let mut c = p03::a2a_service_client::A2aServiceClient::new(
        grpc::channel(g, Some("other.example")).await,
    );
    let mut req = v03_send("hi");
    req.metadata_mut()
        .insert("traceparent", traceparent.parse().unwrap());
    c.send_message(req).await.unwrap();

    let lines = lines_until(&px, |l| closes(l).len() >= 2);
    let closed = closes(&lines);
    assert_eq!(closed.len(), 2, "{lines:?}");
    let by_agent = |name: &str| {
        closed
            .iter()
            .find(|v| v["span"]["agent"] == name)
            .unwrap_or_else(|| panic!("no span of agent {name}: {lines:?}"))
    };
    let span_b = &by_agent("b")["span"];
    assert_eq!(span_b["trace_id"], TRACE_ID, "{span_b}");
    assert_eq!(span_b["method"], "SendMessage", "{span_b}");
    assert_eq!(
        span_b["path"], "/lf.a2a.v1.A2AService/SendMessage",
        "{span_b}"
    );
    assert_eq!(span_b["status"], 0, "{span_b}");
    let span_all = &by_agent("all")["span"];
    assert_eq!(span_all["trace_id"], TRACE_ID, "{span_all}");
    assert_eq!(
        span_all["path"], "/a2a.v1.A2AService/SendMessage",
        "{span_all}"
    );
    assert_eq!(span_all["status"], 0, "{span_all}");

    // The caller's trace context went on to each agent.
    let to_b = b.calls();
    assert_eq!(to_b.len(), 1, "{to_b:?}");
    assert_eq!(to_b[0].header("traceparent"), Some(traceparent.as_str()));
    assert_eq!(to_b[0].header("tracestate"), Some("k=v"));
    let to_a = a.calls();
    assert_eq!(to_a.len(), 1, "{to_a:?}");
    assert_eq!(to_a[0].header("traceparent"), Some(traceparent.as_str()));
}

/// `check-upstream --config FILE` run to its end (at most 30 s): exit
/// code and stdout lines.
async fn check_upstream(config: &str) -> (i32, Vec<Value>, String) {
    let (dir, file) = config_file("check", config);
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args(["check-upstream", "--config", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start check-upstream");
    let end = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s.code().unwrap_or(-1);
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("check-upstream did not end");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let out = child.wait_with_output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    (
        code,
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_upstream_checks_every_agent_and_names_each() {
    let a = fake(CARD_V03, true, "ta").await;
    let b = fake(CARD_V10, false, "tb").await;
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();

    let (code, lines, stderr) = check_upstream(&two_agents(http, g, &a, &b)).await;
    assert_eq!(code, 0, "{lines:?} {stderr}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["agent"], "a");
    assert_eq!(lines[0]["ok"], true);
    assert_eq!(lines[0]["card_version"], "0.3");
    assert_eq!(lines[0]["name"], "alpha");
    assert_eq!(lines[1]["agent"], "b");
    assert_eq!(lines[1]["ok"], true);
    assert_eq!(lines[1]["card_version"], "1.0");
    assert_eq!(lines[1]["name"], "beta");
    assert!(stderr.contains("all 2 agents ok"), "{stderr}");

    // The second agent down: its line says so, the first's is still
    // checked, and the exit status is 1.
    // A port nothing listens on.
    let dead_url = format!("http://{}", support::free_local_addr().unwrap());
    let config = two_agents(http, g, &a, &b).replace(&b.url(), &dead_url);
    let (code, lines, stderr) = check_upstream(&config).await;
    assert_eq!(code, 1, "{lines:?} {stderr}");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["agent"], "a");
    assert_eq!(lines[0]["ok"], true, "{:?}", lines[0]);
    assert_eq!(lines[1]["agent"], "b");
    assert_eq!(lines[1]["ok"], false, "{:?}", lines[1]);
    assert_eq!(lines[1]["upstream"], dead_url);
    assert!(
        lines[1]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{:?}",
        lines[1]
    );
    assert!(stderr.contains("1 of 2 agents failed: b"), "{stderr}");
}

/// A fake v1.0 gRPC agent answering every call with one
/// `SendMessageResponse` holding the task `task`.
async fn grpc_agent(task: &str) -> GrpcAgent {
    let reply = p10::SendMessageResponse {
        payload: Some(p10::send_message_response::Payload::Task(
            support::grpc::v10_task(task, p10::TaskState::Completed),
        )),
    };
    GrpcAgent::start(Version::V10, always(reply)).await
}

/// Agents with gRPC upstreams (`grpc_url`) on the shared listener: each
/// call goes to its own agent's gRPC endpoint, passed through (same
/// version, the caller's trace context included) or translated (a v0.3
/// caller), and counts under its agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_agent_on_the_shared_listener_calls_its_own_grpc_upstream() {
    let (ga, gb) = (grpc_agent("ga").await, grpc_agent("gb").await);
    let (ca, cb) = (
        fake(CARD_V10, false, "unused").await,
        fake(CARD_V10, false, "unused").await,
    );
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();
    let config = format!(
        r#"{front}
[upstream]
version = "1.0"
[[agents]]
name = "a"
hosts = ["a.example"]
[agents.upstream]
url = "{}"
grpc_url = "{}"
[[agents]]
name = "b"
hosts = ["b.example"]
[agents.upstream]
url = "{}"
grpc_url = "{}"
"#,
        ca.url(),
        ga.url(),
        cb.url(),
        gb.url(),
        front = listeners(http, g),
    );
    let _px = serve(&config, "warn", http, g).await;
    let traceparent = format!("00-{TRACE_ID}-00f067aa0ba902b7-01");
    for (host, agent, task) in [("a.example", &ga, "ga"), ("b.example", &gb, "gb")] {
        let mut c =
            p10::a2a_service_client::A2aServiceClient::new(grpc::channel(g, Some(host)).await);
        let mut req = v10_send("hi");
        req.metadata_mut()
            .insert("traceparent", traceparent.parse().unwrap());
        match c.send_message(req).await.unwrap().into_inner().payload {
            Some(p10::send_message_response::Payload::Task(t)) => assert_eq!(t.id, task),
            other => panic!("{other:?}"),
        }
        assert_eq!(v03_task_id(g, host).await, task);
        let calls = agent.calls();
        assert_eq!(calls.len(), 2, "{host}: {calls:?}");
        for call in &calls {
            assert_eq!(call.path, "/lf.a2a.v1.A2AService/SendMessage");
        }
        let trace = calls[0]
            .headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok());
        assert_eq!(trace, Some(traceparent.as_str()), "{host}");
    }
    let text = get(http, "/metrics", &[]).await.text();
    for agent in ["agent=\"a\"", "agent=\"b\""] {
        for direction in ["direction=\"v10_v10\"", "direction=\"v03_v10\""] {
            let send = [
                agent,
                "method=\"SendMessage\"",
                direction,
                "binding=\"grpc\"",
                "outcome=\"ok\"} 1",
            ];
            assert!(sample(&text, &send).is_some(), "{text}");
        }
    }
}
