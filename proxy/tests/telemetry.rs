//! OpenTelemetry export (issue #39 item 1), end to end: the `serve`
//! binary with proxy/README.md's `[telemetry]` example sends to a real
//! OTLP receiver (`tests/sdk/otlp_receiver.py`, on the official
//! `opentelemetry-proto` package and grpcio) what it serves to the REAL
//! a2a-sdk agents: the span tree, names and attributes of a translated
//! JSON-RPC call, a gRPC call, an SSE stream and a push delivery; the
//! request metrics; no credential, body or callback id in any span;
//! OTLP/HTTP too; and a collector that stalls never slows or fails a
//! call, its dropped spans counted in `/metrics`. Everything on
//! 127.0.0.1; every wait bounded.

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proto::v10 as p10;
use serde_json::{json, Value};
use support::sdk::SdkAgent;
use support::*;

const TRACE_JSONRPC: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const TRACE_GRPC: &str = "5cf92f3577b34da6a3ce929d0e0e4737";
const TRACE_SSE: &str = "6df92f3577b34da6a3ce929d0e0e4738";
const PARENT: &str = "00f067aa0ba902b7";
const SECRET: &str = "Bearer otel-test-secret-credential";
const TEXT: &str = "a message body no span may carry";

/// The OTLP receiver; killed on drop.
struct Receiver {
    child: Child,
    grpc: u16,
    http: SocketAddr,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn receiver(args: &[&str]) -> Receiver {
    let root = support::sdk::root();
    let python = root.join(".venv-otel/bin/python");
    if !python.exists() {
        let ok = Command::new("bash")
            .arg(root.join("tests/sdk/setup.sh"))
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "tests/sdk/setup.sh could not make .venv-otel");
    }
    let mut child = Command::new(python)
        .arg(root.join("tests/sdk/otlp_receiver.py"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the OTLP receiver");
    let out = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        for line in lines.by_ref().map_while(Result::ok) {
            if let Some(p) = line.strip_prefix("PORTS ") {
                let ports: Vec<u16> = p.split(' ').filter_map(|x| x.parse().ok()).collect();
                let _ = tx.send(ports);
                break;
            }
        }
        for _ in lines {}
    });
    let ports = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_default();
    assert_eq!(ports.len(), 2, "the OTLP receiver printed no ports");
    Receiver {
        child,
        grpc: ports[0],
        http: ([127, 0, 0, 1], ports[1]).into(),
    }
}

impl Receiver {
    async fn dump(&self, what: &str) -> Vec<Value> {
        let r = get(self.http, what, &[]).await;
        r.json().as_array().cloned().unwrap_or_default()
    }

    /// The spans received once `done` holds for them (or after 30 s).
    async fn spans_until(&self, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let spans = self.dump("/spans").await;
            if done(&spans) || Instant::now() > end {
                return spans;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// proxy/README.md's `[telemetry]` example, sending to `endpoint`, the
/// metrics every half second.
fn readme_telemetry(endpoint: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("proxy/README.md");
    let start = readme
        .find("```toml\n# telemetry example")
        .expect("the telemetry example in proxy/README.md");
    let block = &readme[start + "```toml\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    assert!(block.contains("http://127.0.0.1:4317\""), "{block}");
    block
        .replace("http://127.0.0.1:4317\"", &format!("{endpoint}\""))
        .replace("metrics_interval_ms = 60000", "metrics_interval_ms = 500")
}

fn attr<'a>(s: &'a Value, k: &str) -> &'a Value {
    &s["attributes"][k]
}

fn children<'a>(spans: &'a [Value], parent: &Value) -> Vec<&'a Value> {
    spans
        .iter()
        .filter(|s| s["parentSpanId"] == parent["spanId"] && s["traceId"] == parent["traceId"])
        .collect()
}

fn server_of<'a>(spans: &'a [Value], trace: &str) -> Option<&'a Value> {
    spans
        .iter()
        .find(|s| s["traceId"] == trace && s["kind"] == "SPAN_KIND_SERVER")
}

