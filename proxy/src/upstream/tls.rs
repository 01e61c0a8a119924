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
//! Pingora is built without TLS: its connections (passthrough, card and
//! task fetches) reach an https agent through a private Unix socket
//! carried over the same rustls settings ([`tunnel`], [`http_peer`]).
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
mod tunnel;

pub use connect::{connect, Alpn, Conn, Connector, TlsConn};

/// The `[upstream]` TLS settings of one agent, loaded and checked.
pub struct UpstreamTls {
    ca_file: Option<PathBuf>,
    client_cert_file: Option<PathBuf>,
    /// ALPN `http/1.1`: Pingora's tunnels (below).
    h1: Arc<rustls::ClientConfig>,
    /// ALPN `h2` then `http/1.1`: the proxy's own HTTP calls
    /// (`crate::upstream`), in the protocol the agent picks.
    http: Arc<rustls::ClientConfig>,
    /// ALPN `h2`: gRPC agents.
    h2: Arc<rustls::ClientConfig>,
    /// Pingora's way to these agents (its passthrough, card and task
    /// fetches): a Unix socket per target, carried over `h1`
    /// ([`tunnel`], [`http_peer`]).
    tunnels: tunnel::Tunnels,
}

impl fmt::Debug for UpstreamTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamTls")
            .field("ca_file", &self.ca_file)
            .field("client_cert_file", &self.client_cert_file)
            .finish_non_exhaustive()
    }
}

fn config_error(key: &str, file: &Path, why: impl fmt::Display) -> ConfigError {
    ConfigError {
        key: key.into(),
        message: format!("{}: {why}", file.display()),
    }
}

/// The certificates of a PEM file (at least one).
fn certs(key: &str, file: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
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
fn client_identity(
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
            tunnels: tunnel::Tunnels::default(),
        })
    }

    /// Closes Pingora's sockets toward these agents (their directories
    /// removed); one opens again if a call needs it.
    pub fn close_tunnels(&self) {
        self.tunnels.close();
    }
}

/// Removes the private socket directories (under the system temp dir)
/// that proxies of this user killed before they could remove their own
/// left behind ([`tunnel::sweep`]: only directories provably such, whose
/// process is gone). Run at start; returns how many went.
pub fn sweep_stale_tunnels() -> usize {
    tunnel::sweep(&std::env::temp_dir())
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
fn told(
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

/// Pingora's peer for `to`, with the connect and read timeouts: the
/// agent's address, or for an `https://` agent the Unix socket that
/// carries Pingora's connections over TLS to it ([`tunnel`]: SNI = the
/// URL's host, certificate and host name checked, the client certificate
/// for mTLS, the trust of [`UpstreamTls`]). Fails only when that socket
/// cannot be opened.
pub fn http_peer(
    to: &AgentAddr,
    connect_timeout: Duration,
    read_timeout: Duration,
) -> Result<pingora::upstreams::peer::HttpPeer, Failure> {
    use pingora::upstreams::peer::HttpPeer;
    let mut peer = match &to.tls {
        None => HttpPeer::new(to.addr, false, String::new()),
        Some(t) => {
            let unavailable = |why: String| {
                tracing::error!(agent = %t.agent, url = %format!("https://{}", t.host), error = %why, "cannot open the upstream TLS socket");
                Failure::UpstreamUnavailable {
                    detail: format!("upstream TLS socket: {why}"),
                }
            };
            let tunnel = t
                .settings
                .tunnels
                .get(t, to.addr, &t.settings.h1, connect_timeout)
                .map_err(|e| unavailable(e.to_string()))?;
            let path = tunnel
                .path()
                .to_str()
                .ok_or_else(|| unavailable("the socket path is not UTF-8".into()))?;
            // Plaintext from Pingora's side; the SNI only tells pooled
            // connections apart.
            HttpPeer::new_uds(path, false, t.host.to_string())
                .map_err(|e| unavailable(e.to_string()))?
        }
    };
    peer.options.connection_timeout = Some(connect_timeout);
    peer.options.total_connection_timeout = Some(connect_timeout);
    peer.options.read_timeout = Some(read_timeout);
    peer.options.write_timeout = Some(read_timeout);
    Ok(peer)
}

/// What went wrong on a connection to `peer` (one of [`http_peer`]'s)
/// of agent `agent` with settings `settings`, when Pingora's error `e` is
/// one the TLS socket's side knows better: the agent refused the TLS
/// exchange (its certificate, an alert), could not be reached, or was too
/// slow; the socket then closed the connection Pingora was using.
pub fn pingora_failure(
    agent: &str,
    settings: &UpstreamTls,
    peer: &pingora::upstreams::peer::HttpPeer,
    e: &pingora::Error,
) -> Option<Failure> {
    use pingora::protocols::l4::socket::SocketAddr as PeerAddr;
    use pingora::upstreams::peer::Peer;
    use pingora::ErrorType;
    let PeerAddr::Unix(uds) = peer.address() else {
        return None;
    };
    let on_connection = matches!(
        e.etype(),
        ErrorType::ConnectionClosed
            | ErrorType::ReadError
            | ErrorType::WriteError
            | ErrorType::ConnectError
            | ErrorType::ConnectRefused
            | ErrorType::H1Error
            | ErrorType::InvalidHTTPHeader
    );
    if !on_connection {
        return None;
    }
    let tunnel = settings.tunnels.find(uds.as_pathname()?)?;
    Some(match tunnel.failure()? {
        tunnel::Broken::Tls { kind, detail } => Failure::UpstreamTls {
            agent: agent.to_string(),
            kind,
            detail,
        },
        tunnel::Broken::Unavailable(detail) => Failure::UpstreamUnavailable { detail },
        tunnel::Broken::Timeout => Failure::UpstreamTimeout,
    })
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
