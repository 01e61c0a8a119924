//! TLS on the gRPC listener (`grpc.tls_cert_file` / `grpc.tls_key_file`,
//! PEM): rustls with ALPN `h2`. Each accepted connection does its handshake
//! on its own task, so a slow or bad client holds up nobody; a failed
//! handshake is logged (debug) and dropped. Without the files the listener
//! speaks h2c.

use std::io;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;
use tokio_stream::wrappers::ReceiverStream;

/// Longest TLS handshake allowed.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A TLS acceptor from PEM files (the certificate chain, then the key).
pub fn acceptor(cert_file: &Path, key_file: &Path) -> Result<TlsAcceptor, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert_file)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("grpc.tls_cert_file {}: {e}", cert_file.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "grpc.tls_cert_file {}: no certificate in it",
            cert_file.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(key_file)
        .map_err(|e| format!("grpc.tls_key_file {}: {e}", key_file.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("gRPC TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("gRPC TLS: certificate and key do not fit: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
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
