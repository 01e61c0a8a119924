//! Several agents on one HTTP listener (issue #23): [`Front`] is the
//! pingora [`ProxyHttp`] of the listener. Its first hook picks the
//! request's agent once ([`crate::agents::Router`]: `Host`, then the
//! longest path prefix) and keeps the choice in the request's [`Ctx`];
//! every hook then runs that agent's [`ProxyService`]. What belongs to no
//! agent is answered here: the proxy's own `/health`, `/ready` and
//! `/metrics` (every agent's counters) when there are several agents, and
//! a 404 naming the host and path no agent is served at.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, Result};
use serde_json::{json, Value};
use tracing::Instrument;

use super::*;
use crate::agents::{Router, GLOBAL_PATHS};
use crate::local::LocalResponse;
use crate::metrics::{Metrics, RequestLabels};
use crate::route::Binding;

/// The agents one listener serves, in config order, and how a request
/// picks one: swapped whole by a reload (crate::reload), while each call
/// keeps the set it started with (in its [`Ctx`]).
pub struct AgentSet {
    agents: Vec<ProxyService>,
    router: Router,
    /// The one agent serves every host and path (a file without
    /// `[[agents]]`): everything is its, as with one agent always.
    sole: bool,
}

impl AgentSet {
    /// The set of `apps` (at least one), in config order.
    pub fn new(apps: &[Arc<App>]) -> AgentSet {
        let routes: Vec<_> = apps.iter().map(|a| a.config.agent.clone()).collect();
        let sole = routes.len() == 1 && routes[0].prefix.is_empty() && routes[0].hosts.is_empty();
        AgentSet {
            agents: apps
                .iter()
                .map(|app| ProxyService { app: app.clone() })
                .collect(),
            router: Router::new(routes),
            sole,
        }
    }

    /// The agents' states, in config order.
    pub fn apps(&self) -> impl Iterator<Item = &Arc<App>> {
        self.agents.iter().map(|s| &s.app)
    }
}

/// The HTTP listener's hooks: one [`ProxyService`] per agent of the
/// current [`AgentSet`].
pub struct Front {
    set: Arc<arc_swap::ArcSwap<AgentSet>>,
    /// Requests of no agent (rendered with `agent=""`), shared with the
    /// gRPC listeners ([`Metrics::unrouted`]).
    own: Arc<Metrics>,
    /// The listener speaks TLS (the spans' `url.scheme`).
    tls: bool,
}

impl Front {
    /// The front of `apps` (at least one), in config order.
    pub fn new(apps: &[Arc<App>]) -> Front {
        Front {
            set: Arc::new(arc_swap::ArcSwap::from_pointee(AgentSet::new(apps))),
            own: apps[0].metrics.unrouted(),
            tls: apps[0].config.tls.is_some(),
        }
    }

    /// Where a reload puts the listener's next [`AgentSet`].
    pub fn agents(&self) -> Arc<arc_swap::ArcSwap<AgentSet>> {
        self.set.clone()
    }

    /// Every agent's metrics and those of no agent, each line labelled
    /// with its `agent`.
    pub fn metrics_text(&self) -> LocalResponse {
        let set = self.set.load();
        let mut parts: Vec<(String, String)> = set
            .agents
            .iter()
            .map(|s| (s.app.config.agent.name.clone(), s.app.metrics_body()))
            .collect();
        let mut own = self.own.render();
        Metrics::render_process(&mut own);
        parts.push((String::new(), own));
        let parts: Vec<(&str, &str)> = parts
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        crate::metrics::exposition(crate::metrics::label_agents(&parts))
    }

