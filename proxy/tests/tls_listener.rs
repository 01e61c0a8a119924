//! TLS on the proxy's HTTP listener (`tls_cert_file` / `tls_key_file`):
//! clients trusting a CA the test makes reach the card and JSON-RPC over
//! HTTP/1.1 and HTTP/2 (ALPN), plain HTTP on the TLS port is refused with
//! a plain 400, a bad key stops the start, and SIGHUP swaps the
//! certificate of both listeners for new connections while an open one
//! keeps working (the binary as a child process).

mod support;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proxy::config::{Config, RawConfig};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::tls::{connect, peer_cert, temp_dir, TestCa, H1};
use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CARD_V03: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;

/// A v0.3 agent: its card, and a completed task for every JSON-RPC call.
async fn agent() -> FakeUpstream {
    agent_with_card(
        |me| CARD_V03.replace("UP", me),
        |r| {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let task = json!({"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}});
            Reply::rpc_result(&req["id"], &task)
        },
    )
    .await
}

/// The proxy with TLS on its listener, configured as a file would
/// (`tls_cert_file` / `tls_key_file`), so the defaults that follow from
/// TLS (the https:// public URL) apply.
fn tls_config(up: &FakeUpstream, cert: &std::path::Path, key: &std::path::Path) -> Config {
    let raw = RawConfig {
        listen: Some(support::free_local_addr().unwrap().to_string()),
        tls_cert_file: Some(cert.display().to_string()),
        tls_key_file: Some(key.display().to_string()),
        ..RawConfig::default()
    };
    let mut raw = raw;
    raw.upstream.url = Some(up.url());
    raw.upstream.version = Some("0.3".into());
    raw.push.enabled = Some(false);
    raw.threads = Some(1);
    Config::resolve(raw).unwrap()
}

fn tls_proxy(up: &FakeUpstream, cert: &std::path::Path, key: &std::path::Path) -> RunningProxy {
    proxy::start(tls_config(up, cert, key)).unwrap()
}

/// A fake agent behind a proxy on TLS, its certificate (`leaf`) signed by
/// a new CA, in a new directory: the agent, the directory, the CA, the
/// leaf and the proxy.
async fn tls_front() -> (
    FakeUpstream,
    std::path::PathBuf,
    TestCa,
    support::tls::Leaf,
    RunningProxy,
) {
    let up = agent().await;
    let dir = temp_dir("tls-listener");
    let ca = TestCa::new();
    let leaf = ca.leaf(&dir, "proxy");
    let px = tls_proxy(&up, &leaf.cert_file, &leaf.key_file);
    (up, dir, ca, leaf, px)
}

/// The status of `/health` asked over `tls` (HTTP/1.1).
async fn health_over(tls: tokio_rustls::client::TlsStream<tokio::net::TcpStream>) -> u16 {
    let mut h1 = H1::over(tls).await;
    h1.call("GET", "/health", &[], b"").await.unwrap().0
}

const GET_TASK_V10: &[u8] = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}"#;

fn is_completed_v10(body: &[u8]) -> bool {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    v["result"]["id"] == "t1" && v["result"]["status"]["state"] == "TASK_STATE_COMPLETED"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_trusting_the_ca_gets_the_card_and_jsonrpc_over_tls() {
    let (up, dir, ca, leaf, px) = tls_front().await;
    assert!(px.url().starts_with("https://"), "{}", px.url());

    // HTTP/1.1 (ALPN http/1.1): the card, then a translated call on the
    // same connection.
    let tls = connect(px.addr, &ca.der(), &[b"http/1.1"]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    assert_eq!(peer_cert(&tls), leaf.der);
    let mut h1 = H1::over(tls).await;
    let (status, body) = h1
        .call(
            "GET",
            "/.well-known/agent-card.json",
            &[("A2A-Version", "1.0")],
            b"",
        )
        .await
        .unwrap();
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
    let card: Value = serde_json::from_slice(&body).unwrap();
    let url = card["supportedInterfaces"][0]["url"].as_str().unwrap_or("");
    // The card points clients at the proxy, over https.
    assert!(url.starts_with(&format!("https://{}", px.addr)), "{card}");
    let (status, body) = h1.call("POST", "/", JSON_V10, GET_TASK_V10).await.unwrap();
    assert_eq!(status, 200);
    assert!(
        is_completed_v10(&body),
        "{}",
        String::from_utf8_lossy(&body)
    );

    // HTTP/2 (ALPN h2).
    let tls = connect(px.addr, &ca.der(), &[b"h2"]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut h2, conn) = h2::client::handshake(tls).await.unwrap();
    let conn = tokio::spawn(async move {
        let _ = conn.await;
    });
    let req = http::Request::builder()
        .method("POST")
        .uri(format!("https://localhost:{}/", px.addr.port()))
        .header("a2a-version", "1.0")
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    let fut = async {
        let (resp, mut stream) = h2.send_request(req, false).unwrap();
        stream
            .send_data(bytes::Bytes::from_static(GET_TASK_V10), true)
            .unwrap();
        let resp = resp.await.unwrap();
        let status = resp.status().as_u16();
        let mut body = resp.into_body();
        let mut all = Vec::new();
        while let Some(c) = body.data().await {
            let c = c.unwrap();
            let _ = body.flow_control().release_capacity(c.len());
            all.extend_from_slice(&c);
        }
        (status, all)
    };
    let (status, body) = tokio::time::timeout(WAIT, fut).await.expect("h2 answer");
    assert_eq!(status, 200);
    assert!(
        is_completed_v10(&body),
        "{}",
        String::from_utf8_lossy(&body)
    );
    conn.abort();
    assert_eq!(up.calls().len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads until the proxy closes the connection (at most [`WAIT`]).
async fn read_to_close(sock: &mut TcpStream) -> Option<Vec<u8>> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(WAIT, sock.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(got),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_http_on_the_tls_port_is_refused_cleanly() {
    let (up, dir, ca, _, px) = tls_front().await;

    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    sock.write_all(&request("POST", "/", JSON_V10, GET_TASK_V10))
        .await
        .unwrap();
    let got = read_to_close(&mut sock).await.expect("closed");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 400 "), "{text}");
    assert!(text.contains("https://"), "{text}");
    // A client speaking neither TLS nor HTTP: closed without a word.
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    sock.write_all(&[0u8; 8]).await.unwrap();
    assert_eq!(read_to_close(&mut sock).await, Some(Vec::new()));
    // A client that trusts another CA: its handshake fails.
    let other = TestCa::new();
    assert!(connect(px.addr, &other.der(), &[b"http/1.1"])
        .await
        .is_err());
    assert!(up.calls().is_empty(), "{:?}", up.calls());
    // And the listener still serves (a client offering no ALPN: HTTP/1.1).
    let tls = connect(px.addr, &ca.der(), &[]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), None);
    assert_eq!(health_over(tls).await, 200);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_key_that_does_not_fit_stops_the_start() {
    let up = agent().await;
    let dir = temp_dir("tls-listener");
    let ca = TestCa::new();
    let a = ca.leaf(&dir, "a");
    let b = ca.leaf(&dir, "b");
    let config = tls_config(&up, &a.cert_file, &b.key_file);
    let err = proxy::start(config).err().expect("must not start");
    assert!(err.to_string().contains("do not fit"), "{err}");
    assert!(err.to_string().contains("tls_key_file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The binary serving TLS on `listen`; its stderr lines are collected.
struct Child_ {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Drop for Child_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary with TLS on its HTTP listener `listen` and its gRPC
/// listener `grpc`, both from the same files.
fn serve_tls(
    listen: SocketAddr,
    grpc: SocketAddr,
    upstream: &str,
    cert: &std::path::Path,
    key: &std::path::Path,
) -> Child_ {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args([
            "serve",
            "--listen",
            &listen.to_string(),
            "--upstream",
            upstream,
        ])
        .args([
            "--upstream-version",
            "0.3",
            "--no-push",
            "--log-format",
            "text",
        ])
        .arg("--tls-cert")
        .arg(cert)
        .arg("--tls-key")
        .arg(key)
        .args(["--grpc-listen", &grpc.to_string()])
        .arg("--grpc-tls-cert")
        .arg(cert)
        .arg("--grpc-tls-key")
        .arg(key)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the proxy");
    let log = Arc::new(Mutex::new(Vec::new()));
    let stderr = child.stderr.take().unwrap();
    let l = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            l.lock().unwrap().push(line);
        }
    });
    Child_ { child, log }
}

fn sighup(child: &Child) {
    // SAFETY: kill(2) on our own child's pid.
    let r = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) };
    assert_eq!(r, 0);
}

/// Polls (at most 10 s) until a new TLS connection (ALPN `alpn`)
/// presents `der`.
async fn presents_on(addr: SocketAddr, alpn: &[u8], ca: &[u8], der: &[u8]) -> bool {
    for _ in 0..100 {
        if let Ok(tls) = connect(addr, ca, &[alpn]).await {
            if peer_cert(&tls) == der {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

async fn presents(addr: SocketAddr, ca: &[u8], der: &[u8]) -> bool {
    presents_on(addr, b"http/1.1", ca, der).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_reloads_the_certificate_and_keeps_open_connections() {
    let up = agent().await;
    let dir = temp_dir("tls-reload");
    let ca = TestCa::new();
    let first = ca.leaf(&dir, "first");
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::copy(&first.cert_file, &cert).unwrap();
    std::fs::copy(&first.key_file, &key).unwrap();
    let addr = support::free_local_addr().unwrap();
    let grpc = support::free_local_addr().unwrap();
    let px = serve_tls(addr, grpc, &up.url(), &cert, &key);
    assert!(
        presents(addr, &ca.der(), &first.der).await,
        "the proxy did not come up"
    );
    assert!(presents_on(grpc, b"h2", &ca.der(), &first.der).await);

    // A connection opened before the reload.
    let tls = connect(addr, &ca.der(), &[b"http/1.1"]).await.unwrap();
    assert_eq!(peer_cert(&tls), first.der);
    let mut before = H1::over(tls).await;
    let (status, _) = before.call("GET", "/health", &[], b"").await.unwrap();
    assert_eq!(status, 200);

    // New files, SIGHUP: new connections see the new certificate.
    let second = ca.leaf(&dir, "second");
    std::fs::copy(&second.cert_file, &cert).unwrap();
    std::fs::copy(&second.key_file, &key).unwrap();
    sighup(&px.child);
    assert!(
        presents(addr, &ca.der(), &second.der).await,
        "no new certificate after SIGHUP: {:?}",
        px.log.lock().unwrap()
    );
    // The gRPC listener's certificate (the same files) is reloaded too.
    assert!(presents_on(grpc, b"h2", &ca.der(), &second.der).await);
    // The connection opened before still works.
    let (status, body) = before
        .call("POST", "/", JSON_V10, GET_TASK_V10)
        .await
        .unwrap();
    assert_eq!(status, 200);
    assert!(
        is_completed_v10(&body),
        "{}",
        String::from_utf8_lossy(&body)
    );

    // A reload that fails (a key that does not fit) keeps the certificate
    // in force and says so in the log.
    std::fs::copy(&first.key_file, &key).unwrap();
    sighup(&px.child);
    assert!(
        eventually(|| px
            .log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("not reloaded")))
        .await,
        "{:?}",
        px.log.lock().unwrap()
    );
    let tls = connect(addr, &ca.der(), &[b"http/1.1"]).await.unwrap();
    assert_eq!(peer_cert(&tls), second.der);
    let g = connect(grpc, &ca.der(), &[b"h2"]).await.unwrap();
    assert_eq!(peer_cert(&g), second.der);
    assert_eq!(health_over(tls).await, 200);
    // Nothing in the log is coloured (stderr is a pipe; --log-format text).
    assert!(!px.log.lock().unwrap().iter().any(|l| l.contains('\x1b')));
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
