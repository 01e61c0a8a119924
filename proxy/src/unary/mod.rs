//! Translated unary JSON-RPC calls made by the proxy itself: the whole
//! request goes to the upstream in one write over a pooled keep-alive
//! HTTP/1.1 connection, the whole answer is read, translated, and written to
//! the client with a `Content-Length` (see `front::own_call`).
//! Pingora's proxy loop (a task pipe per direction, the translated answer
//! sent chunked) costs more sends and wake-ups per call than the call itself.
//!
//! This module only moves HTTP/1.1 bytes: it knows nothing of A2A. Every
//! failure is a [`Failure`] of the same kind pingora's errors map to
//! (refused or closed: unavailable; no answer in time: timeout; not HTTP:
//! bad upstream response).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::error::Failure;
use crate::upstream_tls::{AgentAddr, Conn};

mod chunked;
mod retry;
mod stream;

use chunked::Chunked;
pub use retry::Repeat;
pub(crate) use retry::{Attempts, Lost};
pub use stream::Streaming;

/// Idle connections kept per proxy (all upstream addresses together).
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused (the
/// same idle timeout the proxied path gives pingora's pool).
const IDLE_FOR: Duration = Duration::from_secs(60);
/// Largest response head accepted.
const MAX_HEAD: usize = 64 * 1024;
/// Most response header lines accepted.
const MAX_HEADERS: usize = 128;
/// Read granularity.
const READ_CHUNK: usize = 16 * 1024;

/// A whole upstream answer. Hop-by-hop and framing headers are left out
/// (the client gets its own framing).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Bytes,
}

/// Timeouts and limits of one call.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub connect_timeout: Duration,
    /// For each read of the answer.
    pub read_timeout: Duration,
    /// For the whole answer, from the request's first byte written.
    pub answer_timeout: Duration,
    /// Largest answer body.
    pub max_body: usize,
    /// Whether the request may be sent again when its first sending may
    /// have reached the agent (see [`retry`]).
    pub repeat: Repeat,
}

struct Idle {
    addr: AgentAddr,
    sock: Conn,
    since: Instant,
}

/// Keep-alive connections to the upstream, reused last-in first-out.
#[derive(Default)]
pub struct UpstreamPool {
    idle: Mutex<Vec<Idle>>,
    opened: AtomicU64,
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> Failure {
    Failure::UpstreamUnavailable {
        detail: format!("{what}: {e}"),
    }
}

fn bad(detail: impl Into<String>) -> Lost {
    Lost::bad(detail)
}

impl UpstreamPool {
    /// Connections opened so far (for tests and diagnostics).
    pub fn opened(&self) -> u64 {
        self.opened.load(Ordering::Relaxed)
    }

    /// Sends `request` (a whole HTTP/1.1 request, head and body) to `addr`
    /// (over TLS when it says so) and returns the whole answer.
    pub async fn call(
        &self,
        addr: impl Into<AgentAddr>,
        request: &[u8],
        limits: Limits,
    ) -> Result<Answer, Failure> {
        let addr = addr.into();
        let to = &addr;
        let (answer, keep) = self
            .on_connection(to, limits, |sock| exchange(sock, to, request, limits))
            .await?;
        self.put(addr, keep);
        Ok(answer)
    }

    /// Runs `talk` on a live pooled connection to `addr` (those the agent
    /// closed while idle are dropped before anything is written), else on
    /// a new one; a failed attempt is run once more on a new connection
    /// when the retry table allows it (see [`retry`]).
    async fn on_connection<T, F, Fut>(
        &self,
        addr: &AgentAddr,
        limits: Limits,
        talk: F,
    ) -> Result<T, Failure>
    where
        F: Fn(Conn) -> Fut,
        Fut: std::future::Future<Output = Result<T, Lost>>,
    {
        let mut attempts = Attempts::new(limits.repeat);
        let mut pooled = self.take_live(addr);
        loop {
            let reused = pooled.is_some();
            let sock = match pooled.take() {
                Some(sock) => sock,
                None => self.connect(addr, limits.connect_timeout).await?,
            };
            match talk(sock).await {
                Ok(t) => return Ok(t),
                Err(lost) => attempts.next(lost, reused)?,
            }
        }
    }

    /// A pooled connection to `addr` the agent has not closed (nor sent
    /// unasked bytes on); dead ones are dropped.
    fn take_live(&self, addr: &AgentAddr) -> Option<Conn> {
        while let Some(mut sock) = self.take(addr) {
            if idle_and_open(&mut sock) {
                return Some(sock);
            }
            // EOF, an error, or bytes nobody asked for: not reusable.
            tracing::debug!("pooled upstream connection closed while idle; dropped");
        }
        None
    }

