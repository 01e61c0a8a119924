//! The card cache: the agent's card fetched on the proxy's upstream
//! client (crate::upstream::UpstreamPool, the keep-alive connections its
//! translated calls use; bounded in time and size), kept for its max-age,
//! revalidated with ETag / If-None-Match, and the agent's interfaces
//! resolved from it. The proxy's own GetTask calls go on the same client.
//! Both are reads under the client's one retry table (crate::upstream::retry,
//! [`Repeat::Safe`]).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderName, HeaderValue};

use crate::error::Failure;
use crate::upstream::tls::AgentAddr;
use crate::upstream::{request, Limits, Repeat, UpstreamPool};
use serde_json::Value;
use tokio::sync::Mutex;

use super::*;

/// The outcome of one upstream fetch.
enum Fetched {
    Card(CachedCard),
    NotModified { ttl: Duration },
}

/// A card fetch's failure other than TLS.
fn unavailable(detail: impl Into<String>) -> Failure {
    Failure::UpstreamUnavailable {
        detail: detail.into(),
    }
}

/// A failure of the client's call for the card, as the card's callers are
/// told it: a TLS failure as it is (it names the agent,
/// crate::upstream::tls), anything else unavailable, its detail after
/// `call`.
fn card_failure(call: &str, f: Failure) -> Failure {
    match f {
        Failure::UpstreamTls { .. } => f,
        Failure::UpstreamUnavailable { detail }
        | Failure::BadUpstreamResponse { detail }
        | Failure::OutcomeUnknown { detail, .. }
        | Failure::Internal { detail } => unavailable(format!("{call}: {detail}")),
        Failure::UpstreamTimeout => unavailable(format!("{call}: no answer in time")),
        other => unavailable(format!("{call}: {}", other.client_message())),
    }
}

/// A header of the proxy's own request (values the proxy composes, or the
/// agent's own ETag given back).
fn header(name: HeaderName, value: &str) -> Result<(HeaderName, HeaderValue), Failure> {
    let value = HeaderValue::from_str(value).map_err(|_| Failure::Internal {
        detail: format!("{name} value not sendable"),
    })?;
    Ok((name, value))
}

/// Fetches and caches the upstream card.
pub struct CardCache {
    upstream: HttpUrl,
    /// Sent as `A2A-Version` on the fetch: the configured upstream version,
    /// or 1.0 in auto mode (a v0.3 agent ignores it, a v1.0 agent needs it).
    send_version: Version,
    /// Each call's: the connect and read timeouts, the whole answer
    /// within the read timeout, at most the card size, a read.
    limits: Limits,
    default_ttl: Duration,
    /// The app's upstream client, shared with its translated calls.
    pool: Arc<UpstreamPool>,
    /// The copy held: read on every call, so a short lock never held
    /// across an await.
    slot: std::sync::Mutex<Option<Arc<CachedCard>>>,
    /// Held by the one call refetching the card: the others wait for it
    /// when they have no copy to use, else take the stale copy at once.
    fetching: Mutex<()>,
    /// The agent's interfaces from the card held (area: paths).
    pub endpoints: crate::card::endpoints::EndpointsMemo,
    /// What `/ready` last found (the card could be had, or why not).
    pub readiness: super::ReadyLog,
}

impl CardCache {
    /// A cache fetching on `pool`. TLS failures name the agent its
    /// addresses carry (crate::upstream::tls::AgentAddr).
    pub fn new(
        upstream: HttpUrl,
        send_version: Version,
        connect_timeout: Duration,
        read_timeout: Duration,
        default_ttl: Duration,
        pool: Arc<UpstreamPool>,
    ) -> CardCache {
        CardCache {
            upstream,
            send_version,
            limits: Limits {
                connect_timeout,
                read_timeout,
                answer_timeout: read_timeout,
                max_body: MAX_CARD_BYTES,
                repeat: Repeat::Safe,
            },
            default_ttl,
            pool,
            slot: std::sync::Mutex::new(None),
            fetching: Mutex::new(()),
            endpoints: Default::default(),
            readiness: Default::default(),
        }
    }

