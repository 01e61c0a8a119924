//! Client connections of the HTTP listener: how long a client may stay
//! silent, how long it may take to send a request head, how large that head
//! may be, and HTTP/1.1 pipelining.
//!
//! Pingora bounds each single read of a request head (and waits without
//! any bound for the HTTP/2 preface), so a client trickling one byte per
//! second, or never sending anything, held a connection, and its file
//! descriptor, for as long as it liked. [`Listener`] wraps pingora's HTTP
//! proxy: every connection's stream is a [`Guarded`] one, which ends the
//! connection when
//! - a new connection sends no complete request head within
//!   `limits.header_timeout` of its accept,
//! - a kept-alive connection stays silent for `limits.idle_timeout`, or,
//!   once the next head has begun, does not complete it within
//!   `limits.header_timeout`,
//! - a request head grows past `limits.max_header_bytes` (answered 431).
//!
//! The HTTP/1.1 loop over kept-alive requests is the proxy's own (pingora's
//! is the same loop without these bounds), with pipelining on, so requests
//! a client sends before reading the answers are answered in order.
//!
//! With `tls_cert_file` / `tls_key_file` the listener speaks TLS: the
//! accepted TCP stream is wrapped here in a rustls server stream
//! ([`TlsConn`], ALPN `h2` or `http/1.1`) before the [`Guarded`] one, so
//! pingora's HTTP/1.1 and HTTP/2 sessions run on the decrypted bytes with
//! every bound above. The handshake counts against the first head's
//! `limits.header_timeout` (a client that opens TLS and then stays silent,
//! or trickles its handshake, is cut like a plaintext one); a plaintext
//! HTTP request on the TLS port gets a plain 400 naming the fault. The
//! certificate is reloaded on SIGHUP ([`crate::server_tls`]).

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use async_trait::async_trait;
use pingora::apps::{HttpServerApp, ServerApp};
use pingora::protocols::http::ServerSession;
use pingora::protocols::tls::SslDigest;
use pingora::protocols::{
    GetProxyDigest, GetSocketDigest, GetTimingDigest, Peek, Shutdown, Ssl, Stream, UniqueID,
    UniqueIDType, ALPN,
};
use pingora::proxy::HttpProxy;
use pingora::server::ShutdownWatch;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;

use crate::config::Limits;
use crate::front::Front;

/// The first bytes of an HTTP/2 connection without TLS (RFC 9113 §3.4).
pub(crate) const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Written, best effort, before a connection whose request head is too
/// large is closed.
const TOO_LARGE: &[u8] = b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Written, best effort, before a connection whose request head did not
/// arrive in time is closed.
const TOO_SLOW: &[u8] =
    b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Written, best effort, to a client that sends plain HTTP to the TLS
/// listener, before the connection is closed.
const NOT_TLS: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 44\r\nConnection: close\r\n\r\nThis port speaks HTTPS: use an https:// URL\n";

/// Longest wait for a TLS connection's close_notify to be written.
const TLS_SHUTDOWN_WAIT: Duration = Duration::from_secs(1);

/// The first byte of a TLS connection: a handshake record (RFC 8446 §5.1).
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// The bounds a [`Guarded`] stream applies.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    /// Longest silence of a kept-alive connection between requests.
    pub idle: Duration,
    /// Longest time from the first byte of a request head (from the accept,
    /// on a new connection) to its end.
    pub head: Duration,
    /// Largest request head, request line and headers together.
    pub max_head_bytes: usize,
}

impl ConnLimits {
    pub fn of(limits: &Limits) -> ConnLimits {
        ConnLimits {
            idle: limits.idle_timeout,
            head: limits.header_timeout,
            max_head_bytes: limits.max_header_bytes,
        }
    }
}

/// Set by the proxy once pingora has parsed a request head (see
/// [`HeadRead::done`]); a [`Guarded`] stream then stops bounding reads as
/// head reads. Needed where the head came in with the previous request's
/// bytes (pipelining), so no read of the stream saw it.
#[derive(Debug, Clone, Default)]
pub struct HeadRead(Arc<AtomicBool>);

