//! Finding 3 (idle and slowloris connections, head size, open files),
//! finding 5 (pipelined HTTP/1.1 requests), finding 9 (a port in use).

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proxy::config::Config;
use proxy::version::Version;
use proxy::RunningProxy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

use crate::support::tls;
use crate::support::*;

fn proxy_with(upstream: &str, tweak: impl FnOnce(&mut Config)) -> RunningProxy {
    let mut config = config_for(upstream, Version::V03);
    tweak(&mut config);
    proxy::start(config).unwrap()
}

/// [`request`] without its `Connection: close`: the connection stays open.
fn kept_alive(method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let raw = request(method, target, headers, body);
    let text = String::from_utf8(raw).unwrap();
    text.replacen("Connection: close\r\n", "", 1).into_bytes()
}

fn short_heads(c: &mut Config) {
    c.limits.header_timeout = Duration::from_secs(1);
    c.limits.idle_timeout = Duration::from_secs(1);
}

/// Reads (plain or decrypted bytes) until the proxy closes the connection
/// (EOF or reset), at most `limit`: what it wrote and when it closed;
/// `None` if still open.
async fn until_closed<S: tokio::io::AsyncRead + Unpin>(
    sock: &mut S,
    limit: Duration,
) -> Option<(Vec<u8>, Duration)> {
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = limit.checked_sub(start.elapsed())?;
        match timeout(left, sock.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some((got, start.elapsed())),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[tokio::test]
async fn a_silent_connection_is_closed_after_the_header_timeout() {
    let px = proxy_with("http://127.0.0.1:9", short_heads);
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    let (_, after) = until_closed(&mut sock, Duration::from_secs(15))
        .await
        .expect("a connection that sends nothing must be closed");
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
}

#[tokio::test]
async fn a_head_trickled_byte_by_byte_is_cut_at_the_header_timeout() {
    let px = proxy_with("http://127.0.0.1:9", short_heads);
    let sock = TcpStream::connect(px.addr).await.unwrap();
    let (mut rd, mut wr) = sock.into_split();
    // One byte every 100 ms: each read is quick, the head never ends.
    let writer = tokio::spawn(async move {
        let head = b"GET /health HTTP/1.1\r\nHost: a\r\nX-Slow: ".to_vec();
        let filler = [b'a'; 200];
        for b in head.iter().chain(filler.iter()) {
            if wr.write_all(std::slice::from_ref(b)).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let start = Instant::now();
    let closed = until_closed(&mut rd, Duration::from_secs(15)).await;
    writer.abort();
    let (got, _) = closed.expect("a trickled head must not hold the connection");
    assert!(start.elapsed() < Duration::from_secs(10));
    let text = String::from_utf8_lossy(&got);
    assert!(
        got.is_empty() || text.starts_with("HTTP/1.1 408"),
        "answered {text:?}"
    );
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_and_a_busy_one_is_not() {
    let px = proxy_with("http://127.0.0.1:9", short_heads);
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    let mut reader = Reader::default();
    // Three requests, 600 ms apart: each gap is within the idle limit.
    for _ in 0..3 {
        sock.write_all(&kept_alive("GET", "/health", &[], b""))
            .await
            .unwrap();
        let head = timeout(WAIT, reader.head(&mut sock))
            .await
            .unwrap()
            .unwrap()
            .expect("answer");
        assert!(head.starts_with("HTTP/1.1 200"), "{head}");
        let (_, headers) = parse_head(&head);
        timeout(WAIT, reader.body(&mut sock, &headers, false))
            .await
            .unwrap()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    let (_, after) = until_closed(&mut sock, Duration::from_secs(15))
        .await
        .expect("an idle kept-alive connection must be closed");
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
}

#[tokio::test]
async fn a_request_head_over_the_cap_gets_431() {
    let px = proxy_with("http://127.0.0.1:9", |c| c.limits.max_header_bytes = 4096);
    // Under the cap: answered.
    let fine = "b".repeat(3000);
    let r = get(px.addr, "/health", &[("X-Fine", &fine)]).await;
    assert_eq!(r.status, 200);
    // Over it, in one write and in many.
    let big = "b".repeat(8000);
    for pieces in [1usize, 16] {
        let raw = request("GET", "/health", &[("X-Big", &big)], b"");
        let mut sock = TcpStream::connect(px.addr).await.unwrap();
        for part in raw.chunks(raw.len().div_ceil(pieces)) {
            if sock.write_all(part).await.is_err() {
                break;
            }
        }
        let (got, _) = until_closed(&mut sock, Duration::from_secs(10))
            .await
            .expect("closed");
        let text = String::from_utf8_lossy(&got);
        assert!(text.starts_with("HTTP/1.1 431"), "answered {text:?}");
    }
}

/// The next `n` answers on `sock`: start line and body, each within
/// [`WAIT`].
async fn answers(sock: &mut TcpStream, n: usize) -> Vec<(String, Vec<u8>)> {
    let mut reader = Reader::default();
    let mut out = Vec::new();
    for _ in 0..n {
        let head = timeout(WAIT, reader.head(sock))
            .await
            .expect("every pipelined request is answered")
            .unwrap()
            .expect("connection open");
        let (start, headers) = parse_head(&head);
        let body = timeout(WAIT, reader.body(sock, &headers, false))
            .await
            .unwrap()
            .unwrap();
        out.push((start, body));
    }
    out
}

#[tokio::test]
async fn pipelined_requests_are_all_answered_in_order() {
    let up = FakeUpstream::start(|r| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"echo":{}}}}}"#,
            r.body.len()
        );
        Reply::json(200, &body)
    })
    .await;
    let px = proxy_with(&up.url(), |_| {});
    let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}"#;
    let mut raw = kept_alive("GET", "/health", &[], b"");
    raw.extend(kept_alive("POST", "/", JSON_HEADER, rpc));
    raw.extend(kept_alive("GET", "/ready", &[], b""));
    raw.extend(kept_alive("POST", "/", JSON_HEADER, rpc));
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    sock.write_all(&raw).await.unwrap();
    let answers: Vec<(String, String)> = answers(&mut sock, 4)
        .await
        .into_iter()
        .map(|(start, body)| (start, String::from_utf8_lossy(&body).into_owned()))
        .collect();
    assert!(answers[0].0.contains(" 200"), "{answers:?}");
    assert!(
        answers[1].1.contains(&format!("\"echo\":{}", rpc.len())),
        "{answers:?}"
    );
    assert!(
        answers[2].0.contains(" 200") || answers[2].0.contains(" 503"),
        "{answers:?}"
    );
    assert!(answers[3].1.contains("\"echo\""), "{answers:?}");
    assert_eq!(up.calls().len(), 2);
}