    async fn connect(&self, addr: &AgentAddr, within: Duration) -> Result<Conn, Failure> {
        let sock =
            crate::upstream_tls::connect(addr, within, crate::upstream_tls::Alpn::Http1).await?;
        self.opened.fetch_add(1, Ordering::Relaxed);
        Ok(sock)
    }

    fn take(&self, addr: &AgentAddr) -> Option<Conn> {
        let mut idle = self.idle.lock().ok()?;
        let now = Instant::now();
        idle.retain(|c| now.duration_since(c.since) < IDLE_FOR);
        let i = idle.iter().rposition(|c| c.addr.same(addr))?;
        Some(idle.swap_remove(i).sock)
    }

    fn put(&self, addr: AgentAddr, sock: Option<Conn>) {
        let Some(sock) = sock else { return };
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < MAX_IDLE {
                idle.push(Idle {
                    addr,
                    sock,
                    since: Instant::now(),
                });
            }
        }
    }
}

/// Whether a pooled connection has nothing to read and is not closed:
/// reusable. A TLS connection is polled once (a session ticket the agent
/// sent meanwhile is taken in and is no answer).
fn idle_and_open(sock: &mut Conn) -> bool {
    match sock {
        Conn::Plain(s) => {
            let mut probe = [0u8; 1];
            matches!(s.try_read(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
        }
        Conn::Tls(t) => {
            use std::task::{Context, Poll, Waker};
            let mut probe = [0u8; 1];
            let mut buf = tokio::io::ReadBuf::new(&mut probe);
            let mut cx = Context::from_waker(Waker::noop());
            matches!(
                tokio::io::AsyncRead::poll_read(std::pin::Pin::new(&mut **t), &mut cx, &mut buf),
                Poll::Pending
            )
        }
    }
}

/// A failure reading or writing on `to`: TLS's own (an alert, a bad
/// record) when rustls raised it, else `what` with the error.
fn io_failure(to: &AgentAddr, what: &str, e: std::io::Error) -> Result<Failure, Failure> {
    match crate::upstream_tls::io_failure(to, &e) {
        Some(f) => Err(f),
        None => Ok(unavailable(what, e)),
    }
}

/// Reads more bytes into `buf` within the read timeout and by `deadline`;
/// `Ok(0)` at end of stream. `answered`: a byte of the answer came (a
/// failure now is the answer's, not in doubt).
async fn read_more(
    sock: &mut Conn,
    to: &AgentAddr,
    buf: &mut BytesMut,
    limits: &Limits,
    deadline: Instant,
    answered: bool,
) -> Result<usize, Lost> {
    if buf.capacity() - buf.len() < 1024 {
        buf.reserve(READ_CHUNK);
    }
    let wait = limits
        .read_timeout
        .min(deadline.saturating_duration_since(Instant::now()));
    match tokio::time::timeout(wait, sock.read_buf(buf)).await {
        Ok(Ok(n)) => Ok(n),
        // A TLS failure (the agent refusing the client certificate, say):
        // told as it is.
        Ok(Err(e)) => Err(match io_failure(to, "reading the answer", e) {
            Err(tls) => Lost::Answered(tls),
            Ok(f) if answered => Lost::Answered(f),
            Ok(failure) => Lost::InDoubt {
                failure,
                timed_out: false,
            },
        }),
        Err(_) if answered => Err(Lost::Answered(Failure::UpstreamTimeout)),
        Err(_) => Err(Lost::InDoubt {
            failure: Failure::UpstreamTimeout,
            timed_out: true,
        }),
    }
}

/// How the answer's body is delimited.
#[derive(Debug, PartialEq)]
enum Framing {
    Empty,
    Length(usize),
    Chunked,
    UntilClose,
}

struct Head {
    status: u16,
    headers: Vec<(HeaderName, HeaderValue)>,
    framing: Framing,
    /// The connection may carry another request after this answer.
    reusable: bool,
    len: usize,
}

fn hop_by_hop(name: &HeaderName) -> bool {
    use http::header::*;
    name == CONNECTION
        || name == TRANSFER_ENCODING
        || name == CONTENT_LENGTH
        || name == TE
        || name == TRAILER
        || name == UPGRADE
        || name == PROXY_AUTHENTICATE
        || name.as_str() == "keep-alive"
        || name.as_str() == "proxy-connection"
}

/// Parses a complete response head at the start of `buf`; `Ok(None)` when
/// more bytes are needed.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, Lost> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut r = httparse::Response::new(&mut slots);
    let len = match r.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() > MAX_HEAD => {
            return Err(bad(format!("answer head larger than {MAX_HEAD} bytes")))
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(bad(format!("not an HTTP/1.x answer: {e}"))),
    };
    let status = r.code.unwrap_or(0);
    let mut reusable = r.version == Some(1);
    let mut chunked = false;
    let mut length: Option<usize> = None;
    let mut headers = Vec::with_capacity(r.headers.len());
    for h in r.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| bad(format!("bad header name {:?}", h.name)))?;
        let value = HeaderValue::from_bytes(h.value)
            .map_err(|_| bad(format!("bad value of header {:?}", h.name)))?;
        if name == http::header::CONNECTION {
            let v = String::from_utf8_lossy(h.value).to_ascii_lowercase();
            if v.split(',').any(|t| t.trim() == "close") {
                reusable = false;
            } else if v.split(',').any(|t| t.trim() == "keep-alive") && r.version == Some(0) {
                reusable = true;
            }
        } else if name == http::header::TRANSFER_ENCODING {
            let v = String::from_utf8_lossy(h.value).to_ascii_lowercase();
            chunked = v.rsplit(',').next().is_some_and(|t| t.trim() == "chunked");
        } else if name == http::header::CONTENT_LENGTH {
            let n: usize = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse().ok())
                .ok_or_else(|| bad("bad Content-Length"))?;
            if length.is_some_and(|l| l != n) {
                return Err(bad("conflicting Content-Length headers"));
            }
            length = Some(n);
        }
        if !hop_by_hop(&name) {
            headers.push((name, value));
        }
    }
    let framing = if (100..200).contains(&status) || status == 204 || status == 304 {
        Framing::Empty
    } else if chunked {
        Framing::Chunked
    } else if let Some(n) = length {
        Framing::Length(n)
    } else {
        reusable = false;
        Framing::UntilClose
    };
    Ok(Some(Head {
        status,
        headers,
        framing,
        reusable,
        len,
    }))
}

