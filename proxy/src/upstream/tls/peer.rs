//! Pingora's own TLS toward an `https://` agent (its passthrough): the
//! peer it connects to, carrying the trust and client identity of
//! [`UpstreamTls`] as Pingora holds them ([`http_peer`]), and what a failed
//! connection of Pingora's is told as ([`diagnose`]).
//!
//! Pingora reports a TLS failure as text (its handshake error) or as a
//! closed connection (an agent refusing the client certificate after a TLS
//! 1.3 handshake, with an alert or without a word), never as the rustls
//! error. So when a passed-through call to an https agent fails on its
//! connection, the proxy makes one handshake of its own to the agent, with
//! the same settings, and reads what the agent does next: an alert or a
//! silent close after asking for a certificate is a refusal; a wait is
//! none. The result is kept a second per agent address, and calls failing
//! at once wait for the one handshake under way, so a burst of failing
//! calls makes one handshake, not one each.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use pingora::protocols::tls::CaType;
use pingora::upstreams::peer::HttpPeer;
use pingora::utils::tls::{CertKey, WrappedX509};
use tokio::io::AsyncReadExt;

use super::*;

/// How long a diagnosis stands for its agent address.
const KEPT: Duration = Duration::from_secs(1);
/// Diagnoses kept at once (one per agent address and host in use).
const KEPT_MAX: usize = 1024;
/// How long the diagnosing handshake waits for the agent's word after
/// the handshake (an alert, a close) before calling it no refusal.
const LISTEN: Duration = Duration::from_millis(500);

/// The trust and client identity of one agent's [`UpstreamTls`], as
/// Pingora's rustls connector takes them.
pub(super) struct PingoraTls {
    /// The Mozilla roots and the CAs of `upstream.ca_file`, as certificates.
    ca: Arc<CaType>,
    identity: Option<Arc<CertKey>>,
    /// Recent diagnoses, by agent address and host; the slot's lock is
    /// held while one is made.
    diagnosed: Mutex<HashMap<Key, Arc<Slot>>>,
}

type Key = (SocketAddr, Arc<str>);
type Slot = tokio::sync::Mutex<Option<(Instant, Option<Failure>)>>;

/// A certificate as Pingora holds it, parsed by the parser Pingora uses
/// (whose own constructor panics on what it cannot parse).
fn wrapped(der: &[u8]) -> Option<WrappedX509> {
    WrappedX509::try_new(der.to_vec(), |raw| {
        x509_parser::parse_x509_certificate(raw)
            .map(|(_, cert)| cert)
            .map_err(|_| ())
    })
    .ok()
}

impl PingoraTls {
    pub(super) fn load(
        ca_file: Option<&Path>,
        identity: Option<(&Path, &Path)>,
    ) -> Result<PingoraTls, ConfigError> {
        // A Mozilla root Pingora's parser cannot read is left out (webpki
        // reads it for the proxy's own calls); a CA of the file is an error.
        let mut ca: Vec<WrappedX509> = webpki_root_certs::TLS_SERVER_ROOT_CERTS
            .iter()
            .filter_map(|c| wrapped(c))
            .collect();
        if let Some(file) = ca_file {
            for c in certs("upstream.ca_file", file)? {
                ca.push(wrapped(&c).ok_or_else(|| {
                    config_error(
                        "upstream.ca_file",
                        file,
                        "a certificate that cannot be parsed",
                    )
                })?);
            }
        }
        let identity = match identity {
            None => None,
            Some((cert, key_file)) => {
                let (chain, key) = client_identity(cert, key_file)?;
                for c in &chain {
                    if wrapped(c).is_none() {
                        return Err(config_error(
                            "upstream.client_cert_file",
                            cert,
                            "a certificate that cannot be parsed",
                        ));
                    }
                }
                // Pingora reads the key back from its DER, by its form.
                let der = key.secret_der().to_vec();
                if PrivateKeyDer::try_from(der.clone()).is_err() {
                    return Err(config_error(
                        "upstream.client_key_file",
                        key_file,
                        "a private key of no known form",
                    ));
                }
                let chain = chain.iter().map(|c| c.to_vec()).collect();
                Some(Arc::new(CertKey::new(chain, der)))
            }
        };
        Ok(PingoraTls {
            ca: Arc::from(ca),
            identity,
            diagnosed: Mutex::default(),
        })
    }

