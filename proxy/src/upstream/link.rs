//! One connection to an agent, spoken through hyper: HTTP/1.1, or h2 when
//! a TLS agent chose it in the handshake (ALPN).
//!
//! An HTTP/1.1 connection is driven by the task that uses it (no task of
//! its own: a call costs no wake-up of another task, an idle connection no
//! task at all): whoever waits on it polls hyper's connection beside what
//! it waits for ([`Link::driving`]). An h2 connection is shared by the
//! calls to its agent and runs in a task of its own.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::{unavailable, Lost};
use crate::error::Failure;
use crate::upstream::tls::{AgentAddr, Conn};

/// The request body type of every call: the whole body at once.
pub(super) type Body = Full<Bytes>;
type H1Conn = http1::Connection<TokioIo<Conn>, Body>;

/// Largest response head accepted (and largest read of a body). hyper's
/// reads adapt up to it (a fixed read size would also be its head bound,
/// however small).
const MAX_HEAD: usize = 64 * 1024;
/// Most response header lines accepted.
const MAX_HEADERS: usize = 128;

/// A connection to an agent.
pub(super) enum Link {
    H1 {
        send: http1::SendRequest<Body>,
        /// `None` once hyper's connection has ended (closed, failed).
        conn: Option<Pin<Box<H1Conn>>>,
    },
    /// Clones share one connection.
    H2(http2::SendRequest<Body>),
}

impl Link {
    /// HTTP/1.1 over `io`, or h2 when its TLS handshake chose h2.
    pub(super) async fn over(io: Conn, to: &AgentAddr) -> Result<Link, Failure> {
        let h2 = match &io {
            Conn::Tls(t) => t.alpn() == Some(b"h2".as_slice()),
            Conn::Plain(_) => false,
        };
        let io = TokioIo::new(io);
        let failed = |e: hyper::Error| unavailable(&format!("opening HTTP to {}", to.logged()), e);
        if h2 {
            let (send, conn) = http2::Builder::new(TokioExecutor::new())
                .handshake(io)
                .await
                .map_err(failed)?;
            tokio::spawn(async move {
                if let Err(e) = conn.await {
                    tracing::debug!(error = %e, "h2 connection to an agent ended");
                }
            });
            return Ok(Link::H2(send));
        }
        let (send, conn) = http1::Builder::new()
            .max_buf_size(MAX_HEAD)
            .max_headers(MAX_HEADERS)
            .max_header_size(MAX_HEAD)
            .handshake(io)
            .await
            .map_err(failed)?;
        Ok(Link::H1 {
            send,
            conn: Some(Box::pin(conn)),
        })
    }

    /// Whether it is h2, one connection shared between calls.
    pub(super) fn is_shared(&self) -> bool {
        matches!(self, Link::H2(_))
    }

    /// Another handle on it when it is h2 (shared between calls).
    pub(super) fn shared(&self) -> Option<Link> {
        match self {
            Link::H2(s) => Some(Link::H2(s.clone())),
            Link::H1 { .. } => None,
        }
    }

    /// Whether it can carry a request now: not closed by the agent (an
    /// HTTP/1.1 connection is polled once to learn it), not busy.
    pub(super) fn ready(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        match self {
            Link::H1 { send, conn } => {
                for _ in 0..2 {
                    poll_conn(conn, &mut cx);
                    if conn.is_none() {
                        return false;
                    }
                    match send.poll_ready(&mut cx) {
                        Poll::Ready(Ok(())) => return true,
                        Poll::Ready(Err(_)) => return false,
                        Poll::Pending => {}
                    }
                }
                false
            }
            Link::H2(send) => !send.is_closed() && send.is_ready(),
        }
    }

    /// Whether its connection may carry another request.
    pub(super) fn open(&self) -> bool {
        match self {
            Link::H1 { conn, send } => conn.is_some() && !send.is_closed(),
            Link::H2(send) => !send.is_closed(),
        }
    }

