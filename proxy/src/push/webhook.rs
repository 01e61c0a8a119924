//! One webhook post: the request a subscriber of each version expects
//! (its token, authentication and the agent's trace context), sent to the
//! checked address only, over plain TCP or TLS, on a kept-alive connection
//! when one is idle.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::layer::Push;
use super::safety::{Target, TargetPolicy};
use super::{OutboxItem, PushConfig};
use crate::version::Version;

/// Most bytes of a webhook's response read (its head; the body is ignored).
const MAX_RESPONSE_HEAD: usize = 8 * 1024;

/// The headers a subscriber of `version` expects (MAPPING-FACTS §9), and
/// the agent's trace context of the push.
fn headers_for(c: &PushConfig, it: &OutboxItem) -> Vec<(&'static str, String)> {
    let mut h = vec![(
        "Content-Type",
        match c.subscriber_version {
            Version::V03 => translate::push_body::V03_CONTENT_TYPE,
            Version::V10 => translate::push_body::V10_CONTENT_TYPE,
        }
        .to_string(),
    )];
    if let Some(t) = &c.token {
        h.push(("X-A2A-Notification-Token", t.clone()));
    }
    if let Some(a) = &c.auth {
        if let Some(cred) = &a.credentials {
            h.push(("Authorization", format!("{} {}", a.scheme, cred)));
        }
    }
    if !it.traceparent.is_empty() {
        h.push(("traceparent", it.traceparent.clone()));
        if !it.tracestate.is_empty() {
            h.push(("tracestate", it.tracestate.clone()));
        }
    }
    h
}

/// Why a send failed; `last` when trying again cannot help (the target
/// is refused by the policy, the request cannot be written): the item goes
/// to the dead letters at once.
pub(super) struct Undelivered {
    pub(super) why: String,
    pub(super) last: bool,
}

impl Undelivered {
    fn again(why: String) -> Undelivered {
        Undelivered { why, last: false }
    }

    fn last(why: String) -> Undelivered {
        Undelivered { why, last: true }
    }
}

/// Posts one body; `Ok` on a 2xx answer.
pub(super) async fn post(
    push: &Push,
    c: &PushConfig,
    it: &OutboxItem,
    net: &Net,
) -> Result<(), Undelivered> {
    let policy: &TargetPolicy = &push.policy;
    // Checked again on every send: the policy may have changed since the
    // registration (a restart with other settings).
    let target = policy
        .check_url(&c.original_url)
        .map_err(|r| Undelivered::last(r.0))?;
    let timeout = push.settings.delivery_timeout;
    let r = tokio::time::timeout(timeout, send(policy, &target, c, it, net)).await;
    match r {
        Ok(Ok(status)) if (200..300).contains(&status) => Ok(()),
        Ok(Ok(status)) => Err(Undelivered::again(format!(
            "webhook answered HTTP {status}"
        ))),
        Ok(Err(e)) => Err(e),
        Err(_) => Err(Undelivered::again(format!(
            "webhook did not answer within {} ms",
            timeout.as_millis()
        ))),
    }
}

async fn send(
    policy: &TargetPolicy,
    t: &Target,
    c: &PushConfig,
    it: &OutboxItem,
    net: &Net,
) -> Result<u16, Undelivered> {
    // An IP literal is the address itself; a name is resolved once, its
    // addresses checked, and only those are connected to.
    let addrs: Vec<SocketAddr> = match t.ip {
        Some(ip) => vec![SocketAddr::new(ip, t.port)],
        None => tokio::net::lookup_host((t.host.as_str(), t.port))
            .await
            .map_err(|e| Undelivered::again(format!("cannot resolve the webhook host: {e}")))?
            .collect(),
    };
    // Checked on every send, pooled connection or not.
    policy
        .check_resolved(t, &addrs)
        .map_err(|r| Undelivered::last(r.0))?;
    let body = it.body.as_str();
    let head = request_head(t, c, it, body.len()).map_err(Undelivered::last)?;
    let mut last = Undelivered::again("webhook host resolves to no address".into());
    for a in &addrs {
        let key: PoolKey = (*a, t.host.clone(), t.https);
        // An idle connection may have been closed by the webhook meanwhile:
        // if it fails before any answer byte, a fresh one is tried.
        while let Some(conn) = net.pool.take(&key) {
            match exchange(conn, &head, body).await {
                Ok((status, again)) => {
                    if let Some(conn) = again {
                        net.pool.put(key, conn);
                    }
                    return Ok(status);
                }
                Err(Failed { stale: true, .. }) => continue,
                Err(Failed { why, .. }) => return Err(Undelivered::again(why)),
            }
        }
        let conn = match connect(a, t, net).await {
            Ok(conn) => conn,
            Err(e) => {
                last = Undelivered::again(e);
                continue;
            }
        };
        return match exchange(conn, &head, body).await {
            Ok((status, again)) => {
                if let Some(conn) = again {
                    net.pool.put(key, conn);
                }
                Ok(status)
            }
            Err(f) => Err(Undelivered::again(f.why)),
        };
    }
    Err(last)
}