    /// The cached card if fresh, else a (conditional) refetch. With
    /// `allow_stale`, a failed refetch falls back to the old copy.
    /// The error is for the operator (it names addresses): never send it to
    /// a client; [`CardCache::get_or_fail`] gives the failure itself.
    pub async fn get(&self, addr: AgentAddr, allow_stale: bool) -> Result<Arc<CachedCard>, String> {
        self.get_or_fail(addr, allow_stale)
            .await
            .map_err(|f| f.operator_text())
    }

    /// [`CardCache::get`], its failure as the client is told it: a TLS
    /// failure toward an https:// agent names the agent and the kind
    /// (crate::upstream::tls), anything else is unavailable.
    pub async fn get_or_fail(
        &self,
        addr: AgentAddr,
        allow_stale: bool,
    ) -> Result<Arc<CachedCard>, Failure> {
        let held = self.held();
        if let Some(c) = held.as_ref().filter(|c| c.is_fresh(Instant::now())) {
            return Ok(c.clone());
        }
        // One refetch at a time. A caller that may use a stale copy does
        // not wait for another's refetch (a slow agent card must not stall
        // every call behind it); one that may not waits. Either takes what
        // a refetch just finished left, if it is fresh.
        let _fetching = match (&held, allow_stale) {
            (Some(old), true) => match self.fetching.try_lock() {
                Ok(g) => g,
                Err(_) => return Ok(old.clone()),
            },
            _ => self.fetching.lock().await,
        };
        let held = self.held();
        if let Some(c) = held.as_ref().filter(|c| c.is_fresh(Instant::now())) {
            return Ok(c.clone());
        }
        let etag = held.as_ref().and_then(|c| c.etag.clone());
        // The card fetch's span (crate::telemetry), a child of the call's.
        let span = tracing::debug_span!(
            target: "a2a_call",
            "card fetch",
            otel.name = "card fetch",
            otel.kind = "internal",
            otel.status_code = tracing::field::Empty,
            a2a.card_cached = held.is_some(),
        );
        let fetched = {
            use tracing::Instrument;
            self.fetch(&addr, etag.as_deref())
                .instrument(span.clone())
                .await
        };
        if fetched.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        drop(span);
        match fetched {
            Ok(Fetched::Card(mut card)) => {
                // The same bytes again: changed no later than when first held.
                if let Some(old) = held.as_ref().filter(|o| o.raw == card.raw) {
                    if !card.agent_modified {
                        card.modified = old.modified;
                    }
                }
                Ok(self.keep(card))
            }
            Ok(Fetched::NotModified { ttl }) => match held {
                Some(old) => {
                    let mut renewed = (*old).clone();
                    renewed.fetched = Instant::now();
                    renewed.ttl = ttl;
                    Ok(self.keep(renewed))
                }
                None => Err(unavailable(
                    "upstream answered 304 to an unconditional card fetch",
                )),
            },
            Err(e) => match held {
                Some(old) if allow_stale => {
                    tracing::warn!(error = ?e, "card refetch failed; serving the stale copy");
                    Ok(old)
                }
                _ => Err(e),
            },
        }
    }

    /// The copy held now, fresh or not.
    fn held(&self) -> Option<Arc<CachedCard>> {
        self.slot.lock().map(|s| s.clone()).unwrap_or(None)
    }

    /// Holds `card` as the current copy.
    fn keep(&self, card: CachedCard) -> Arc<CachedCard> {
        let card = Arc::new(card);
        if let Ok(mut s) = self.slot.lock() {
            *s = Some(card.clone());
        }
        card
    }

    /// The card held now, fresh or not, without fetching or waiting for a
    /// fetch under way (area: paths).
    pub fn peek(&self) -> Option<Arc<CachedCard>> {
        self.held()
    }

