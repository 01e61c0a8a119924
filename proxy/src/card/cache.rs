//! The card cache: the agent's card fetched with pingora's client (bounded
//! in time and size), kept for its max-age, revalidated with ETag /
//! If-None-Match, and the agent's interfaces resolved from it. The proxy's
//! own GetTask calls go on the same client. Both are reads under the
//! upstream client's one retry table (crate::unary::retry).

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use pingora::connectors::http::Connector;
use pingora::http::RequestHeader;
use pingora::protocols::http::client::HttpSession;
use pingora::upstreams::peer::HttpPeer;

use crate::error::Failure;
use crate::unary::{Attempts, Lost, Repeat};
use crate::upstream_tls::AgentAddr;
use serde_json::Value;
use tokio::sync::Mutex;

use super::*;

/// The outcome of one upstream fetch.
enum Fetched {
    Card(CachedCard),
    NotModified { ttl: Duration },
}

/// Reads a whole response body of at most [`MAX_CARD_BYTES`]; errors are
/// prefixed with `call` and name the body `what`.
async fn read_body(session: &mut HttpSession, call: &str, what: &str) -> Result<Bytes, String> {
    let mut body = BytesMut::new();
    while let Some(chunk) = session
        .read_response_body()
        .await
        .map_err(|e| format!("{call}: read body: {e}"))?
    {
        if body.len() + chunk.len() > MAX_CARD_BYTES {
            return Err(format!("{call}: {what} larger than {MAX_CARD_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// A card fetch's failure other than TLS.
fn unavailable(detail: impl Into<String>) -> Failure {
    Failure::UpstreamUnavailable {
        detail: detail.into(),
    }
}

/// One attempt's failure as the retry table reads it, and whether the
/// attempt ran on a pooled connection.
struct Failed {
    lost: Lost,
    reused: bool,
}

/// A failure after (or without) the agent's answer: final.
fn answered(failure: Failure) -> Failed {
    Failed {
        lost: Lost::Answered(failure),
        reused: false,
    }
}

/// Fetches and caches the upstream card.
pub struct CardCache {
    upstream: HttpUrl,
    /// The agent's config name, for TLS failures (crate::upstream_tls).
    agent: String,
    /// Sent as `A2A-Version` on the fetch: the configured upstream version,
    /// or 1.0 in auto mode (a v0.3 agent ignores it, a v1.0 agent needs it).
    send_version: Version,
    connect_timeout: Duration,
    read_timeout: Duration,
    default_ttl: Duration,
    connector: Connector,
    /// The copy held: read on every call, so a short lock never held
    /// across an await.
    slot: std::sync::Mutex<Option<Arc<CachedCard>>>,
    /// Held by the one call refetching the card: the others wait for it
    /// when they have no copy to use, else take the stale copy at once.
    fetching: Mutex<()>,
    /// The agent's interfaces from the card held (area: paths).
    pub endpoints: crate::endpoints::EndpointsMemo,
}

impl CardCache {
    pub fn new(
        upstream: HttpUrl,
        send_version: Version,
        connect_timeout: Duration,
        read_timeout: Duration,
        default_ttl: Duration,
    ) -> CardCache {
        CardCache {
            upstream,
            agent: "default".into(),
            send_version,
            connect_timeout,
            read_timeout,
            default_ttl,
            connector: Connector::new(None),
            slot: std::sync::Mutex::new(None),
            fetching: Mutex::new(()),
            endpoints: Default::default(),
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
    /// (crate::upstream_tls), anything else is unavailable.
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
        // every call behind it); one that may not waits, then takes what
        // that refetch left if it is fresh.
        let _fetching = match (&held, allow_stale) {
            (Some(old), true) => match self.fetching.try_lock() {
                Ok(g) => g,
                Err(_) => return Ok(old.clone()),
            },
            _ => {
                let g = self.fetching.lock().await;
                if let Some(c) = self.held().filter(|c| c.is_fresh(Instant::now())) {
                    return Ok(c);
                }
                g
            }
        };
        let held = self.held();
        let etag = held.as_ref().and_then(|c| c.etag.clone());
        match self.fetch(&addr, etag.as_deref()).await {
            Ok(Fetched::Card(card)) => Ok(self.keep(card)),
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

    /// Names the agent in what clients are told of TLS failures.
    pub fn with_agent(mut self, name: &str) -> CardCache {
        self.agent = name.to_string();
        self
    }

    /// The card held now, fresh or not, without fetching or waiting for a
    /// fetch under way (area: paths).
    pub fn peek(&self) -> Option<Arc<CachedCard>> {
        self.held()
    }

    /// The upstream peer with the connect and read timeouts (TLS toward
    /// an `https://` agent: crate::upstream_tls).
    fn peer(&self, addr: &AgentAddr) -> Result<HttpPeer, Failure> {
        crate::upstream_tls::http_peer(addr, self.connect_timeout, self.read_timeout)
    }

    /// A GetTask the proxy makes for its own needs (a subscription's first
    /// Task, a ListTasks page, a push snapshot's start): `method` on `path`
    /// (relative to the agent's base), `body` when given, on behalf of a
    /// caller with its credential `headers` (`Authorization`, identity
    /// headers; a `Host` among them names the interface asked). The
    /// answer's status and body, at most the card size. A read, so retried
    /// as one ([`CardCache::as_read`]).
    pub async fn call_json_as(
        &self,
        addr: AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
        headers: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(u16, Bytes), Failure> {
        let once = || self.call_once(&addr, method, path, version, body.clone(), headers);
        self.as_read("upstream call", once).await
    }

    /// A read under the upstream client's retry table
    /// (crate::unary::retry, [`Repeat::Safe`]): an attempt lost before any
    /// answer (the connection ended after the request was written, or a
    /// pooled one failed the write) is made once more on a new
    /// connection; an answer, a refused connect, a TLS failure or no
    /// answer in time is final. Each attempt within the connect and read
    /// timeouts.
    async fn as_read<T, Fut>(&self, call: &str, attempt: impl Fn() -> Fut) -> Result<T, Failure>
    where
        Fut: std::future::Future<Output = Result<T, Failed>>,
    {
        let total = self.connect_timeout + self.read_timeout;
        let mut attempts = Attempts::new(Repeat::Safe);
        loop {
            let (lost, reused) = match tokio::time::timeout(total, attempt()).await {
                Ok(Ok(t)) => return Ok(t),
                Ok(Err(Failed { lost, reused })) => (lost, reused),
                Err(_) => {
                    let failure = unavailable(format!("{call} timed out after {total:?}"));
                    let lost = Lost::InDoubt {
                        failure,
                        timed_out: true,
                    };
                    (lost, false)
                }
            };
            attempts.next(lost, reused)?;
        }
    }

    /// The failure of step `what` (`connect`, `request`, `header`, `write`,
    /// `read`) of one attempt of `call` toward `peer`, as the retry table
    /// reads it: a TLS failure names the agent (crate::upstream_tls) and
    /// is final; a failed connect or write sent no whole request; a read
    /// that found the connection ended (or no answer in time) after the
    /// write is in doubt; anything else is final.
    fn failed(
        &self,
        addr: &AgentAddr,
        peer: &HttpPeer,
        (call, what): (&str, &str),
        e: Box<pingora::Error>,
        reused: bool,
    ) -> Failed {
        use pingora::ErrorType as T;
        let tls = addr
            .settings()
            .and_then(|s| crate::upstream_tls::pingora_failure(&self.agent, s, peer, &e));
        let lost = match tls {
            Some(tls) => Lost::Answered(tls),
            None => {
                let failure = unavailable(format!("{call}: {what}: {e}"));
                match (what, e.etype()) {
                    ("connect" | "write", _) => Lost::NotSent(failure),
                    ("read", T::ConnectionClosed | T::ReadError) => Lost::InDoubt {
                        failure,
                        timed_out: false,
                    },
                    ("read", T::ReadTimedout) => Lost::InDoubt {
                        failure,
                        timed_out: true,
                    },
                    _ => Lost::Answered(failure),
                }
            }
        };
        Failed { lost, reused }
    }

    /// A session toward `peer` (pooled when one is idle) and whether it
    /// was pooled.
    async fn session(
        &self,
        addr: &AgentAddr,
        peer: &HttpPeer,
        call: &str,
    ) -> Result<(HttpSession, bool), Failed> {
        self.connector
            .get_http_session(peer)
            .await
            .map_err(|e| self.failed(addr, peer, (call, "connect"), e, false))
    }

    /// One attempt of [`CardCache::call_json_as`].
    async fn call_once(
        &self,
        addr: &AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
        caller: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(u16, Bytes), Failed> {
        const CALL: &str = "upstream call";
        let peer = self.peer(addr).map_err(answered)?;
        let (mut session, reused) = self.session(addr, &peer, CALL).await?;
        let err = |what: &str, e| self.failed(addr, &peer, (CALL, what), e, reused);
        let mut req =
            RequestHeader::build(method, path.as_bytes(), None).map_err(|e| err("request", e))?;
        // The `Host` of the interface asked, when the caller names it.
        let host = caller.iter().find(|(k, _)| k == http::header::HOST);
        let host = host.and_then(|(_, v)| v.to_str().ok().map(str::to_string));
        let mut headers = vec![
            ("Host", host.unwrap_or_else(|| self.upstream.authority())),
            ("Accept", "application/json".to_string()),
            ("A2A-Version", version.as_str().to_string()),
        ];
        if let Some(b) = &body {
            headers.push(("Content-Type", "application/json".to_string()));
            headers.push(("Content-Length", b.len().to_string()));
        }
        for (k, v) in headers {
            req.insert_header(k, v).map_err(|e| err("header", e))?;
        }
        // Only what goes end to end (crate::forward): the head above is
        // this call's own.
        for (k, v) in caller
            .iter()
            .filter(|(k, _)| crate::forward::end_to_end(k.as_str()))
        {
            req.append_header(k.clone(), v.clone())
                .map_err(|e| err("header", e))?;
        }
        exchange(&mut session, req, body, err).await?;
        let status = session
            .response_header()
            .map(|r| r.status.as_u16())
            .ok_or_else(|| answered(unavailable("upstream call: no response header")))?;
        let out = read_body(&mut session, CALL, "answer")
            .await
            .map_err(|e| answered(unavailable(e)))?;
        self.connector
            .release_http_session(session, &peer, None)
            .await;
        Ok((status, out))
    }

    /// The card, asked as a read ([`CardCache::as_read`]).
    async fn fetch(&self, addr: &AgentAddr, etag: Option<&str>) -> Result<Fetched, Failure> {
        self.as_read("card fetch", || self.fetch_once(addr, etag))
            .await
    }

    /// One attempt of [`CardCache::fetch`].
    async fn fetch_once(&self, addr: &AgentAddr, etag: Option<&str>) -> Result<Fetched, Failed> {
        const CALL: &str = "card fetch";
        let peer = self.peer(addr).map_err(answered)?;
        let (mut session, reused) = self.session(addr, &peer, CALL).await?;
        let err = |what: &str, e| self.failed(addr, &peer, (CALL, what), e, reused);
        let req = self.card_request(etag).map_err(|(w, e)| err(w, e))?;
        exchange(&mut session, req, None, err).await?;
        let resp = session
            .response_header()
            .ok_or_else(|| answered(unavailable("card fetch: no response header")))?;
        let status = resp.status.as_u16();
        let header = |name: &str| {
            resp.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let ttl = ttl_from_cache_control(header("cache-control").as_deref(), self.default_ttl);
        let new_etag = header("etag");
        if status == 304 {
            self.connector
                .release_http_session(session, &peer, None)
                .await;
            return Ok(Fetched::NotModified { ttl });
        }
        if status != 200 {
            let f = unavailable(format!("card fetch: upstream answered HTTP {status}"));
            return Err(answered(f));
        }
        let raw = read_body(&mut session, CALL, "card")
            .await
            .map_err(|e| answered(unavailable(e)))?;
        self.connector
            .release_http_session(session, &peer, None)
            .await;
        card_of(raw, new_etag, ttl).map_err(answered)
    }

    /// The card's GET, with `If-None-Match` when a copy is held; on a
    /// failure, the step that failed and why.
    fn card_request(
        &self,
        etag: Option<&str>,
    ) -> Result<RequestHeader, (&'static str, Box<pingora::Error>)> {
        let path = format!("{}{}", self.upstream.base_path, CARD_PATH);
        let mut req =
            RequestHeader::build("GET", path.as_bytes(), None).map_err(|e| ("request", e))?;
        let headers = [
            ("Host", self.upstream.authority()),
            ("Accept", "application/json".to_string()),
            ("A2A-Version", self.send_version.as_str().to_string()),
        ];
        for (k, v) in headers {
            req.insert_header(k, v).map_err(|e| ("header", e))?;
        }
        if let Some(tag) = etag {
            req.insert_header("If-None-Match", tag.to_string())
                .map_err(|e| ("header", e))?;
        }
        Ok(req)
    }
}

/// The fetched bytes as a card held for `ttl`: a JSON object, or a
/// failure naming what it was instead.
fn card_of(raw: Bytes, etag: Option<String>, ttl: Duration) -> Result<Fetched, Failure> {
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
    }))
}

/// Sends `req` (with `body`, if any) on `session` and reads the answer's
/// head; a step's pingora error goes through `err` with the step's name
/// (`write` or `read`).
async fn exchange<E>(
    session: &mut HttpSession,
    req: RequestHeader,
    body: Option<Bytes>,
    err: impl Fn(&str, Box<pingora::Error>) -> E,
) -> Result<(), E> {
    session
        .write_request_header(Box::new(req))
        .await
        .map_err(|e| err("write", e))?;
    if let Some(b) = body {
        session
            .write_request_body(b, true)
            .await
            .map_err(|e| err("write", e))?;
    }
    session
        .finish_request_body()
        .await
        .map_err(|e| err("write", e))?;
    session
        .read_response_header()
        .await
        .map_err(|e| err("read", e))?;
    Ok(())
}
