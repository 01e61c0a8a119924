//! TLS on the gRPC listener (`grpc.tls_cert_file` / `grpc.tls_key_file`,
//! PEM): rustls with ALPN `h2`, the certificate loaded (and reloaded on
//! SIGHUP) by [`crate::server_tls`], which the HTTP listener shares. Each accepted connection does its handshake
//! on its own task, so a slow or bad client holds up nobody; a failed
//! handshake is logged (debug) and dropped. Without the files the listener
//! speaks h2c.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;

use crate::server_tls::{self, CertFiles, ReloadingCert};

/// Longest TLS handshake allowed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TLS acceptor from PEM files (the certificate chain, then the key),
/// ALPN `h2`; the certificate is reloaded on SIGHUP (crate::server_tls).
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<TlsAcceptor, String> {
    let cert = ReloadingCert::load(CertFiles {
        cert: cert_file.to_path_buf(),
        key: key_file.to_path_buf(),
        keys: ("grpc.tls_cert_file", "grpc.tls_key_file"),
    })?;
    server_tls::acceptor(cert, &[b"h2"]).map_err(|e| format!("gRPC {e}"))
}

/// A TLS connection as tonic's server wants it.
pub struct Tls(TlsStream<TcpStream>);

impl tonic::transport::server::Connected for Tls {
    type ConnectInfo = ();
    fn connect_info(&self) -> Self::ConnectInfo {}
}

impl AsyncRead for Tls {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Tls {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }
}

/// Accepts on `listener` (TCP_NODELAY set) and yields the connections whose
/// handshake succeeded within its bound. Runs until the receiving side is
/// dropped.
pub fn incoming(listener: TcpListener, acceptor: TlsAcceptor) -> ReceiverStream<io::Result<Tls>> {
    super::accept::admitted(listener, HANDSHAKE_TIMEOUT, move |tcp: TcpStream, peer| {
        let acceptor = acceptor.clone();
        async move {
            match acceptor.accept(tcp).await {
                Ok(tls) => Some(Tls(tls)),
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "gRPC TLS handshake failed");
                    None
                }
            }
        }
    })
}
