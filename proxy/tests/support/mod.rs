//! Test doubles on 127.0.0.1: a scriptable fake upstream agent and a raw
//! HTTP/1.1 client, both on plain tokio sockets so the bytes on the wire are
//! exactly what the tests say. Every wait is bounded.

#![allow(dead_code)]

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::timeout;

/// Upper bound for any single wait in these tests.
pub const WAIT: Duration = Duration::from_secs(5);

/// A request as the fake upstream received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub target: String,
    /// Header names lower-cased.
    pub headers: HashMap<String, String>,
    /// The decoded body (chunked framing removed).
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

/// What the fake upstream answers.
#[derive(Clone)]
pub enum Reply {
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// SSE, chunked; before each event after the first, one permit of `gate`
    /// is awaited (bounded by [`WAIT`]), so the test controls the pace.
    Sse {
        events: Vec<String>,
        gate: Arc<Semaphore>,
    },
    /// Never answers (until the connection is dropped).
    Hang,
    /// Never answers; one permit of `closed` is added when the proxy
    /// closes the connection (bounded by 30 s).
    HangUntilClosed { closed: Arc<Semaphore> },
    /// Writes these bytes as they are, then closes the connection (an
    /// answer cut short).
    Cut(Vec<u8>),
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Full {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn with_header(mut self, k: &str, v: &str) -> Reply {
        if let Reply::Full { headers, .. } = &mut self {
            headers.push((k.into(), v.into()));
        }
        self
    }
}

type Handler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// A fake agent on 127.0.0.1:0.
pub struct FakeUpstream {
    pub addr: SocketAddr,
    pub requests: Arc<Mutex<Vec<Recorded>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeUpstream {
    pub async fn start(
        handler: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) -> FakeUpstream {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let recs = requests.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((sock, _)) = listener.accept().await else {
                    return;
                };
                let handler = handler.clone();
                let recs = recs.clone();
                tokio::spawn(async move {
                    let _ = serve_conn(sock, handler, recs).await;
                });
            }
        });
        FakeUpstream {
            addr,
            requests,
            task,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn recorded(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Requests other than card fetches.
    pub fn calls(&self) -> Vec<Recorded> {
        self.recorded()
            .into_iter()
            .filter(|r| !r.target.starts_with("/.well-known/"))
            .collect()
    }
}

async fn serve_conn(
    mut sock: TcpStream,
    handler: Arc<Handler>,
    recs: Arc<Mutex<Vec<Recorded>>>,
) -> std::io::Result<()> {
    let mut reader = Reader::default();
    loop {
        let Some(head) = reader.head(&mut sock).await? else {
            return Ok(());
        };
        let (start, headers) = parse_head(&head);
        let mut parts = start.split(' ');
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("").to_string();
        let body = reader.body(&mut sock, &headers, false).await?;
        let rec = Recorded {
            method,
            target,
            headers,
            body,
        };
        recs.lock().unwrap().push(rec.clone());
        match handler(&rec) {
            Reply::Full {
                status,
                headers,
                body,
            } => {
                let mut out = format!("HTTP/1.1 {status} X\r\n");
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                if status != 304 {
                    out.push_str(&format!("Content-Length: {}\r\n", body.len()));
                }
                out.push_str("\r\n");
                let mut bytes = out.into_bytes();
                bytes.extend_from_slice(&body);
                sock.write_all(&bytes).await?;
            }
            Reply::Sse { events, gate } => {
                sock.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n",
                )
                .await?;
                for (i, ev) in events.iter().enumerate() {
                    if i > 0 {
                        match timeout(WAIT, gate.acquire()).await {
                            Ok(Ok(p)) => p.forget(),
                            _ => return Ok(()),
                        }
                    }
                    let chunk = format!("{:x}\r\n{ev}\r\n", ev.len());
                    sock.write_all(chunk.as_bytes()).await?;
                    sock.flush().await?;
                }
                sock.write_all(b"0\r\n\r\n").await?;
                return Ok(());
            }
            Reply::Cut(bytes) => {
                sock.write_all(&bytes).await?;
                sock.flush().await?;
                return Ok(());
            }
            Reply::Hang => {
                let mut sink = [0u8; 1024];
                let _ = timeout(Duration::from_secs(30), sock.read(&mut sink)).await;
                return Ok(());
            }
            Reply::HangUntilClosed { closed } => {
                let mut sink = [0u8; 1024];
                if let Ok(Ok(0)) = timeout(Duration::from_secs(30), sock.read(&mut sink)).await {
                    closed.add_permits(1);
                }
                return Ok(());
            }
        }
    }
}

/// Buffered reading of HTTP/1.1 heads and bodies.
#[derive(Default)]
pub struct Reader {
    buf: Vec<u8>,
}

impl Reader {
    async fn fill(&mut self, sock: &mut TcpStream) -> std::io::Result<bool> {
        let mut tmp = [0u8; 16 * 1024];
        let n = sock.read(&mut tmp).await?;
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(n > 0)
    }