/// Sends `request` on `sock` and reads the answer's head (informational
/// answers skipped), all by `deadline`; the bytes after the head stay in
/// `buf`.
async fn send_and_read_head(
    sock: &mut Conn,
    to: &AgentAddr,
    request: &[u8],
    buf: &mut BytesMut,
    limits: &Limits,
    deadline: Instant,
) -> Result<Head, Lost> {
    let write = async {
        sock.write_all(request).await?;
        sock.flush().await
    };
    let wait = deadline.saturating_duration_since(Instant::now());
    match tokio::time::timeout(wait, write).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(match io_failure(to, "sending the request", e) {
                Err(tls) => Lost::Answered(tls),
                Ok(f) => Lost::NotSent(f),
            })
        }
        Err(_) => return Err(Lost::NotSent(Failure::UpstreamTimeout)),
    }
    let head = loop {
        if !buf.is_empty() {
            if let Some(head) = parse_head(buf)? {
                if (100..200).contains(&head.status) && head.status != 101 {
                    // Informational (100 Continue, 103): the answer follows.
                    let _ = buf.split_to(head.len);
                    continue;
                }
                break head;
            }
        }
        let answered = !buf.is_empty();
        if read_more(sock, to, buf, limits, deadline, answered).await? == 0 {
            return Err(if answered {
                bad("connection closed inside the answer head")
            } else {
                Lost::InDoubt {
                    failure: unavailable("reading the answer", "connection closed"),
                    timed_out: false,
                }
            });
        }
    };
    if head.status == 101 {
        return Err(bad("the upstream switched protocols on a JSON-RPC call"));
    }
    let _ = buf.split_to(head.len);
    Ok(head)
}

