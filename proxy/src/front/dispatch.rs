//! Routing one request: answered here, passed to pingora's proxy loop, or
//! handed to a call of the proxy's own (see [`super::ctx::Kind`]).

use bytes::Bytes;
use pingora::proxy::Session;
use pingora::Result;
use serde_json::Value;

use super::*;
use crate::call::{Local, Plan, Prelude, PushStep};
use crate::codec::{ClientRequest, Codec, HttpCodec, JsonRpcCodec, OverHttp};
use crate::error::Failure;
use crate::local::LocalResponse;
use crate::route::{self, Binding, RequestInfo, Route};
use crate::version::Version;

/// Pingora replays at most 64 KiB of a body it did not pass on as it came
/// (its retry buffer): a JSON-RPC body within it, announced by its
/// `Content-Length`, is read before admission and may still go through
/// pingora's proxy loop; a larger one is read after admission and goes
/// through a call of our own.
pub(crate) const PREBUFFER_LIMIT: usize = 64 * 1024;

/// Whether a REST message body may hold an inline push config, under any
/// spelling an agent reads (`push::names`).
pub(crate) fn carries_push_config(body: &[u8]) -> bool {
    crate::push::names::may_name_push_config(body)
}

/// A cross-version request's push config under the spec's names of the
/// client's version (`push::names`), before it is translated: a
/// ProtoJSON or snake_case spelling would otherwise cross as an unknown
/// member, unseen by the push layer, and be read by the agent. The body
/// to translate when a member was renamed. `jsonrpc`: `body` is a JSON-RPC
/// request (else a v1.0 REST body, the params themselves).
pub(super) fn client_push_names(
    plan: &Plan,
    body: &[u8],
    jsonrpc: bool,
) -> std::result::Result<Option<Vec<u8>>, Failure> {
    use crate::push::{names, rewrite};
    use translate::method::Method;
    if !plan.translates() || !rewrite::registers(plan.op) {
        return Ok(None);
    }
    let create = plan.op == Method::CreatePushConfig;
    if !create && !names::may_name_push_config(body) {
        return Ok(None);
    }
    let mut v = crate::json_strict::value(body)?;
    let params = if jsonrpc {
        v.get_mut("params")
    } else {
        Some(&mut v)
    };
    let Some(params) = params else {
        return Ok(None);
    };
    let renamed = names::canonicalize(plan.op, plan.client, params)
        .map_err(crate::push::layer::invalid_params)?;
    if !renamed {
        return Ok(None);
    }
    serde_json::to_vec(&v)
        .map(Some)
        .map_err(|e| Failure::Internal {
            detail: e.to_string(),
        })
}

/// The protocol a request asks to upgrade to, unless upgrades are allowed
/// (`upstream.allow_upgrade`) or it is `h2c` (which pingora does not
/// take up: the request is served as HTTP/1.1).
fn refused_upgrade(headers: &http::HeaderMap, allowed: bool) -> Option<String> {
    if allowed {
        return None;
    }
    let asked: Vec<&str> = headers
        .get_all(http::header::UPGRADE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    let other = asked.iter().any(|p| !p.eq_ignore_ascii_case("h2c"));
    let undecodable = headers
        .get_all(http::header::UPGRADE)
        .iter()
        .any(|v| v.to_str().is_err());
    (other || undecodable).then(|| asked.join(", "))
}

/// What routing reads of a request before deciding.
pub(super) struct Incoming {
    pub(super) method: http::Method,
    /// The path under the public base path.
    pub(super) path: String,
    pub(super) query: Option<String>,
    pub(super) headers: http::HeaderMap,
    pub(super) length: Option<usize>,
    /// A JSON-RPC body, read whole before routing.
    pub(super) body: Option<Bytes>,
    /// Pingora can send that body on itself (it fits its replay buffer:
    /// [`PREBUFFER_LIMIT`]); else only a call of our own can.
    pub(super) replayable: bool,
    /// Pingora's view: the request is not known to have no body.
    pub(super) body_expected: bool,
    /// Its `method` member.
    pub(super) rpc_method: Option<String>,
}

impl Incoming {
    /// Whether the request has a body to read (a length over 0, chunks,
    /// or an HTTP/2 stream not ended with its headers).
    pub(super) fn announces_body(&self) -> bool {
        self.body_expected
    }

    fn info(&self) -> RequestInfo<'_> {
        RequestInfo {
            method: &self.method,
            path: &self.path,
            rest_path: Some(&self.path),
            query: self.query.as_deref(),
            headers: &self.headers,
            jsonrpc_method: self.rpc_method.as_deref(),
        }
    }
}