    /// Ready when every agent is (each one's card can be had now).
    async fn ready(&self) -> LocalResponse {
        let current = self.set.load_full();
        let mut set = tokio::task::JoinSet::new();
        for (i, s) in current.agents.iter().enumerate() {
            let app = s.app.clone();
            set.spawn(async move { (i, app.ready().await) });
        }
        let mut answers =
            vec![LocalResponse::json(503, json!({"status": "not ready"})); current.agents.len()];
        while let Some(done) = set.join_next().await {
            if let Ok((i, r)) = done {
                answers[i] = r;
            }
        }
        let mut all = true;
        let mut agents = serde_json::Map::new();
        for (s, r) in current.agents.iter().zip(answers) {
            let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            // Each agent's own readiness logs its changes (App::ready).
            all &= r.status == 200;
            let mut one = json!({"status": body["status"]});
            for k in ["upstreamVersion", "pushStore"] {
                if let Some(v) = body.get(k) {
                    one[k] = v.clone();
                }
            }
            agents.insert(s.app.config.agent.name.clone(), one);
        }
        let (status, word) = if all {
            (200, "ready")
        } else {
            (503, "not ready")
        };
        LocalResponse::json(status, json!({"status": word, "agents": agents}))
    }

    /// The request's agent, or what is answered here instead, and the
    /// path to serve when its dot segments were resolved
    /// ([`crate::agents::dots`]): a path whose dot segments take it to
    /// another agent than its own segments name (`/a/../b/`), or above
    /// the root, is refused.
    fn pick(set: &AgentSet, req: &RequestHeader) -> (Pick, Option<String>) {
        let raw = req.uri.path();
        match crate::agents::dots::resolve(raw) {
            Ok(None) => (Self::pick_at(set, req, raw), None),
            Ok(Some(path)) => {
                let named = Self::pick_at(set, req, raw);
                if Self::pick_at(set, req, &path) != named {
                    let why = "its dot segments climb out of the agent its segments name";
                    return (Pick::BadPath(why), None);
                }
                (named, Some(path))
            }
            Err(bad) => (Pick::BadPath(bad.0), None),
        }
    }

    fn pick_at(set: &AgentSet, req: &RequestHeader, path: &str) -> Pick {
        if set.sole {
            return Pick::Agent(0);
        }
        let get = req.method == http::Method::GET || req.method == http::Method::HEAD;
        if get && GLOBAL_PATHS.contains(&path) {
            return Pick::Own(match path {
                "/health" => Binding::Health,
                "/ready" => Binding::Ready,
                _ => Binding::Metrics,
            });
        }
        let host = req.uri.authority().map(|a| a.as_str()).or_else(|| {
            req.headers
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
        });
        match set.router.pick(host, path) {
            Some(i) => Pick::Agent(i),
            None => Pick::NoAgent,
        }
    }

    /// The request's agent (of the set it started with), or the first
    /// of the current set before one is chosen.
    fn svc(&self, ctx: &Ctx) -> ProxyService {
        let i = ctx.agent.unwrap_or(0);
        let app = match &ctx.agents {
            Some(set) => set.agents[i].app.clone(),
            None => self.set.load().agents[0].app.clone(),
        };
        ProxyService { app }
    }
}

/// The span of one call: disabled (nothing recorded, nothing allocated)
/// unless the log filter enables `a2a_call` at DEBUG
/// (`RUST_LOG=info,a2a_call=debug`). Its `trace_id` is the caller's W3C
/// one when its `traceparent` is well formed.
///
/// With telemetry on (crate::telemetry) it is also the call's OTel server
/// span, whatever the log filter says: the caller's `traceparent` its
/// parent, the HTTP semantic conventions' attributes and `a2a.*` (the
/// A2A method, versions and translation noted with the call's metrics).
fn call_span(req: &RequestHeader, tls: bool) -> tracing::Span {
    use tracing::field::Empty;
    let span = tracing::debug_span!(
        target: "a2a_call",
        "call",
        trace_id = Empty,
        agent = Empty,
        method = %req.method,
        path = Empty,
        status = Empty,
        otel.name = %req.method,
        otel.kind = "server",
        otel.status_code = Empty,
        http.request.method = %req.method,
        url.path = Empty,
        url.scheme = if tls { "https" } else { "http" },
        network.protocol.version = Empty,
        http.response.status_code = Empty,
        error.type = Empty,
        a2a.agent = Empty,
        a2a.method = Empty,
        a2a.client_version = Empty,
        a2a.agent_version = Empty,
        a2a.translated = Empty,
    );
    if !span.is_disabled() {
        let path = crate::agents::echo(req.uri.path());
        span.record("path", path);
        span.record("url.path", crate::telemetry::exported_path(path).as_ref());
        let version = match req.version {
            http::Version::HTTP_2 => "2",
            http::Version::HTTP_10 => "1.0",
            _ => "1.1",
        };
        span.record("network.protocol.version", version);
        if let Some(t) = crate::tracectx::TraceContext::from_headers(&req.headers) {
            span.record("trace_id", t.trace_id());
            crate::telemetry::adopt_parent(&span, &t);
        }
    }
    span
}