/// The server span of `trace`, its parent the caller's, with a client
/// child and both translation steps: the server span.
fn assert_translated_call<'a>(spans: &'a [Value], trace: &str, name: &str) -> &'a Value {
    let server =
        server_of(spans, trace).unwrap_or_else(|| panic!("no server span of {trace}: {spans:?}"));
    assert_eq!(server["name"], name, "{server}");
    assert_eq!(server["parentSpanId"], PARENT, "{server}");
    assert_eq!(attr(server, "a2a.agent"), "tck", "{server}");
    assert_eq!(attr(server, "a2a.client_version"), "1.0", "{server}");
    assert_eq!(attr(server, "a2a.agent_version"), "0.3", "{server}");
    assert_eq!(attr(server, "a2a.translated"), true, "{server}");
    assert_eq!(
        server["resource"]["service.name"], "a2a-gateway",
        "{server}"
    );
    assert_eq!(
        server["resource"]["deployment.environment"], "staging",
        "{server}"
    );
    let kids = children(spans, server);
    let named = |n: &str| kids.iter().find(|s| s["name"] == n).copied();
    let req = named("translate request").unwrap_or_else(|| panic!("{kids:?}"));
    assert_eq!(req["kind"], "SPAN_KIND_INTERNAL");
    assert_eq!(attr(req, "a2a.from_version"), "1.0");
    assert_eq!(attr(req, "a2a.to_version"), "0.3");
    let client = kids
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_CLIENT" && s["name"] == "POST")
        .unwrap_or_else(|| panic!("no agent call under {name}: {kids:?}"));
    assert_eq!(attr(client, "http.response.status_code"), 200, "{client}");
    assert_eq!(attr(client, "server.address"), "127.0.0.1", "{client}");
    server
}