async fn connect(a: &SocketAddr, t: &Target, net: &Net) -> Result<Conn, String> {
    let s = tokio::net::TcpStream::connect(a)
        .await
        .map_err(|e| format!("cannot connect to the webhook: {e}"))?;
    let _ = s.set_nodelay(true);
    if !t.https {
        return Ok(Box::new(s));
    }
    let name = rustls_name(&t.host)?;
    let tls = net
        .tls
        .as_ref()
        .ok_or("this build cannot make TLS connections")?;
    let s = tls
        .connect(name, s)
        .await
        .map_err(|e| format!("TLS with the webhook failed: {e}"))?;
    Ok(Box::new(s))
}

fn rustls_name(host: &str) -> Result<tokio_rustls::rustls::pki_types::ServerName<'static>, String> {
    tokio_rustls::rustls::pki_types::ServerName::try_from(host.to_string())
        .map_err(|_| "webhook host is not a valid TLS server name".to_string())
}

fn request_head(t: &Target, c: &PushConfig, it: &OutboxItem, len: usize) -> Result<String, String> {
    let host = if t.host.contains(':') {
        format!("[{}]", t.host)
    } else {
        t.host.clone()
    };
    let default_port = if t.https { 443 } else { 80 };
    let host = if t.port == default_port {
        host
    } else {
        format!("{host}:{}", t.port)
    };
    let mut head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: a2a-compat-proxy\r\nContent-Length: {len}\r\n",
        t.path_and_query
    );
    for (k, v) in headers_for(c, it) {
        if v.bytes().any(|b| b < 0x20 && b != b'\t') {
            return Err(format!(
                "the subscriber's {k} value holds control characters"
            ));
        }
        head.push_str(k);
        head.push_str(": ");
        head.push_str(&v);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    Ok(head)
}

/// A connection to a webhook (plain or TLS).
trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}
type Conn = Box<dyn Io>;

/// (address, host name, https): connections are reused only for the same
/// checked address and the same TLS server name.
type PoolKey = (SocketAddr, String, bool);

/// How long an idle webhook connection is kept.
const IDLE_FOR: Duration = Duration::from_secs(20);
/// Idle connections kept per key, and keys kept.
const IDLE_PER_KEY: usize = 8;
const IDLE_KEYS: usize = 1024;

/// The worker's network side: TLS client and keep-alive pool.
pub(super) struct Net {
    tls: Option<tokio_rustls::TlsConnector>,
    pool: Pool,
}

impl Net {
    pub(super) fn new() -> Net {
        Net {
            tls: tls_config(),
            pool: Pool::default(),
        }
    }
}

/// Idle keep-alive connections to webhooks.
#[derive(Default)]
struct Pool {
    idle: std::sync::Mutex<std::collections::HashMap<PoolKey, Vec<(Conn, std::time::Instant)>>>,
}

impl Pool {
    fn take(&self, key: &PoolKey) -> Option<Conn> {
        let mut m = self.idle.lock().ok()?;
        let list = m.get_mut(key)?;
        while let Some((c, since)) = list.pop() {
            if since.elapsed() < IDLE_FOR {
                return Some(c);
            }
        }
        None
    }

    fn put(&self, key: PoolKey, c: Conn) {
        let Ok(mut m) = self.idle.lock() else {
            return;
        };
        if m.len() >= IDLE_KEYS && !m.contains_key(&key) {
            m.retain(|_, v| v.iter().any(|(_, since)| since.elapsed() < IDLE_FOR));
            if m.len() >= IDLE_KEYS {
                return;
            }
        }
        let list = m.entry(key).or_default();
        if list.len() < IDLE_PER_KEY {
            list.push((c, std::time::Instant::now()));
        }
    }
}

/// A failed exchange; `stale` when nothing was answered on a connection
/// that may simply have been closed while idle (safe to try a fresh one).
struct Failed {
    stale: bool,
    why: String,
}

/// Informational answers (`100 Continue`, `103 Early Hints`) skipped
/// before a webhook's final answer; more is a broken webhook.
const MAX_INFORMATIONAL: usize = 8;