/// The call's last attributes, once its answer is out: the status, and
/// the span's name (`POST SendMessage`) now the method is known.
fn close_span(span: &tracing::Span, ctx: &Ctx, method: &str) {
    if span.is_disabled() {
        return;
    }
    let status = ctx.status.unwrap_or(0);
    span.record("status", status);
    if let Some(op) = ctx.route.as_ref().and_then(|r| r.operation) {
        crate::telemetry::rename(span, format!("{method} {}", op.as_str()));
    }
    if status != 0 {
        span.record("http.response.status_code", i64::from(status));
    }
    if status >= 500 || status == 0 {
        span.record("otel.status_code", "ERROR");
        span.record(
            "error.type",
            if status == 0 {
                "aborted".to_string()
            } else {
                status.to_string()
            },
        );
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Pick {
    Agent(usize),
    Own(Binding),
    NoAgent,
    /// A path refused before routing (400), and why.
    BadPath(&'static str),
}

/// The 400 of a path refused before routing.
fn bad_path(why: &str) -> LocalResponse {
    LocalResponse::json(
        400,
        json!({"error": {
            "code": "bad_path",
            "message": format!("the request path is refused: {why}"),
        }}),
    )
}

/// `req`'s URI with `path` in place of its path, its query kept.
fn with_path(req: &RequestHeader, path: &str) -> Option<http::Uri> {
    let pq = match req.uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path.to_string(),
    };
    let mut parts = req.uri.clone().into_parts();
    parts.path_and_query = Some(pq.parse().ok()?);
    http::Uri::from_parts(parts).ok()
}

/// The 404 of a request no agent is served at.
fn no_agent(req: &RequestHeader) -> LocalResponse {
    let host = req
        .uri
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            req.headers
                .get(http::header::HOST)
                .map(|h| String::from_utf8_lossy(h.as_bytes()).into_owned())
        })
        .unwrap_or_default();
    let path = req.uri.path();
    LocalResponse::json(
        404,
        json!({"error": {
            "code": "no_agent",
            "message": "no agent is served at this host and path",
            "host": crate::agents::echo(&host),
            "path": crate::agents::echo(path),
        }}),
    )
}

#[async_trait]
impl ProxyHttp for Front {
    type CTX = Ctx;

    /// When a request arrives on a kept-alive connection (every agent's
    /// hook is the same: the first's runs).
    fn on_connection_reuse(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        prev: Box<dyn std::any::Any + Send + Sync>,
    ) {
        self.svc(ctx).on_connection_reuse(session, ctx, prev)
    }

    /// When a request's head is read: its state, undecided.
    fn new_ctx(&self) -> Ctx {
        Ctx::new()
    }

    /// The first hook of a request, once its head is read: the agent is
    /// chosen here, once, and the call's span opened; what belongs to no
    /// agent is answered here.
    async fn request_filter(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        ctx.span = call_span(session.req_header(), self.tls);
        let span = ctx.span.clone();
        // The agents as they are now: this call keeps them to its end,
        // whatever a reload does meanwhile.
        let set = self.set.load_full();
        let (picked, resolved) = Self::pick(&set, session.req_header());
        let picked = match resolved.map(|p| with_path(session.req_header(), &p)) {
            // Served (and passed on) without its dot segments.
            Some(Some(uri)) => {
                session.req_header_mut().set_uri(uri);
                picked
            }
            Some(None) => Pick::BadPath("it cannot be written without its dot segments"),
            None => picked,
        };
        ctx.agents = Some(set.clone());
        let answer = match picked {
            Pick::Agent(i) => {
                ctx.agent = Some(i);
                let name = set.agents[i].app.config.agent.name.as_str();
                span.record("agent", name);
                span.record("a2a.agent", name);
                return set.agents[i]
                    .request_filter(session, ctx)
                    .instrument(span)
                    .await;
            }
            Pick::Own(binding) => {
                ctx.target.binding = Some(binding.clone());
                match binding {
                    Binding::Health => set.agents[0].app.health(),
                    Binding::Ready => self.ready().await,
                    _ => self.metrics_text(),
                }
            }
            Pick::NoAgent => no_agent(session.req_header()),
            Pick::BadPath(why) => {
                session.set_keepalive(None);
                bad_path(why)
            }
        };
        set.agents[0]
            .respond(session, ctx, answer)
            .instrument(span)
            .await
    }