    /// The head up to and including the blank line; `None` at a clean EOF.
    pub async fn head(&mut self, sock: &mut TcpStream) -> std::io::Result<Option<String>> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                let head: Vec<u8> = self.buf.drain(..i + 4).collect();
                return Ok(Some(String::from_utf8_lossy(&head).into_owned()));
            }
            if !self.fill(sock).await? {
                return Ok(None);
            }
        }
    }

    async fn exact(&mut self, sock: &mut TcpStream, n: usize) -> std::io::Result<Vec<u8>> {
        while self.buf.len() < n {
            if !self.fill(sock).await? {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
        }
        Ok(self.buf.drain(..n).collect())
    }

    async fn line(&mut self, sock: &mut TcpStream) -> std::io::Result<String> {
        loop {
            if let Some(i) = find(&self.buf, b"\r\n") {
                let l: Vec<u8> = self.buf.drain(..i + 2).collect();
                return Ok(String::from_utf8_lossy(&l[..i]).into_owned());
            }
            if !self.fill(sock).await? {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    /// One decoded chunk of a chunked body (`None` at the last chunk).
    pub async fn chunk(&mut self, sock: &mut TcpStream) -> std::io::Result<Option<Vec<u8>>> {
        let size_line = self.line(sock).await?;
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| std::io::Error::other(format!("bad chunk size {size_line:?}")))?;
        if size == 0 {
            // Trailers (none expected) end with a blank line.
            loop {
                if self.line(sock).await?.is_empty() {
                    return Ok(None);
                }
            }
        }
        let data = self.exact(sock, size).await?;
        self.exact(sock, 2).await?;
        Ok(Some(data))
    }

    /// A whole body per its headers; `to_eof` reads until close when neither
    /// length nor chunking is given (responses only).
    pub async fn body(
        &mut self,
        sock: &mut TcpStream,
        headers: &HashMap<String, String>,
        to_eof: bool,
    ) -> std::io::Result<Vec<u8>> {
        if headers
            .get("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"))
        {
            let mut out = Vec::new();
            while let Some(c) = self.chunk(sock).await? {
                out.extend_from_slice(&c);
            }
            return Ok(out);
        }
        if let Some(n) = headers
            .get("content-length")
            .and_then(|v| v.trim().parse().ok())
        {
            return self.exact(sock, n).await;
        }
        if to_eof {
            while self.fill(sock).await? {}
            return Ok(std::mem::take(&mut self.buf));
        }
        Ok(Vec::new())
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Start line and lower-cased headers.
pub fn parse_head(head: &str) -> (String, HashMap<String, String>) {
    let mut lines = head.split("\r\n");
    let start = lines.next().unwrap_or("").to_string();
    let mut headers = HashMap::new();
    for l in lines {
        if let Some((k, v)) = l.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    (start, headers)
}

/// A response as the test client saw it.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Builds a raw HTTP/1.1 request.
pub fn request(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = format!("{method} {target} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n");
    for (k, v) in headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// An open client connection with its response head read.
pub struct Streaming {
    pub sock: TcpStream,
    pub reader: Reader,
    pub status: u16,
    pub headers: HashMap<String, String>,
}

impl Streaming {
    /// Reads the stream until its first event is in (within `wait`).
    pub async fn first_event(&mut self, wait: Duration) -> String {
        let mut text = String::new();
        let read = async {
            while !text.contains("\n\n") {
                match self.reader.chunk(&mut self.sock).await.unwrap() {
                    Some(c) => text.push_str(std::str::from_utf8(&c).unwrap()),
                    None => break,
                }
            }
        };
        timeout(wait, read).await.expect("no first event");
        text
    }

    /// The rest of the stream, to its end (bounded by [`WAIT`] per piece).
    pub async fn rest(&mut self) -> String {
        let mut text = String::new();
        while let Ok(Some(c)) = timeout(WAIT, self.reader.chunk(&mut self.sock))
            .await
            .expect("the stream did not end")
        {
            text.push_str(std::str::from_utf8(&c).unwrap());
        }
        text
    }
}

/// The `data:` values of an SSE text (`null` for one that is not JSON).
pub fn datas(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str(d.trim()).unwrap_or(serde_json::Value::Null))
        .collect()
}

/// Polls `cond` every 20 ms, at most 100 times; whether it came true.
pub async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..100 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cond()
}

/// Sends raw request bytes and reads the response head.
pub async fn open(addr: SocketAddr, raw: &[u8]) -> Streaming {
    let fut = async {
        let mut sock = TcpStream::connect(addr).await.unwrap();
        sock.write_all(raw).await.unwrap();
        let mut reader = Reader::default();
        let head = reader
            .head(&mut sock)
            .await
            .unwrap()
            .expect("no response head");
        let (start, headers) = parse_head(&head);
        let status = start
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        Streaming {
            sock,
            reader,
            status,
            headers,
        }
    };
    timeout(WAIT, fut).await.expect("response head timed out")
}

/// Sends raw request bytes and reads the whole response.
pub async fn send(addr: SocketAddr, raw: &[u8]) -> Response {
    let mut s = open(addr, raw).await;
    let body = if s.status == 304 || s.status == 204 {
        Vec::new()
    } else {
        timeout(WAIT, s.reader.body(&mut s.sock, &s.headers, true))
            .await
            .expect("response body timed out")
            .unwrap()
    };
    Response {
        status: s.status,
        headers: s.headers,
        body,
    }
}

/// The header of a JSON request that names no version.
pub const JSON_HEADER: &[(&str, &str)] = &[("Content-Type", "application/json")];

/// The headers of a v1.0 JSON request: JSON content, `A2A-Version: 1.0`.
pub const JSON_V10: &[(&str, &str)] =
    &[("Content-Type", "application/json"), ("A2A-Version", "1.0")];

/// The headers of a v0.3 JSON request: JSON content, `A2A-Version: 0.3`.
pub const JSON_V03: &[(&str, &str)] =
    &[("Content-Type", "application/json"), ("A2A-Version", "0.3")];

pub async fn get(addr: SocketAddr, target: &str, headers: &[(&str, &str)]) -> Response {
    send(addr, &request("GET", target, headers, b"")).await
}

pub async fn post(
    addr: SocketAddr,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    send(addr, &request("POST", target, headers, body)).await
}

/// A fake agent serving its own card at the well-known paths (`card` is
/// given the agent's own `host:port`) and answering everything else with
/// `f`.
pub async fn agent_with_card(
    card: impl Fn(&str) -> String + Send + Sync + 'static,
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    let host = Arc::new(std::sync::OnceLock::<String>::new());
    let h = host.clone();
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            Reply::json(200, &card(h.get().map(String::as_str).unwrap_or("?")))
        } else {
            f(r)
        }
    })
    .await;
    host.set(up.addr.to_string()).unwrap();
    up
}

