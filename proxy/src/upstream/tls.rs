//! TLS toward `https://` agents (issue #23): one set of trust and client
//! identity for every path the proxy takes to an agent (Pingora's
//! passthrough, the proxy's own HTTP calls, card and task fetches, the
//! gRPC bridge's HTTP client, a gRPC agent's channel).
//!
//! Trust: the Mozilla roots (webpki-roots) plus the CAs of
//! `upstream.ca_file`; the proxy's client certificate when
//! `upstream.client_cert_file` and `upstream.client_key_file` are set
//! (mTLS). The server name sent (SNI) and checked is the URL's host;
//! certificate and host name checks are always on.
//!
//! Pingora's passthrough speaks TLS itself (its `rustls` feature): its
//! peer carries the same trust, as whole certificates, and the same client
//! identity ([`http_peer`]). Pingora tells a TLS failure only as text, so
//! when a passed-through call to an https agent fails on its connection,
//! the proxy makes one handshake of its own to the agent and tells what
//! that one found ([`diagnose`]).
//!
//! A TLS failure is reported to the client as [`Failure::UpstreamTls`]:
//! the agent's config name and the kind of failure, never its address; the
//! log line carries the URL and the rustls error.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::TlsConnector;

use crate::error::{ConfigError, Failure};

mod connect;
mod peer;

pub use connect::{connect, Alpn, Conn, Connector, TlsConn};
pub use peer::{diagnose, http_peer, needs_diagnosis};

/// The `[upstream]` TLS settings of one agent, loaded and checked.
pub struct UpstreamTls {
    ca_file: Option<PathBuf>,
    client_cert_file: Option<PathBuf>,
    /// ALPN `http/1.1`: the handshake that diagnoses a failed passthrough.
    h1: Arc<rustls::ClientConfig>,
    /// ALPN `h2` then `http/1.1`: the proxy's own HTTP calls
    /// (`crate::upstream`), in the protocol the agent picks.
    http: Arc<rustls::ClientConfig>,
    /// ALPN `h2`: gRPC agents.
    h2: Arc<rustls::ClientConfig>,
    /// Pingora's TLS toward these agents (its passthrough): the same
    /// trust and client identity, as Pingora holds them ([`http_peer`]).
    pingora: peer::PingoraTls,
}

impl fmt::Debug for UpstreamTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamTls")
            .field("ca_file", &self.ca_file)
            .field("client_cert_file", &self.client_cert_file)
            .finish_non_exhaustive()
    }
}

pub(super) fn config_error(key: &str, file: &Path, why: impl fmt::Display) -> ConfigError {
    ConfigError {
        key: key.into(),
        message: format!("{}: {why}", file.display()),
    }
}

/// The certificates of a PEM file (at least one).
pub(super) fn certs(key: &str, file: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(file)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| config_error(key, file, format!("cannot read PEM certificates: {e}")))?;
    if certs.is_empty() {
        return Err(config_error(key, file, "no PEM certificate in it"));
    }
    Ok(certs)
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The public roots, and the CAs of `ca_file` when given.
fn roots(ca_file: Option<&Path>) -> Result<rustls::RootCertStore, ConfigError> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(file) = ca_file {
        let key = "upstream.ca_file";
        for c in certs(key, file)? {
            roots
                .add(c)
                .map_err(|e| config_error(key, file, format!("not a usable CA: {e}")))?;
        }
    }
    Ok(roots)
}

/// The proxy's client certificate chain and its private key.
pub(super) fn client_identity(
    cert: &Path,
    key_file: &Path,
) -> Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>), ConfigError> {
    let chain = certs("upstream.client_cert_file", cert)?;
    let key = PrivateKeyDer::from_pem_file(key_file).map_err(|e| {
        config_error(
            "upstream.client_key_file",
            key_file,
            format!("cannot read a PEM private key: {e}"),
        )
    })?;
    Ok((chain, key))
}