    /// On pingora's proxy loop, before connecting (the agent's hook).
    async fn upstream_peer(&self, session: &mut Session, ctx: &mut Ctx) -> Result<Box<HttpPeer>> {
        let span = ctx.span.clone();
        self.svc(ctx)
            .upstream_peer(session, ctx)
            .instrument(span)
            .await
    }

    /// On pingora's proxy loop, when the agent cannot be connected to.
    fn fail_to_connect(
        &self,
        session: &mut Session,
        peer: &HttpPeer,
        ctx: &mut Ctx,
        e: Box<Error>,
    ) -> Box<Error> {
        let span = ctx.span.clone();
        span.in_scope(|| self.svc(ctx).fail_to_connect(session, peer, ctx, e))
    }

    /// When pingora's exchange with the agent fails after the connection
    /// was made (the request or the answer broke off).
    fn error_while_proxy(
        &self,
        peer: &HttpPeer,
        session: &mut Session,
        e: Box<Error>,
        ctx: &mut Ctx,
        client_reused: bool,
    ) -> Box<Error> {
        let span = ctx.span.clone();
        span.in_scope(|| {
            self.svc(ctx)
                .error_while_proxy(peer, session, e, ctx, client_reused)
        })
    }

    /// Before pingora sends a passed-through request's head to the agent.
    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        let span = ctx.span.clone();
        self.svc(ctx)
            .upstream_request_filter(session, upstream_request, ctx)
            .instrument(span)
            .await
    }

    /// For each piece of a passed-through request's body.
    async fn request_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<()> {
        let span = ctx.span.clone();
        self.svc(ctx)
            .request_body_filter(session, body, end_of_stream, ctx)
            .instrument(span)
            .await
    }

    /// When the agent's answer head arrives on pingora's proxy loop.
    async fn response_filter(
        &self,
        session: &mut Session,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        let span = ctx.span.clone();
        self.svc(ctx)
            .response_filter(session, resp, ctx)
            .instrument(span)
            .await
    }

    /// For each piece of the agent's answer body on pingora's proxy loop.
    fn response_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<Option<Duration>> {
        let span = ctx.span.clone();
        span.in_scope(|| {
            self.svc(ctx)
                .response_body_filter(session, body, end_of_stream, ctx)
        })
    }

    /// When a request fails with an error.
    async fn fail_to_proxy(&self, session: &mut Session, e: &Error, ctx: &mut Ctx) -> FailToProxy {
        let span = ctx.span.clone();
        self.svc(ctx)
            .fail_to_proxy(session, e, ctx)
            .instrument(span)
            .await
    }

    /// The last hook of every request: the agent's access log and
    /// metrics, or those of no agent.
    async fn logging(&self, session: &mut Session, e: Option<&Error>, ctx: &mut Ctx) {
        let span = std::mem::replace(&mut ctx.span, tracing::Span::none());
        close_span(&span, ctx, session.req_header().method.as_str());
        if ctx.agent.is_some() {
            return self
                .svc(ctx)
                .logging(session, e, ctx)
                .instrument(span)
                .await;
        }
        let _in = span.enter();
        let outcome = outcome_label(ctx, e);
        let binding = binding_label(ctx.target.binding.as_ref());
        tracing::info!(
            target: "access",
            binding,
            agent = "",
            status = ctx.status,
            outcome,
            ms = ctx.started.elapsed().as_millis() as u64,
            "request"
        );
        self.own.record(
            RequestLabels {
                method: "none".into(),
                direction: "local",
                binding,
                outcome: outcome.into(),
            },
            ctx.started.elapsed(),
        );
    }
}
