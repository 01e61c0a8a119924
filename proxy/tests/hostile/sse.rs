//! Finding 4 of issue #20: big SSE events. Framing is linear (a 12 MiB
//! event costs the proxy a small multiple of passing it through), an event
//! over `limits.max_event_bytes` ends the stream with an error in the
//! client's own version and binding (never a byte of the agent's event),
//! and big events do not keep the proxy from answering others.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::time::timeout;

use crate::support::*;

const CARD_V03: &str = r#"{"name":"big","description":"an agent with big events","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP/rpc","transport":"JSONRPC"},{"url":"http://UP/rest","transport":"HTTP+JSON"}],"capabilities":{"streaming":true},"skills":[]}"#;

const CARD_V10: &str = r#"{"name":"big","description":"an agent with big events","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://UP/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

/// Starts every big event's text: it must never reach a client of the
/// other version.
const MARKER: &str = "agent-bytes-7f3a";

const MIB: usize = 1024 * 1024;

/// Longest wait for a whole stream through the proxy (the old framer took
/// minutes for these in a debug build).
const STREAM_WAIT: Duration = Duration::from_secs(90);

/// A fake agent on 127.0.0.1: serves its card, and answers every other
/// request with one SSE body, written 16 KiB at a time (one HTTP chunk
/// each), as a slow agent would.
struct BigAgent {
    addr: SocketAddr,
    _task: AbortOnDrop,
}

impl BigAgent {
    async fn start(card: &'static str, sse: Vec<u8>) -> BigAgent {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let card = Arc::new(card.replace("UP", &addr.to_string()));
        let sse = Arc::new(sse);
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (card, sse) = (card.clone(), sse.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, &card, &sse).await;
                });
            }
        });
        BigAgent {
            addr,
            _task: AbortOnDrop(task),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn serve(mut sock: TcpStream, card: &str, sse: &[u8]) -> std::io::Result<()> {
    let mut reader = Reader::default();
    while let Some(head) = reader.head(&mut sock).await? {
        let (start, headers) = parse_head(&head);
        reader.body(&mut sock, &headers, false).await?;
        if start.contains(" /.well-known/") {
            let out = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{card}",
                card.len()
            );
            sock.write_all(out.as_bytes()).await?;
            continue;
        }
        sock.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        )
        .await?;
        for piece in sse.chunks(16 * 1024) {
            let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
            chunk.extend_from_slice(piece);
            chunk.extend_from_slice(b"\r\n");
            sock.write_all(&chunk).await?;
        }
        sock.write_all(b"0\r\n\r\n").await?;
        sock.flush().await?;
    }
    Ok(())
}

/// `n` bytes of text starting with [`MARKER`].
fn big_text(n: usize) -> String {
    let mut t = String::with_capacity(n);
    t.push_str(MARKER);
    while t.len() < n {
        t.push_str("lorem ipsum dolor sit amet ");
    }
    t.truncate(n);
    t
}

/// A v0.3 JSON-RPC stream: a working status, an artifact with `text`, the
/// final status.
fn v03_stream(text: &str) -> Vec<u8> {
    format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"working\"}},\"final\":false}}}}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"artifact-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"artifact\":{{\"artifactId\":\"a1\",\"parts\":[{{\"kind\":\"text\",\"text\":\"{text}\"}}]}}}}}}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"kind\":\"status-update\",\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"completed\"}},\"final\":true}}}}\n\n"
    )
    .into_bytes()
}

/// The same over v0.3 REST (ProtoJSON `StreamResponse`s).
fn v03_rest_stream(text: &str) -> Vec<u8> {
    format!(
        "data: {{\"statusUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"TASK_STATE_WORKING\"}},\"final\":false}}}}\n\n\
         data: {{\"artifactUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"artifact\":{{\"artifactId\":\"a1\",\"parts\":[{{\"text\":\"{text}\"}}]}}}}}}\n\n\
         data: {{\"statusUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"TASK_STATE_COMPLETED\"}},\"final\":true}}}}\n\n"
    )
    .into_bytes()
}