/// A whole JSON-RPC request whose `method` names no A2A operation.
fn no_a2a_method(rpc_method: Option<&str>, body: &[u8], up: Version) -> Failure {
    let invalid = |code, message| Failure::Translate { code, message };
    match (rpc_method, serde_json::from_slice::<Value>(body)) {
        (Some(m), _) => invalid(-32601, format!("method not found: {m}")),
        (None, Ok(Value::Array(_))) => invalid(
            -32600,
            format!(
                "JSON-RPC batches are not translated between A2A versions \
                 (this agent speaks {up}): send each request on its own"
            ),
        ),
        (None, Ok(_)) => invalid(-32600, "not a JSON-RPC request (no `method`)".into()),
        (None, Err(e)) => invalid(-32700, format!("invalid JSON: {e}")),
    }
}

/// Notes a located route in `ctx` (the error target too): the route, or
/// VersionNotSupported in the dialect the client is answered in.
fn note_routed(
    ctx: &mut Ctx,
    routed: &std::result::Result<Route, route::RouteError>,
) -> std::result::Result<Route, Failure> {
    match routed {
        Ok(r) => {
            ctx.note_route(r);
            Ok(r.clone())
        }
        Err(e) => {
            ctx.note_route(&Route {
                client_version: e.render_version,
                client_protocol: crate::version::ProtocolVersion::of(e.render_version),
                binding: e.binding.clone(),
                operation: e.operation,
                params: Default::default(),
                version_conflict: false,
            });
            let requested = e.unsupported.0.clone();
            Err(Failure::VersionNotSupported { requested })
        }
    }
}

/// The agent path of a JSON-RPC request at `path` (relative to the
/// public base), without its query: where routing sends it (area: paths).
fn jsonrpc_path(
    app: &crate::app::App,
    dest: Option<&crate::card::endpoints::Dest>,
    path: &str,
) -> String {
    match dest {
        Some(d) => d
            .path_and_query
            .split_once('?')
            .map_or(d.path_and_query.clone(), |(p, _)| p.to_string()),
        None => app.upstream_path_and_query(path, None),
    }
}

/// The agent URL of a JSON-RPC request at `path`: its interface's
/// scheme, host and port, and [`jsonrpc_path`] (area: paths).
fn jsonrpc_url(
    app: &crate::app::App,
    dest: Option<&crate::card::endpoints::Dest>,
    path: &str,
) -> crate::config::HttpUrl {
    let url = dest.map_or(&app.config.upstream, |d| &d.url);
    crate::config::HttpUrl {
        base_path: jsonrpc_path(app, dest, path),
        ..url.clone()
    }
}

/// A same-version JSON-RPC call nothing rewrites: a call of our own sends
/// the body routing read as it came, and hands the answer on as it comes
/// ([`Mode::Relay`]; a `stream` as an SSE stream). It costs less than
/// pingora's proxy loop, which writes the request's head and body in
/// separate sends and replays the body from its retry buffer: the hop
/// measured side by side (`bench/hop.sh`, bench/RESULTS.md).
fn pass_on(ctx: &mut Ctx, inc: Incoming, stream: bool) -> bool {
    match inc.body {
        Some(body) => {
            let mode = if stream { Mode::Stream } else { Mode::Relay };
            ctx.own_call(OwnCall::new(mode, Some(body)))
        }
        None => false,
    }
}

/// A subscription's first event as a result: `{"task": task}`.
pub(super) fn task_event(task: &Value) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "task": task })).unwrap_or_default()
}

/// How a call of our own answers an operation: streamed or whole.
pub(super) fn mode_for(op: translate::method::Method) -> Mode {
    if op.is_streaming() {
        Mode::Stream
    } else {
        Mode::Unary
    }
}