impl HeadRead {
    /// The request head of this connection's current request is read.
    pub fn done(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Marks the head of the current request as read: `prev` is the connection
/// context pingora hands to `ProxyHttp::on_connection_reuse`.
pub fn head_read(prev: &(dyn Any + Send + Sync)) {
    if let Some(h) = prev.downcast_ref::<HeadRead>() {
        h.done();
    }
}

/// Where a [`Guarded`] stream is in reading a request head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the first byte of a head (kept-alive connection).
    Idle,
    /// In a head: `seen` bytes of it read, `tail` the last bytes (to find
    /// an end split across reads).
    Head { seen: usize, tail: [u8; 3] },
    /// The head is read: reads are the body's or the next request's,
    /// bounded by pingora's own read timeouts.
    Done,
}

/// A client connection's stream with the bounds of [`ConnLimits`] on its
/// request heads.
pub struct Guarded {
    inner: Stream,
    limits: ConnLimits,
    phase: Phase,
    head_read: HeadRead,
    deadline: Pin<Box<Sleep>>,
    /// Whether a refused head gets an HTTP/1.1 answer (not on HTTP/2).
    answer_refusals: bool,
}

impl fmt::Debug for Guarded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guarded")
            .field("inner", &self.inner)
            .field("phase", &self.phase)
            .finish()
    }
}

/// The index just past the end of a request head (`\r\n\r\n` or, as
/// httparse also takes it, `\n\n`) in `tail` followed by `new`, counted in
/// `new`.
fn head_end(tail: &[u8; 3], new: &[u8]) -> Option<usize> {
    let mut last = *tail;
    for (i, &b) in new.iter().enumerate() {
        if b == b'\n' && (last[2] == b'\n' || (last[2] == b'\r' && last[1] == b'\n')) {
            return Some(i + 1);
        }
        last = [last[1], last[2], b];
    }
    None
}

fn shift_tail(tail: &[u8; 3], new: &[u8]) -> [u8; 3] {
    let mut all = [0u8; 6];
    all[..3].copy_from_slice(tail);
    let n = new.len().min(3);
    all[3..3 + n].copy_from_slice(&new[new.len() - n..]);
    let mut out = [0u8; 3];
    out.copy_from_slice(&all[n..n + 3]);
    out
}

impl Guarded {
    /// A new connection: its first head must be complete within
    /// `limits.head` of now.
    pub fn new(inner: Stream, limits: ConnLimits) -> Guarded {
        Guarded::until(inner, limits, Instant::now() + limits.head)
    }

    /// A new connection whose first head must be complete by `deadline`
    /// (a TLS connection: `limits.head` from the accept, handshake included).
    pub fn until(inner: Stream, limits: ConnLimits, deadline: Instant) -> Guarded {
        Guarded {
            inner,
            limits,
            phase: Phase::Head {
                seen: 0,
                tail: [0; 3],
            },
            head_read: HeadRead::default(),
            deadline: Box::pin(tokio::time::sleep_until(deadline)),
            answer_refusals: true,
        }
    }

    /// Between two requests of a kept-alive connection: silence up to
    /// `limits.idle`, then a head within `limits.head` of its first byte.
    fn next_request(&mut self) -> HeadRead {
        self.phase = Phase::Idle;
        self.head_read = HeadRead::default();
        self.deadline
            .as_mut()
            .reset(Instant::now() + self.limits.idle);
        self.head_read.clone()
    }

    /// The first head's marker, for the first request.
    fn first_request(&self) -> HeadRead {
        self.head_read.clone()
    }

    /// No bound on head reads from here on (HTTP/2: its own limits apply).
    fn release(&mut self) {
        self.phase = Phase::Done;
    }

    /// Writes `reply` if the socket takes it at once; then the error that
    /// ends the connection.
    fn refuse(
        &mut self,
        cx: &mut Context<'_>,
        reply: &[u8],
        error: std::io::Error,
    ) -> Poll<std::io::Result<()>> {
        if self.answer_refusals {
            let _ = Pin::new(&mut self.inner).poll_write(cx, reply);
            let _ = Pin::new(&mut self.inner).poll_flush(cx);
        }
        self.phase = Phase::Done;
        Poll::Ready(Err(error))
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        if this.phase != Phase::Done && this.head_read.0.load(Ordering::Acquire) {
            this.phase = Phase::Done;
        }
        if this.phase == Phase::Done {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                if new.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                let (seen, tail) = match this.phase {
                    Phase::Idle => {
                        let head = Instant::now() + this.limits.head;
                        this.deadline.as_mut().reset(head);
                        (0, [0; 3])
                    }
                    Phase::Head { seen, tail } => (seen, tail),
                    Phase::Done => unreachable!("handled above"),
                };
                let end = head_end(&tail, new);
                if seen + end.unwrap_or(new.len()) > this.limits.max_head_bytes {
                    buf.set_filled(before);
                    let e = std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "request head too large",
                    );
                    return this.refuse(cx, TOO_LARGE, e);
                }
                this.phase = match end {
                    Some(_) => Phase::Done,
                    None => Phase::Head {
                        seen: seen + new.len(),
                        tail: shift_tail(&tail, new),
                    },
                };
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                let e = std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "request head not received in time",
                );
                match this.phase {
                    // A kept-alive connection that stays silent is closed
                    // without an answer (nothing was asked).
                    Phase::Idle => {
                        this.phase = Phase::Done;
                        Poll::Ready(Err(e))
                    }
                    _ => this.refuse(cx, TOO_SLOW, e),
                }
            }
        }
    }
}