/// One request and its whole answer on `sock`; the connection comes back
/// when it can carry another request.
async fn exchange(
    mut sock: Conn,
    to: &AgentAddr,
    request: &[u8],
    limits: Limits,
) -> Result<(Answer, Option<Conn>), Lost> {
    // The whole answer within its timeout, from the request's first byte.
    let deadline = Instant::now() + limits.answer_timeout;
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let head = send_and_read_head(&mut sock, to, request, &mut buf, &limits, deadline).await?;
    let (body, leftover) = match head.framing {
        Framing::Empty => (Bytes::new(), !buf.is_empty()),
        Framing::Length(n) => {
            if n > limits.max_body {
                return Err(bad(format!("answer larger than {} bytes", limits.max_body)));
            }
            if buf.capacity() < n {
                buf.reserve(n - buf.len());
            }
            while buf.len() < n {
                if read_more(&mut sock, to, &mut buf, &limits, deadline, true).await? == 0 {
                    return Err(Lost::Answered(unavailable(
                        "reading the answer",
                        "connection closed inside the body",
                    )));
                }
            }
            let body = buf.split_to(n).freeze();
            (body, !buf.is_empty())
        }
        Framing::Chunked => {
            let mut dec = Chunked::default();
            loop {
                if dec.advance(&buf, limits.max_body).map_err(bad)? {
                    break;
                }
                if read_more(&mut sock, to, &mut buf, &limits, deadline, true).await? == 0 {
                    return Err(Lost::Answered(unavailable(
                        "reading the answer",
                        "connection closed inside the body",
                    )));
                }
            }
            (dec.out.freeze(), dec.pos < buf.len())
        }
        Framing::UntilClose => {
            while read_more(&mut sock, to, &mut buf, &limits, deadline, true).await? > 0 {
                if buf.len() > limits.max_body {
                    return Err(bad(format!("answer larger than {} bytes", limits.max_body)));
                }
            }
            (buf.split().freeze(), false)
        }
    };
    let keep = (head.reusable && head.framing != Framing::UntilClose && !leftover).then_some(sock);
    let answer = Answer {
        status: head.status,
        headers: head.headers,
        body,
    };
    Ok((answer, keep))
}

// Requests the proxy composes itself (the card fetch and its own task
// fetches, crate::card::cache; the gRPC bridge's JSON-RPC calls,
// crate::grpc::bridge).

