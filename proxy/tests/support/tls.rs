//! TLS for tests of the proxy's own listener: a certificate authority made
//! by the test (rcgen), leaf certificates for "localhost" written as PEM
//! files, and clients (rustls) that trust only that authority. Every wait
//! is bounded by [`super::WAIT`].

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use tokio::net::TcpStream;
use tokio::time::timeout;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls;

use super::WAIT;

/// A certificate authority of the test's own.
pub struct TestCa {
    cert: rcgen::Certificate,
    key: rcgen::KeyPair,
}

/// A leaf certificate's PEM files and its DER form (to compare with what
/// a handshake presented).
pub struct Leaf {
    pub cert_file: PathBuf,
    pub key_file: PathBuf,
    pub der: Vec<u8>,
}

impl TestCa {
    pub fn new() -> TestCa {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "a2a-proxy test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        TestCa { cert, key }
    }

    /// The CA certificate (DER), for a client's roots.
    pub fn der(&self) -> Vec<u8> {
        self.cert.der().to_vec()
    }

    /// A certificate for "localhost" signed by this CA, written to
    /// `dir/<stem>.cert.pem` and `dir/<stem>.key.pem`.
    pub fn leaf(&self, dir: &Path, stem: &str) -> Leaf {
        let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        let cert_file = dir.join(format!("{stem}.cert.pem"));
        let key_file = dir.join(format!("{stem}.key.pem"));
        std::fs::write(&cert_file, cert.pem()).unwrap();
        std::fs::write(&key_file, key.serialize_pem()).unwrap();
        Leaf {
            cert_file,
            key_file,
            der: cert.der().to_vec(),
        }
    }
}

impl Default for TestCa {
    fn default() -> Self {
        TestCa::new()
    }
}

/// A fresh temporary directory.
pub fn temp_dir(what: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("a2a-{what}-{}", proxy::ids::random_id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A TLS connection to `addr` as "localhost", trusting only `ca_der`,
/// offering the ALPN protocols `alpn`.
pub async fn connect(
    addr: SocketAddr,
    ca_der: &[u8],
    alpn: &[&[u8]],
) -> std::io::Result<TlsStream<TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca_der.to_vec().into()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let fut = async {
        let tcp = TcpStream::connect(addr).await?;
        connector.connect(name, tcp).await
    };
    timeout(WAIT, fut)
        .await
        .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
}

/// The certificate the server presented (DER).
pub fn peer_cert(tls: &TlsStream<TcpStream>) -> Vec<u8> {
    tls.get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default()
}

/// An HTTP/1.1 client on one kept-alive TLS connection.
pub struct H1 {
    send: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    conn: tokio::task::JoinHandle<()>,
}

impl Drop for H1 {
    fn drop(&mut self) {
        self.conn.abort();
    }
}

impl H1 {
    pub async fn over(tls: TlsStream<TcpStream>) -> H1 {
        let (send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
            .await
            .unwrap();
        let conn = tokio::spawn(async move {
            let _ = conn.await;
        });
        H1 { send, conn }
    }

    /// One request: (status, body).
    pub async fn call(
        &mut self,
        method: &str,
        target: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> std::io::Result<(u16, Vec<u8>)> {
        let mut req = http::Request::builder()
            .method(method)
            .uri(target)
            .header("host", "localhost");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(Bytes::from(body.to_vec()))).unwrap();
        let fut = async {
            self.send.ready().await.map_err(std::io::Error::other)?;
            let resp = self
                .send
                .send_request(req)
                .await
                .map_err(std::io::Error::other)?;
            let status = resp.status().as_u16();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(std::io::Error::other)?
                .to_bytes()
                .to_vec();
            Ok((status, body))
        };
        timeout(WAIT, fut)
            .await
            .unwrap_or_else(|_| Err(std::io::ErrorKind::TimedOut.into()))
    }
}
