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
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        conn_io!(self, s => s.poll_write(cx, buf))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        conn_io!(self, s => s.poll_flush(cx))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        conn_io!(self, s => s.poll_shutdown(cx))
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        conn_io!(self, s => s.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Conn::Plain(s) => s.is_write_vectored(),
            Conn::Tls(s) => s.is_write_vectored(),
        }
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