/// `AsyncWrite` for a wrapper whose writes go to its `inner` stream as they
/// are (the wrappers only watch reads).
macro_rules! write_through_inner {
    ($ty:ty) => {
        impl AsyncWrite for $ty {
            fn poll_write(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                buf: &[u8],
            ) -> Poll<std::io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write(cx, buf)
            }

            fn poll_flush(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<std::io::Result<()>> {
                Pin::new(&mut self.inner).poll_flush(cx)
            }

            fn poll_shutdown(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
            ) -> Poll<std::io::Result<()>> {
                Pin::new(&mut self.inner).poll_shutdown(cx)
            }

            fn poll_write_vectored(
                mut self: Pin<&mut Self>,
                cx: &mut Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> Poll<std::io::Result<usize>> {
                Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
        }
    };
}

write_through_inner!(Guarded);

#[async_trait]
impl Shutdown for Guarded {
    async fn shutdown(&mut self) {
        self.inner.shutdown().await
    }
}

impl UniqueID for Guarded {
    fn id(&self) -> UniqueIDType {
        self.inner.id()
    }
}

impl Ssl for Guarded {
    fn get_ssl(&self) -> Option<&pingora::protocols::tls::TlsRef> {
        self.inner.get_ssl()
    }

    fn get_ssl_digest(&self) -> Option<Arc<pingora::protocols::tls::SslDigest>> {
        self.inner.get_ssl_digest()
    }

    fn selected_alpn_proto(&self) -> Option<pingora::protocols::ALPN> {
        self.inner.selected_alpn_proto()
    }
}

impl GetTimingDigest for Guarded {
    fn get_timing_digest(&self) -> Vec<Option<pingora::protocols::TimingDigest>> {
        self.inner.get_timing_digest()
    }

    fn get_read_pending_time(&self) -> Duration {
        self.inner.get_read_pending_time()
    }

    fn get_write_pending_time(&self) -> Duration {
        self.inner.get_write_pending_time()
    }
}

impl GetProxyDigest for Guarded {
    fn get_proxy_digest(&self) -> Option<Arc<pingora::protocols::raw_connect::ProxyDigest>> {
        self.inner.get_proxy_digest()
    }

    fn set_proxy_digest(&mut self, digest: pingora::protocols::raw_connect::ProxyDigest) {
        self.inner.set_proxy_digest(digest)
    }
}

impl GetSocketDigest for Guarded {
    fn get_socket_digest(&self) -> Option<Arc<pingora::protocols::SocketDigest>> {
        self.inner.get_socket_digest()
    }

    fn set_socket_digest(&mut self, digest: pingora::protocols::SocketDigest) {
        self.inner.set_socket_digest(digest)
    }
}

#[async_trait]
impl Peek for Guarded {
    async fn try_peek(&mut self, buf: &mut [u8]) -> std::io::Result<bool> {
        self.inner.try_peek(buf).await
    }
}

/// A TLS connection of the HTTP listener, as pingora takes its streams:
/// the rustls server stream over the accepted TCP one, with the TLS facts
/// pingora asks for (the negotiated ALPN protocol chooses HTTP/2 or 1.1).
pub struct TlsConn {
    inner: tokio_rustls::server::TlsStream<Stream>,
    digest: Arc<SslDigest>,
    alpn: ALPN,
}

impl fmt::Debug for TlsConn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsConn")
            .field("tcp", self.inner.get_ref().0)
            .field("alpn", &self.alpn)
            .finish()
    }
}

