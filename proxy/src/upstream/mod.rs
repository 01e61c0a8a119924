//! The proxy's one HTTP client: every call it makes to an agent or a
//! webhook (translated unary calls and streams, card and task fetches, the
//! JSON-RPC fallback, the gRPC bridge, webhook posts) goes through an
//! [`UpstreamPool`]: pooled keep-alive connections spoken through hyper
//! ([`link`]: HTTP/1.1, or h2 when a TLS agent picks it), TLS by
//! `crate::upstream::tls`, bounded reads, and one retry table ([`retry`]).
//! A unary call sends the whole request and reads the whole answer
//! ([`UpstreamPool::call`]); a stream hands its body on as it arrives
//! ([`UpstreamPool::open`]).
//!
//! This module knows nothing of A2A. Every failure is a [`Failure`] of the
//! same kind pingora's errors map to (refused or closed: unavailable; no
//! answer in time: timeout; not HTTP: bad upstream response).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use http::{HeaderName, HeaderValue};
use http_body_util::{BodyExt, Full};

use crate::error::Failure;
use crate::upstream::tls::AgentAddr;

mod link;
mod retry;
mod stream;
pub mod tls;

use link::Link;
pub use retry::Repeat;
pub(crate) use retry::{Attempts, Lost};
pub use stream::Streaming;

/// The client span of one call to an agent or a webhook (exported when
/// telemetry is on, crate::telemetry): the HTTP semantic conventions'
/// attributes of a client (method, the address called, the answer's
/// status). Never the path: a webhook's may be its credential, a task
/// fetch's names the caller's task.
pub(crate) fn call_span(request: &Outgoing, to: &AgentAddr) -> tracing::Span {
    use tracing::field::Empty;
    let span = tracing::debug_span!(
        target: "a2a_call",
        "upstream",
        otel.name = %request.method(),
        otel.kind = "client",
        otel.status_code = Empty,
        http.request.method = %request.method(),
        server.address = Empty,
        server.port = i64::from(to.addr.port()),
        http.response.status_code = Empty,
        error.type = Empty,
    );
    if !span.is_disabled() {
        let host = match &to.tls {
            Some(t) => t.host.to_string(),
            None => to.addr.ip().to_string(),
        };
        span.record("server.address", host);
    }
    span
}

/// A call's end on its span: the status, or the failure's kind.
pub(crate) fn end_span(span: &tracing::Span, done: Result<u16, &Failure>) {
    if span.is_disabled() {
        return;
    }
    match done {
        Ok(status) => {
            span.record("http.response.status_code", i64::from(status));
            if status >= 500 {
                span.record("otel.status_code", "ERROR");
                span.record("error.type", status.to_string());
            }
        }
        Err(f) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", f.label());
        }
    }
}

/// Idle connections kept per proxy (all upstream addresses together).
const MAX_IDLE: usize = 256;
/// An idle connection older than this is closed rather than reused (the
/// same idle timeout the proxied path gives pingora's pool).
const IDLE_FOR: Duration = Duration::from_secs(60);

/// A request the proxy sends: its method, origin-form target, headers
/// (`Host` among them) and whole body. Its length is set by the client.
pub type Outgoing = http::Request<Bytes>;

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
    link: Link,
    since: Instant,
}

