//! The proxy's own connections to an agent ([`connect`]: TCP, then TLS
//! for an `https://` agent, within the connect timeout) and the
//! [`Connector`] of hyper's client and tonic's channel built on it.

use super::*;

/// A client connection to an agent: plain TCP, or TLS over it (boxed: a
/// plaintext connection does not pay for rustls's state).
pub enum Conn {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
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
        std::task::Poll::Ready(Err(e))
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
        };
        match TlsConnector::from(config)
            .connect(t.name.clone(), sock)
            .await
        {
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

/// A connector for hyper's client and tonic's channel: the URI's host and
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