/// Writes the request and reads the answer: its head (informational ones
/// skipped, at most [`MAX_RESPONSE_HEAD`] bytes in all) and, when it is
/// small (a `Content-Length` or chunked), its body, so the connection can
/// be reused (returned as `Some`).
async fn exchange(mut s: Conn, head: &str, body: &str) -> Result<(u16, Option<Conn>), Failed> {
    s.write_all(head.as_bytes())
        .await
        .map_err(io_failed(true))?;
    s.write_all(body.as_bytes())
        .await
        .map_err(io_failed(true))?;
    s.flush().await.map_err(io_failed(true))?;
    let mut buf = vec![0u8; MAX_RESPONSE_HEAD];
    let mut n = 0;
    let (code, end, keep, framing) = read_final_head(&mut s, &mut buf, &mut n).await?;
    let Some(end) = end else {
        return Ok((code, None));
    };
    let no_body = code == 204 || code == 304 || (100..200).contains(&code);
    let framing = if no_body { Framing::Length(0) } else { framing };
    if !keep {
        return Ok((code, None));
    }
    let whole = drain_body(&mut s, &mut buf, n, end, framing).await;
    Ok((code, whole.then_some(s)))
}

fn io_failed(stale: bool) -> impl Fn(std::io::Error) -> Failed {
    move |e: std::io::Error| Failed {
        stale,
        why: format!("webhook connection: {e}"),
    }
}

/// Reads the webhook's final answer head into `buf` (informational ones
/// skipped, at most [`MAX_INFORMATIONAL`]): its code, where it ends in
/// `buf` (`None` when it did not fit or the connection closed inside it),
/// whether the connection may be kept and how the body is delimited.
async fn read_final_head(
    s: &mut Conn,
    buf: &mut [u8],
    n: &mut usize,
) -> Result<(u16, Option<usize>, bool, Framing), Failed> {
    let mut informational = 0;
    loop {
        // Nothing of an answer yet: the connection may have been closed
        // while idle.
        let stale = informational == 0;
        let end = loop {
            if let Some(i) = buf[..*n].windows(4).position(|w| w == b"\r\n\r\n") {
                break Some(i + 4);
            }
            if *n == buf.len() {
                break None;
            }
            let k = s
                .read(&mut buf[*n..])
                .await
                .map_err(io_failed(stale && *n == 0))?;
            if k == 0 {
                if *n == 0 {
                    return Err(Failed {
                        stale,
                        why: "webhook closed the connection without an answer".into(),
                    });
                }
                break None;
            }
            *n += k;
        };
        let (code, keep, framing) = answer_head(&buf[..end.unwrap_or(*n)])?;
        let Some(end) = end else {
            return Ok((code, None, keep, framing));
        };
        if !(100..200).contains(&code) || code == 101 {
            return Ok((code, Some(end), keep, framing));
        }
        informational += 1;
        if informational > MAX_INFORMATIONAL {
            return Err(Failed {
                stale: false,
                why: "webhook sent only informational answers".into(),
            });
        }
        // The final answer follows.
        buf.copy_within(end..*n, 0);
        *n -= end;
    }
}

/// Reads (and drops) the answer's body when it fits in `buf`, so the
/// connection can carry the next post; whether it was read whole.
async fn drain_body(
    s: &mut Conn,
    buf: &mut [u8],
    mut n: usize,
    end: usize,
    framing: Framing,
) -> bool {
    match framing {
        Framing::Length(length) if end + length <= MAX_RESPONSE_HEAD => {
            while n < end + length {
                match s.read(&mut buf[n..end + length]).await {
                    Ok(0) | Err(_) => return false,
                    Ok(k) => n += k,
                }
            }
            n == end + length
        }
        Framing::Chunked => {
            let mut chunks = crate::unary::ChunkedBody::default();
            loop {
                match chunks.end(&buf[end..n], MAX_RESPONSE_HEAD) {
                    Ok(Some(len)) => return end + len == n,
                    Ok(None) if n < buf.len() => match s.read(&mut buf[n..]).await {
                        Ok(0) | Err(_) => return false,
                        Ok(k) => n += k,
                    },
                    Ok(None) | Err(_) => return false,
                }
            }
        }
        Framing::Length(_) | Framing::Unknown => false,
    }
}

/// How a webhook's answer body is delimited, as far as it matters to
/// keeping the connection.
enum Framing {
    Length(usize),
    Chunked,
    Unknown,
}

