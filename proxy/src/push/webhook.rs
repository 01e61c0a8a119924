//! One webhook post: the request a subscriber of each version expects
//! (its token, authentication and the agent's trace context), sent to the
//! checked address only, over plain TCP or TLS, by the proxy's upstream
//! client (crate::upstream) on a kept-alive connection when one is idle.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};

use super::layer::Push;
use super::safety::{Target, TargetPolicy};
use super::{OutboxItem, PushConfig};
use crate::error::Failure;
use crate::upstream::tls::{AgentAddr, UpstreamTls};
use crate::upstream::{Limits, Repeat, UpstreamPool};
use crate::version::Version;

/// The headers a subscriber of `version` expects (MAPPING-FACTS §9), and
/// the agent's trace context of the push.
fn headers_for(c: &PushConfig, it: &OutboxItem) -> Vec<(&'static str, String)> {
    let mut h = vec![(
        "content-type",
        match c.subscriber_version {
            Version::V03 => translate::push_body::V03_CONTENT_TYPE,
            Version::V10 => translate::push_body::V10_CONTENT_TYPE,
        }
        .to_string(),
    )];
    if let Some(t) = &c.token {
        h.push(("x-a2a-notification-token", t.clone()));
    }
    if let Some(a) = &c.auth {
        if let Some(cred) = &a.credentials {
            h.push(("authorization", format!("{} {}", a.scheme, cred)));
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

/// The span of one delivery attempt (crate::telemetry): a child of the
/// agent's trace context stored with the notification, when it has one;
/// its post to the webhook (crate::upstream) is its child.
fn delivery_span(c: &PushConfig, it: &OutboxItem) -> tracing::Span {
    let span = tracing::debug_span!(
        target: "a2a_call",
        "webhook delivery",
        otel.name = "webhook delivery",
        otel.kind = "producer",
        otel.status_code = tracing::field::Empty,
        a2a.subscriber_version = c.subscriber_version.as_str(),
        a2a.delivery_attempt = i64::from(it.attempts) + 1,
    );
    if !it.traceparent.is_empty() {
        let tc = crate::tracectx::TraceContext {
            traceparent: it.traceparent.clone(),
            tracestate: it.tracestate.clone(),
        };
        crate::telemetry::adopt_parent(&span, &tc);
    }
    span
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
    let span = delivery_span(c, it);
    let r = {
        use tracing::Instrument;
        tokio::time::timeout(timeout, send(policy, &target, c, it, net, timeout))
            .instrument(span.clone())
            .await
    };
    if !matches!(r, Ok(Ok(status)) if (200..300).contains(&status)) {
        span.record("otel.status_code", "ERROR");
    }
    drop(span);
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
    within: Duration,
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
    let wire = request(t, c, it).map_err(Undelivered::last)?;
    let limits = Limits {
        connect_timeout: within,
        read_timeout: within,
        answer_timeout: within,
        max_body: MAX_ANSWER_BODY,
        // A push is delivered at least once (a failed one is posted again
        // later anyway): one sent again at once when its connection ended
        // before any answer is what the subscriber may get twice.
        repeat: Repeat::Safe,
    };
    let mut last = Undelivered::again("webhook host resolves to no address".into());
    for a in &addrs {
        let to = net
            .address(*a, t)
            .map_err(|f| Undelivered::last(why(&f, within)))?;
        match net.pool.call(to, &wire, limits).await {
            Ok(answer) => return Ok(answer.status),
            // Not reached at this address, or its connection broke: the
            // next one, if any (a push is delivered at least once).
            Err(f @ Failure::UpstreamUnavailable { .. }) => {
                last = Undelivered::again(why(&f, within))
            }
            Err(f) => return Err(Undelivered::again(why(&f, within))),
        }
    }
    Err(last)
}

/// A failure of the client, told as the webhook's (the dead letter's reason).
fn why(f: &Failure, within: Duration) -> String {
    match f {
        Failure::UpstreamUnavailable { detail } => format!("webhook connection: {detail}"),
        Failure::OutcomeUnknown { detail, .. } => {
            format!("webhook connection ended before an answer: {detail}")
        }
        Failure::UpstreamTls { detail, .. } => format!("TLS with the webhook failed: {detail}"),
        Failure::UpstreamTimeout => {
            format!("webhook did not answer within {} ms", within.as_millis())
        }
        Failure::BadUpstreamResponse { detail } => {
            format!("webhook answered something that is not a usable HTTP/1.x answer: {detail}")
        }
        other => format!("webhook: {}", other.operator_text()),
    }
}

/// The whole post: request line, the headers of [`headers_for`], the body.
fn request(
    t: &Target,
    c: &PushConfig,
    it: &OutboxItem,
) -> Result<crate::upstream::Outgoing, String> {
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
    let mut head = vec![
        (http::header::HOST, value("Host", host)?),
        (
            http::header::USER_AGENT,
            HeaderValue::from_static("a2a-compat-proxy"),
        ),
    ];
    for (k, v) in headers_for(c, it) {
        head.push((HeaderName::from_static(k), value(k, v)?));
    }
    crate::upstream::request(
        "POST",
        &t.path_and_query,
        head.iter().map(|(k, v)| (k, v)),
        Some(it.body.as_bytes()),
    )
    .map_err(|f| format!("the post cannot be written: {}", f.operator_text()))
}

/// A header value of the post; the subscriber's own values may hold
/// nothing that would end the header line.
fn value(name: &str, v: String) -> Result<HeaderValue, String> {
    HeaderValue::try_from(v)
        .map_err(|_| format!("the subscriber's {name} value holds control characters"))
}

/// Largest webhook answer body read (the body is dropped; it is read so the
/// connection can carry the next post).
const MAX_ANSWER_BODY: usize = 1024 * 1024;

/// The worker's network side: the proxy's upstream client (its own pool of
/// kept-alive connections, reused only for the same checked address and
/// TLS server name) and the TLS settings of https webhooks (the public
/// roots, no client certificate).
pub(super) struct Net {
    pool: UpstreamPool,
    tls: Option<Arc<UpstreamTls>>,
}

impl Net {
    pub(super) fn new() -> Net {
        Net {
            pool: UpstreamPool::default(),
            tls: UpstreamTls::load(None, None, None).ok().map(Arc::new),
        }
    }

    /// Where a post to `a` goes: plain, or TLS toward the URL's host.
    fn address(&self, a: SocketAddr, t: &Target) -> Result<AgentAddr, Failure> {
        if !t.https {
            return Ok(AgentAddr::from(a));
        }
        let tls = self.tls.as_ref().ok_or_else(|| Failure::Internal {
            detail: "this build cannot make TLS connections".into(),
        })?;
        AgentAddr::new(a, "https", &t.host, "webhook", tls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn config(url: String) -> PushConfig {
        PushConfig {
            callback_id: "x".into(),
            task_id: "t".into(),
            config_id: "c".into(),
            original_url: url,
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
        }
    }

    const PRIVATE_OK: TargetPolicy = TargetPolicy {
        allow_private: true,
        allow_hosts: vec![],
    };

    /// A webhook on 127.0.0.1 that reads each post on a connection and
    /// writes `answer`, then closes when `close`; it counts connections.
    async fn webhook(answer: &'static [u8], close: bool) -> (SocketAddr, Arc<AtomicUsize>) {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let conns = Arc::new(AtomicUsize::new(0));
        let count = conns.clone();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut b = vec![0u8; 4096];
                    loop {
                        let mut got = Vec::new();
                        while !got.ends_with(b"{}") {
                            match s.read(&mut b).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => got.extend_from_slice(&b[..n]),
                            }
                        }
                        let _ = s.write_all(answer).await;
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        (addr, conns)
    }

    /// Posts `{}` twice to a webhook answering `answer`: both outcomes and
    /// the connections the webhook saw.
    async fn post_twice(
        answer: &'static [u8],
        close: bool,
    ) -> (
        Result<u16, (bool, String)>,
        Result<u16, (bool, String)>,
        usize,
    ) {
        let (addr, conns) = webhook(answer, close).await;
        let c = config(format!("http://{addr}/h"));
        let t = PRIVATE_OK.check_url(&c.original_url).unwrap();
        let mut it = crate::push::contract::item("t");
        it.body = "{}".into();
        let net = Net::new();
        let within = Duration::from_secs(5);
        let one = || async {
            send(&PRIVATE_OK, &t, &c, &it, &net, within)
                .await
                .map_err(|u| (u.last, u.why))
        };
        let first = one().await;
        let second = one().await;
        (first, second, conns.load(Ordering::SeqCst))
    }

    #[tokio::test]
    async fn answers_past_informational_heads_on_one_kept_connection() {
        let r = post_twice(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
            false,
        )
        .await;
        assert_eq!(r, (Ok(204), Ok(204), 1));
        let r = post_twice(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n",
            false,
        )
        .await;
        assert_eq!(r, (Ok(200), Ok(200), 1));
        // An error status is the webhook's answer: told, posted again later.
        let r = post_twice(b"HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n", false).await;
        assert_eq!(r.2, 1, "{r:?}");
        assert_eq!(r.0, Ok(503));
        // `Connection: close`: each post on a connection of its own.
        let r = post_twice(
            b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            true,
        )
        .await;
        assert_eq!(r, (Ok(200), Ok(200), 2));
    }

    #[tokio::test]
    async fn broken_answers_are_undelivered_and_may_be_posted_again() {
        // A chunked body cut by the webhook's close: not a whole answer.
        let r = post_twice(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\no",
            true,
        )
        .await;
        assert!(
            matches!(&r.0, Err((false, why)) if why.starts_with("webhook")),
            "{r:?}"
        );
        // Informational heads are skipped, as many as come within the
        // delivery timeout.
        let r = post_twice(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            false,
        )
        .await;
        assert_eq!(r, (Ok(200), Ok(200), 1));
        // Closed without a byte, every time: undelivered, to be tried again.
        let r = post_twice(b"", true).await;
        assert!(
            matches!(&r.0, Err((false, why)) if why.starts_with("webhook")),
            "{r:?}"
        );
        // Not HTTP.
        let r = post_twice(b"SMTP ready\r\n\r\n", true).await;
        assert!(
            matches!(&r.0, Err((false, why)) if why.contains("not a usable HTTP")),
            "{r:?}"
        );
        // An answer body past the bound is not read: undelivered, told why.
        let r = post_twice(b"HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n", false).await;
        assert!(
            matches!(&r.0, Err((false, why)) if why.contains("larger than 1048576 bytes")),
            "{r:?}"
        );
    }

    #[tokio::test]
    async fn a_webhook_that_never_answers_times_out() {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let (s, _) = l.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(s);
        });
        let c = config(format!("http://{addr}/h"));
        let t = PRIVATE_OK.check_url(&c.original_url).unwrap();
        let it = crate::push::contract::item("t");
        let r = send(
            &PRIVATE_OK,
            &t,
            &c,
            &it,
            &Net::new(),
            Duration::from_millis(300),
        )
        .await;
        held.abort();
        let why = r.err().map(|u| u.why).unwrap_or_default();
        assert!(why.contains("did not answer within 300 ms"), "{why}");
    }

    #[test]
    fn heads_per_version() {
        let mut c = config("http://127.0.0.1:9/h?q=1".into());
        let t = PRIVATE_OK.check_url(&c.original_url).unwrap();
        let mut it = crate::push::contract::item("t");
        let text = |c: &PushConfig, it: &OutboxItem| {
            request(&t, c, it).map(|r| {
                let mut h = format!("{} {}\r\n", r.method(), r.uri());
                for (k, v) in r.headers() {
                    h += &format!("{k}: {}\r\n", v.to_str().unwrap());
                }
                h + "\r\n" + std::str::from_utf8(r.body()).unwrap()
            })
        };
        let h = text(&c, &it).unwrap();
        assert!(!h.contains("traceparent"), "{h}");
        it.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into();
        it.tracestate = "a=1".into();
        let h = text(&c, &it).unwrap();
        assert!(
            h.contains("traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\ntracestate: a=1\r\n"),
            "{h}"
        );
        assert!(h.starts_with("POST /h?q=1\r\nhost: 127.0.0.1:9\r\n"), "{h}");
        assert!(h.contains("content-type: application/a2a+json\r\n"));
        assert!(h.contains("x-a2a-notification-token: tok\r\n"));
        assert!(h.contains("authorization: Bearer cred\r\n"));
        let end = format!("\r\n\r\n{}", it.body);
        assert!(h.ends_with(&end), "{h}");
        c.subscriber_version = Version::V03;
        c.token = Some("bad\r\nX-Evil: 1".into());
        assert!(text(&c, &it).is_err());
        c.token = None;
        assert!(text(&c, &it)
            .unwrap()
            .contains("content-type: application/json\r\n"));
    }
}