impl TlsConn {
    /// The TLS handshake on `tcp` (its first byte already known to be a
    /// handshake record); `None` when it fails.
    async fn accept(acceptor: &TlsAcceptor, tcp: Stream) -> Option<TlsConn> {
        let tls = match acceptor.accept(tcp).await {
            Ok(t) => t,
            Err(e) => {
                tracing::debug!(error = %e, "TLS handshake failed");
                return None;
            }
        };
        let conn = tls.get_ref().1;
        let alpn = match conn.alpn_protocol() {
            Some(b"h2") => ALPN::H2,
            _ => ALPN::H1,
        };
        let cipher = conn
            .negotiated_cipher_suite()
            .and_then(|s| s.suite().as_str())
            .unwrap_or("unknown");
        let version = conn
            .protocol_version()
            .and_then(|v| v.as_str())
            .unwrap_or("unknown");
        let digest = Arc::new(SslDigest::new(cipher, version, None, None, Vec::new()));
        Some(TlsConn {
            inner: tls,
            digest,
            alpn,
        })
    }
}

impl AsyncRead for TlsConn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

write_through_inner!(TlsConn);

#[async_trait]
impl Shutdown for TlsConn {
    async fn shutdown(&mut self) {
        // close_notify, then the TCP shutdown; a client that reads nothing
        // (its receive window full) does not hold the connection open.
        let close = tokio::io::AsyncWriteExt::shutdown(&mut self.inner);
        match tokio::time::timeout(TLS_SHUTDOWN_WAIT, close).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "TLS shutdown"),
            Err(_) => tracing::debug!("TLS shutdown: close_notify not taken in time"),
        }
    }
}

impl UniqueID for TlsConn {
    fn id(&self) -> UniqueIDType {
        self.inner.get_ref().0.id()
    }
}

impl Ssl for TlsConn {
    fn get_ssl_digest(&self) -> Option<Arc<SslDigest>> {
        Some(self.digest.clone())
    }

    fn selected_alpn_proto(&self) -> Option<ALPN> {
        Some(self.alpn.clone())
    }
}

impl GetTimingDigest for TlsConn {
    fn get_timing_digest(&self) -> Vec<Option<pingora::protocols::TimingDigest>> {
        self.inner.get_ref().0.get_timing_digest()
    }

    fn get_read_pending_time(&self) -> Duration {
        self.inner.get_ref().0.get_read_pending_time()
    }

    fn get_write_pending_time(&self) -> Duration {
        self.inner.get_ref().0.get_write_pending_time()
    }
}

impl GetProxyDigest for TlsConn {
    fn get_proxy_digest(&self) -> Option<Arc<pingora::protocols::raw_connect::ProxyDigest>> {
        self.inner.get_ref().0.get_proxy_digest()
    }

    fn set_proxy_digest(&mut self, digest: pingora::protocols::raw_connect::ProxyDigest) {
        self.inner.get_mut().0.set_proxy_digest(digest)
    }
}

impl GetSocketDigest for TlsConn {
    fn get_socket_digest(&self) -> Option<Arc<pingora::protocols::SocketDigest>> {
        self.inner.get_ref().0.get_socket_digest()
    }

    fn set_socket_digest(&mut self, digest: pingora::protocols::SocketDigest) {
        self.inner.get_mut().0.set_socket_digest(digest)
    }
}

/// No peeking into decrypted bytes (pingora only peeks for the h2c
/// preface, which TLS connections do not use: ALPN chooses).
impl Peek for TlsConn {}

/// Pingora's HTTP proxy behind [`Guarded`] streams (see the module docs).
pub struct Listener {
    pub proxy: Arc<HttpProxy<Front>>,
    pub limits: ConnLimits,
    /// TLS on the listener (`tls_cert_file`); `None`: plain HTTP and h2c.
    pub tls: Option<TlsAcceptor>,
}

impl Listener {
    /// The TLS side of a new connection: the handshake, after a look at the
    /// first byte (plain HTTP gets [`NOT_TLS`]). `None`: closed.
    async fn tls_accept(acceptor: &TlsAcceptor, mut tcp: Stream) -> Option<Stream> {
        use tokio::io::AsyncWriteExt;
        let mut first = [0u8; 1];
        if !matches!(tcp.try_peek(&mut first).await, Ok(true)) {
            return None;
        }
        if first[0] != TLS_HANDSHAKE_RECORD {
            if first[0].is_ascii_alphabetic() {
                tracing::debug!("plain HTTP on the TLS listener");
                let _ = tcp.write_all(NOT_TLS).await;
                let _ = tcp.flush().await;
                Shutdown::shutdown(tcp.as_mut()).await;
            }
            return None;
        }
        let tls = TlsConn::accept(acceptor, tcp).await?;
        Some(Box::new(tls))
    }