impl UpstreamTls {
    /// Loads the files; each error names its key and file.
    pub fn load(
        ca_file: Option<&str>,
        client_cert_file: Option<&str>,
        client_key_file: Option<&str>,
    ) -> Result<UpstreamTls, ConfigError> {
        let path = |key: &str, v: Option<&str>| match v.map(str::trim) {
            None => Ok(None),
            Some("") => Err(ConfigError {
                key: key.into(),
                message: "is empty (a PEM file path)".into(),
            }),
            Some(p) => Ok(Some(PathBuf::from(p))),
        };
        let ca_file = path("upstream.ca_file", ca_file)?;
        let cert_file = path("upstream.client_cert_file", client_cert_file)?;
        let key_file = path("upstream.client_key_file", client_key_file)?;
        let pingora = peer::PingoraTls::load(
            ca_file.as_deref(),
            cert_file.as_deref().zip(key_file.as_deref()),
        )?;

        let builder = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| ConfigError {
                key: "upstream".into(),
                message: format!("TLS: {e}"),
            })?
            .with_root_certificates(roots(ca_file.as_deref())?);
        let config = match (&cert_file, &key_file) {
            (None, None) => builder.with_no_client_auth(),
            (Some(cert), Some(keyf)) => {
                let (chain, key) = client_identity(cert, keyf)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    config_error(
                        "upstream.client_cert_file",
                        cert,
                        format!("does not fit upstream.client_key_file: {e}"),
                    )
                })?
            }
            (Some(_), None) | (None, Some(_)) => {
                let missing = if cert_file.is_some() {
                    "upstream.client_key_file"
                } else {
                    "upstream.client_cert_file"
                };
                return Err(ConfigError {
                    key: missing.into(),
                    message: "is missing: set both upstream.client_cert_file and upstream.client_key_file, or neither".into(),
                });
            }
        };
        // Notes, for the connection whose handshake is being driven,
        // whether the agent asked for a client certificate ([`connect::Asked`]).
        let mut config = config;
        config.client_auth_cert_resolver =
            Arc::new(connect::Asked(config.client_auth_cert_resolver.clone()));
        let with_alpn = |alpn: &[&[u8]]| {
            let mut c = config.clone();
            c.alpn_protocols = alpn.iter().map(|a| a.to_vec()).collect();
            Arc::new(c)
        };
        Ok(UpstreamTls {
            h1: with_alpn(&[b"http/1.1"]),
            h2: with_alpn(&[b"h2"]),
            http: with_alpn(&[b"h2", b"http/1.1"]),
            ca_file,
            client_cert_file: cert_file,
            pingora,
        })
    }
}

/// How to speak TLS to one agent address: the server name and the settings.
#[derive(Clone)]
pub struct TlsTo {
    /// The URL's host: SNI and the name the certificate must carry.
    pub host: Arc<str>,
    name: ServerName<'static>,
    /// The agent's config name (`default`, or its `[[agents]]` name): what
    /// a client is told.
    pub agent: Arc<str>,
    settings: Arc<UpstreamTls>,
}

impl fmt::Debug for TlsTo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsTo").field("host", &self.host).finish()
    }
}

/// An agent's address, and TLS when its URL is `https://`.
#[derive(Debug, Clone)]
pub struct AgentAddr {
    pub addr: SocketAddr,
    /// Shared: a plaintext address stays small, a copy is cheap.
    pub tls: Option<Arc<TlsTo>>,
}

impl From<SocketAddr> for AgentAddr {
    fn from(addr: SocketAddr) -> AgentAddr {
        AgentAddr { addr, tls: None }
    }
}

impl AgentAddr {
    /// `addr`, with TLS toward `host` when `scheme` is `https`.
    pub fn new(
        addr: SocketAddr,
        scheme: &str,
        host: &str,
        agent: &str,
        settings: &Arc<UpstreamTls>,
    ) -> Result<AgentAddr, Failure> {
        if scheme != "https" {
            return Ok(AgentAddr { addr, tls: None });
        }
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|_| Failure::UpstreamTls {
            agent: agent.to_string(),
            kind: TlsFailureKind::Other,
            detail: format!("{host:?} is not a TLS server name"),
        })?;
        Ok(AgentAddr {
            addr,
            tls: Some(Arc::new(TlsTo {
                host: host.into(),
                name,
                agent: agent.into(),
                settings: settings.clone(),
            })),
        })
    }

    /// Whether a pooled connection to `other` may carry a call to `self`.
    pub fn same(&self, other: &AgentAddr) -> bool {
        self.addr == other.addr
            && match (&self.tls, &other.tls) {
                (None, None) => true,
                (Some(a), Some(b)) => a.host == b.host && Arc::ptr_eq(&a.settings, &b.settings),
                _ => false,
            }
    }

    /// The TLS settings toward this address, if it is an https one.
    pub fn settings(&self) -> Option<&UpstreamTls> {
        self.tls.as_ref().map(|t| &*t.settings)
    }

    /// `https://host:port` or `http://addr`, for log lines.
    pub fn logged(&self) -> String {
        match &self.tls {
            Some(t) => format!("https://{} ({})", t.host, self.addr),
            None => format!("http://{}", self.addr),
        }
    }
}