    /// `fut` awaited while the connection is driven (HTTP/1.1).
    pub(super) async fn driving<F: Future>(&mut self, fut: F) -> F::Output {
        let mut fut = std::pin::pin!(fut);
        std::future::poll_fn(|cx| {
            // `fut` first: what it waits for (an answer's body wanting its
            // next frame) is then known to the connection polled next, so
            // one poll does the work without waking this task again.
            if let Poll::Ready(out) = fut.as_mut().poll(cx) {
                return Poll::Ready(out);
            }
            if !self.drive(cx) {
                return Poll::Pending;
            }
            fut.as_mut().poll(cx)
        })
        .await
    }

    /// Lets an HTTP/1.1 connection do its work (read, decode, write) for
    /// whoever polls its answer; whether there was such a connection.
    pub(super) fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        match self {
            Link::H1 { conn, .. } if conn.is_some() => {
                poll_conn(conn, cx);
                true
            }
            _ => false,
        }
    }

    /// Sends `req`; the answer's head and its body as hyper gives them.
    /// A failure before the head says what the agent may have got.
    pub(super) async fn send(
        &mut self,
        req: http::Request<Body>,
        to: &AgentAddr,
    ) -> Result<http::Response<hyper::body::Incoming>, Lost> {
        let sent = match self {
            Link::H1 { send, .. } => {
                let fut = send.try_send_request(req);
                self.driving(fut).await
            }
            Link::H2(send) => {
                let req = absolute(req, to);
                send.try_send_request(req).await
            }
        };
        sent.map_err(|mut e| {
            let unsent = e.take_message().is_some();
            before_head(to, e.into_error(), unsent)
        })
    }
}

/// Polls an HTTP/1.1 connection's own work (reads, writes, keep-alive);
/// an ended connection is let go.
fn poll_conn(conn: &mut Option<Pin<Box<H1Conn>>>, cx: &mut Context<'_>) {
    if let Some(c) = conn.as_mut() {
        if let Poll::Ready(r) = c.as_mut().poll(cx) {
            if let Err(e) = r {
                tracing::debug!(error = %e, "HTTP/1.1 connection to an agent ended");
            }
            *conn = None;
        }
    }
}

/// An h2 request names its scheme and authority: the agent's.
fn absolute(mut req: http::Request<Body>, to: &AgentAddr) -> http::Request<Body> {
    let host = to
        .tls
        .as_ref()
        .map_or_else(|| to.addr.to_string(), |t| t.host.to_string());
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let scheme = if to.tls.is_some() { "https" } else { "http" };
    if let Ok(uri) = format!("{scheme}://{host}{path}").parse() {
        *req.uri_mut() = uri;
    }
    req.headers_mut().remove(http::header::HOST);
    req
}

/// What a failure before the answer's head means for the call (see
/// [`super::retry`]).
fn before_head(to: &AgentAddr, e: hyper::Error, unsent: bool) -> Lost {
    if let Some(io) = crate::error::in_chain::<std::io::Error>(&e) {
        if let Some(tls) = crate::upstream::tls::io_failure(to, io) {
            return Lost::Answered(tls);
        }
    }
    if e.is_parse_too_large() {
        return Lost::bad(format!("answer head larger than {MAX_HEAD} bytes"));
    }
    if e.is_parse() || e.is_parse_status() {
        return Lost::bad(format!("not an HTTP/1.x answer: {e}"));
    }
    if crate::error::refused_unprocessed(&e) {
        return Lost::Refused(unavailable("the agent refused the request", e));
    }
    if unsent {
        return Lost::NotSent(unavailable("sending the request", e));
    }
    Lost::InDoubt {
        failure: unavailable("reading the answer", "connection closed"),
        timed_out: false,
    }
}

/// What a failure inside the answer's body is.
pub(super) fn in_body(to: &AgentAddr, e: &hyper::Error) -> Failure {
    if let Some(io) = crate::error::in_chain::<std::io::Error>(e) {
        if let Some(tls) = crate::upstream::tls::io_failure(to, io) {
            return tls;
        }
        if io.kind() == std::io::ErrorKind::InvalidData {
            return Failure::BadUpstreamResponse {
                detail: format!("bad body framing: {io}"),
            };
        }
    }
    if e.is_parse() {
        return Failure::BadUpstreamResponse {
            detail: format!("bad body framing: {e}"),
        };
    }
    unavailable("reading the answer", "connection closed inside the body")
}