    /// HTTP/1.x requests of one connection, one after another.
    async fn serve_http1(&self, mut guarded: Box<Guarded>, shutdown: &ShutdownWatch) {
        let reuses = self
            .proxy
            .server_options()
            .and_then(|o| o.keepalive_request_limit);
        let mut head_read = guarded.first_request();
        let mut settings = None;
        loop {
            let mut session = ServerSession::new_http1(guarded);
            match settings {
                Some(s) => pingora::apps::HttpPersistentSettings::apply_to_session(s, &mut session),
                None => {
                    session.set_keepalive(Some(self.limits.idle.as_secs().max(1)));
                    session.set_keepalive_reuses_remaining(reuses);
                }
            }
            if *shutdown.borrow() {
                session.set_keepalive(None);
            }
            session.set_pipelining_enabled(true);
            session.set_connection_user_context(Some(Box::new(head_read)));
            let Some(reused) = self.proxy.process_new_http(session, shutdown).await else {
                return;
            };
            let (stream, next) = reused.consume();
            let Ok(mut g) = stream.into_any().downcast::<Guarded>() else {
                return;
            };
            head_read = g.next_request();
            guarded = g;
            settings = next;
        }
    }
}

#[async_trait]
impl ServerApp for Listener {
    async fn process_new(
        self: &Arc<Self>,
        stream: Stream,
        shutdown: &ShutdownWatch,
    ) -> Option<Stream> {
        let head_by = Instant::now() + self.limits.head;
        let stream = match &self.tls {
            None => stream,
            Some(acceptor) => {
                // The handshake counts against the first head's time.
                match tokio::time::timeout_at(head_by, Self::tls_accept(acceptor, stream)).await {
                    Ok(Some(s)) => s,
                    Ok(None) => return None,
                    Err(_) => {
                        tracing::debug!("TLS handshake not done in the header timeout");
                        return None;
                    }
                }
            }
        };
        let mut guarded = Box::new(Guarded::until(stream, self.limits, head_by));
        if matches!(guarded.selected_alpn_proto(), Some(ALPN::H2)) {
            // HTTP/2 over TLS: the guard stays on until the client's
            // preface (its end is a head's end) is in, within the head's
            // time, then the h2 codec's own limits apply; refusals are not
            // answered in HTTP/1.1.
            guarded.answer_refusals = false;
            return ServerApp::process_new(&self.proxy, guarded, shutdown).await;
        }
        let h2c = self.proxy.server_options().is_some_and(|o| o.h2c)
            && guarded.get_ssl_digest().is_none();
        if h2c {
            // Pingora's own test for the preface reads 24 bytes with no
            // bound; here within the head's time.
            let mut preface = [0u8; H2_PREFACE.len()];
            match tokio::time::timeout(self.limits.head, guarded.try_peek(&mut preface)).await {
                Ok(Ok(true)) if preface == H2_PREFACE => {
                    // HTTP/2: `h2_idle_timeout` and the h2 codec's own
                    // limits bound it; pingora runs the connection.
                    guarded.release();
                    return ServerApp::process_new(&self.proxy, guarded, shutdown).await;
                }
                Ok(Ok(_)) => {}
                // Nothing, or fewer bytes than a preface, in the head's
                // time (a complete HTTP/1.1 request head is longer).
                _ => return None,
            }
        }
        self.serve_http1(guarded, shutdown).await;
        None
    }

    async fn cleanup(&self) {
        ServerApp::cleanup(&*self.proxy).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_end_finds_both_endings_across_reads() {
        assert_eq!(head_end(&[0; 3], b"GET / HTTP/1.1\r\n\r\nbody"), Some(18));
        assert_eq!(head_end(&[0; 3], b"GET / HTTP/1.1\n\nbody"), Some(16));
        assert_eq!(head_end(&[0; 3], b"GET / HTTP/1.1\r\nHost: a\r\n"), None);
        // Split at every place of the ending.
        let whole = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        for cut in 1..whole.len() {
            let (a, b) = whole.split_at(cut);
            let first = head_end(&[0; 3], a);
            let tail = shift_tail(&[0; 3], a);
            let second = head_end(&tail, b).map(|n| n + cut);
            assert_eq!(first.or(second), Some(whole.len()), "cut at {cut}");
        }
        // One byte at a time.
        let mut tail = [0u8; 3];
        let mut found = None;
        for (i, b) in whole.iter().enumerate() {
            if let Some(n) = head_end(&tail, std::slice::from_ref(b)) {
                found = Some(i + n);
                break;
            }
            tail = shift_tail(&tail, std::slice::from_ref(b));
        }
        assert_eq!(found, Some(whole.len()));
    }
}
