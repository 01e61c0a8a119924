//! The proxy's own connections to an agent ([`connect`]: TCP, then TLS
//! for an `https://` agent, within the connect timeout) and the
//! [`Connector`] of tonic's channel to a gRPC agent built on it.

use super::*;

/// A client connection to an agent: plain TCP, or TLS over it (boxed: a
/// plaintext connection does not pay for rustls's state).
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsConn>),
}

/// A TLS connection to an agent, and what its handshake showed: whether
/// the agent asked for a client certificate. Until the agent's first byte,
/// a connection such an agent closes without a word (no alert, no session
/// ticket: it took the handshake no further) is told as
/// [`ClosedAfterAskingForACertificate`], not as a bare end.
pub struct TlsConn {
    stream: TlsStream<TcpStream>,
    asked: bool,
    answered: bool,
}

impl TlsConn {
    /// The protocol the handshake chose (ALPN), if any.
    pub fn alpn(&self) -> Option<&[u8]> {
        self.stream.get_ref().1.alpn_protocol()
    }

    /// The TCP stream and the rustls connection.
    pub fn get_mut(&mut self) -> (&mut TcpStream, &mut rustls::ClientConnection) {
        self.stream.get_mut()
    }

    /// The refusal a close now means, if it means one.
    fn refused(&self) -> Option<std::io::Error> {
        let tls = self.stream.get_ref().1;
        let silent = self.asked
            && !self.answered
            && tls.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
            && tls.tls13_tickets_received() == 0;
        silent.then(|| std::io::Error::other(ClosedAfterAskingForACertificate))
    }
}

/// Whether an I/O error is the peer's close (reset, broken pipe, an end
/// without TLS's close_notify).
fn closed(e: &std::io::Error) -> bool {
    use std::io::ErrorKind as K;
    matches!(
        e.kind(),
        K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::UnexpectedEof
    )
}

impl tokio::io::AsyncRead for TlsConn {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::task::Poll;
        let me = self.get_mut();
        let before = buf.filled().len();
        let r = std::pin::Pin::new(&mut me.stream).poll_read(cx, buf);
        match &r {
            Poll::Ready(Ok(())) if buf.filled().len() > before => me.answered = true,
            Poll::Ready(Ok(())) => {
                if let Some(e) = me.refused() {
                    return Poll::Ready(Err(e));
                }
            }
            Poll::Ready(Err(e)) if closed(e) => {
                if let Some(e) = me.refused() {
                    return Poll::Ready(Err(e));
                }
            }
            _ => {}
        }
        r
    }
}

impl tokio::io::AsyncWrite for TlsConn {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The client certificate resolver of [`UpstreamTls`]: the configured
/// one, noting on the way that the agent asked (rustls asks the resolver
/// exactly when the agent's handshake requests a certificate) for the
/// handshake [`handshake`] is driving on this thread.
#[derive(Debug)]
pub(super) struct Asked(pub(super) Arc<dyn rustls::client::ResolvesClientCert>);

thread_local! {
    /// Set by [`Asked`] during a poll of the handshake [`handshake`] drives.
    static ASKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl rustls::client::ResolvesClientCert for Asked {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        ASKED.with(|a| a.set(true));
        self.0.resolve(root_hint_subjects, sigschemes)
    }

    fn only_raw_public_keys(&self) -> bool {
        self.0.only_raw_public_keys()
    }

    fn has_certs(&self) -> bool {
        self.0.has_certs()
    }
}

/// The TLS handshake over `tcp` with `config` (one of [`UpstreamTls`]'s),
/// noting whether the agent asked for a client certificate: [`Asked`]
/// runs inside a poll of the handshake, on the thread polling it.
pub(super) async fn handshake(
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
    tcp: TcpStream,
) -> std::io::Result<TlsConn> {
    use std::future::Future;
    let mut connecting = TlsConnector::from(config).connect(name, tcp);
    let mut asked = false;
    let stream = std::future::poll_fn(|cx| {
        ASKED.with(|a| a.set(false));
        let r = std::pin::Pin::new(&mut connecting).poll(cx);
        asked |= ASKED.with(|a| a.replace(false));
        r
    })
    .await?;
    Ok(TlsConn {
        stream,
        asked,
        answered: false,
    })
}

macro_rules! conn_io {
    ($self:ident, $s:ident => $e:expr) => {
        match $self.get_mut() {
            Conn::Plain($s) => {
                let $s = std::pin::Pin::new($s);
                $e
            }
            Conn::Tls($s) => {
                let $s = std::pin::Pin::new(&mut **$s);
                $e
            }
        }
    };
}

impl tokio::io::AsyncRead for Conn {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        conn_io!(self, s => s.poll_read(cx, buf))
    }
}

impl tokio::io::AsyncWrite for Conn {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.as_mut();
        let r = conn_io!(this, s => s.poll_write(cx, buf));
        self.alert_behind(r)
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.as_mut();
        let r = conn_io!(this, s => s.poll_flush(cx));
        self.alert_behind(r)
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        conn_io!(self, s => s.poll_shutdown(cx))
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.as_mut();
        let r = conn_io!(this, s => s.poll_write_vectored(cx, bufs));
        self.alert_behind(r)
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
    }
}