#[tokio::test]
async fn health_answers_while_max_connections_are_taken() {
    let up = FakeUpstream::start(|_| Reply::Hang).await;
    let px = proxy_with(&up.url(), |c| c.limits.max_connections = 2);
    let rpc = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}"#;
    let raw = request("POST", "/", JSON_HEADER, rpc);
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(px.addr).await.unwrap();
        s.write_all(&raw).await.unwrap();
        held.push(s);
    }
    assert!(eventually(|| up.calls().len() == 2).await);
    let r = post(px.addr, "/", JSON_HEADER, rpc).await;
    assert_eq!(r.status, 503, "{}", r.text());
    let h = get(px.addr, "/health", &[]).await;
    assert_eq!(h.status, 200);
    drop(held);
}

/// The proxy binary with `args`, its soft open-files limit set to 256 by
/// the shell that starts it, in an empty directory.
fn binary_with_256_files(args: &[String], dir: &std::path::Path) -> Child {
    let mut line = String::from("ulimit -Sn 256 && exec \"$0\"");
    for i in 0..args.len() {
        line.push_str(&format!(" \"${}\"", i + 1));
    }
    Command::new("sh")
        .arg("-c")
        .arg(line)
        .arg(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn wait_listening(addr: SocketAddr) {
    for _ in 0..100 {
        if TcpStream::connect(addr).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the proxy did not listen on {addr}");
}

/// The binary's arguments to serve on `addr` toward a v0.3 agent that is
/// not there, without push.
fn serve_args(addr: std::net::SocketAddr) -> Vec<String> {
    let listen = addr.to_string();
    [
        "serve",
        "--listen",
        &listen,
        "--upstream",
        "http://127.0.0.1:9",
        "--upstream-version",
        "0.3",
        "--no-push",
    ]
    .map(String::from)
    .to_vec()
}

#[tokio::test]
async fn health_answers_past_a_soft_limit_of_256_open_files() {
    let dir = std::env::temp_dir().join(format!("a2a-hostile-fd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let addr = crate::support::free_local_addr().unwrap();
    let args = serve_args(addr);
    let child = Killed(binary_with_256_files(&args, &dir));
    wait_listening(addr).await;
    // 300 connections that send nothing (within the header timeout).
    let mut idle = Vec::new();
    for _ in 0..300 {
        idle.push(TcpStream::connect(addr).await.unwrap());
    }
    let h = timeout(Duration::from_secs(10), async {
        get(addr, "/health", &[]).await
    })
    .await
    .expect("/health must answer with 300 connections open");
    assert_eq!(h.status, 200);
    drop(idle);
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_on_a_port_in_use_exits_at_once_naming_the_address() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let dir = std::env::temp_dir().join(format!("a2a-hostile-port-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
            .args(serve_args(addr))
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.0.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > Duration::from_secs(15) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let status = status.expect("serve on a port in use must exit, not retry");
    assert!(!status.success());
    let mut err = String::new();
    std::io::Read::read_to_string(child.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(err.contains(&addr.to_string()), "stderr: {err}");
    drop(taken);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_grpc_listener_closes_a_silent_connection_and_still_serves() {
    let px = proxy_with("http://127.0.0.1:9", short_heads);
    let mut grpc =
        proxy::grpc::GrpcServer::start(px.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let mut silent = TcpStream::connect(grpc.addr).await.unwrap();
    let (_, after) = until_closed(&mut silent, Duration::from_secs(15))
        .await
        .expect("a gRPC connection that sends nothing must be closed");
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
    // A connection that is not HTTP/2 at all is closed too.
    let mut h1 = TcpStream::connect(grpc.addr).await.unwrap();
    h1.write_all(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        .await
        .unwrap();
    assert!(until_closed(&mut h1, Duration::from_secs(15))
        .await
        .is_some());
    // A real HTTP/2 client still gets through (the preface is left for
    // the server): h2 handshake and a request answered.
    let tcp = TcpStream::connect(grpc.addr).await.unwrap();
    let (mut client, conn) = timeout(WAIT, h2::client::handshake(tcp))
        .await
        .unwrap()
        .unwrap();
    let driver = tokio::spawn(conn);
    let req = http::Request::post(format!("http://{}/lf.a2a.v1.A2AService/GetTask", grpc.addr))
        .header("content-type", "application/grpc")
        .body(())
        .unwrap();
    let (answer, mut body) = client.send_request(req, false).unwrap();
    body.send_data(bytes::Bytes::from_static(&[0, 0, 0, 0, 0]), true)
        .unwrap();
    let answer = timeout(WAIT, answer).await.unwrap().unwrap();
    assert_eq!(answer.status(), 200);
    drop((client, body, answer));
    driver.abort();
    let _ = driver.await;
    grpc.stop();
}

#[tokio::test]
async fn an_http2_request_head_over_the_cap_is_refused() {
    let px = proxy_with("http://127.0.0.1:9", |c| c.limits.max_header_bytes = 4096);
    let tcp = TcpStream::connect(px.addr).await.unwrap();
    let (client, conn) = timeout(WAIT, h2::client::handshake(tcp))
        .await
        .unwrap()
        .unwrap();
    let driver = tokio::spawn(conn);
    let ask = |big: usize| {
        let client = client.clone();
        async move {
            let req = http::Request::get("http://test/health")
                .header("x-big", "b".repeat(big))
                .body(())
                .unwrap();
            let mut client = client.ready().await.ok()?;
            let (answer, _) = client.send_request(req, true).ok()?;
            timeout(WAIT, answer)
                .await
                .ok()?
                .ok()
                .map(|r| r.status().as_u16())
        }
    };
    assert_eq!(ask(1000).await, Some(200));
    let refused = ask(16 * 1024).await;
    assert!(refused != Some(200), "a 16 KiB header passed: {refused:?}");
    driver.abort();
}

/// A slow POST: the head in time, the body trickled. The whole request is
/// bounded by `limits.body_timeout` on every path that reads a body (read
/// before admission, read after it, read whole for a REST call of the
/// proxy's own).
#[tokio::test]
async fn a_trickled_body_is_cut_at_the_body_timeout() {
    let up =
        FakeUpstream::start(|_| Reply::json(200, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)).await;
    let px = proxy_with(&up.url(), |c| {
        c.limits.body_timeout = Duration::from_secs(2)
    });
    let filler = |n: usize| "x".repeat(n);
    let cases = [
        // Read before routing (<= 64 KiB).
        (
            "/",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{}"}}]}}}}}}"#,
                filler(30_000)
            ),
        ),
        // Read after admission (> 64 KiB).
        (
            "/",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{}"}}]}}}}}}"#,
                filler(100_000)
            ),
        ),
        // REST, read whole for the proxy's own call.
        (
            "/message:send",
            format!(
                r#"{{"message":{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{}"}}]}}}}"#,
                filler(30_000)
            ),
        ),
    ];
    for (path, body) in cases {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        let sock = TcpStream::connect(px.addr).await.unwrap();
        let (mut rd, mut wr) = sock.into_split();
        let bytes = body.into_bytes();
        // 1 KiB every 100 ms: 3 to 10 s for the whole body.
        let writer = tokio::spawn(async move {
            if wr.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for piece in bytes.chunks(1024) {
                if wr.write_all(piece).await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let start = Instant::now();
        let closed = until_closed(&mut rd, Duration::from_secs(20))
            .await
            .is_some();
        writer.abort();
        assert!(closed, "{path}: a trickled body held the connection");
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{path}: closed after {:?}",
            start.elapsed()
        );
    }
    assert!(up.calls().is_empty(), "a partial body reached the agent");
}

/// Pipelined requests the proxy answers with calls of its own (translated,
/// v1.0 client → v0.3 agent), a REST one among them, come back in order.
#[tokio::test]
async fn pipelined_translated_requests_are_answered_in_order() {
    let up = FakeUpstream::start(|r| {
        let req: serde_json::Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let id = match r.target.strip_prefix("/v1/tasks/") {
            Some(id) => id.to_string(),
            None => req["params"]["id"].as_str().unwrap_or("?").to_string(),
        };
        let body = serde_json::json!({"jsonrpc": "2.0", "id": req["id"], "result": {
            "kind": "task", "id": id, "contextId": "c1",
            "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"}}});
        if r.target.starts_with("/v1/") {
            // The v0.3 REST binding answers a Task in ProtoJSON.
            let task = serde_json::json!({"id": id, "contextId": "c1",
                "status": {"state": "TASK_STATE_WORKING"}});
            return Reply::json(200, &task.to_string());
        }
        Reply::json(200, &body.to_string())
    })
    .await;
    let px = proxy_with(&up.url(), |_| {});
    let v10 = [("Content-Type", "application/json"), ("A2A-Version", "1.0")];
    let get = |id: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":"{id}","method":"GetTask","params":{{"id":"{id}"}}}}"#)
    };
    let mut raw = kept_alive("POST", "/", &v10, get("a").as_bytes());
    raw.extend(kept_alive(
        "GET",
        "/tasks/b",
        &[("A2A-Version", "1.0")],
        b"",
    ));
    raw.extend(kept_alive("POST", "/", &v10, get("c").as_bytes()));
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    sock.write_all(&raw).await.unwrap();
    let mut ids = Vec::new();
    for (_, body) in answers(&mut sock, 3).await {
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let task = if v["result"].is_object() {
            &v["result"]
        } else {
            &v
        };
        ids.push(task["id"].as_str().unwrap_or("?").to_string());
    }
    assert_eq!(ids, ["a", "b", "c"]);
}

// TLS on the listener (issue #23): the bounds above hold when the
// listener speaks TLS; the handshake counts against the header timeout.

/// A TLS proxy with 1 s head and idle bounds, and the CA its certificate
/// comes from.
fn tls_proxy_with(
    tweak: impl FnOnce(&mut Config),
) -> (RunningProxy, tls::TestCa, std::path::PathBuf) {
    let dir = tls::temp_dir("hostile-tls");
    let ca = tls::TestCa::new();
    let leaf = ca.leaf(&dir, "proxy");
    let px = proxy_with("http://127.0.0.1:9", |c| {
        short_heads(c);
        c.tls = Some((leaf.cert_file.clone(), leaf.key_file.clone()));
        tweak(c);
    });
    (px, ca, dir)
}

#[tokio::test]
async fn a_silent_tls_client_is_cut_at_the_header_timeout() {
    let (px, ca, dir) = tls_proxy_with(|_| {});
    // Silent before the handshake: no byte at all.
    let mut sock = TcpStream::connect(px.addr).await.unwrap();
    let (got, after) = until_closed(&mut sock, Duration::from_secs(15))
        .await
        .expect("a connection that sends nothing must be closed");
    assert!(got.is_empty());
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
    // Silent after the handshake: no request head.
    let mut tls = tls::connect(px.addr, &ca.der(), &[b"http/1.1"])
        .await
        .unwrap();
    let (got, after) = until_closed(&mut tls, Duration::from_secs(15))
        .await
        .expect("a TLS connection that sends no request must be closed");
    let text = String::from_utf8_lossy(&got);
    assert!(
        got.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text:?}"
    );
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
    // Silent after the HTTP/2 handshake (ALPN h2): no preface.
    let mut tls = tls::connect(px.addr, &ca.der(), &[b"h2"]).await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (got, after) = until_closed(&mut tls, Duration::from_secs(15))
        .await
        .expect("an h2 connection that sends no preface must be closed");
    // At most the server's own SETTINGS frame, never an HTTP/1.1 answer.
    assert!(
        !String::from_utf8_lossy(&got).contains("HTTP/1.1"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_trickled_tls_handshake_is_cut_at_the_header_timeout() {
    let (px, ca, dir) = tls_proxy_with(|_| {});
    // A real ClientHello, one byte every 100 ms: each read is quick, the
    // handshake would take half a minute.
    let mut roots = tokio_rustls::rustls::RootCertStore::empty();
    roots.add(ca.der().into()).unwrap();
    let provider = std::sync::Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = tokio_rustls::rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let mut client =
        tokio_rustls::rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let mut hello = Vec::new();
    client.write_tls(&mut hello).unwrap();
    assert!(hello.len() > 100, "{}", hello.len());
    let sock = TcpStream::connect(px.addr).await.unwrap();
    let (mut rd, mut wr) = sock.into_split();
    let writer = tokio::spawn(async move {
        for b in hello {
            if wr.write_all(&[b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    let start = Instant::now();
    let closed = until_closed(&mut rd, Duration::from_secs(15))
        .await
        .is_some();
    let done = writer.is_finished();
    writer.abort();
    assert!(closed, "a trickled handshake must not hold the connection");
    assert!(!done, "the whole ClientHello went out before the cut");
    assert!(start.elapsed() < Duration::from_secs(10));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tls_connections_keep_the_head_and_idle_bounds() {
    let (px, ca, dir) = tls_proxy_with(|c| c.limits.max_header_bytes = 4096);
    // A head over the cap: 431, closed.
    let mut tls = tls::connect(px.addr, &ca.der(), &[b"http/1.1"])
        .await
        .unwrap();
    let big = "b".repeat(8000);
    let raw = request("GET", "/health", &[("X-Big", &big)], b"");
    let _ = tls.write_all(&raw).await;
    let _ = tls.flush().await;
    let (got, _) = until_closed(&mut tls, Duration::from_secs(10))
        .await
        .expect("closed");
    let text = String::from_utf8_lossy(&got);
    assert!(text.starts_with("HTTP/1.1 431"), "answered {text:?}");
    // A kept-alive connection: answered, then closed when idle.
    let mut tls = tls::connect(px.addr, &ca.der(), &[b"http/1.1"])
        .await
        .unwrap();
    tls.write_all(&kept_alive("GET", "/health", &[], b""))
        .await
        .unwrap();
    let mut first = [0u8; 12];
    timeout(WAIT, tls.read_exact(&mut first))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let (_, after) = until_closed(&mut tls, Duration::from_secs(15))
        .await
        .expect("an idle kept-alive TLS connection must be closed");
    assert!(after < Duration::from_secs(10), "closed after {after:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