/// A webhook's answer head: its status, whether the connection may carry
/// another post, and its body's framing.
fn answer_head(head: &[u8]) -> Result<(u16, bool, Framing), Failed> {
    let text = String::from_utf8_lossy(head);
    let mut lines = text.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split_whitespace();
    let (version, code) = match (
        parts.next(),
        parts.next().and_then(|c| c.parse::<u16>().ok()),
    ) {
        (Some(v), Some(code)) if v.starts_with("HTTP/1.") => (v, code),
        _ => {
            return Err(Failed {
                stale: false,
                why: "webhook answered something that is not HTTP/1.x".into(),
            })
        }
    };
    // Reusable only with a known body and no `close`.
    let mut length = None;
    let mut chunked = false;
    let mut keep = version == "HTTP/1.1";
    for l in lines {
        let Some((k, v)) = l.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase());
        match k.as_str() {
            "content-length" => length = v.parse::<usize>().ok(),
            "transfer-encoding" if v.rsplit(',').next().map(str::trim) == Some("chunked") => {
                chunked = true
            }
            "transfer-encoding" => keep = false,
            "connection" if v.contains("close") => keep = false,
            _ => {}
        }
    }
    let framing = match (chunked, length) {
        (true, _) => Framing::Chunked,
        (false, Some(l)) => Framing::Length(l),
        (false, None) => Framing::Unknown,
    };
    Ok((code, keep, framing))
}

/// The TLS client for https webhooks (`None` if rustls offers no protocol,
/// then https deliveries fail with that reason).
fn tls_config() -> Option<tokio_rustls::TlsConnector> {
    use tokio_rustls::rustls;
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Some(tokio_rustls::TlsConnector::from(Arc::new(config)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `exchange` against a peer that reads the post and writes `answer`
    /// (then closes when `close`).
    async fn against(answer: &'static [u8], close: bool) -> Result<(u16, bool), (bool, String)> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (ours, mut theirs) = tokio::io::duplex(64 * 1024);
        let peer = tokio::spawn(async move {
            let mut b = vec![0u8; 1024];
            let mut got = Vec::new();
            while !got.ends_with(b"{}") {
                match theirs.read(&mut b).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => got.extend_from_slice(&b[..n]),
                }
            }
            let _ = theirs.write_all(answer).await;
            if !close {
                // Held open until the test ends.
                let _ = theirs.read(&mut b).await;
            }
        });
        let head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n";
        let r = tokio::time::timeout(Duration::from_secs(5), exchange(Box::new(ours), head, "{}"))
            .await
            .expect("bounded");
        peer.abort();
        r.map(|(code, again)| (code, again.is_some()))
            .map_err(|f| (f.stale, f.why))
    }

    #[tokio::test]
    async fn informational_heads_are_skipped_and_bounded() {
        let r = against(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            false,
        )
        .await;
        assert_eq!(r, Ok((204, true)));
        let r = against(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            false,
        )
        .await;
        assert_eq!(r, Ok((200, true)));
        // A chunked body not whole when the webhook closes: the status
        // stands, the connection is not kept.
        let r = against(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\no",
            true,
        )
        .await;
        assert_eq!(r, Ok((200, false)));
        // Nine informational heads: a broken webhook.
        let r = against(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .await;
        assert!(matches!(r, Err((false, _))), "{r:?}");
        // Closed after a 100: the webhook got the post (not stale).
        let r = against(b"HTTP/1.1 100 Continue\r\n\r\n", true).await;
        assert!(matches!(r, Err((false, _))), "{r:?}");
        // Closed without a byte: maybe closed while idle (stale).
        let r = against(b"", true).await;
        assert!(matches!(r, Err((true, _))), "{r:?}");
    }

    #[test]
    fn heads_per_version() {
        let mut c = PushConfig {
            callback_id: "x".into(),
            task_id: "t".into(),
            config_id: "c".into(),
            original_url: "http://127.0.0.1:9/h?q=1".into(),
            token: Some("tok".into()),
            auth: Some(super::super::Auth {
                scheme: "Bearer".into(),
                credentials: Some("cred".into()),
            }),
            subscriber_version: Version::V10,
            upstream_version: Version::V03,
            callback_secret: "s".into(),
            created: 0,
            seed: None,
        };
        let p = TargetPolicy {
            allow_private: true,
            allow_hosts: vec![],
        };
        let t = p.check_url(&c.original_url).unwrap();
        let mut it = crate::push::contract::item("t");
        let h = request_head(&t, &c, &it, 5).unwrap();
        assert!(!h.contains("traceparent"), "{h}");
        it.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into();
        it.tracestate = "a=1".into();
        let h = request_head(&t, &c, &it, 5).unwrap();
        assert!(
            h.contains("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntracestate: a=1\r\n"),
            "{h}"
        );
        assert!(
            h.starts_with("POST /h?q=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"),
            "{h}"
        );
        assert!(h.contains("Content-Type: application/a2a+json\r\n"));
        assert!(h.contains("X-A2A-Notification-Token: tok\r\n"));
        assert!(h.contains("Authorization: Bearer cred\r\n"));
        c.subscriber_version = Version::V03;
        c.token = Some("bad\r\nX-Evil: 1".into());
        assert!(request_head(&t, &c, &it, 5).is_err());
        c.token = None;
        assert!(request_head(&t, &c, &it, 5)
            .unwrap()
            .contains("Content-Type: application/json\r\n"));
    }
}
