//! `--https`: the fake agents behind a TLS front of their own (a CA and a
//! certificate for 127.0.0.1 made for the run), so the proxy reaches them
//! as `https://` agents. Each accepted connection's handshake is made,
//! then its bytes are copied to and from the plaintext agent.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A TLS front in front of `backend`: its address, and the PEM file of the
/// CA its certificate is signed by (for `upstream.ca_file`).
pub async fn spawn(
    backend: SocketAddr,
    dir: &std::path::Path,
) -> Result<(SocketAddr, PathBuf), String> {
    let err = |e: &dyn std::fmt::Display| e.to_string();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).map_err(|e| err(&e))?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "proxyload CA");
    let ca_key = rcgen::KeyPair::generate().map_err(|e| err(&e))?;
    let ca = ca_params.self_signed(&ca_key).map_err(|e| err(&e))?;
    let leaf_params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).map_err(|e| err(&e))?;
    let leaf_key = rcgen::KeyPair::generate().map_err(|e| err(&e))?;
    let leaf = leaf_params
        .signed_by(&leaf_key, &ca, &ca_key)
        .map_err(|e| err(&e))?;
    let ca_file = dir.join(format!("proxyload-ca-{}.pem", backend.port()));
    std::fs::write(&ca_file, ca.pem()).map_err(|e| err(&e))?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der()));
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| err(&e))?
    .with_no_client_auth()
    .with_single_cert(vec![CertificateDer::from(leaf.der().to_vec())], key)
    .map_err(|e| err(&e))?;
    let mut config = config;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| err(&e))?;
    let addr = listener.local_addr().map_err(|e| err(&e))?;
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let _ = tcp.set_nodelay(true);
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut back) = TcpStream::connect(backend).await else {
                    return;
                };
                let _ = back.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut back).await;
            });
        }
    });
    Ok((addr, ca_file))
}