pub use crate::error::TlsFailureKind;

/// The kind of a rustls error.
pub fn kind_of(e: &rustls::Error) -> TlsFailureKind {
    use rustls::{AlertDescription as A, CertificateError as C, Error as E};
    match e {
        E::InvalidCertificate(c) => match c {
            C::UnknownIssuer | C::BadSignature | C::UnhandledCriticalExtension => {
                TlsFailureKind::UnknownAuthority
            }
            C::NotValidForName | C::NotValidForNameContext { .. } => TlsFailureKind::WrongName,
            C::Expired
            | C::ExpiredContext { .. }
            | C::NotValidYet
            | C::NotValidYetContext { .. } => TlsFailureKind::Expired,
            _ => TlsFailureKind::Other,
        },
        E::AlertReceived(
            A::CertificateRequired
            | A::BadCertificate
            | A::UnknownCA
            | A::CertificateUnknown
            | A::CertificateRevoked
            | A::CertificateExpired
            | A::UnsupportedCertificate
            | A::AccessDenied,
        ) => TlsFailureKind::ClientCertRefused,
        _ => TlsFailureKind::Other,
    }
}

/// The rustls error inside an I/O error, if that is what it is.
pub fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()?.downcast_ref::<rustls::Error>()
}

/// An agent that asked for the proxy's client certificate during a TLS 1.3
/// handshake, then closed the connection without a word: no alert, no
/// session ticket, no byte of an answer. That is how many servers refuse
/// a client certificate (or its absence) when they send no alert, as
/// Python's asyncio TLS does ([`TlsConn`]).
#[derive(Debug)]
pub struct ClosedAfterAskingForACertificate;

impl fmt::Display for ClosedAfterAskingForACertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the agent asked for a client certificate, then closed the connection without answering (no alert, no session ticket)")
    }
}

impl std::error::Error for ClosedAfterAskingForACertificate {}

/// The TLS failure an I/O error carries, if it carries one: a rustls
/// error, or [`ClosedAfterAskingForACertificate`]; its kind and its text.
pub fn tls_error(e: &std::io::Error) -> Option<(TlsFailureKind, String)> {
    if let Some(r) = rustls_error(e) {
        return Some((kind_of(r), r.to_string()));
    }
    let c = e
        .get_ref()?
        .downcast_ref::<ClosedAfterAskingForACertificate>()?;
    Some((TlsFailureKind::ClientCertRefused, c.to_string()))
}

/// The failure a client is told of for a TLS error toward `to`; the log
/// line names the URL and the rustls error.
pub fn failure(to: &TlsTo, addr: SocketAddr, e: &rustls::Error) -> Failure {
    told(&to.agent, &to.host, addr, kind_of(e), &e.to_string())
}

/// Logs a TLS failure toward `https://host` and makes what the client is told.
pub(super) fn told(
    agent: &str,
    host: &str,
    addr: impl fmt::Display,
    kind: TlsFailureKind,
    error: &str,
) -> Failure {
    let url = format!("https://{host}");
    tracing::warn!(agent = %agent, url = %url, addr = %addr, error = %error, "TLS toward the agent failed");
    Failure::UpstreamTls {
        agent: agent.to_string(),
        kind,
        detail: format!("{url} ({addr}): {error}"),
    }
}

/// An I/O error on a connection to `to`: a TLS failure when rustls
/// raised it.
pub fn io_failure(to: &AgentAddr, e: &std::io::Error) -> Option<Failure> {
    let t = to.tls.as_ref()?;
    let (kind, error) = tls_error(e)?;
    Some(told(&t.agent, &t.host, to.addr, kind, &error))
}

/// A connect failure carried through hyper's and tonic's errors, so the
/// client is told what [`connect`] found (the TLS kind and agent name).
#[derive(Debug)]
pub struct ConnectFailure(pub Failure);

impl fmt::Display for ConnectFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "connecting to the agent: {:?}", self.0)
    }
}

impl std::error::Error for ConnectFailure {}

/// The [`ConnectFailure`] somewhere in `e`'s chain of sources.
pub fn connect_failure_in(e: &(dyn std::error::Error + 'static)) -> Option<Failure> {
    crate::error::in_chain::<ConnectFailure>(e).map(|f| f.0.clone())
}

#[cfg(test)]
mod tests;