impl ProxyService {
    /// Routes a request: answers it here, leaves it to pingora's proxy
    /// (`Ok(false)`), or names the call of our own that answers it
    /// ([`Ctx::own_call`]). A JSON-RPC body is read whole (within
    /// `limits.max_body_bytes`) before anything is decided: its method
    /// decides the route.
    pub(crate) async fn route_request(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        // HTTP/2 bodies come without a length: only the stream's end says
        // there is none.
        let body_expected = !session.as_mut().is_body_empty();
        let req = session.req_header();
        let mut inc = Incoming {
            method: req.method.clone(),
            path: app.relative_path(req.uri.path()).to_string(),
            query: req.uri.query().map(str::to_string),
            headers: req.headers.clone(),
            length: content_length(req),
            body: None,
            replayable: false,
            body_expected,
            rpc_method: None,
        };
        if let Some(proto) = refused_upgrade(&inc.headers, app.config.allow_upgrade) {
            // On pingora's proxy loop an agent's 101 would hand the client
            // a raw tunnel to it.
            session.set_keepalive(None);
            let r = LocalResponse::json(
                400,
                serde_json::json!({"error": {
                    "code": "upgrade_refused",
                    "message": format!(
                        "protocol upgrades ({}) are not served for this agent",
                        crate::agents::echo(&proto)
                    ),
                }}),
            );
            return self.respond(session, ctx, r).await;
        }
        if let Some(push) = app.push.clone() {
            if inc.method == http::Method::POST {
                if let Some(id) = inc.path.strip_prefix(crate::ids::CALLBACK_PREFIX) {
                    let id = id.to_string();
                    let body = (inc.length, inc.body_expected);
                    return self.push_callback(session, ctx, &push, &id, body).await;
                }
            }
        }
        let too_large = inc
            .length
            .is_some_and(|n| n > app.config.limits.max_body_bytes);
        // A small JSON-RPC body is read before admission, so that even a
        // refusal names the request's id; any other after it.
        let small = inc.length.is_some_and(|n| n <= PREBUFFER_LIMIT);
        let route = match self
            .classify(session, ctx, &mut inc, !too_large && small)
            .await?
        {
            Ok(route) => route,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        if let Some(f) = self.admit(session, ctx, &route, too_large) {
            return self.respond_failure(session, ctx, f).await;
        }
        let unread = route.binding == Binding::JsonRpc && inc.body.is_none();
        let route = if unread && !too_large && inc.announces_body() {
            match self.classify(session, ctx, &mut inc, true).await? {
                Ok(route) => route,
                Err(f) => return self.respond_failure(session, ctx, f).await,
            }
        } else {
            route
        };
        // A2A 1.N: a minor newer than what is served here (route::refused_minor).
        if let Err(f) = app.check_minor(&route).await {
            return self.respond_failure(session, ctx, f).await;
        }
        match route.binding {
            Binding::Health | Binding::Ready | Binding::Metrics | Binding::AgentCard { .. } => {
                self.route_local(session, ctx, &route, &inc).await
            }
            Binding::JsonRpc => self.route_jsonrpc(session, ctx, &route, inc).await,
            Binding::Rest => match route.operation {
                Some(op) => self.route_rest(session, ctx, &route, op, inc).await,
                None => Ok(false),
            },
            // Non-A2A paths go through untouched.
            Binding::Other => Ok(false),
        }
    }

    /// The request's route ([`route::classify`]); a JSON-RPC body not read
    /// yet is read first when `read` allows, so that its method decides
    /// (a body over the limit is PayloadTooLarge). An unsupported
    /// `A2A-Version` is VersionNotSupported. Fills the error target,
    /// `ctx.route` and `ctx.dest`.
    async fn classify(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        inc: &mut Incoming,
        read: bool,
    ) -> Result<std::result::Result<Route, Failure>> {
        // Which of the agent's interfaces, and its agent URL (route::locate);
        // the local endpoints ask the agent for nothing first.
        let upstream = &self.app.config.upstream;
        let ends = match route::local_endpoint(&inc.method, &inc.path) {
            Some(_) => std::sync::Arc::new(crate::card::endpoints::Endpoints::fallback(upstream)),
            None => self.app.endpoints().await,
        };
        let (mut routed, mut dest) = route::locate(&inc.info(), &ends, upstream);
        let is_jsonrpc = match &routed {
            Ok(r) => r.binding == Binding::JsonRpc,
            Err(e) => e.binding == Binding::JsonRpc,
        };
        if read && is_jsonrpc && inc.body.is_none() && inc.announces_body() {
            if let Err(f) = self.read_jsonrpc(session, ctx, inc).await? {
                let _ = note_routed(ctx, &routed);
                return Ok(Err(f));
            }
            (routed, dest) = route::locate(&inc.info(), &ends, upstream);
        }
        ctx.dest = Some(dest);
        let route = note_routed(ctx, &routed);
        if route.as_ref().is_ok_and(|r| r.version_conflict) {
            tracing::debug!(method = ?inc.rpc_method, "A2A-Version disagrees with the JSON-RPC method; the method wins");
        }
        Ok(route)
    }

    /// Admission: local endpoints stay answerable under load, everything
    /// else counts against `limits.max_connections`; a body too large by
    /// its own account is refused before a byte of it is read.
    fn admit(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        route: &Route,
        too_large: bool,
    ) -> Option<Failure> {
        let app = &self.app;
        let local = matches!(
            route.binding,
            Binding::Health | Binding::Ready | Binding::Metrics
        );
        if !local {
            if !app.enter() {
                session.set_keepalive(None);
                let limit = app.config.limits.max_connections;
                return Some(Failure::Overloaded { limit });
            }
            ctx.entered = true;
        }
        if too_large {
            session.set_keepalive(None);
            let limit = app.config.limits.max_body_bytes;
            return Some(Failure::PayloadTooLarge { limit });
        }
        None
    }

    /// Health, readiness, metrics and the well-known card: answered here.
    async fn route_local(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        route: &Route,
        inc: &Incoming,
    ) -> Result<bool> {
        let app = &self.app;
        let r = match route.binding {
            Binding::Health => app.health(),
            Binding::Ready => app.ready().await,
            Binding::Metrics => app.metrics_text(),
            _ => {
                let inm = inc
                    .headers
                    .get(http::header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok());
                // No version asked (header or query): the hybrid card.
                let asked = route::version_value(&inc.headers, inc.query.as_deref())
                    .map(|_| route.client_version);
                match app.serve_card(asked, inm).await {
                    Ok(r) => r,
                    Err(f) => return self.respond_failure(session, ctx, f).await,
                }
            }
        };
        self.respond(session, ctx, r).await
    }

    /// A JSON-RPC request, its body read whole before routing: by its
    /// method.
    async fn route_jsonrpc(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        route: &Route,
        inc: Incoming,
    ) -> Result<bool> {
        if route.operation.is_none() && inc.body.is_none() && inc.length == Some(0) {
            return Ok(false);
        }
        let up = match self.app.upstream_version().await {
            Ok(up) => up,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        ctx.upstream_version = Some(up);
        if let Some(op) = route.operation {
            return self.jsonrpc_call(session, ctx, route, op, up, inc).await;
        }
        // No A2A method. Same version: the upstream answers itself.
        // Across versions: answer in the caller's dialect (EDGE-CASES 3).
        if up == route.client_version {
            return Ok(pass_on(ctx, inc, false));
        }
        let body = inc.body.unwrap_or_default();
        let f = no_a2a_method(inc.rpc_method.as_deref(), &body, up);
        self.respond_failure(session, ctx, f).await
    }

    /// A JSON-RPC call of an A2A operation, read whole before routing.
    async fn jsonrpc_call(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        route: &Route,
        op: translate::method::Method,
        up: Version,
        inc: Incoming,
    ) -> Result<bool> {
        let app = &self.app;
        let (body, method, path) = (inc.body.clone(), inc.rpc_method.clone(), inc.path.as_str());
        // Read before routing already (no second copy of the head).
        let caller_headers = &inc.headers;
        let plan = Plan::new(op, route.client_version, up, app.push.as_deref());
        if !plan.translates() {
            let intercepted = match &body {
                Some(body) => self.same_version_push(&plan, body).await,
                None => Ok(None),
            };
            return match intercepted {
                // Its config swapped for the callback, its answer restored.
                Ok(Some(own)) => Ok(ctx.own_call(own)),
                Ok(None) => Ok(pass_on(ctx, inc, op.is_streaming())),
                Err(f) => self.respond_failure(session, ctx, f).await,
            };
        }
        let (Some(body), Some(method)) = (body, method) else {
            let f = Failure::CannotTranslate {
                client: plan.client,
                upstream: up,
            };
            return self.respond_failure(session, ctx, f).await;
        };
        if let Some(f) = bad_id(&mut ctx.target) {
            return self.respond_failure(session, ctx, f).await;
        }
        if plan.asks_push_config() {
            if let Some(f) = plan.refuse_push_config(app.agent_pushes().await) {
                return self.respond_failure(session, ctx, f).await;
            }
        }
        if plan.local == Some(Local::ListTasks) {
            let id = ctx.target.jsonrpc_id.clone();
            let caller = app.tasks.caller(caller_headers);
            let url = jsonrpc_url(app, ctx.dest.as_ref(), path);
            return match list_tasks_locally(app, url, &body, id, &caller).await {
                Ok(r) => self.respond(session, ctx, r).await,
                Err(f) => self.respond_failure(session, ctx, f).await,
            };
        }
        let body = match client_push_names(&plan, &body, true) {
            Ok(Some(renamed)) => Bytes::from(renamed),
            Ok(None) => body,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        let id = ctx.target.jsonrpc_id.clone();
        let mut codec = JsonRpcCodec::new(plan.client, up, method, id);
        let mut own = OwnCall::new(mode_for(op), None);
        let req = ClientRequest {
            body: &body,
            params: &route.params,
            query: inc.query.as_deref(),
        };
        let prepared = match codec.encode_request(req) {
            Ok(new_body) => {
                let codec = &codec;
                self.jsonrpc_prelude(ctx, &mut own, &plan, (&inc, codec), &body, new_body)
                    .await
            }
            Err(f) => Err(f),
        };
        match prepared {
            Ok(new_body) => {
                own.body = Some(Bytes::from(new_body));
                own.codec = Some(HttpCodec::JsonRpc(codec));
                own.plan = Some(plan);
                Ok(ctx.own_call(own))
            }
            Err(f) => self.respond_failure(session, ctx, f).await,
        }
    }

    /// What a translated JSON-RPC call needs before it is sent (the
    /// plan's prelude and push interception, left in `own`): the body to
    /// send.
    async fn jsonrpc_prelude(
        &self,
        ctx: &Ctx,
        own: &mut OwnCall,
        plan: &Plan,
        (inc, codec): (&Incoming, &JsonRpcCodec),
        body: &[u8],
        mut new_body: Vec<u8>,
    ) -> std::result::Result<Vec<u8>, Failure> {
        let app = &self.app;
        // Only a prelude or the push fold asks the agent with them.
        let caller = || crate::forward::caller_headers(&inc.headers);
        let agent_url = jsonrpc_url(app, ctx.dest.as_ref(), &inc.path);
        let via = || crate::app::TaskFetch::JsonRpc(agent_url.clone());
        if plan.prelude == Some(Prelude::FirstTask) {
            let req: Option<Value> = serde_json::from_slice(body).ok();
            let task_id = req.as_ref().and_then(|r| r.pointer("/params/id")?.as_str());
            if let Some(task_id) = task_id {
                let frame = |task: &Value| codec.result_event(&task_event(task));
                let first = first_task_frame(app, &via(), task_id, &caller(), frame).await?;
                if let Some(first) = first {
                    own.start_relay(first, app.config.limits.max_event_bytes);
                }
            }
        }
        let Some(push) = app.push.as_deref().filter(|_| plan.intercepts_push()) else {
            return Ok(new_body);
        };
        if plan.push == PushStep::InterceptDelete {
            own.push_delete = crate::push::layer::delete_target(plan.client, body);
        }
        let (changed, mut pending) = push
            .register(plan.op, plan.client, plan.upstream, &new_body)
            .await?;
        if let Some(b) = changed {
            new_body = b;
        }
        seed_push_fold(app, push, plan.op, &mut pending, via(), &caller()).await;
        own.push = Some(pending);
        Ok(new_body)
    }
}
