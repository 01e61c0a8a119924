//! TLS of the proxy's own listeners (the HTTP listener's `tls_cert_file` /
//! `tls_key_file`, the gRPC listener's `grpc.tls_cert_file` /
//! `grpc.tls_key_file`): PEM files loaded into a rustls server config
//! whose certificate can be replaced while the listener runs.
//!
//! Each listener's certificate is a [`ReloadingCert`]: every new handshake
//! takes the certificate in force at that moment, so a reload (SIGHUP, see
//! [`watch_sighup`]) changes what new connections see and leaves the open
//! ones as they are. A reload that fails (missing file, bad PEM, a key
//! that does not fit) keeps the certificate in force and logs an error.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock, Weak};

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// Where a listener's certificate comes from, and the config keys that
/// named the files (for error messages).
#[derive(Debug, Clone)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The keys naming `cert` and `key`, e.g. `("tls_cert_file", "tls_key_file")`.
    pub keys: (&'static str, &'static str),
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Reads the certificate chain and private key (PEM) and checks that the
/// key fits the first certificate.
pub fn load(files: &CertFiles) -> Result<CertifiedKey, String> {
    let (cert_key, key_key) = files.keys;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("{cert_key} {}: {e}", files.cert.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "{cert_key} {}: no certificate in it",
            files.cert.display()
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("{key_key} {}: {e}", files.key.display()))?;
    CertifiedKey::from_der(certs, key, &provider()).map_err(|e| {
        format!(
            "{cert_key} {} and {key_key} {}: certificate and key do not fit: {e}",
            files.cert.display(),
            files.key.display()
        )
    })
}

/// A listener's certificate, replaceable while it runs (see the module docs).
#[derive(Debug)]
pub struct ReloadingCert {
    files: CertFiles,
    current: RwLock<Arc<CertifiedKey>>,
}

/// Every [`ReloadingCert`] alive in the process: what SIGHUP reloads.
static LIVE: Mutex<Vec<Weak<ReloadingCert>>> = Mutex::new(Vec::new());

impl ReloadingCert {
    /// Loads `files` now (errors are the listener's start errors) and
    /// registers the certificate for [`reload_all`].
    pub fn load(files: CertFiles) -> Result<Arc<ReloadingCert>, String> {
        let key = load(&files)?;
        let cert = Arc::new(ReloadingCert {
            files,
            current: RwLock::new(Arc::new(key)),
        });
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|w| w.strong_count() > 0);
            live.push(Arc::downgrade(&cert));
        }
        Ok(cert)
    }

    /// Reads the files again; on success new handshakes use them, on
    /// failure the certificate in force stays (the error is returned).
    pub fn reload(&self) -> Result<(), String> {
        let key = load(&self.files)?;
        match self.current.write() {
            Ok(mut slot) => *slot = Arc::new(key),
            Err(poisoned) => *poisoned.into_inner() = Arc::new(key),
        }
        Ok(())
    }

    /// The certificate file (for logs).
    pub fn cert_file(&self) -> &Path {
        &self.files.cert
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        match self.current.read() {
            Ok(k) => Some(k.clone()),
            Err(poisoned) => Some(poisoned.into_inner().clone()),
        }
    }
}

/// A TLS acceptor serving `cert`, offering the ALPN protocols `alpn` in
/// order of preference.
pub fn acceptor(cert: Arc<ReloadingCert>, alpn: &[&[u8]]) -> Result<TlsAcceptor, String> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_cert_resolver(cert);
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Reloads every live certificate (see [`ReloadingCert::reload`]); logs
/// each outcome. Returns how many reloads failed.
pub fn reload_all() -> usize {
    let live: Vec<Arc<ReloadingCert>> = match LIVE.lock() {
        Ok(mut live) => {
            live.retain(|w| w.strong_count() > 0);
            live.iter().filter_map(Weak::upgrade).collect()
        }
        Err(_) => Vec::new(),
    };
    let mut failed = 0;
    for cert in live {
        match cert.reload() {
            Ok(()) => {
                tracing::info!(cert = %cert.cert_file().display(), "TLS certificate reloaded")
            }
            Err(e) => {
                failed += 1;
                tracing::error!(error = %e, "TLS certificate not reloaded; the previous one stays in use");
            }
        }
    }
    failed
}

/// Reloads every live certificate on each SIGHUP, on a thread of its own,
/// for the rest of the process. Installing it replaces SIGHUP's default
/// action (ending the process).
pub fn watch_sighup() -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut hup = rt.block_on(async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    })?;
    std::thread::Builder::new()
        .name("a2a-sighup".into())
        .spawn(move || {
            rt.block_on(async move {
                while hup.recv().await.is_some() {
                    tracing::info!("SIGHUP: reloading TLS certificates");
                    reload_all();
                }
            })
        })?;
    Ok(())
}