/// Keep-alive connections to the upstream: HTTP/1.1 ones reused
/// last-in first-out, an h2 one shared.
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

    /// Sends `request` to `addr` (over TLS when it says so) and returns
    /// the whole answer.
    pub async fn call(
        &self,
        addr: impl Into<AgentAddr>,
        request: &Outgoing,
        limits: Limits,
    ) -> Result<Answer, Failure> {
        use tracing::Instrument;
        let addr = addr.into();
        let to = &addr;
        let span = call_span(request, to);
        let done = self
            .on_link(to, limits, |link| whole(link, to, request, limits))
            .instrument(span.clone())
            .await;
        end_span(&span, done.as_ref().map(|(a, _)| a.status));
        let (answer, link) = done?;
        self.put(addr, link);
        Ok(answer)
    }

    /// Runs `talk` on a live pooled connection to `addr` (those the agent
    /// closed while idle are dropped before anything is written), else on
    /// a new one; a failed attempt is run once more on a new connection
    /// when the retry table allows it (see [`retry`]).
    async fn on_link<T, F, Fut>(
        &self,
        addr: &AgentAddr,
        limits: Limits,
        talk: F,
    ) -> Result<T, Failure>
    where
        F: Fn(Link) -> Fut,
        Fut: std::future::Future<Output = Result<T, Lost>>,
    {
        let mut attempts = Attempts::new(limits.repeat);
        let mut pooled = self.take_live(addr);
        loop {
            let reused = pooled.is_some();
            let link = match pooled.take() {
                Some(link) => link,
                None => self.connect(addr, limits.connect_timeout).await?,
            };
            match talk(link).await {
                Ok(t) => return Ok(t),
                Err(lost) => attempts.next(lost, reused)?,
            }
        }
    }

    /// A pooled connection to `addr` that can carry a request now (an h2
    /// one stays in the pool, shared); dead ones are dropped.
    fn take_live(&self, addr: &AgentAddr) -> Option<Link> {
        loop {
            let mut link = {
                let mut idle = self.idle.lock().ok()?;
                let now = Instant::now();
                idle.retain(|c| c.link.open() && now.duration_since(c.since) < IDLE_FOR);
                let i = idle.iter().rposition(|c| c.addr.same(addr))?;
                match idle[i].link.shared() {
                    Some(shared) => {
                        idle[i].since = now;
                        return Some(shared);
                    }
                    None => idle.swap_remove(i).link,
                }
            };
            if link.ready() {
                return Some(link);
            }
            // Closed, failed, or bytes nobody asked for: not reusable.
            tracing::debug!("pooled upstream connection closed while idle; dropped");
        }
    }

    async fn connect(&self, addr: &AgentAddr, within: Duration) -> Result<Link, Failure> {
        let open = async {
            let io = crate::upstream::tls::connect(addr, within, crate::upstream::tls::Alpn::Http)
                .await?;
            Link::over(io, addr).await
        };
        let link = tokio::time::timeout(within, open)
            .await
            .unwrap_or(Err(Failure::UpstreamTimeout))?;
        self.opened.fetch_add(1, Ordering::Relaxed);
        if let Some(shared) = link.shared() {
            self.keep(addr.clone(), shared);
        }
        Ok(link)
    }

    /// A connection back after its answer: kept when it can carry another
    /// request (an h2 one is in the pool already).
    fn put(&self, addr: AgentAddr, link: Link) {
        if !link.is_shared() && link.open() {
            self.keep(addr, link);
        }
    }

    fn keep(&self, addr: AgentAddr, link: Link) {
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < MAX_IDLE {
                idle.push(Idle {
                    addr,
                    link,
                    since: Instant::now(),
                });
            }
        }
    }
}