/// The same from a v1.0 JSON-RPC agent.
fn v10_stream(text: &str) -> Vec<u8> {
    format!(
        "data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"statusUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"TASK_STATE_WORKING\"}}}}}}}}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"artifactUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"artifact\":{{\"artifactId\":\"a1\",\"parts\":[{{\"text\":\"{text}\"}}]}}}}}}}}\n\n\
         data: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"statusUpdate\":{{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{{\"state\":\"TASK_STATE_COMPLETED\"}}}}}}}}\n\n"
    )
    .into_bytes()
}

const SEND_V10: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}}"#;
const SEND_V03: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"go"}]}}}"#;
const SEND_V10_REST: &[u8] =
    br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"go"}]}}"#;

fn v10_rpc() -> Vec<u8> {
    request("POST", "/rpc", JSON_V10, SEND_V10)
}

fn v03_rpc() -> Vec<u8> {
    request("POST", "/rpc", JSON_HEADER, SEND_V03)
}

fn in_process(upstream: &str, version: Version, threads: usize) -> RunningProxy {
    let addr = crate::support::free_local_addr().unwrap();
    let mut config = Config::new(addr, upstream).unwrap();
    config.threads = threads;
    config.upstream_version = UpstreamVersion::Fixed(version);
    proxy::start(config).unwrap()
}

/// A whole streamed answer: status, and the body to its end or until the
/// proxy closed the connection (bounded by [`STREAM_WAIT`]).
async fn stream_body(addr: SocketAddr, raw: &[u8]) -> (u16, Vec<u8>) {
    let read = async {
        let mut s = open(addr, raw).await;
        let mut body = Vec::new();
        // Ends cleanly, or with the connection closed mid-body.
        while let Ok(Some(c)) = s.reader.chunk(&mut s.sock).await {
            body.extend_from_slice(&c);
        }
        (s.status, body)
    };
    timeout(STREAM_WAIT, read)
        .await
        .expect("the stream did not end in time")
}

/// The `data` values of an SSE body, with each event's `event:` name.
fn events(body: &[u8]) -> Vec<(Option<String>, String)> {
    let text = String::from_utf8_lossy(body);
    text.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut name = None;
            let mut data = String::new();
            for l in e.lines() {
                if let Some(v) = l.strip_prefix("event:") {
                    name = Some(v.trim().to_string());
                } else if let Some(v) = l.strip_prefix("data:") {
                    data.push_str(v.strip_prefix(' ').unwrap_or(v));
                }
            }
            (name, data)
        })
        .collect()
}

/// Nothing of the agent's big event (nor anything that size) reached the
/// client.
fn assert_none_of_the_event(body: &[u8], what: &str) {
    let text = String::from_utf8_lossy(body);
    assert!(
        body.len() < 64 * 1024,
        "{what}: {} bytes reached the client",
        body.len()
    );
    assert!(!text.contains(MARKER), "{what}: the agent's event leaked");
}

/// How long a `GET /health` took to answer 200 (`None`: it failed, or took
/// over 10 s).
async fn health(addr: SocketAddr) -> Option<Duration> {
    health_within(addr, Duration::from_secs(10)).await
}

// ---------------------------------------------------------------------
// A 12 MiB event: translated for a small multiple of passing it through.
// ---------------------------------------------------------------------

impl Binary {
    /// User plus system CPU time the process used so far.
    fn cpu(&self) -> Duration {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0.id())).unwrap();
        // Fields after the command name (which may hold spaces): state is
        // the 3rd field, utime the 14th and stime the 15th.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
        // USER_HZ is 100 on Linux.
        Duration::from_millis(ticks * 10)
    }
}