async fn start_serve(toml: &str, dir: &Path) -> (Binary, SocketAddr) {
    let addr: SocketAddr = toml
        .lines()
        .find_map(|l| l.strip_prefix("listen = \""))
        .and_then(|l| l.trim_end_matches('"').parse().ok())
        .expect("listen");
    let file = dir.join("proxy.toml");
    std::fs::write(&file, toml).unwrap();
    (serve_binary(&file, addr).await, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spans_and_metrics_of_real_calls_reach_an_otlp_receiver() {
    let otlp = tokio::task::spawn_blocking(|| receiver(&[])).await.unwrap();
    let tck =
        tokio::task::spawn_blocking(|| SdkAgent::start(".venv-v03", "tests/tck/sut_v03.py", &[]))
            .await
            .unwrap();
    let pusher = tokio::task::spawn_blocking(|| {
        SdkAgent::start(".venv-v10", "tests/sdk/agent_v10.py", &["--push"])
    })
    .await
    .unwrap();
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let dir = support::tls::temp_dir("otel");
    let (http, grpc) = (free_local_addr().unwrap(), free_local_addr().unwrap());
    let toml = format!(
        r#"listen = "{http}"
threads = 1
[push]
enabled = false
[grpc]
listen = "{grpc}"
[limits]
read_timeout_ms = 20000

[[agents]]
name = "tck"
[agents.upstream]
url = "{}"
version = "0.3"

[[agents]]
name = "pusher"
prefix = "/p"
[agents.upstream]
url = "{}"
version = "1.0"
[agents.push]
enabled = true
data_dir = "{}"
allow_private_targets = true

{}"#,
        tck.url(),
        pusher.url(),
        dir.join("push").display(),
        readme_telemetry(&format!("http://127.0.0.1:{}", otlp.grpc)),
    );
    let (_px, addr) = start_serve(&toml, &dir).await;
    let tp = |trace: &str| format!("00-{trace}-{PARENT}-01");

    // 1. A translated JSON-RPC call: v1.0 client, v0.3 agent.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": "m-otel-1", "role": "ROLE_USER", "parts": [{"text": TEXT}]}}});
    let t = tp(TRACE_JSONRPC);
    let r = post(
        addr,
        "/",
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("traceparent", &t),
            ("Authorization", SECRET),
        ],
        send.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json()["result"]["task"].is_object(), "{}", r.text());

    // 2. A gRPC call (v1.0, bridged to the v0.3 agent's JSON-RPC).
    let mut c = p10::a2a_service_client::A2aServiceClient::new(grpc::channel(grpc, None).await);
    let mut req = tonic::Request::new(p10::SendMessageRequest {
        message: Some(p10::Message {
            message_id: "m-otel-2".into(),
            role: p10::Role::User as i32,
            parts: vec![p10::Part {
                content: Some(p10::part::Content::Text(TEXT.into())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    });
    req.metadata_mut()
        .insert("traceparent", tp(TRACE_GRPC).parse().unwrap());
    req.metadata_mut()
        .insert("authorization", SECRET.parse().unwrap());
    c.send_message(req).await.expect("gRPC SendMessage");

    // 3. An SSE stream (v1.0 JSON-RPC SendStreamingMessage, translated).
    let stream = json!({"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage", "params": {"message":
        {"messageId": "m-otel-3", "role": "ROLE_USER", "parts": [{"text": TEXT}]}}});
    let t = tp(TRACE_SSE);
    let r = post(
        addr,
        "/",
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("traceparent", &t),
        ],
        stream.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().contains("data:"), "{}", r.text());

    // 4. A push delivery: a v0.3 subscriber of the a2a-sdk 1.x agent.
    let hook_url = format!("{}/otel-hook", hook.url());
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m-otel-push", "role": "user",
            "parts": [{"kind": "text", "text": "push"}]},
        "configuration": {"blocking": true,
            "pushNotificationConfig": {"url": hook_url, "token": "subscriber-token-xyz"}}}});
    let r = post(addr, "/p/", JSON_HEADER, body.to_string().as_bytes()).await;
    assert!(r.json()["result"]["id"].is_string(), "{}", r.text());

    let spans = otlp
        .spans_until(|s| {
            let delivered = s.iter().any(|x| {
                x["name"] == "webhook delivery"
                    && children(s, x)
                        .iter()
                        .any(|c| attr(c, "http.response.status_code") == 200)
            });
            delivered
                && [TRACE_JSONRPC, TRACE_GRPC, TRACE_SSE]
                    .iter()
                    .all(|t| server_of(s, t).is_some())
        })
        .await;

    // The JSON-RPC call's tree.
    let server = assert_translated_call(&spans, TRACE_JSONRPC, "POST SendMessage");
    assert_eq!(attr(server, "http.request.method"), "POST");
    assert_eq!(attr(server, "http.response.status_code"), 200);
    assert_eq!(attr(server, "url.path"), "/");
    assert_eq!(attr(server, "url.scheme"), "http");
    assert_eq!(attr(server, "a2a.method"), "SendMessage");
    let kids = children(&spans, server);
    assert!(
        kids.iter().any(|s| s["name"] == "translate answer"),
        "{kids:?}"
    );

    // The gRPC call's.
    let server = assert_translated_call(&spans, TRACE_GRPC, "lf.a2a.v1.A2AService/SendMessage");
    assert_eq!(attr(server, "rpc.system"), "grpc", "{server}");
    assert_eq!(
        attr(server, "rpc.service"),
        "lf.a2a.v1.A2AService",
        "{server}"
    );
    assert_eq!(attr(server, "rpc.method"), "SendMessage", "{server}");
    assert_eq!(attr(server, "rpc.grpc.status_code"), 0, "{server}");
    assert_eq!(attr(server, "a2a.method"), "SendMessage", "{server}");

    // The stream's: its agent call stays open as long as the stream.
    let server = assert_translated_call(&spans, TRACE_SSE, "POST SendStreamingMessage");
    assert_eq!(
        attr(server, "a2a.method"),
        "SendStreamingMessage",
        "{server}"
    );
    let client = children(&spans, server)
        .into_iter()
        .find(|s| s["kind"] == "SPAN_KIND_CLIENT")
        .unwrap();
    assert!(
        client["end"].as_u64() <= server["end"].as_u64(),
        "{client} {server}"
    );

    // The push: the agent's POST to the callback is a server span of the
    // pusher (its callback id left out), the delivery a producer span
    // with the post to the webhook under it.
    let callback = spans
        .iter()
        .find(|s| {
            s["kind"] == "SPAN_KIND_SERVER"
                && attr(s, "url.path")
                    .as_str()
                    .is_some_and(|p| p.starts_with("/p/a2a-proxy/push/"))
        })
        .unwrap_or_else(|| panic!("no callback span: {spans:?}"));
    assert_eq!(
        attr(callback, "url.path"),
        "/p/a2a-proxy/push/{id}",
        "{callback}"
    );
    assert_eq!(attr(callback, "a2a.agent"), "pusher", "{callback}");
    let delivery = spans
        .iter()
        .find(|s| s["name"] == "webhook delivery")
        .unwrap();
    assert_eq!(delivery["kind"], "SPAN_KIND_PRODUCER", "{delivery}");
    assert_eq!(
        attr(delivery, "a2a.subscriber_version"),
        "0.3",
        "{delivery}"
    );
    let post = children(&spans, delivery);
    assert!(
        post.iter()
            .any(|c| c["kind"] == "SPAN_KIND_CLIENT" && attr(c, "http.response.status_code") == 200),
        "{post:?}"
    );
    assert!(!hook.recorded().is_empty());

    // Nothing a caller sent, no credential, no callback id.
    let text = serde_json::to_string(&spans).unwrap();
    for leak in [
        "otel-test-secret",
        TEXT,
        "subscriber-token-xyz",
        "otel-hook",
    ] {
        assert!(!text.contains(leak), "{leak} in the spans: {text}");
    }
    for (at, _) in text.match_indices("/a2a-proxy/push/") {
        let after = &text[at + "/a2a-proxy/push/".len()..];
        assert!(
            after.starts_with("{id}"),
            "a callback id in the spans: {after:.40}"
        );
    }

    // The same counters over OTLP as in /metrics.
    let end = Instant::now() + Duration::from_secs(20);
    let points = loop {
        let p = otlp.dump("/metrics").await;
        let has = |name: &str| p.iter().any(|x| x["name"] == name);
        if (has("a2a_proxy_requests_total") && has("a2a_proxy_request_duration_seconds"))
            || Instant::now() > end
        {
            break p;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let count = points
        .iter()
        .rev()
        .find(|p| {
            p["name"] == "a2a_proxy_requests_total"
                && p["attributes"]["agent"] == "tck"
                && p["attributes"]["method"] == "SendMessage"
                && p["attributes"]["direction"] == "v10_v03"
                && p["attributes"]["binding"] == "jsonrpc"
                && p["attributes"]["outcome"] == "ok"
        })
        .unwrap_or_else(|| panic!("no request count: {points:?}"));
    assert!(count["value"].as_u64() >= Some(1), "{count}");
    let hist = points
        .iter()
        .rev()
        .find(|p| {
            p["name"] == "a2a_proxy_request_duration_seconds" && p["attributes"]["agent"] == "tck"
        })
        .unwrap_or_else(|| panic!("no duration: {points:?}"));
    assert!(hist["count"].as_u64() >= Some(3), "{hist}");
    assert_eq!(hist["bounds"][0], 0.001, "{hist}");
    let prom = get(addr, "/metrics", &[]).await.text();
    assert!(prom.contains("a2a_proxy_requests_total{agent=\"tck\",method=\"SendMessage\",direction=\"v10_v03\",binding=\"jsonrpc\",outcome=\"ok\"}"), "{prom}");
    assert!(
        prom.contains("a2a_proxy_telemetry_spans_exported_total{agent=\"\"}"),
        "{prom}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn otlp_http_and_a_stalled_collector() {
    let otlp = tokio::task::spawn_blocking(|| receiver(&[])).await.unwrap();
    // A collector that takes connections and never answers a byte (its
    // exports neither succeed nor fail before the proxy's timeout).
    let stalled = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let stalled_port = stalled.local_addr().unwrap().port();
    let _hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = stalled.accept().await {
            held.push(sock);
        }
    });
    let agent = FakeUpstream::start(|r| {
        let asked: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        Reply::json(
            200,
            &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"kind": "task",
            "id": "t1", "contextId": "c1", "status": {"state": "completed"}}})
            .to_string(),
        )
    })
    .await;
    let dir = support::tls::temp_dir("otel-http");
    let config = |listen: SocketAddr, telemetry: &str| {
        format!(
            "listen = \"{listen}\"\nthreads = 1\n[push]\nenabled = false\n[upstream]\nurl = \"{}\"\nversion = \"0.3\"\n[telemetry]\n{telemetry}\n",
            agent.url()
        )
    };
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}})
    .to_string();

    // OTLP/HTTP protobuf.
    let listen = free_local_addr().unwrap();
    let toml = config(
        listen,
        &format!(
            "otlp_endpoint = \"http://{}\"\nprotocol = \"http/protobuf\"",
            otlp.http
        ),
    );
    let d = dir.join("a");
    std::fs::create_dir_all(&d).unwrap();
    let (px, addr) = start_serve(&toml, &d).await;
    let t = format!("00-{TRACE_JSONRPC}-{PARENT}-01");
    let r = post(
        addr,
        "/",
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0"),
            ("traceparent", &t),
        ],
        send.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let spans = otlp
        .spans_until(|s| server_of(s, TRACE_JSONRPC).is_some())
        .await;
    let server = server_of(&spans, TRACE_JSONRPC).unwrap_or_else(|| panic!("{spans:?}"));
    assert_eq!(server["via"], "http", "{server}");
    assert_eq!(server["name"], "POST SendMessage", "{server}");
    drop(px);

    // A collector that never answers, with a tiny queue: every call is answered as without it, and the spans that do
    // not fit, or whose export timed out, are counted.
    let listen = free_local_addr().unwrap();
    let toml = config(
        listen,
        &format!(
            "otlp_endpoint = \"http://127.0.0.1:{stalled_port}\"\nexport_timeout_ms = 300\nmax_queue_spans = 2"
        ),
    );
    let d = dir.join("b");
    std::fs::create_dir_all(&d).unwrap();
    let (_px, addr) = start_serve(&toml, &d).await;
    let started = Instant::now();
    // Eight at a time, a round every 120 ms: the export worker gathers the
    // spans of its first 200 ms into one batch (draining the queue while it
    // does), then waits up to 300 ms on the stalled collector. Rounds spread
    // over 600 ms end spans inside that wait, where a queue of 2 overflows;
    // five rounds back to back could all fall within the first gathering.
    for round in 0..5 {
        if round > 0 {
            tokio::time::sleep(Duration::from_millis(120)).await;
        }
        let calls: Vec<_> = (0..8)
            .map(|_| {
                let send = send.clone();
                tokio::spawn(async move { post(addr, "/", JSON_V10, send.as_bytes()).await })
            })
            .collect();
        for c in calls {
            let r = c.await.unwrap();
            assert_eq!(r.status, 200, "{}", r.text());
        }
    }
    // Generous: 40 calls to a local fake agent, whatever the collector does.
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let end = Instant::now() + Duration::from_secs(20);
    let (full, failed) = loop {
        let text = get(addr, "/metrics", &[]).await.text();
        let count = |reason: &str| -> u64 {
            let key = format!(
                "a2a_proxy_telemetry_spans_dropped_total{{agent=\"\",reason=\"{reason}\"}} "
            );
            text.lines()
                .find_map(|l| l.strip_prefix(key.as_str()))
                .and_then(|n| n.trim().parse().ok())
                .unwrap_or(0)
        };
        let (full, failed) = (count("queue_full"), count("export_failed"));
        if (full > 0 && failed > 0) || Instant::now() > end {
            break (full, failed);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let text = get(addr, "/metrics", &[]).await.text();
    let tele: Vec<&str> = text.lines().filter(|l| l.contains("telemetry")).collect();
    assert!(full > 0, "no span dropped for a full queue: {tele:?}");
    assert!(failed > 0, "no span dropped for a failed export");
    let _ = std::fs::remove_dir_all(dir);
}