/// The wire bytes of a whole HTTP/1.1 request for [`UpstreamPool::call`]:
/// `method` on `target` (origin form), `headers` in their order, then the
/// body's `Content-Length` and `body` when there is one. A method or
/// target a request line cannot carry is refused.
pub(crate) fn request_bytes<'h>(
    method: &str,
    target: &str,
    headers: impl IntoIterator<Item = (&'h HeaderName, &'h HeaderValue)>,
    body: Option<&[u8]>,
) -> Result<Vec<u8>, Failure> {
    let refused = |what: &str| Failure::Internal {
        detail: format!("request {what} not sendable"),
    };
    if http::Method::from_bytes(method.as_bytes()).is_err() {
        return Err(refused("method"));
    }
    let sendable = |b: &u8| b.is_ascii_graphic();
    if !target.starts_with('/') || !target.as_bytes().iter().all(sendable) {
        return Err(refused("target"));
    }
    let mut wire = Vec::with_capacity(256 + body.map_or(0, <[u8]>::len));
    wire.extend_from_slice(method.as_bytes());
    wire.push(b' ');
    wire.extend_from_slice(target.as_bytes());
    wire.extend_from_slice(b" HTTP/1.1\r\n");
    for (k, v) in headers {
        wire.extend_from_slice(k.as_str().as_bytes());
        wire.extend_from_slice(b": ");
        wire.extend_from_slice(v.as_bytes());
        wire.extend_from_slice(b"\r\n");
    }
    if let Some(b) = body {
        wire.extend_from_slice(format!("Content-Length: {}\r\n", b.len()).as_bytes());
    }
    wire.extend_from_slice(b"\r\n");
    wire.extend_from_slice(body.unwrap_or_default());
    Ok(wire)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use tokio::net::TcpListener;

    const LIMITS: Limits = Limits {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(4),
        repeat: Repeat::Safe,
        max_body: 1 << 20,
    };

    const REQ: &[u8] = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}";

    /// A server on 127.0.0.1 answering each request of each connection with
    /// `answers[i]` (the i-th request of that connection), then closing.
    async fn server(answers: Vec<&'static [u8]>) -> (SocketAddr, Arc<AtomicUsize>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let a = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                a.fetch_add(1, Ordering::SeqCst);
                let answers = answers.clone();
                tokio::spawn(async move {
                    for ans in answers {
                        // Read one request: head plus a 2-byte body.
                        let mut got = Vec::new();
                        let mut b = [0u8; 1024];
                        while !got.ends_with(b"\r\n\r\n{}") {
                            match s.read(&mut b).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => got.extend_from_slice(&b[..n]),
                            }
                        }
                        if s.write_all(ans).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, accepted)
    }

    #[tokio::test]
    async fn keep_alive_connections_are_reused() {
        let ok: &[u8] =
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        let (addr, accepted) = server(vec![ok, ok, ok]).await;
        let pool = UpstreamPool::default();
        for _ in 0..3 {
            let a = pool.call(addr, REQ, LIMITS).await.unwrap();
            assert_eq!(a.status, 200);
            assert_eq!(&a.body[..], b"{}");
            assert!(a.headers.iter().all(|(k, _)| k != "content-length"));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
        assert_eq!(pool.opened(), 1);
    }

    #[tokio::test]
    async fn a_connection_closed_while_idle_is_replaced() {
        // One answer per connection, then the server closes it.
        let ok: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx";
        let (addr, accepted) = server(vec![ok]).await;
        let pool = UpstreamPool::default();
        for _ in 0..3 {
            let a = pool.call(addr, REQ, LIMITS).await.unwrap();
            assert_eq!(&a.body[..], b"x");
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn chunked_and_informational_answers_are_decoded() {
        let ans: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-A: 1\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nTrailer: t\r\n\r\n";
        let (addr, accepted) = server(vec![ans, ans]).await;
        let pool = UpstreamPool::default();
        for _ in 0..2 {
            let a = pool.call(addr, REQ, LIMITS).await.unwrap();
            assert_eq!(a.status, 200);
            assert_eq!(&a.body[..], b"abcde");
            assert!(a.headers.iter().any(|(k, v)| k == "x-a" && v == "1"));
            assert!(a.headers.iter().all(|(k, _)| k != "transfer-encoding"));
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn close_delimited_answers_are_read_to_the_end_and_not_reused() {
        let ans: &[u8] = b"HTTP/1.0 500 Oops\r\nContent-Type: text/plain\r\n\r\nbroken";
        let (addr, _) = server(vec![ans]).await;
        let pool = UpstreamPool::default();
        let a = pool.call(addr, REQ, LIMITS).await.unwrap();
        assert_eq!((a.status, &a.body[..]), (500, &b"broken"[..]));
        assert!(pool.idle.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn failures_are_classified() {
        let pool = UpstreamPool::default();
        // Refused.
        let dead = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap()
            .local_addr()
            .unwrap();
        let f = pool.call(dead, REQ, LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::UpstreamUnavailable { .. }), "{f:?}");
        // Not HTTP.
        let (addr, _) = server(vec![&b"SSH-2.0-nope\r\n\r\n"[..]]).await;
        let f = pool.call(addr, REQ, LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::BadUpstreamResponse { .. }), "{f:?}");
        // Too large.
        let (addr, _) = server(vec![
            &b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n"[..],
        ])
        .await;
        let f = pool.call(addr, REQ, LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::BadUpstreamResponse { .. }), "{f:?}");
        // Closed inside the body.
        let (addr, _) = server(vec![
            &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"[..],
        ])
        .await;
        let f = pool.call(addr, REQ, LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::UpstreamUnavailable { .. }), "{f:?}");
        // No answer in time: a server that reads and never writes.
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let hold = tokio::spawn(async move {
            let (mut s, _) = l.accept().await.unwrap();
            let mut b = [0u8; 1024];
            while let Ok(n) = s.read(&mut b).await {
                if n == 0 {
                    break;
                }
            }
        });
        let quick = Limits {
            read_timeout: Duration::from_millis(200),
            answer_timeout: Duration::from_millis(400),
            repeat: Repeat::Safe,
            ..LIMITS
        };
        let f = pool.call(addr, REQ, quick).await.unwrap_err();
        assert!(matches!(f, Failure::UpstreamTimeout), "{f:?}");
        hold.abort();
    }

    #[test]
    fn chunked_decoder_waits_for_split_input() {
        let whole = b"4\r\nwiki\r\n5\r\npedia\r\n0\r\n\r\n";
        for cut in 0..whole.len() {
            let mut d = Chunked::default();
            assert!(!d.advance(&whole[..cut], 100).unwrap(), "cut {cut}");
            assert!(d.advance(&whole[..], 100).unwrap(), "cut {cut}");
            assert_eq!(&d.out[..], b"wikipedia");
            assert_eq!(d.pos, whole.len());
        }
        let mut d = Chunked::default();
        assert!(d.advance(b"zz\r\n", 100).is_err());
        let mut d = Chunked::default();
        assert!(d.advance(b"ff\r\n", 10).is_err());
    }
}