async fn serve_binary_to(upstream: &str, version: &str) -> (Binary, SocketAddr) {
    let addr = crate::support::free_local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("a2a-hostile-sse-{}", addr.port()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("proxy.toml");
    std::fs::write(
        &config,
        format!("listen = \"{addr}\"\nthreads = 2\n[upstream]\nurl = \"{upstream}\"\nversion = \"{version}\"\n"),
    )
    .unwrap();
    (serve_binary(&config, addr).await, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twelve_mib_event_translates_in_linear_time() {
    let text = big_text(12 * MIB);
    let agent = BigAgent::start(CARD_V03, v03_stream(&text)).await;
    let (bin, addr) = serve_binary_to(&agent.url(), "0.3").await;

    // Passed through: a v0.3 client.
    let before = bin.cpu();
    let (status, body) = stream_body(addr, &v03_rpc()).await;
    let passthrough = bin.cpu() - before;
    assert_eq!(status, 200);
    assert!(body.len() > 12 * MIB, "{}", body.len());

    // Translated: a v1.0 client.
    let before = bin.cpu();
    let (status, body) = stream_body(addr, &v10_rpc()).await;
    let translated = bin.cpu() - before;
    assert_eq!(status, 200);
    let got = events(&body);
    assert_eq!(
        got.len(),
        3,
        "{:?}",
        got.iter().map(|e| e.1.len()).collect::<Vec<_>>()
    );
    let v: Value = serde_json::from_str(&got[1].1).unwrap();
    let part = &v["result"]["artifactUpdate"]["artifact"]["parts"][0];
    assert_eq!(part["text"].as_str().map(str::len), Some(text.len()));
    assert!(!String::from_utf8_lossy(&body).contains("\"kind\""));

    eprintln!("12 MiB event: proxy CPU {passthrough:?} passed through, {translated:?} translated");
    // Linear framing: translating costs this debug build about 0.7 s; the
    // old framer's rescans cost it 13 s.
    assert!(
        translated <= passthrough * 20 + Duration::from_secs(2),
        "translating took {translated:?} of CPU, passing through {passthrough:?}"
    );
}

// ---------------------------------------------------------------------
// An event over the limit: an error in the client's version, and the end.
// ---------------------------------------------------------------------

/// Both paths of a translated JSON-RPC stream: a request read before
/// routing (the proxy's own call), and one too large for that (over 64 KiB:
/// pingora's proxy loop).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_event_ends_a_v10_jsonrpc_stream_with_a_v10_error() {
    let agent = BigAgent::start(CARD_V03, v03_stream(&big_text(20 * MIB))).await;
    let px = in_process(&agent.url(), Version::V03, 2);
    let long = String::from_utf8(SEND_V10.to_vec())
        .unwrap()
        .replace("\"go\"", &format!("\"{}\"", "go ".repeat(30_000)));
    let long = request("POST", "/rpc", JSON_V10, long.as_bytes());
    for (what, raw) in [("short request", v10_rpc()), ("long request", long)] {
        let (status, body) = stream_body(px.addr, &raw).await;
        assert_eq!(status, 200, "{what}");
        assert_none_of_the_event(&body, what);
        let text = String::from_utf8_lossy(&body);
        assert!(!text.contains("\"kind\""), "{what}: {text}");
        let got = events(&body);
        assert_eq!(got.len(), 2, "{what}: {text}");
        // The event before it, translated.
        let first: Value = serde_json::from_str(&got[0].1).unwrap();
        assert_eq!(
            first["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING",
            "{what}: {text}"
        );
        // Then the error, as a v1.0 JSON-RPC envelope, and nothing after.
        let err: Value = serde_json::from_str(&got[1].1).unwrap();
        assert_eq!(err["id"], 1, "{what}: {err}");
        assert_eq!(err["error"]["code"], -32006, "{what}: {err}");
        assert!(
            err["error"]["data"].is_array(),
            "{what}: v1.0 errors carry ErrorInfo: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_event_ends_a_v10_rest_stream_with_an_error_event() {
    let agent = BigAgent::start(CARD_V03, v03_rest_stream(&big_text(20 * MIB))).await;
    let px = in_process(&agent.url(), Version::V03, 2);
    let raw = request("POST", "/message:stream", JSON_V10, SEND_V10_REST);
    let (status, body) = stream_body(px.addr, &raw).await;
    assert_eq!(status, 200);
    assert_none_of_the_event(&body, "v1.0 REST");
    let text = String::from_utf8_lossy(&body);
    assert!(!text.contains("\"final\""), "{text}");
    let got = events(&body);
    assert_eq!(got.len(), 2, "{text}");
    let first: Value = serde_json::from_str(&got[0].1).unwrap();
    assert_eq!(
        first["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING",
        "{text}"
    );
    assert_eq!(got[1].0.as_deref(), Some("error"), "{text}");
    let err: Value = serde_json::from_str(&got[1].1).unwrap();
    assert_eq!(err["error"]["code"], 502, "{err}");
    assert!(err["error"]["details"].is_array(), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_event_ends_a_v03_jsonrpc_stream_with_a_v03_error() {
    let agent = BigAgent::start(CARD_V10, v10_stream(&big_text(20 * MIB))).await;
    let px = in_process(&agent.url(), Version::V10, 2);
    let (status, body) = stream_body(px.addr, &v03_rpc()).await;
    assert_eq!(status, 200);
    assert_none_of_the_event(&body, "v0.3 JSON-RPC");
    let text = String::from_utf8_lossy(&body);
    assert!(
        !text.contains("artifactUpdate") && !text.contains("statusUpdate"),
        "{text}"
    );
    let got = events(&body);
    assert_eq!(got.len(), 2, "{text}");
    let first: Value = serde_json::from_str(&got[0].1).unwrap();
    assert_eq!(first["result"]["kind"], "status-update", "{text}");
    let err: Value = serde_json::from_str(&got[1].1).unwrap();
    assert_eq!(err["id"], 1, "{err}");
    assert_eq!(err["error"]["code"], -32006, "{err}");
    assert!(err["error"]["data"].is_object(), "v0.3 error data: {err}");
}

// ---------------------------------------------------------------------
// Big events do not keep the proxy from answering others.
// ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_answers_while_big_events_stream() {
    let huge = BigAgent::start(CARD_V03, v03_stream(&big_text(50 * 1000 * 1000))).await;
    let px = in_process(&huge.url(), Version::V03, 2);
    let addr = px.addr;
    let streams: Vec<_> = (0..2)
        .map(|_| tokio::spawn(async move { stream_body(addr, &v10_rpc()).await }))
        .collect();
    let started = Instant::now();
    let mut polls = 0;
    let mut slowest = Duration::ZERO;
    while !streams.iter().all(|s| s.is_finished()) || polls < 5 {
        assert!(started.elapsed() < STREAM_WAIT, "the streams did not end");
        let took = health(addr).await;
        assert!(
            took.is_some_and(|t| t < Duration::from_secs(2)),
            "/health took {took:?} (None: over 10 s) while the big events streamed"
        );
        slowest = slowest.max(took.unwrap_or_default());
        polls += 1;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    eprintln!("{polls} /health polls, slowest {slowest:?}");
    for s in streams {
        let (status, body) = s.await.unwrap();
        assert_eq!(status, 200);
        assert_none_of_the_event(&body, "50 MB event");
    }
}

// ---------------------------------------------------------------------
// The gRPC bridge: an event over the limit ends the call with an error.
// ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_event_ends_a_grpc_stream_with_an_error_status() {
    use proto::v10 as p10;
    let agent = BigAgent::start(CARD_V03, v03_stream(&big_text(20 * MIB))).await;
    let mut config = config_for(&agent.url(), Version::V03);
    let grpc_addr = crate::support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    let http = proxy::start(config).unwrap();
    let _grpc = proxy::grpc::GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
    let mut client =
        p10::a2a_service_client::A2aServiceClient::connect(format!("http://{grpc_addr}"))
            .await
            .unwrap();
    let message = p10::Message {
        message_id: "m1".into(),
        role: p10::Role::User as i32,
        parts: vec![p10::Part {
            content: Some(p10::part::Content::Text("go".into())),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut stream = client
        .send_streaming_message(p10::SendMessageRequest {
            message: Some(message),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut got = Vec::new();
    let ended = loop {
        match timeout(STREAM_WAIT, stream.message())
            .await
            .expect("the stream did not end in time")
        {
            Ok(Some(m)) => got.push(m),
            Ok(None) => break None,
            Err(s) => break Some(s),
        }
    };
    // The event before it; then not the final status (the stream ended
    // at the big event), but an error.
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(
        matches!(
            got[0].payload,
            Some(p10::stream_response::Payload::StatusUpdate(_))
        ),
        "{got:?}"
    );
    let status = ended.expect("the stream ended without an error");
    assert_ne!(status.code(), tonic::Code::Ok, "{status:?}");
    assert!(!status.message().contains(MARKER), "{status:?}");
    assert!(status.details().len() < 64 * 1024, "{status:?}");
}
