//! The card cache: the agent's card fetched with pingora's client (bounded
//! in time and size), kept for its max-age, revalidated with ETag /
//! If-None-Match, and the agent's interfaces resolved from it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use pingora::connectors::http::Connector;
use pingora::http::RequestHeader;
use pingora::protocols::http::client::HttpSession;
use pingora::upstreams::peer::HttpPeer;

use crate::error::Failure;
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
    slot: Mutex<Option<Arc<CachedCard>>>,
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
            slot: Mutex::new(None),
            endpoints: Default::default(),
        }
    }

    /// The cached card if fresh, else a (conditional) refetch. With
    /// `allow_stale`, a failed refetch falls back to the old copy.
    pub async fn get(&self, addr: AgentAddr, allow_stale: bool) -> Result<Arc<CachedCard>, String> {
        self.get_or_fail(addr, allow_stale)
            .await
            .map_err(|f| match f {
                Failure::UpstreamUnavailable { detail } => detail,
                other => format!("{other:?}"),
            })
    }

    /// [`CardCache::get`], its failure as the client is told it: a TLS
    /// failure toward an https:// agent names the agent and the kind
    /// (crate::upstream_tls), anything else is unavailable.
    pub async fn get_or_fail(
        &self,
        addr: AgentAddr,
        allow_stale: bool,
    ) -> Result<Arc<CachedCard>, Failure> {
        let mut slot = self.slot.lock().await;
        let now = Instant::now();
        if let Some(c) = slot.as_ref() {
            if c.is_fresh(now) {
                return Ok(c.clone());
            }
        }
        let etag = slot.as_ref().and_then(|c| c.etag.clone());
        match self.fetch(&addr, etag.as_deref()).await {
            Ok(Fetched::Card(card)) => {
                let card = Arc::new(card);
                *slot = Some(card.clone());
                Ok(card)
            }
            Ok(Fetched::NotModified { ttl }) => match slot.as_ref() {
                Some(old) => {
                    let mut renewed = (**old).clone();
                    renewed.fetched = Instant::now();
                    renewed.ttl = ttl;
                    let renewed = Arc::new(renewed);
                    *slot = Some(renewed.clone());
                    Ok(renewed)
                }
                None => Err(unavailable(
                    "upstream answered 304 to an unconditional card fetch",
                )),
            },
            Err(e) => match slot.as_ref() {
                Some(old) if allow_stale => {
                    tracing::warn!(error = ?e, "card refetch failed; serving the stale copy");
                    Ok(old.clone())
                }
                _ => Err(e),
            },
        }
    }

    /// Names the agent in what clients are told of TLS failures.
    pub fn with_agent(mut self, name: &str) -> CardCache {
        self.agent = name.to_string();
        self
    }

    /// The card held now, fresh or not, without fetching or waiting for a
    /// fetch under way (area: paths).
    pub fn peek(&self) -> Option<Arc<CachedCard>> {
        self.slot.try_lock().ok().and_then(|s| s.clone())
    }

    /// The upstream peer with the connect and read timeouts (TLS toward
    /// an `https://` agent: crate::upstream_tls).
    fn peer(&self, addr: &AgentAddr) -> Result<HttpPeer, Failure> {
        crate::upstream_tls::http_peer(addr, self.connect_timeout, self.read_timeout)
    }

    /// POSTs a small JSON body to the upstream (`path` relative to its base)
    /// and returns the status and body; bounded by the connect and read
    /// timeouts and by the card size limit.
    pub async fn post_json(
        &self,
        addr: AgentAddr,
        path: &str,
        version: Version,
        body: Bytes,
    ) -> Result<(u16, Bytes), String> {
        self.call_json(addr, "POST", path, version, Some(body))
            .await
    }

    /// [`CardCache::post_json`] for any method; `None`: no body (a GET).
    pub async fn call_json(
        &self,
        addr: AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
    ) -> Result<(u16, Bytes), String> {
        self.call_json_as(addr, method, path, version, body, &[])
            .await
    }

    /// [`CardCache::call_json`] on behalf of a caller: with its credential
    /// `headers` (`Authorization`, identity headers).
    pub async fn call_json_as(
        &self,
        addr: AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
        headers: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(u16, Bytes), String> {
        let total = self.connect_timeout + self.read_timeout;
        let call = self.call_inner(&addr, method, path, version, body, headers);
        match tokio::time::timeout(total, call).await {
            Ok(r) => r,
            Err(_) => Err(format!("upstream call timed out after {total:?}")),
        }
    }

    async fn call_inner(
        &self,
        addr: &AgentAddr,
        method: &str,
        path: &str,
        version: Version,
        body: Option<Bytes>,
        caller: &[(http::HeaderName, http::HeaderValue)],
    ) -> Result<(u16, Bytes), String> {
        let peer = self
            .peer(addr)
            .map_err(|f| format!("upstream call: {f:?}"))?;
        let err = |what: &str, e: Box<pingora::Error>| format!("upstream call: {what}: {e}");
        let (mut session, _reused) = self
            .connector
            .get_http_session(&peer)
            .await
            .map_err(|e| err("connect", e))?;
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
            .ok_or("upstream call: no response header")?;
        let out = read_body(&mut session, "upstream call", "answer").await?;
        self.connector
            .release_http_session(session, &peer, None)
            .await;
        Ok((status, out))
    }

    /// A card fetch is a read: lost before any answer (the connection
    /// ended after the request was written, or a pooled one failed the
    /// write), it is asked once more, each attempt within the connect and
    /// read timeouts (the upstream client's retry table, crate::unary).
    async fn fetch(&self, addr: &AgentAddr, etag: Option<&str>) -> Result<Fetched, Failure> {
        let total = self.connect_timeout + self.read_timeout;
        let again = AtomicBool::new(false);
        let mut first = true;
        loop {
            match tokio::time::timeout(total, self.fetch_inner(addr, etag, &again)).await {
                Ok(Err(f)) if first && again.swap(false, Ordering::Relaxed) => {
                    tracing::debug!(failure = ?f, "card fetch lost before an answer; asked once more");
                    first = false;
                }
                Ok(r) => return r,
                Err(_) => return Err(unavailable(format!("card fetch timed out after {total:?}"))),
            }
        }
    }

    /// One attempt of [`CardCache::fetch`]; `again` is set when it failed
    /// before any answer in a way a read may be asked again after.
    async fn fetch_inner(
        &self,
        addr: &AgentAddr,
        etag: Option<&str>,
        again: &AtomicBool,
    ) -> Result<Fetched, Failure> {
        let peer = self.peer(addr)?;
        let reused = AtomicBool::new(false);
        let err = |what: &str, e: Box<pingora::Error>| {
            let tls = addr
                .settings()
                .and_then(|s| crate::upstream_tls::pingora_failure(&self.agent, s, &peer, &e));
            if tls.is_none() && lost_before_answer(what, &e, reused.load(Ordering::Relaxed)) {
                again.store(true, Ordering::Relaxed);
            }
            tls.unwrap_or_else(|| unavailable(format!("card fetch: {what}: {e}")))
        };
        let (mut session, was_reused) = self
            .connector
            .get_http_session(&peer)
            .await
            .map_err(|e| err("connect", e))?;
        reused.store(was_reused, Ordering::Relaxed);
        let req = self.card_request(etag).map_err(|(w, e)| err(w, e))?;
        exchange(&mut session, req, None, err).await?;
        let resp = session
            .response_header()
            .ok_or_else(|| unavailable("card fetch: no response header"))?;
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
            return Err(unavailable(format!(
                "card fetch: upstream answered HTTP {status}"
            )));
        }
        let raw = read_body(&mut session, "card fetch", "card")
            .await
            .map_err(unavailable)?;
        self.connector
            .release_http_session(session, &peer, None)
            .await;
        card_of(raw, new_etag, ttl)
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
/// Whether the failure of step `what` (`write`, `read`) of an exchange
/// lost the request before any answer: the connection ended after the
/// write (in doubt; a read may be asked again), or a pooled (`reused`)
/// connection failed the write (the agent got no whole request).
fn lost_before_answer(what: &str, e: &pingora::Error, reused: bool) -> bool {
    use pingora::ErrorType as T;
    match what {
        "write" => reused,
        "read" => matches!(e.etype(), T::ConnectionClosed | T::ReadError),
        _ => false,
    }
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