/// The config of a one-thread proxy on a free local address in front of
/// `upstream`, the agent's version fixed to `version`.
pub fn config_for(upstream: &str, version: proxy::version::Version) -> proxy::config::Config {
    let mut config = proxy::config::Config::new(free_local_addr().unwrap(), upstream).unwrap();
    config.threads = 1;
    config.upstream_version = proxy::config::UpstreamVersion::Fixed(version);
    config
}

/// A fresh path under the temporary directory, `a2a-{what}-{random}`, not
/// yet created (a data directory the proxy makes itself).
pub fn fresh_dir(what: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("a2a-{what}-{}", proxy::ids::random_id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The `serve` binary as a child process, killed (SIGKILL) on drop.
pub struct Binary(pub std::process::Child);

impl Drop for Binary {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// How long `GET /health` at `addr` took to answer 200; `None` if it did
/// not within `limit`.
pub async fn health_within(addr: SocketAddr, limit: Duration) -> Option<Duration> {
    let t = std::time::Instant::now();
    let probe = async {
        let mut s = TcpStream::connect(addr).await.ok()?;
        s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .ok()?;
        let mut out = Vec::new();
        s.read_to_end(&mut out).await.ok()?;
        out.starts_with(b"HTTP/1.1 200").then(|| t.elapsed())
    };
    timeout(limit, probe).await.ok().flatten()
}

/// Starts the `serve` binary on the config file `config` (listening on
/// `addr`) and waits (at most 20 s) until its `/health` answers 200.
pub async fn serve_binary(config: &std::path::Path, addr: SocketAddr) -> Binary {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .arg("serve")
        .arg("--config")
        .arg(config)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the proxy binary");
    let bin = Binary(child);
    let end = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < end {
        if health_within(addr, Duration::from_secs(2)).await.is_some() {
            return bin;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the proxy binary did not become healthy on {addr}");
}

/// What the webhook `hook` received, once a body (as JSON) meets `done`
/// or after 20 s.
pub async fn recorded_until(
    hook: &FakeUpstream,
    done: impl Fn(&serde_json::Value) -> bool,
) -> Vec<Recorded> {
    let end = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let got = hook.recorded();
        let seen = got.iter().any(|rec| {
            serde_json::from_slice::<serde_json::Value>(&rec.body).is_ok_and(|b| done(&b))
        });
        if seen || std::time::Instant::now() > end {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The push config an agent was given (in its request), if any.
pub type Seen = Arc<Mutex<Option<serde_json::Value>>>;

/// A v1.0 JSON-RPC agent: every call is answered task t9 (submitted); the
/// push config a SendMessage carried is kept.
pub async fn pushing_v10_agent() -> (FakeUpstream, Seen) {
    use serde_json::{json, Value};
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        if req["method"] == "SendMessage" {
            *s.lock().unwrap() =
                Some(req["params"]["configuration"]["taskPushNotificationConfig"].clone());
        }
        let task = json!({"task": {"id": "t9", "contextId": "c9",
            "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": "2024-03-15T18:30:00Z"}}});
        Reply::rpc_result(&req["id"], &task)
    })
    .await;
    (agent, seen)
}

/// One test per pairing of client and agent versions for each scenario
/// named (`async fn scenario(client: Version, agent: Version)` in the
/// calling file): `scenario::v03_client_v03_agent`, `…v03_client_v10_agent`,
/// `…v10_client_v03_agent`, `…v10_client_v10_agent`. Scenarios are written
/// once, for any pairing, instead of once per direction.
#[macro_export]
macro_rules! version_pairs {
    ($($scenario:ident),* $(,)?) => {$(
        mod $scenario {
            use proxy::version::Version::{V03, V10};

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v03_client_v03_agent() {
                super::$scenario(V03, V03).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v03_client_v10_agent() {
                super::$scenario(V03, V10).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v10_client_v03_agent() {
                super::$scenario(V10, V03).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn v10_client_v10_agent() {
                super::$scenario(V10, V10).await
            }
        }
    )*};
}

/// A started process's log lines, waited for with a bound.
pub mod child;

/// The real SDK agents, as child processes.
pub mod sdk_agent;
#[allow(unused_imports)]
pub use sdk_agent::{sdk_agent, SdkAgent};

/// Free ports on 127.0.0.1 for the proxies under test.
pub mod ports;
pub use ports::free_local_addr;

/// gRPC builders and status decoding.
pub mod grpc;

/// TLS toward the proxy's listener: a test CA and a client trusting it.
pub mod tls;

/// A fake gRPC agent of either version, scripted and recording.
pub mod grpc_agent;

/// The real a2a-sdk agents (Python) as child processes.
pub mod sdk;

impl Streaming {
    /// The next `n` SSE `data` values of the stream (JSON), adding one
    /// permit to `gate` after each (the fake upstream's next event);
    /// comment frames (`:`) are passed over. Each piece waits at most
    /// [`WAIT`].
    pub async fn events(&mut self, gate: &Semaphore, n: usize) -> Vec<serde_json::Value> {
        let mut buf = String::new();
        let mut got = Vec::new();
        while got.len() < n {
            let chunk = timeout(WAIT, self.reader.chunk(&mut self.sock))
                .await
                .unwrap_or_else(|_| panic!("event {} did not arrive", got.len() + 1))
                .unwrap()
                .expect("stream ended early");
            buf.push_str(std::str::from_utf8(&chunk).unwrap());
            while let Some(i) = buf.find("\n\n") {
                let ev: String = buf.drain(..i + 2).collect();
                if ev.starts_with(':') {
                    continue;
                }
                let data = ev
                    .trim()
                    .strip_prefix("data: ")
                    .unwrap_or_else(|| panic!("{ev:?}"));
                got.push(serde_json::from_str(data).unwrap());
                gate.add_permits(1);
            }
        }
        got
    }
}

/// One h2c (HTTP/2 without TLS) POST of `body` to `/` at `addr` with
/// `headers`: the answer's status, headers and whole body, all within
/// [`WAIT`].
pub async fn h2c_post(
    addr: SocketAddr,
    headers: &[(&str, &str)],
    body: &'static [u8],
) -> (http::StatusCode, http::HeaderMap, Vec<u8>) {
    let run = async {
        let tcp = TcpStream::connect(addr).await.unwrap();
        let (client, conn) = h2::client::handshake(tcp).await.unwrap();
        let conn_task = tokio::spawn(async move {
            let _ = conn.await;
        });
        let mut client = client.ready().await.unwrap();
        let mut req = http::Request::builder()
            .method("POST")
            .uri(format!("http://{addr}/"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let (resp, mut send) = client.send_request(req.body(()).unwrap(), false).unwrap();
        send.send_data(bytes::Bytes::from_static(body), true)
            .unwrap();
        let resp = resp.await.unwrap();
        let (head, mut recv) = resp.into_parts();
        let mut got = Vec::new();
        while let Some(chunk) = recv.data().await {
            let chunk = chunk.unwrap();
            let _ = recv.flow_control().release_capacity(chunk.len());
            got.extend_from_slice(&chunk);
        }
        drop(client);
        conn_task.abort();
        (head.status, head.headers, got)
    };
    timeout(WAIT, run).await.expect("h2c exchange timed out")
}

/// The callback path and the secret of the push config an agent got
/// through the proxy at `addr` (`seen`, what the agent was sent).
pub fn callback_of(addr: SocketAddr, seen: &Seen) -> (String, String) {
    let cfg = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the agent got a push config");
    let url = cfg["url"].as_str().unwrap_or_default();
    let path = url
        .strip_prefix(&format!("http://{addr}"))
        .unwrap_or_default()
        .to_string();
    assert!(
        path.starts_with("/a2a-proxy/push/"),
        "agent was given {cfg}"
    );
    let secret = cfg["token"].as_str();
    let secret = secret.unwrap_or_else(|| panic!("no secret in {cfg}"));
    (path, secret.to_string())
}

/// An agent's push of `body` (JSON) to the proxy's callback `path` at
/// `addr`, bearing `secret` as v1.0 agents do.
pub async fn push_bearing(
    addr: SocketAddr,
    path: &str,
    secret: &str,
    body: &serde_json::Value,
) -> Response {
    post(
        addr,
        path,
        &[
            ("Content-Type", "application/json"),
            ("Authorization", &format!("Bearer {secret}")),
        ],
        body.to_string().as_bytes(),
    )
    .await
}

/// The card at `path` of the proxy at `addr` as a client of `version`
/// (`A2A-Version`) gets it: answered 200, its JSON.
pub async fn card_as(addr: SocketAddr, path: &str, version: &str) -> serde_json::Value {
    let r = get(addr, path, &[("A2A-Version", version)]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// A proxy for `upstream` (a v0.3 agent) with push on, stored at `dir`,
/// webhooks on 127.0.0.1 allowed and quick retries; `tune` last.
pub fn push_proxy(
    upstream: &str,
    dir: &std::path::Path,
    tune: impl FnOnce(&mut proxy::config::Config),
) -> proxy::RunningProxy {
    use proxy::config::{Config, PushBackend, UpstreamVersion};
    let addr = free_local_addr().unwrap();
    let mut config = Config::new(addr, upstream).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(proxy::version::Version::V03);
    // Config::new resolved the callback URL from `addr`.
    config.push.enabled = true;
    config.push.backend = PushBackend::Embedded(dir.to_path_buf());
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    config.push.backoff_initial = Duration::from_millis(50);
    config.push.backoff_max = Duration::from_millis(200);
    tune(&mut config);
    proxy::start(config).unwrap()
}

/// A v0.3 agent that answers message/send with task t1 and keeps the last
/// push config it was given, as `cfg-1` (answering get/list with it, as
/// an SDK does).
pub async fn v03_push_agent() -> (FakeUpstream, Seen) {
    use serde_json::{json, Value};
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let agent = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let id = req["id"].clone();
        let result = match req["method"].as_str() {
            Some("message/send") => {
                let cfg = req["params"]["configuration"]["pushNotificationConfig"].clone();
                if cfg.is_object() {
                    let mut cfg = cfg;
                    cfg["id"] = json!("cfg-1");
                    *s.lock().unwrap() = Some(cfg);
                }
                json!({"kind": "task", "id": "t1", "contextId": "c1",
                    "status": {"state": "submitted", "timestamp": "2024-03-15T18:30:00Z"}})
            }
            Some("tasks/pushNotificationConfig/get") => {
                json!({"taskId": "t1", "pushNotificationConfig": s.lock().unwrap().clone()})
            }
            Some("tasks/pushNotificationConfig/list") => {
                json!([{"taskId": "t1", "pushNotificationConfig": s.lock().unwrap().clone()}])
            }
            Some("tasks/pushNotificationConfig/delete") => Value::Null,
            _ => json!({}),
        };
        Reply::rpc_result(&id, &result)
    })
    .await;
    (agent, seen)
}

/// `r` is a 200 JSON-RPC answer whose result is a v0.3 Task in state
/// `completed`.
pub fn assert_v03_completed(r: &Response) {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["result"]["status"]["state"], "completed", "{v}");
}

/// A spawned task (a fake peer's accept loop) aborted when this is
/// dropped, with the peer that holds it.
pub struct AbortOnDrop(pub tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Reply {
    /// A 200 JSON-RPC answer to the request of id `id`: `result`.
    pub fn rpc_result(id: &serde_json::Value, result: &serde_json::Value) -> Reply {
        let body = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
        Reply::json(200, &body.to_string())
    }
}