    /// A GetTask the proxy makes for its own needs (a subscription's first
    /// Task, a ListTasks page, a push snapshot's start): `method` on `path`
    /// (relative to the agent's base), `body` when given, on behalf of a
    /// caller with its `caller` headers as crate::forward lets them go
    /// (`forward::caller_headers`, or a ListTasks caller's credentials;
    /// a `Host` among them names the interface asked). The
    /// answer's status and body, at most the card size. A read, so asked
    /// once more when its connection ended before any answer
    /// (crate::upstream::retry).
    pub async fn call_json_as(
        &self,
        addr: AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
        caller: &[(HeaderName, HeaderValue)],
    ) -> Result<(u16, Bytes), Failure> {
        // The `Host` of the interface asked, when the caller names it.
        let host = caller.iter().find(|(k, _)| k == http::header::HOST);
        let host = host.and_then(|(_, v)| v.to_str().ok().map(str::to_string));
        let mut head = vec![
            header(
                http::header::HOST,
                &host.unwrap_or_else(|| self.upstream.authority()),
            )?,
            header(http::header::ACCEPT, "application/json")?,
            header(HeaderName::from_static("a2a-version"), version.as_str())?,
        ];
        if body.is_some() {
            head.push(header(http::header::CONTENT_TYPE, "application/json")?);
        }
        // The caller's forwarded headers (taken by crate::forward's one
        // rule, which leaves out every per-call name); the head above is
        // this call's own.
        head.extend(
            caller
                .iter()
                .filter(|(k, _)| k != http::header::HOST)
                .cloned(),
        );
        let wire = request(
            method,
            path,
            head.iter().map(|(k, v)| (k, v)),
            body.as_deref(),
        )?;
        let answer = self.pool.call(addr, &wire, self.limits).await?;
        Ok((answer.status, answer.body))
    }

    /// The card's GET, with `If-None-Match` when a copy is held, on the
    /// app's upstream client: a read, asked once more when its connection
    /// ended before any answer (crate::upstream::retry).
    async fn fetch(&self, addr: &AgentAddr, etag: Option<&str>) -> Result<Fetched, Failure> {
        const CALL: &str = "card fetch";
        let path = format!("{}{}", self.upstream.base_path, CARD_PATH);
        let mut head = vec![
            header(http::header::HOST, &self.upstream.authority())?,
            header(http::header::ACCEPT, "application/json")?,
            header(
                HeaderName::from_static("a2a-version"),
                self.send_version.as_str(),
            )?,
        ];
        if let Some(tag) = etag {
            head.push(header(http::header::IF_NONE_MATCH, tag)?);
        }
        let wire = request("GET", &path, head.iter().map(|(k, v)| (k, v)), None)?;
        let answer = self
            .pool
            .call(addr.clone(), &wire, self.limits)
            .await
            .map_err(|f| card_failure(CALL, f))?;
        let header = |name: HeaderName| {
            answer
                .headers
                .iter()
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v.to_str().ok())
                .map(str::to_string)
        };
        let ttl = ttl_from_cache_control(
            header(http::header::CACHE_CONTROL).as_deref(),
            self.default_ttl,
        );
        let new_etag = header(http::header::ETAG);
        let modified = header(http::header::LAST_MODIFIED)
            .and_then(|v| parse_http_date(&v, std::time::SystemTime::now()));
        match answer.status {
            304 => Ok(Fetched::NotModified { ttl }),
            200 => card_of(answer.body, new_etag, ttl, modified),
            status => Err(unavailable(format!(
                "{CALL}: upstream answered HTTP {status}"
            ))),
        }
    }
}

/// The fetched bytes as a card held for `ttl`: a JSON object, or a
/// failure naming what it was instead.
fn card_of(
    raw: Bytes,
    etag: Option<String>,
    ttl: Duration,
    modified: Option<std::time::SystemTime>,
) -> Result<Fetched, Failure> {
    let json: Value = serde_json::from_slice(&raw)
        .map_err(|e| unavailable(format!("card fetch: not JSON: {e}")))?;
    if !json.is_object() {
        return Err(unavailable("card fetch: card is not a JSON object"));
    }
    Ok(Fetched::Card(CachedCard {
        version: card_version(&json),
        raw,
        json,
        etag,
        fetched: Instant::now(),
        ttl,
        modified: modified.unwrap_or_else(std::time::SystemTime::now),
        agent_modified: modified.is_some(),
    }))
}