    /// The slot of `key`'s diagnosis (made when missing; the map bounded).
    fn slot(&self, key: Key) -> Option<Arc<Slot>> {
        let mut d = self.diagnosed.lock().ok()?;
        if d.len() >= KEPT_MAX && !d.contains_key(&key) {
            d.retain(|_, slot| Arc::strong_count(slot) > 1);
            if d.len() >= KEPT_MAX {
                return None;
            }
        }
        Some(d.entry(key).or_default().clone())
    }
}

/// Pingora's peer for `to`, with the connect and read timeouts: for an
/// `https://` agent, TLS with SNI = the URL's host, certificate and host
/// name checked, the trust of [`UpstreamTls`] (the Mozilla roots and
/// `upstream.ca_file`) and its client certificate for mTLS, HTTP/1.1.
pub fn http_peer(to: &AgentAddr, connect_timeout: Duration, read_timeout: Duration) -> HttpPeer {
    let mut peer = match &to.tls {
        None => HttpPeer::new(to.addr, false, String::new()),
        Some(t) => {
            let mut p = HttpPeer::new(to.addr, true, t.host.to_string());
            let pingora = &t.settings.pingora;
            p.options.ca = Some(pingora.ca.clone());
            p.client_cert_key = pingora.identity.clone();
            p.options.verify_cert = true;
            p.options.verify_hostname = true;
            p.options.alpn = pingora::protocols::ALPN::H1;
            p
        }
    };
    peer.options.connection_timeout = Some(connect_timeout);
    peer.options.total_connection_timeout = Some(connect_timeout);
    peer.options.read_timeout = Some(read_timeout);
    peer.options.write_timeout = Some(read_timeout);
    peer
}

/// Whether Pingora's error `e` on a connection to `to` may hide a TLS
/// failure ([`diagnose`] tells).
pub fn needs_diagnosis(to: &AgentAddr, e: &pingora::Error) -> bool {
    use pingora::ErrorType as T;
    to.tls.is_some()
        && matches!(
            e.etype(),
            T::TLSHandshakeFailure
                | T::InvalidCert
                | T::HandshakeError
                | T::ConnectionClosed
                | T::ReadError
                | T::WriteError
                | T::ConnectError
                | T::H1Error
                | T::InvalidHTTPHeader
        )
}

/// What a failed passed-through connection to the https agent `to` is
/// told as: the failure one handshake of the proxy's own finds (a TLS
/// refusal by kind, the agent unreachable or too slow), or `None` when
/// that handshake finds nothing wrong. Within `within` plus [`LISTEN`].
pub async fn diagnose(to: &AgentAddr, within: Duration) -> Option<Failure> {
    let t = to.tls.as_ref()?;
    let pingora = &t.settings.pingora;
    let key = (to.addr, t.host.clone());
    // No slot (that many agents failing at once): diagnosed unshared.
    let Some(slot) = pingora.slot(key) else {
        return handshake(to, within).await;
    };
    let mut kept = slot.lock().await;
    if let Some((at, f)) = kept.as_ref() {
        if at.elapsed() < KEPT {
            return f.clone();
        }
    }
    let found = handshake(to, within).await;
    *kept = Some((Instant::now(), found.clone()));
    found
}

/// One handshake of the proxy's own to `to`, and the agent's word after it.
async fn handshake(to: &AgentAddr, within: Duration) -> Option<Failure> {
    match connect(to, within, Alpn::Http1).await {
        Err(f) => Some(f),
        Ok(mut conn) => {
            // Nothing is sent: an agent that refuses says so (an alert, or
            // a close after asking for a certificate) without a request.
            let mut byte = [0u8; 1];
            match tokio::time::timeout(LISTEN, conn.read(&mut byte)).await {
                Ok(Err(e)) => io_failure(to, &e),
                _ => None,
            }
        }
    }
}