impl Conn {
    /// A write or flush's result, where a connection the agent closed
    /// (broken pipe, reset) is told as the TLS alert it sent before
    /// closing, when that alert is already here. An agent refusing the
    /// client certificate under TLS 1.3 sends its alert after the
    /// handshake, as the request is being written: the write then fails
    /// on the closed connection, and the alert, never read, would be lost.
    /// The bytes read here stay in rustls's buffers: a later read gets
    /// whatever plaintext came before the close.
    fn alert_behind<T>(
        &mut self,
        r: std::task::Poll<std::io::Result<T>>,
    ) -> std::task::Poll<std::io::Result<T>> {
        use std::io::ErrorKind as K;
        let std::task::Poll::Ready(Err(e)) = r else {
            return r;
        };
        let Conn::Tls(s) = self else {
            return std::task::Poll::Ready(Err(e));
        };
        if !matches!(
            e.kind(),
            K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted
        ) {
            return std::task::Poll::Ready(Err(e));
        }
        let (tcp, tls) = s.get_mut();
        // What the kernel holds is a few records at most (an alert is 7
        // bytes, 24 encrypted); bounded all the same.
        for _ in 0..8 {
            match tls.read_tls(&mut Received(tcp)) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if let Err(alert) = tls.process_new_packets() {
                return std::task::Poll::Ready(Err(std::io::Error::new(K::InvalidData, alert)));
            }
        }
        // No alert: an agent that asked for a certificate and closed
        // without one is told as such.
        std::task::Poll::Ready(Err(s.refused().unwrap_or(e)))
    }
}

/// The bytes a TCP socket has already received, read without waiting
/// (and without the runtime's readiness, which may not have seen them
/// yet): a closed connection still yields what came before its end.
struct Received<'a>(&'a TcpStream);

impl std::io::Read for Received<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        // SAFETY: receives at most `buf.len()` bytes into `buf` from the
        // socket `self.0` keeps open; MSG_DONTWAIT never blocks.
        let n = unsafe {
            libc::recv(
                self.0.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
    }
}

/// Which client configuration a connection uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alpn {
    Http1,
    H2,
    /// h2 or HTTP/1.1, as the agent chooses (the proxy's own HTTP calls).
    Http,
}

/// Opens a connection to `to` (TCP, then TLS when `to` says so), the
/// whole within `within`. Failures: refused or unreachable
/// ([`Failure::UpstreamUnavailable`]), too slow ([`Failure::UpstreamTimeout`]),
/// TLS ([`Failure::UpstreamTls`]).
pub async fn connect(to: &AgentAddr, within: Duration, alpn: Alpn) -> Result<Conn, Failure> {
    let open = async {
        let sock = TcpStream::connect(to.addr)
            .await
            .map_err(|e| Failure::UpstreamUnavailable {
                detail: format!("connecting to {}: {e}", to.logged()),
            })?;
        // Whole requests go out in one write; never held back by Nagle.
        if let Err(e) = sock.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY on an upstream connection");
        }
        let Some(t) = &to.tls else {
            return Ok(Conn::Plain(sock));
        };
        let config = match alpn {
            Alpn::Http1 => t.settings.h1.clone(),
            Alpn::H2 => t.settings.h2.clone(),
            Alpn::Http => t.settings.http.clone(),
        };
        match handshake(config, t.name.clone(), sock).await {
            Ok(s) => Ok(Conn::Tls(Box::new(s))),
            Err(e) => Err(
                io_failure(to, &e).unwrap_or_else(|| Failure::UpstreamUnavailable {
                    detail: format!("TLS handshake with {}: {e}", to.logged()),
                }),
            ),
        }
    };
    tokio::time::timeout(within, open)
        .await
        .unwrap_or(Err(Failure::UpstreamTimeout))
}

impl hyper_util::client::legacy::connect::Connection for Conn {
    fn connected(&self) -> hyper_util::client::legacy::connect::Connected {
        hyper_util::client::legacy::connect::Connected::new()
    }
}

/// A connector for tonic's channel to a gRPC agent: the URI's host and
/// port, TLS when its scheme is `https` (SNI and checks as everywhere).
#[derive(Clone)]
pub struct Connector {
    agent: Arc<str>,
    settings: Arc<UpstreamTls>,
    within: Duration,
    alpn: Alpn,
}

impl Connector {
    pub fn new(agent: &str, settings: Arc<UpstreamTls>, within: Duration, alpn: Alpn) -> Connector {
        Connector {
            agent: agent.into(),
            settings,
            within,
            alpn,
        }
    }
}

impl tower_service::Service<http::Uri> for Connector {
    type Response = hyper_util::rt::TokioIo<Conn>;
    type Error = ConnectFailure;
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<Self::Response, ConnectFailure>> + Send>,
    >;

    fn poll_ready(
        &mut self,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), ConnectFailure>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let me = self.clone();
        Box::pin(async move {
            let unusable = |why: &str| {
                ConnectFailure(Failure::UpstreamUnavailable {
                    detail: format!("agent URI {uri}: {why}"),
                })
            };
            let scheme = uri.scheme_str().unwrap_or("http").to_ascii_lowercase();
            let host = uri.host().ok_or_else(|| unusable("no host"))?.to_string();
            let port = uri
                .port_u16()
                .unwrap_or(if scheme == "https" { 443 } else { 80 });
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let addr = tokio::net::lookup_host((bare, port))
                .await
                .map_err(|e| unusable(&format!("cannot resolve: {e}")))?
                .next()
                .ok_or_else(|| unusable("resolves to no address"))?;
            let to = AgentAddr::new(addr, &scheme, &host, &me.agent, &me.settings)
                .map_err(ConnectFailure)?;
            connect(&to, me.within, me.alpn)
                .await
                .map(hyper_util::rt::TokioIo::new)
                .map_err(ConnectFailure)
        })
    }
}