/// The response headers a client of the proxy may see: framing and
/// hop-by-hop ones left out.
fn end_to_end(headers: &http::HeaderMap) -> Vec<(HeaderName, HeaderValue)> {
    headers
        .iter()
        .filter(|(name, _)| !hop_by_hop(name))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
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

/// One attempt's copy of `req` (a call may be sent twice).
fn attempt(req: &Outgoing) -> http::Request<link::Body> {
    let mut r = http::Request::new(Full::new(req.body().clone()));
    *r.method_mut() = req.method().clone();
    *r.uri_mut() = req.uri().clone();
    *r.headers_mut() = req.headers().clone();
    r
}

/// Sends `req` on `link` and waits for the answer's head (informational
/// answers skipped by hyper) within the read timeout and by `deadline`.
async fn send_and_read_head(
    link: &mut Link,
    to: &AgentAddr,
    req: &Outgoing,
    limits: &Limits,
    deadline: Instant,
) -> Result<http::Response<hyper::body::Incoming>, Lost> {
    let wait = limits
        .read_timeout
        .min(deadline.saturating_duration_since(Instant::now()));
    let head = match tokio::time::timeout(wait, link.send(attempt(req), to)).await {
        Ok(head) => head?,
        Err(_) => {
            return Err(Lost::InDoubt {
                failure: Failure::UpstreamTimeout,
                timed_out: true,
            })
        }
    };
    if head.status() == http::StatusCode::SWITCHING_PROTOCOLS {
        return Err(bad("the upstream switched protocols on a JSON-RPC call"));
    }
    Ok(head)
}

/// One request and its whole answer on `link`, which comes back with it.
async fn whole(
    mut link: Link,
    to: &AgentAddr,
    req: &Outgoing,
    limits: Limits,
) -> Result<(Answer, Link), Lost> {
    // The whole answer within its timeout, from the request's first byte.
    let deadline = Instant::now() + limits.answer_timeout;
    let head = send_and_read_head(&mut link, to, req, &limits, deadline).await?;
    let (parts, mut body) = head.into_parts();
    let too_large = || bad(format!("answer larger than {} bytes", limits.max_body));
    if hyper::body::Body::size_hint(&body)
        .exact()
        .is_some_and(|n| n > limits.max_body as u64)
    {
        return Err(too_large());
    }
    let mut pieces: Vec<Bytes> = Vec::new();
    let mut len = 0;
    loop {
        let wait = limits
            .read_timeout
            .min(deadline.saturating_duration_since(Instant::now()));
        let frame = match tokio::time::timeout(wait, link.driving(body.frame())).await {
            Err(_) => return Err(Lost::Answered(Failure::UpstreamTimeout)),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(Lost::Answered(link::in_body(to, &e))),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            len += data.len();
            if len > limits.max_body {
                return Err(too_large());
            }
            pieces.push(data);
        }
    }
    let body = match pieces.len() {
        0 => Bytes::new(),
        1 => pieces.pop().unwrap_or_default(),
        _ => {
            let mut all = BytesMut::with_capacity(len);
            pieces.iter().for_each(|p| all.extend_from_slice(p));
            all.freeze()
        }
    };
    let answer = Answer {
        status: parts.status.as_u16(),
        headers: end_to_end(&parts.headers),
        body,
    };
    Ok((answer, link))
}

// Requests the proxy composes itself (the card fetch and its own task
// fetches, crate::card::cache; the gRPC bridge's JSON-RPC calls,
// crate::grpc::bridge; webhook posts, crate::push).

/// A request for [`UpstreamPool::call`]: `method` on `target` (origin
/// form), `headers` in their order, then `body` when there is one. A
/// method, target or header a request cannot carry is refused.
pub(crate) fn request<'h>(
    method: &str,
    target: &str,
    headers: impl IntoIterator<Item = (&'h HeaderName, &'h HeaderValue)>,
    body: Option<&[u8]>,
) -> Result<Outgoing, Failure> {
    let refused = |what: &str| Failure::Internal {
        detail: format!("request {what} not sendable"),
    };
    let method = http::Method::from_bytes(method.as_bytes()).map_err(|_| refused("method"))?;
    if !target.starts_with('/') {
        return Err(refused("target"));
    }
    let uri: http::Uri = target.parse().map_err(|_| refused("target"))?;
    let mut req = http::Request::new(Bytes::copy_from_slice(body.unwrap_or_default()));
    *req.method_mut() = method;
    *req.uri_mut() = uri;
    let map = req.headers_mut();
    for (k, v) in headers {
        map.append(k.clone(), v.clone());
    }
    Ok(req)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    const LIMITS: Limits = Limits {
        connect_timeout: Duration::from_secs(2),
        read_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_secs(4),
        repeat: Repeat::Safe,
        max_body: 1 << 20,
    };

    /// `POST /` with the body `{}`.
    fn req() -> Outgoing {
        let host = (http::header::HOST, HeaderValue::from_static("x"));
        request("POST", "/", [(&host.0, &host.1)], Some(b"{}")).unwrap()
    }

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
            let a = pool.call(addr, &req(), LIMITS).await.unwrap();
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
            let a = pool.call(addr, &req(), LIMITS).await.unwrap();
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
            let a = pool.call(addr, &req(), LIMITS).await.unwrap();
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
        let a = pool.call(addr, &req(), LIMITS).await.unwrap();
        assert_eq!((a.status, &a.body[..]), (500, &b"broken"[..]));
        assert!(pool.idle.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_head_over_its_bound_or_with_too_many_lines_is_refused() {
        let pool = UpstreamPool::default();
        // One header line longer than the head bound (64 KiB).
        let long = format!(
            "HTTP/1.1 200 OK\r\nX-Long: {}\r\nContent-Length: 2\r\n\r\n{{}}",
            "a".repeat(70 * 1024)
        );
        // 200 header lines (the bound is 128), then a body.
        let many = format!(
            "HTTP/1.1 200 OK\r\n{}Content-Length: 2\r\n\r\n{{}}",
            (0..200)
                .map(|i| format!("X-{i}: v\r\n"))
                .collect::<String>()
        );
        for head in [long, many] {
            let head: &'static [u8] = Box::leak(head.into_bytes().into_boxed_slice());
            let (addr, _) = server(vec![head]).await;
            let f = pool.call(addr, &req(), LIMITS).await.unwrap_err();
            assert!(matches!(f, Failure::BadUpstreamResponse { .. }), "{f:?}");
        }
        // A head of 20 KiB is within the bound.
        let fits = format!(
            "HTTP/1.1 200 OK\r\nX-Long: {}\r\nContent-Length: 2\r\n\r\n{{}}",
            "a".repeat(20 * 1024)
        );
        let fits: &'static [u8] = Box::leak(fits.into_bytes().into_boxed_slice());
        let (addr, _) = server(vec![fits]).await;
        let a = pool.call(addr, &req(), LIMITS).await.unwrap();
        assert_eq!((a.status, &a.body[..]), (200, &b"{}"[..]));
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
        let f = pool.call(dead, &req(), LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::UpstreamUnavailable { .. }), "{f:?}");
        // Not HTTP.
        let (addr, _) = server(vec![&b"SSH-2.0-nope\r\n\r\n"[..]]).await;
        let f = pool.call(addr, &req(), LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::BadUpstreamResponse { .. }), "{f:?}");
        // Too large.
        let (addr, _) = server(vec![
            &b"HTTP/1.1 200 OK\r\nContent-Length: 99999999\r\n\r\n"[..],
        ])
        .await;
        let f = pool.call(addr, &req(), LIMITS).await.unwrap_err();
        assert!(matches!(f, Failure::BadUpstreamResponse { .. }), "{f:?}");
        // Closed inside the body.
        let (addr, _) = server(vec![
            &b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"[..],
        ])
        .await;
        let f = pool.call(addr, &req(), LIMITS).await.unwrap_err();
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
        let f = pool.call(addr, &req(), quick).await.unwrap_err();
        assert!(matches!(f, Failure::UpstreamTimeout), "{f:?}");
        hold.abort();
    }
}
