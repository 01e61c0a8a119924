//! The pingora [`ProxyHttp`] implementation. Each hook only gathers what it
//! needs from the session and delegates to [`crate::app`], [`crate::route`]
//! and [`crate::error`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorSource, ErrorType, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::app::{App, LocalResponse};
use crate::error::{ErrorTarget, Failure};
use crate::metrics::RequestLabels;
use crate::route::{self, Binding, RequestInfo, Route};
use crate::sse::{SseFramer, TooLarge, OFFLOAD_EVENT_BYTES};
use crate::translation::RpcTranslation;

/// Bodies up to this size are read before routing (pingora replays at most
/// 64 KiB from its retry buffer, and one read may return up to 64 KiB, so
/// only a body announced by `Content-Length` within the limit is read).
const PREBUFFER_LIMIT: usize = 64 * 1024;

/// How the response body is treated.
enum RespRewrite {
    /// Forwarded as it arrives.
    Pass,
    /// A whole JSON body, translated at its end.
    Json(BytesMut),
    /// A whole JSON body, translated at its end and sent as one SSE frame
    /// (see [`crate::translation::RpcTranslation::json_answer_as_sse`]).
    JsonAsSse(BytesMut),
    /// An SSE stream, translated event by event.
    Sse {
        framer: SseFramer,
        tr: Arc<EventTranslation>,
    },
}

/// How each event of a translated stream is rewritten. Owned, so a large
/// event can be translated away from the I/O workers.
#[derive(Debug)]
/// Each carries the caller's ListTasks scope (its tasks are recorded for it).
enum EventTranslation {
    Rpc(RpcTranslation, crate::tasks::Scope),
    Rest(
        crate::rest::RestTranslation,
        Option<route::Operation>,
        crate::tasks::Scope,
    ),
}

impl EventTranslation {
    fn of(ctx: &Ctx, scope: crate::tasks::Scope) -> Option<EventTranslation> {
        if let Some(rpc) = &ctx.rpc {
            return Some(EventTranslation::Rpc(rpc.clone(), scope));
        }
        let (t, _) = ctx.rest.as_ref()?;
        let op = ctx.route.as_ref().and_then(|r| r.operation);
        Some(EventTranslation::Rest(t.clone(), op, scope))
    }

    /// Where the Task sits in one of its events (see [`with_first_frame`]).
    fn task_pointer(&self) -> &'static str {
        match self {
            EventTranslation::Rpc(..) => "/result/task",
            EventTranslation::Rest(..) => "/task",
        }
    }

    /// The inline push config a JSON-RPC stream's first event settles.
    fn take_created(
        &self,
        push: &mut Option<crate::push::layer::Pending>,
    ) -> Option<crate::push::layer::Pending> {
        match self {
            EventTranslation::Rpc(..) => push.take().filter(|p| p.created.is_some()),
            EventTranslation::Rest(..) => None,
        }
    }

    /// Renders one framed event with its data in the client's version; a
    /// v1.0 client's tasks are recorded, and a config registered inline
    /// learns its task from the stream's first event (the event unchanged).
    fn rewrite(
        &self,
        app: &App,
        event: &[u8],
        created: &mut Option<crate::push::layer::Pending>,
        out: &mut Vec<u8>,
    ) {
        match self {
            EventTranslation::Rpc(rpc, scope) => {
                let mut f = |data: &str| {
                    let out = rpc.event(data);
                    if rpc.client == crate::version::Version::V10 {
                        app.tasks.record(*scope, &rpc.method, out.as_bytes());
                        app.relay.publish_envelope(&rpc.method, out.as_bytes());
                    }
                    if let (Some(push), Some(p)) = (app.push.as_deref(), created.take()) {
                        let _ = push.restore(rpc.client, out.as_bytes(), &p);
                    }
                    out
                };
                crate::sse::rewrite_event(event, &mut f, out);
            }
            EventTranslation::Rest(t, op, scope) => {
                let mut f = |data: &str| {
                    let out = t.event(data);
                    if let (crate::version::Version::V10, Some(op)) = (t.client, op) {
                        app.tasks.record_result(*scope, op.as_str(), out.as_bytes());
                        app.relay.publish_result(op.as_str(), out.as_bytes());
                    }
                    out
                };
                crate::sse::rewrite_event(event, &mut f, out);
            }
        }
    }
}

/// Feeds one piece of an upstream stream (and its end) to the framer.
fn frame(
    framer: &mut SseFramer,
    piece: Option<&[u8]>,
    end: bool,
    events: &mut Vec<Bytes>,
) -> std::result::Result<(), TooLarge> {
    if let Some(p) = piece {
        framer.push(p, events)?;
    }
    if end {
        framer.finish(events)?;
    }
    Ok(())
}

/// Holds a piece of a whole answer to translate, unless the answer went
/// past `limit`: then nothing more is held (`over` is set).
fn hold(buf: &mut BytesMut, piece: Option<Bytes>, limit: usize, over: &mut bool) {
    let Some(b) = piece else { return };
    if *over || buf.len() + b.len() > limit {
        *over = true;
        *buf = BytesMut::new();
        return;
    }
    buf.extend_from_slice(&b);
}

/// The error that replaces a whole answer over `limit`, in the client's
/// version and binding: never the agent's bytes untranslated.
fn over_limit(ctx: &mut Ctx, limit: usize) -> Bytes {
    let f = Failure::BadUpstreamResponse {
        detail: format!("answer over the limit of {limit} bytes"),
    };
    tracing::warn!(failure = f.label(), error = ?f, "agent answer too large to translate");
    let r = LocalResponse::failure(&f, &ctx.target);
    ctx.answer_status = Some(r.status);
    ctx.failure = Some(f);
    r.body
}

/// What one translated piece of a stream leaves: an inline config not yet
/// settled waits for the next event, the v1.0 first Task goes ahead of the
/// first bytes, and an event over the limit ends the stream, the events
/// before it going out ahead of the error frame (see `fail_to_proxy`).
fn settle_piece(
    ctx: &mut Ctx,
    tr: &EventTranslation,
    created: Option<crate::push::layer::Pending>,
    out: Vec<u8>,
    framed: std::result::Result<(), TooLarge>,
) -> Result<Bytes> {
    if created.is_some() {
        // No whole event yet.
        ctx.push = created;
    }
    let out = with_first_frame(&mut ctx.first_frame, out, tr.task_pointer());
    if let Err(TooLarge { limit }) = framed {
        ctx.unsent = Some(Bytes::from(out));
        ctx.failure = Some(Failure::BadUpstreamResponse {
            detail: format!("a stream event over the limit of {limit} bytes"),
        });
        return Error::e_explain(
            ErrorType::Custom("stream event too large"),
            "an upstream SSE event over limits.max_event_bytes",
        );
    }
    Ok(Bytes::from(out))
}

/// Per-request state.
pub struct Ctx {
    started: Instant,
    route: Option<Route>,
    target: ErrorTarget,
    /// Counted in `App::enter`.
    entered: bool,
    /// Request body bytes seen so far.
    body_seen: usize,
    /// The response is an SSE stream (counted as open).
    stream_open: bool,
    status: Option<u16>,
    /// What went wrong, when the proxy answered with an error itself.
    failure: Option<Failure>,
    /// The upstream's version, once known (sent as its `A2A-Version`).
    upstream_version: Option<crate::version::Version>,
    /// Set when the client's and the upstream's versions differ.
    rpc: Option<RpcTranslation>,
    /// The translated request body, sent in place of the original.
    new_req_body: Option<Bytes>,
    /// A cross-version body too large to read before routing, held back
    /// until its end, then translated and sent chunked.
    accumulate: Option<BytesMut>,
    resp: RespRewrite,
    /// A cross-version REST call: its translation and upstream request.
    rest: Option<(crate::rest::RestTranslation, crate::rest::UpstreamRequest)>,
    /// A v1.0 SubscribeToTask through a v0.3 agent: the current Task as the
    /// stream's first event (v1.0 requires it; v0.3 agents start with updates).
    first_frame: Option<Bytes>,
    /// That subscribe's relayed subscription, until the agent's answer shows
    /// whether it streams (crate::tasks::relay).
    relay: Option<crate::tasks::relay::Watch>,
    /// Push configs this request may carry back (subscriber values to restore).
    push: Option<crate::push::layer::Pending>,
    /// A push-config delete: (task id, config id) to forget once it succeeded.
    push_delete: Option<(String, String)>,
    /// A same-version JSON-RPC call intercepted by the push layer
    /// (`push.intercept_same_version`): body swapped, answer restored, both
    /// in the one version.
    same_version_push: bool,
    /// The call of our own that answers this request, once routed.
    own_call: Option<OwnCall>,
    /// The status a translated whole answer must go out with instead of the
    /// agent's (its translation failed: 502).
    answer_status: Option<u16>,
    /// Translated stream bytes that precede a failure: written ahead of the
    /// error frame.
    unsent: Option<Bytes>,
    /// A whole answer to translate went past `limits.max_event_bytes`: it
    /// is no longer held, and an error goes out in its place.
    body_over: bool,
}

/// A call the proxy makes itself instead of pingora's proxy loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OwnCall {
    /// Answered whole, with a length.
    Unary,
    /// An SSE stream, handed on as it arrives.
    Stream,
}

impl Ctx {
    /// A v1.0 subscribe's first Task `frame`, and the subscription that
    /// serves it should the agent refuse the resubscribe.
    fn start_relay(
        &mut self,
        frame: Bytes,
        sub: Option<crate::tasks::relay::Subscription>,
        app: &App,
    ) {
        let limit = app.config.limits.max_event_bytes;
        self.relay = sub.map(|s| crate::tasks::relay::Watch::new(s, limit));
        self.first_frame = Some(frame);
    }

    /// Routing's answer for a request one of our calls answers: the call
    /// runs once routing's future is gone (see `request_filter`).
    fn own_call(&mut self, call: OwnCall) -> bool {
        self.own_call = Some(call);
        true
    }
}

/// The proxy service: a thin adapter from pingora's hooks to [`App`].
pub struct ProxyService {
    pub app: Arc<App>,
}

/// The two members of a JSON-RPC request the router needs.
#[derive(Deserialize)]
struct Envelope {
    method: Option<String>,
    id: Option<Value>,
}

/// A request id JSON-RPC 2.0 does not allow (only a string, a number or
/// null): InvalidRequest, answered with a null id.
fn bad_id(target: &mut ErrorTarget) -> Option<Failure> {
    if matches!(
        target.jsonrpc_id,
        None | Some(Value::String(_) | Value::Number(_) | Value::Null)
    ) {
        return None;
    }
    target.jsonrpc_id = None;
    Some(Failure::Translate {
        code: -32600,
        message: "invalid request: `id` must be a string, a number or null".into(),
    })
}

fn content_length(req: &RequestHeader) -> Option<usize> {
    req.headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A v1.0 client's `ListTasks` toward a v0.3 agent, answered per caller
/// (`caller`: the request's credentials) from [`crate::tasks::TaskIndex`],
/// the page's tasks asked of the agent with those credentials.
async fn list_tasks_locally(
    app: &Arc<App>,
    path: &str,
    body: &[u8],
    id: Option<Value>,
    caller: &crate::tasks::Caller,
) -> std::result::Result<LocalResponse, Failure> {
    let req: Value = serde_json::from_slice(body).map_err(|e| Failure::Translate {
        code: -32700,
        message: format!("invalid JSON: {e}"),
    })?;
    let via = crate::app::TaskFetch::JsonRpc(app.upstream_path_and_query(path, None));
    let result = app.list_tasks_via(caller, req.get("params"), via).await?;
    let env = serde_json::json!({"jsonrpc": "2.0", "id": id, "result": result});
    Ok(LocalResponse::json(200, env))
}

/// What the proxy learned of a task, asking a v0.3 agent for it, before
/// subscribing a v1.0 client to it.
enum FirstTask {
    /// The task as the stream's first event (`data:` frame), and why it
    /// cannot be subscribed to when it is finished (v1.0 refuses that); the
    /// subscription that relays what follows (crate::tasks::relay).
    Known(
        Bytes,
        Option<String>,
        Option<crate::tasks::relay::Subscription>,
    ),
    /// The agent does not know the task of this id.
    NotFound(String),
}

impl FirstTask {
    /// The task (v1.0 JSON) as a first event, framed by `frame`.
    fn of(
        task: &Value,
        frame: impl FnOnce(&Value) -> Value,
        mut sub: Option<crate::tasks::relay::Subscription>,
    ) -> FirstTask {
        let state = task.pointer("/status/state").and_then(Value::as_str);
        let terminal = state.filter(|s| crate::tasks::is_terminal(s));
        let refusal = terminal.map(|state| {
            let id = task.get("id").and_then(Value::as_str).unwrap_or_default();
            format!("task {id} is in the terminal state {state}: there is nothing to subscribe to")
        });
        let event = frame(task);
        if let Some(s) = sub.as_mut() {
            s.starts_at(task);
        }
        let sub = sub.filter(|_| refusal.is_none());
        FirstTask::Known(Bytes::from(format!("data: {event}\n\n")), refusal, sub)
    }

    /// The answer to the subscribe when the proxy gives it itself: a
    /// finished task is UnsupportedOperation, an unknown one TaskNotFound;
    /// otherwise the first frame to send.
    fn refusal(self) -> Result<(Bytes, Option<crate::tasks::relay::Subscription>), Failure> {
        use translate::code::ErrorCode;
        match self {
            FirstTask::Known(frame, None, sub) => Ok((frame, sub)),
            FirstTask::Known(_, Some(message), _) => Err(Failure::Translate {
                code: ErrorCode::UnsupportedOperation.code(),
                message,
            }),
            FirstTask::NotFound(task_id) => Err(Failure::Translate {
                code: ErrorCode::TaskNotFound.code(),
                message: format!("task not found: {task_id}"),
            }),
        }
    }
}

/// The current task, fetched with a v0.3 `tasks/get`, for a v1.0
/// SubscribeToTask stream; `None` when the agent does not say (its own
/// answer to the subscribe then tells the client why).
async fn first_task_frame(
    app: &App,
    path: &str,
    body: &[u8],
    id: Option<Value>,
    caller: &[(http::HeaderName, http::HeaderValue)],
) -> Option<FirstTask> {
    let req: Value = serde_json::from_slice(body).ok()?;
    let task_id = req.pointer("/params/id")?.as_str()?.to_string();
    let via = crate::app::TaskFetch::JsonRpc(app.upstream_path_and_query(path, None));
    first_task(
        app,
        &via,
        &task_id,
        caller,
        |task| serde_json::json!({"jsonrpc": "2.0", "id": id, "result": {"task": task}}),
    )
    .await
}

/// What [`first_task_frame`] and [`first_task_frame_rest`] share: the
/// task fetched `via` a binding with the `caller`'s end-to-end headers
/// (crate::forward), its event framed by `frame`.
async fn first_task(
    app: &App,
    via: &crate::app::TaskFetch,
    task_id: &str,
    caller: &[(http::HeaderName, http::HeaderValue)],
    frame: impl FnOnce(&Value) -> Value,
) -> Option<FirstTask> {
    use crate::app::FetchedTask;
    // Opened before the prelude, so nothing relayed meanwhile is missed;
    // kept only when the agent answers this caller the task.
    let sub = app.relay.subscribe(task_id);
    match app.fetch_v03_task(via, task_id, caller, None).await {
        FetchedTask::Task(task) => Some(FirstTask::of(&task, frame, sub)),
        FetchedTask::NotFound => Some(FirstTask::NotFound(task_id.to_string())),
        FetchedTask::Unknown => {
            tracing::debug!("could not fetch the task for the first SubscribeToTask event");
            None
        }
    }
}

/// A config a v0.3 client creates for a task a v1.0 agent already runs:
/// its fold starts at the task as the agent has it now (fetched before the
/// agent learns the callback, so before its first push), not at nothing.
async fn seed_push_fold(
    app: &App,
    push: &crate::push::layer::Push,
    op: route::Operation,
    pending: &mut crate::push::layer::Pending,
    via: crate::app::TaskFetch,
    caller: &[(http::HeaderName, http::HeaderValue)],
) {
    let Some(task_id) = crate::push::layer::Push::seed_task(op, pending) else {
        return;
    };
    match app.fetch_v10_task(&via, task_id, caller).await {
        Some(task) => push.seed_snapshot(pending, task).await,
        None => tracing::debug!("no current task to start a v0.3 push snapshot from"),
    }
}

/// True when the first `data:` line of translated SSE output is a v1.0
/// event carrying a whole Task.
/// Whether a JSON-RPC answer is an error.
fn answer_is_error(out: &[u8]) -> bool {
    serde_json::from_slice::<Value>(out)
        .map(|v| v.get("error").is_some())
        .unwrap_or(true)
}

/// The REST twin of [`first_task_frame`]: the v0.3 agent's task over its
/// REST GetTask, as the first v1.0 `StreamResponse` event.
/// Also tells a terminal task (a v0.3 REST agent breaks off such a stream
/// without a word, a2a-python 0.3 does) and an unknown one (404).
async fn first_task_frame_rest(
    app: &App,
    task_id: &str,
    caller: &[(http::HeaderName, http::HeaderValue)],
) -> Option<FirstTask> {
    let via = crate::app::TaskFetch::Rest;
    first_task(
        app,
        &via,
        task_id,
        caller,
        |task| serde_json::json!({ "task": task }),
    )
    .await
}

/// Puts `first` (a Task event) ahead of the first translated SSE bytes of a
/// v1.0 stream, unless their first event is a Task already: at `task` (a
/// JSON pointer: `/result/task` in a JSON-RPC envelope, `/task` over REST).
fn with_first_frame(first: &mut Option<Bytes>, out: Vec<u8>, task: &str) -> Vec<u8> {
    if out.is_empty() {
        return out;
    }
    let Some(first) = first.take() else {
        return out;
    };
    let text = String::from_utf8_lossy(&out);
    let is_task = text
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .and_then(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .is_some_and(|v| v.pointer(task).is_some_and(Value::is_object));
    if is_task {
        return out;
    }
    let mut both = first.to_vec();
    both.extend_from_slice(&out);
    both
}

fn binding_label(b: Option<&Binding>) -> &'static str {
    match b {
        Some(Binding::JsonRpc) => "jsonrpc",
        Some(Binding::Rest) => "rest",
        Some(Binding::Health) => "health",
        Some(Binding::Ready) => "ready",
        Some(Binding::Metrics) => "metrics",
        Some(Binding::AgentCard { .. }) => "card",
        Some(Binding::Other) | None => "other",
    }
}

/// Maps a pingora error to the failure the client is told about; `None`
/// when the client is gone.
fn failure_of(e: &Error) -> Option<Failure> {
    use ErrorType::*;
    let detail = e.to_string();
    Some(match (e.etype(), e.esource()) {
        (ConnectTimedout, _) => Failure::UpstreamTimeout,
        (ConnectRefused | ConnectNoRoute | ConnectError | SocketError, _) => {
            Failure::UpstreamUnavailable { detail }
        }
        (ReadTimedout | WriteTimedout, ErrorSource::Upstream) => Failure::UpstreamTimeout,
        (InvalidHTTPHeader | H1Error | H2Error | InvalidH2, ErrorSource::Upstream) => {
            Failure::BadUpstreamResponse { detail }
        }
        (_, ErrorSource::Upstream) => Failure::UpstreamUnavailable { detail },
        (
            ReadError | WriteError | ConnectionClosed | ReadTimedout | WriteTimedout,
            ErrorSource::Downstream,
        ) => return None,
        (_, ErrorSource::Downstream) => Failure::BadRequest { detail },
        (_, ErrorSource::Internal | ErrorSource::Unset) => Failure::Internal { detail },
    })
}

/// The next piece of the client's request body, within
/// `limits.body_timeout` of the request's start: a client that trickles
/// its body (a slow POST) is cut off, its connection closed.
async fn body_chunk(
    session: &mut Session,
    started: Instant,
    body_timeout: Duration,
) -> Result<Option<Bytes>> {
    let deadline = tokio::time::Instant::from_std(started + body_timeout);
    match tokio::time::timeout_at(deadline, session.read_request_body()).await {
        Ok(r) => r,
        Err(_) => Err(body_too_slow(session)),
    }
}

/// A request body not whole within `limits.body_timeout`: the client's
/// fault, its connection not kept.
fn body_too_slow(session: &mut Session) -> Box<Error> {
    session.set_keepalive(None);
    let mut e = Error::explain(
        ErrorType::ReadTimedout,
        "request body not received within limits.body_timeout_ms",
    );
    e.as_down();
    e
}

impl ProxyService {
    /// Writes a local response; always "already responded".
    async fn respond(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        r: LocalResponse,
    ) -> Result<bool> {
        let mut h = ResponseHeader::build(r.status, Some(r.headers.len() + 1))?;
        for (k, v) in &r.headers {
            h.insert_header(*k, v.as_str())?;
        }
        if r.status != 304 {
            h.set_content_length(r.body.len())?;
        }
        ctx.status = Some(r.status);
        let empty = r.body.is_empty();
        session.write_response_header(Box::new(h), empty).await?;
        if !empty {
            session.write_response_body(Some(r.body), true).await?;
        }
        Ok(true)
    }

    async fn respond_failure(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        f: Failure,
    ) -> Result<bool> {
        let r = LocalResponse::failure(&f, &ctx.target);
        tracing::info!(
            failure = f.label(),
            status = r.status,
            "answered with an error"
        );
        ctx.failure = Some(f);
        self.respond(session, ctx, r).await
    }

    /// Reads a small JSON-RPC body (retry-buffered, so pingora replays it
    /// upstream byte for byte) and returns it with its method and id.
    /// `POST /a2a-proxy/push/<id>`: a notification from the agent.
    async fn push_callback(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        push: &crate::push::layer::Push,
        id: &str,
        length: Option<usize>,
    ) -> Result<bool> {
        let limit = self.app.config.limits.max_body_bytes;
        let too_large = || {
            LocalResponse::json(
                413,
                serde_json::json!({"error": format!("body exceeds {limit} bytes")}),
            )
        };
        if length.is_some_and(|n| n > limit) {
            session.set_keepalive(None);
            return self.respond(session, ctx, too_large()).await;
        }
        let mut buf = BytesMut::new();
        let body_timeout = self.app.config.limits.body_timeout;
        while let Some(chunk) = body_chunk(session, ctx.started, body_timeout).await? {
            if buf.len() + chunk.len() > limit {
                session.set_keepalive(None);
                return self.respond(session, ctx, too_large()).await;
            }
            buf.extend_from_slice(&chunk);
        }
        let headers = session.req_header().headers.clone();
        let r = push.accept(id, &headers, buf.freeze()).await;
        self.respond(session, ctx, r).await
    }

    async fn sniff_jsonrpc(
        &self,
        session: &mut Session,
        expected: usize,
        started: Instant,
    ) -> Result<(Bytes, Option<String>, Option<Value>)> {
        session.enable_retry_buffering();
        let mut buf = BytesMut::with_capacity(expected);
        let body_timeout = self.app.config.limits.body_timeout;
        while let Some(chunk) = body_chunk(session, started, body_timeout).await? {
            buf.extend_from_slice(&chunk);
            if buf.len() > expected {
                break;
            }
        }
        let (method, id) = match serde_json::from_slice::<Envelope>(&buf) {
            Ok(env) => (env.method, env.id),
            Err(_) => (None, None),
        };
        Ok((buf.freeze(), method, id))
    }
}

impl ProxyService {
    /// The whole request body, for a call of our own, within
    /// `limits.max_body_bytes`: past it, PayloadTooLarge (and the client's
    /// connection is not kept, its body unread).
    async fn read_whole_body(
        &self,
        session: &mut Session,
        started: Instant,
    ) -> Result<std::result::Result<Bytes, Failure>> {
        let limit = self.app.config.limits.max_body_bytes;
        let body_timeout = self.app.config.limits.body_timeout;
        let mut buf = BytesMut::new();
        while let Some(chunk) = body_chunk(session, started, body_timeout).await? {
            if buf.len() + chunk.len() > limit {
                session.set_keepalive(None);
                return Ok(Err(Failure::PayloadTooLarge { limit }));
            }
            buf.extend_from_slice(&chunk);
        }
        Ok(Ok(buf.freeze()))
    }

    /// With `push.intercept_same_version`, a same-version push request has
    /// its config swapped for the proxy's callback like a cross-version one.
    async fn same_version_push(
        &self,
        ctx: &mut Ctx,
        op: route::Operation,
        version: crate::version::Version,
        body: &Bytes,
    ) -> std::result::Result<(), Failure> {
        let Some(push) = &self.app.push else {
            return Ok(());
        };
        if !push.intercepts(version, version) || !crate::push::rewrite::concerns(op) {
            return Ok(());
        }
        if op == route::Operation::DeleteTaskPushNotificationConfig {
            ctx.push_delete = crate::push::layer::delete_target(version, body);
        }
        let (changed, pending) = push.register(op, version, version, body).await?;
        ctx.new_req_body = Some(changed.map(Bytes::from).unwrap_or_else(|| body.clone()));
        ctx.push = Some(pending);
        ctx.same_version_push = true;
        Ok(())
    }

    /// The answer of a [`Self::same_version_push`] call: subscriber values
    /// back; a successful delete forgotten.
    fn restore_same_version(&self, ctx: &mut Ctx, out: &mut Vec<u8>) {
        let (Some(push), Some(v)) = (&self.app.push, ctx.upstream_version) else {
            return;
        };
        if let Some(p) = &ctx.push {
            if let Some(b) = push.restore(v, out, p) {
                *out = b;
            }
        }
        if let Some((t, c)) = ctx.push_delete.take() {
            if ctx.status == Some(200) && !answer_is_error(out) {
                push.forget(t, c);
            }
        }
    }

    /// The end of an accumulated cross-version body: now the method is
    /// known. A method of the upstream's own version goes through as it is
    /// (the method wins over the header, see `route`).
    fn translate_accumulated(
        &self,
        ctx: &mut Ctx,
        whole: Bytes,
    ) -> std::result::Result<Bytes, Failure> {
        let (method, id) = match serde_json::from_slice::<Envelope>(&whole) {
            Ok(env) => (env.method, env.id),
            Err(_) => (None, None),
        };
        ctx.target.jsonrpc_id = id.clone();
        let known = method.as_deref().and_then(route::jsonrpc_method);
        let Some(mut rpc) = ctx.rpc.take() else {
            return Ok(whole);
        };
        if let Some(f) = bad_id(&mut ctx.target) {
            return Err(f);
        }
        let Some((version, op)) = known else {
            if rpc.client == rpc.upstream {
                // Same version by its header and a method of neither
                // version (an extension's): the agent's to answer.
                return Ok(whole);
            }
            return Err(Failure::Translate {
                code: -32601,
                message: format!("method not found: {}", method.unwrap_or_default()),
            });
        };
        ctx.target.version = Some(version);
        ctx.target.operation = Some(op);
        if let Some(r) = ctx.route.as_mut() {
            r.operation = Some(op);
            r.client_version = version;
        }
        if version == rpc.upstream {
            return Ok(whole);
        }
        rpc.client = version;
        rpc.method = method.unwrap_or_default();
        rpc.id = id;
        let out = rpc.request(&whole)?;
        ctx.rpc = Some(rpc);
        Ok(Bytes::from(out))
    }
}

/// An agent's status for a request body it could not read: the cue to
/// try a request's other body form.
fn refuses_form(status: u16) -> bool {
    matches!(status, 400 | 415 | 422 | 500)
}

impl ProxyService {
    /// The whole upstream request (head and body) of a call the proxy
    /// makes itself, with the head `upstream_request_filter` gives it.
    async fn upstream_wire(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<std::result::Result<BytesMut, Failure>> {
        let mut req = session.req_header().clone();
        req.set_version(http::Version::HTTP_11);
        // Hop-by-hop headers (and `proxy-*`) stay here (crate::forward).
        for h in crate::forward::to_strip(&req.headers, false) {
            req.remove_header(&h);
        }
        ProxyHttp::upstream_request_filter(self, session, &mut req, ctx).await?;
        let body = ctx.new_req_body.take().unwrap_or_default();
        // The body goes whole: its length, whatever the client framed.
        req.remove_header(&http::header::TRANSFER_ENCODING);
        if !body.is_empty() || req.headers.contains_key(http::header::CONTENT_LENGTH) {
            req.insert_header(http::header::CONTENT_LENGTH, body.len())?;
        }
        let raw = req.raw_path();
        let target = if raw.starts_with(b"/") {
            raw
        } else {
            req.uri
                .path_and_query()
                .map_or(&b"/"[..], |p| p.as_str().as_bytes())
        };
        if target
            .iter()
            .any(|&b| matches!(b, 0 | b'\n' | b'\r' | b' '))
        {
            return Ok(Err(Failure::BadRequest {
                detail: "request target not sendable".into(),
            }));
        }
        let mut wire = BytesMut::with_capacity(512 + body.len());
        wire.extend_from_slice(req.method.as_str().as_bytes());
        wire.extend_from_slice(b" ");
        wire.extend_from_slice(target);
        wire.extend_from_slice(b" HTTP/1.1\r\n");
        req.header_to_h1_wire(&mut wire);
        wire.extend_from_slice(b"\r\n");
        wire.extend_from_slice(&body);
        Ok(Ok(wire))
    }

    /// The answer to the request's other body form (see
    /// [`crate::rest::UpstreamRequest::other_form`]) when the agent takes
    /// it; `None` when there is none or it is refused too (the first
    /// answer stands).
    async fn other_form_answer(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<Option<crate::unary::Answer>> {
        let Some((_, up)) = ctx.rest.as_mut() else {
            return Ok(None);
        };
        if !up.switch_form() {
            return Ok(None);
        }
        ctx.new_req_body = up.body.clone().map(Bytes::from);
        let Ok(wire) = self.upstream_wire(session, ctx).await? else {
            return Ok(None);
        };
        let app = &self.app;
        let Ok(addr) = app.upstream_addr().await else {
            return Ok(None);
        };
        match app
            .upstream_pool
            .call(addr, &wire, self.call_limits(ctx))
            .await
        {
            Ok(a) if (200..300).contains(&a.status) => {
                let now = !app.rest_other_form_first.fetch_xor(true, Ordering::Relaxed);
                tracing::info!(
                    other_form_first = now,
                    "the agent took a push-config create only in its other body form"
                );
                Ok(Some(a))
            }
            _ => Ok(None),
        }
    }

    /// A v1.0 client's push-config list or delete that a v0.3 agent's REST
    /// binding does not implement (a2a-python 0.3.26 answers 500 and 405;
    /// `status` is what it answered), asked of the same agent's JSON-RPC
    /// binding (its card's JSON-RPC interface, on the configured upstream
    /// address) and answered in the shape of its REST answer, so the
    /// response goes through the REST translation and the push layer as
    /// any other. `None` when it does not apply or that call fails too.
    async fn push_config_over_jsonrpc(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        status: u16,
    ) -> Result<Option<crate::unary::Answer>> {
        use crate::version::Version;
        let Some((t, _)) = &ctx.rest else {
            return Ok(None);
        };
        let op = t.op;
        let method = match op {
            route::Operation::ListTaskPushNotificationConfigs => {
                "tasks/pushNotificationConfig/list"
            }
            route::Operation::DeleteTaskPushNotificationConfig => {
                "tasks/pushNotificationConfig/delete"
            }
            _ => return Ok(None),
        };
        if (t.client, t.upstream) != (Version::V10, Version::V03)
            || !matches!(status, 405 | 500 | 501)
        {
            return Ok(None);
        }
        let Some(params) = ctx.route.as_ref().map(|r| r.params.clone()) else {
            return Ok(None);
        };
        let Some(task_id) = params.task_id else {
            return Ok(None);
        };
        let app = &self.app;
        let Ok(addr) = app.upstream_addr().await else {
            return Ok(None);
        };
        let Some(path) = self.upstream_jsonrpc_path(addr).await else {
            return Ok(None);
        };
        let mut p = serde_json::json!({ "id": task_id });
        if let Some(cid) = params.config_id {
            p["pushNotificationConfigId"] = Value::from(cid);
        }
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": p});
        let body = serde_json::to_vec(&body).unwrap_or_default();
        if let Some((_, up)) = ctx.rest.as_mut() {
            up.method = http::Method::POST;
            up.path_and_query = path;
            up.body = Some(body.clone());
            up.other_form = None;
        }
        ctx.new_req_body = Some(Bytes::from(body));
        let Ok(wire) = self.upstream_wire(session, ctx).await? else {
            return Ok(None);
        };
        let answer = match app
            .upstream_pool
            .call(addr, &wire, self.call_limits(ctx))
            .await
        {
            Ok(a) if a.status == 200 => a,
            _ => return Ok(None),
        };
        let Ok(v) = serde_json::from_slice::<Value>(&answer.body) else {
            return Ok(None);
        };
        let json = |status: u16, v: &Value| crate::unary::Answer {
            status,
            headers: vec![(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            )],
            body: Bytes::from(v.to_string()),
        };
        let out = match (v.get("result"), v.get("error")) {
            (_, Some(e)) => {
                let code = e.get("code").and_then(Value::as_i64);
                let code = code.and_then(translate::code::ErrorCode::from_code);
                let status = code.map_or(500, |c| c.v03_rest_status());
                json(status, e)
            }
            // a2a-python 0.3 leaves a delete's null result out.
            (r, None) => match crate::rest::v03_pb_json(op, r.cloned().unwrap_or(Value::Null)) {
                Ok(b) => json(200, &b),
                Err(_) => return Ok(None),
            },
        };
        tracing::info!(
            method,
            "the agent's REST binding lacks a push-config call: asked over its JSON-RPC binding"
        );
        Ok(Some(out))
    }

    /// The path (under the upstream's base path) of the agent's v0.3
    /// JSON-RPC interface, from its card, when that interface is on the
    /// configured upstream address.
    async fn upstream_jsonrpc_path(&self, addr: std::net::SocketAddr) -> Option<String> {
        let app = &self.app;
        let card = app.cards.get(addr, true).await.ok()?;
        let url = crate::grpc::bridge::jsonrpc_url(&card.json, crate::version::Version::V03)?;
        let uri = url.parse::<http::Uri>().ok()?;
        let up = &app.config.upstream;
        if uri.authority().map(|a| a.as_str()) != Some(up.authority().as_str()) {
            return None;
        }
        let rel = uri.path().strip_prefix(up.base_path.as_str())?;
        Some(if rel.starts_with('/') {
            rel.to_string()
        } else {
            format!("/{rel}")
        })
    }

    /// The limits of a call the proxy makes itself for `ctx`'s operation.
    fn call_limits(&self, ctx: &Ctx) -> crate::unary::Limits {
        let limits = &self.app.config.limits;
        crate::unary::Limits {
            connect_timeout: limits.connect_timeout,
            read_timeout: limits.read_timeout,
            answer_timeout: limits.answer_timeout,
            max_body: limits.max_event_bytes,
            repeat: crate::unary::Repeat::of(ctx.target.operation),
        }
    }

    /// A translated unary JSON-RPC call, made by the proxy itself (see
    /// [`crate::unary`]): the upstream request head comes from
    /// `upstream_request_filter` and the answer goes through
    /// `response_filter` and `response_body_filter`, as on the proxied path
    /// (push restores, task index, extension names, card URLs), then out
    /// whole with a `Content-Length`.
    async fn unary_call(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let wire = match self.upstream_wire(session, ctx).await? {
            Ok(w) => w,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        let call = self.call_limits(ctx);
        let mut answer = match app.upstream_addr().await {
            Ok(addr) => app.upstream_pool.call(addr, &wire, call).await,
            Err(f) => Err(f),
        };
        if answer.as_ref().is_ok_and(|a| refuses_form(a.status)) {
            if let Some(other) = self.other_form_answer(session, ctx).await? {
                answer = Ok(other);
            }
        }
        if let Ok(status) = answer.as_ref().map(|a| a.status) {
            if let Some(other) = self.push_config_over_jsonrpc(session, ctx, status).await? {
                answer = Ok(other);
            }
        }
        let answer = match answer {
            Ok(a) => a,
            Err(f) => {
                tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                session.set_keepalive(None);
                return self.respond_failure(session, ctx, f).await;
            }
        };
        self.answer_whole(session, ctx, answer).await
    }

    /// Sends a whole upstream answer through `response_filter` and
    /// `response_body_filter`, with a length and the status its translated
    /// body calls for.
    async fn answer_whole(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        answer: crate::unary::Answer,
    ) -> Result<bool> {
        let mut resp = ResponseHeader::build(answer.status, Some(answer.headers.len() + 2))?;
        for (k, v) in answer.headers {
            resp.append_header(k, v)?;
        }
        ProxyHttp::response_filter(self, session, &mut resp, ctx).await?;
        let mut out = Some(answer.body);
        ProxyHttp::response_body_filter(self, session, &mut out, true, ctx)?;
        let out = out.unwrap_or_default();
        if let Some(s) = ctx.answer_status {
            resp.set_status(s)?;
            ctx.status = Some(s);
        } else if let Some((t, _)) = &ctx.rest {
            // A v1.0 agent's error status covers several v0.3 ones: the
            // translated body's code names the right one.
            if let Some(s) = t.status_of_error_body(answer.status, &out) {
                resp.set_status(s)?;
                ctx.status = Some(s);
            }
        }
        // Whole: a length instead of the chunking the filter asked for.
        resp.remove_header(&http::header::TRANSFER_ENCODING);
        if !matches!(answer.status, 204 | 304) {
            resp.insert_header(http::header::CONTENT_LENGTH, out.len())?;
        }
        let empty = out.is_empty();
        session.write_response_header(Box::new(resp), empty).await?;
        if !empty {
            session.write_response_body(Some(out), true).await?;
        }
        Ok(true)
    }
}

impl ProxyService {
    /// A streaming call (SSE) made by the proxy itself: the answer goes to
    /// the client piece by piece as it arrives, through `response_filter`
    /// and `response_body_filter` as on the proxied path. Pingora's proxy
    /// loop would keep an upstream session, its 64 KiB body buffer and two
    /// task pipes for each open stream; this keeps the socket.
    ///
    /// A failure before the answer's head is answered as an error in the
    /// client's version; after it, it ends the stream through
    /// `fail_to_proxy` (a last error frame where the binding has one), and
    /// the connection closes without a clean end of body.
    async fn stream_call(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let wire = match self.upstream_wire(session, ctx).await? {
            Ok(w) => w,
            Err(f) => return Box::pin(self.respond_failure(session, ctx, f)).await,
        };
        let call = self.call_limits(ctx);
        let open = async move {
            let r = match app.upstream_addr().await {
                Ok(addr) => app.upstream_pool.open(addr, &wire, call).await,
                Err(f) => Err(f),
            };
            // The request is gone: an open stream does not keep it.
            drop(wire);
            r
        };
        tokio::pin!(open);
        // Set once the client sent bytes after its request: it is not
        // watched for leaving any more (the next write tells).
        let mut client_spoke = false;
        // A client leaving while the agent has not answered yet closes the
        // call too, instead of holding it until the read timeout.
        let opened = loop {
            tokio::select! {
                r = &mut open => break r,
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => return Err(client_left()),
                    Ok(_) => client_spoke = true,
                },
            }
        };
        let mut up = match opened {
            Ok(s) => s,
            Err(f) => {
                tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                session.set_keepalive(None);
                return Box::pin(self.respond_failure(session, ctx, f)).await;
            }
        };
        let headers = std::mem::take(&mut up.headers);
        if !is_event_stream(&headers) {
            // Not a stream (an error, or a single result): answered whole,
            // so an untranslatable one still gets its own status.
            let limit = app.config.limits.max_event_bytes;
            let body = match read_rest(&mut up, limit).await {
                Ok(b) => b,
                Err(f) => {
                    tracing::warn!(failure = f.label(), error = ?f, "proxying failed");
                    session.set_keepalive(None);
                    return Box::pin(self.respond_failure(session, ctx, f)).await;
                }
            };
            let status = up.status;
            up.finish(&app.upstream_pool);
            if let Some(sub) = ctx
                .relay
                .as_mut()
                .and_then(|w| w.refused_answer(status, &body))
            {
                // The agent refused to resubscribe an idle task: relayed.
                return Box::pin(self.relay_events(session, ctx, sub, None)).await;
            }
            let answer = crate::unary::Answer {
                status,
                headers,
                body,
            };
            return Box::pin(self.answer_whole(session, ctx, answer)).await;
        }
        let mut resp = ResponseHeader::build(up.status, Some(headers.len() + 3))?;
        for (k, v) in headers {
            resp.append_header(k, v)?;
        }
        ProxyHttp::response_filter(self, session, &mut resp, ctx).await?;
        // The client's framing: the filter asked for chunks when it rewrites
        // the body; otherwise the upstream's length, or chunks.
        if !resp.headers.contains_key(http::header::TRANSFER_ENCODING)
            && !matches!(up.status, 204 | 304)
        {
            match up.length() {
                Some(n) => resp.insert_header(http::header::CONTENT_LENGTH, n)?,
                None => resp.insert_header(http::header::TRANSFER_ENCODING, "chunked")?,
            }
        }
        let empty = up.length() == Some(0);
        session.write_response_header(Box::new(resp), empty).await?;
        if empty {
            up.finish(&app.upstream_pool);
            return Ok(true);
        }
        let limits = &app.config.limits;
        let deadline = tokio::time::Instant::from_std(ctx.started + limits.stream_max_duration);
        loop {
            enum Step {
                Piece(Option<Bytes>),
                Failed(Failure),
                ClientGone,
                ClientSpoke,
                Expired,
            }
            let step = tokio::select! {
                r = up.next() => match r {
                    Ok(p) => Step::Piece(p),
                    Err(f) => Step::Failed(f),
                },
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => Step::ClientGone,
                    Ok(_) => Step::ClientSpoke,
                },
                _ = tokio::time::sleep_until(deadline) => Step::Expired,
            };
            let (mut body, end) = match step {
                Step::Piece(p) => {
                    let end = p.is_none();
                    (p, end)
                }
                Step::ClientSpoke => {
                    client_spoke = true;
                    continue;
                }
                Step::ClientGone => return Err(client_left()),
                Step::Expired => {
                    ctx.failure = Some(Failure::StreamExpired {
                        limit_secs: limits.stream_max_duration.as_secs(),
                    });
                    return Error::e_explain(
                        ErrorType::Custom("stream max duration"),
                        "closing an SSE stream at its maximum duration",
                    );
                }
                Step::Failed(f) => {
                    if let Some(sub) = ctx.relay.as_mut().and_then(|w| w.failed()) {
                        return Box::pin(self.relay_events(session, ctx, sub, Some(()))).await;
                    }
                    tracing::warn!(failure = f.label(), error = ?f, "upstream stream failed");
                    ctx.failure = Some(f);
                    return Err(Error::explain(
                        ErrorType::ReadError,
                        "reading the upstream stream",
                    )
                    .into_up());
                }
            };
            if let Some(w) = ctx.relay.as_mut() {
                use crate::tasks::relay::Watched;
                match w.piece(body.take(), end) {
                    Watched::Hold => continue,
                    Watched::Live(held) => (body, ctx.relay) = (held, None),
                    Watched::Refused(sub) => {
                        up.finish(&app.upstream_pool);
                        return Box::pin(self.relay_events(session, ctx, sub, Some(()))).await;
                    }
                }
            }
            if matches!(ctx.resp, RespRewrite::Sse { .. }) {
                body = Some(self.rewrite_piece(ctx, body, end).await?);
            } else {
                ProxyHttp::response_body_filter(self, session, &mut body, end, ctx)?;
            }
            if let Err(e) = session.write_response_body(body, end).await {
                return Err(e.into_down());
            }
            if end {
                up.finish(&app.upstream_pool);
                return Ok(true);
            }
        }
    }
}

impl ProxyService {
    /// Serves a v1.0 subscribe the v0.3 agent refused (an idle task) from
    /// the relay (crate::tasks::relay): the first Task, then the task's
    /// relayed events up to its end, within `limits.relay_max_wait_secs`.
    /// `head_sent`: the agent's SSE head is out already.
    async fn relay_events(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        mut sub: crate::tasks::relay::Subscription,
        head_sent: Option<()>,
    ) -> Result<bool> {
        use crate::tasks::relay::{sse_frame, Next};
        ctx.relay = None;
        if head_sent.is_none() {
            let mut resp = ResponseHeader::build(200, Some(3))?;
            resp.insert_header(http::header::CONTENT_TYPE, "text/event-stream")?;
            ProxyHttp::response_filter(self, session, &mut resp, ctx).await?;
            session.write_response_header(Box::new(resp), false).await?;
        }
        let limits = &self.app.config.limits;
        let id = ctx
            .rpc
            .as_ref()
            .map(|_| ctx.target.jsonrpc_id.clone().unwrap_or_default());
        let end =
            (ctx.started + limits.stream_max_duration).min(Instant::now() + limits.relay.max_wait);
        let until = tokio::time::Instant::from_std(end);
        let mut out = ctx.first_frame.take();
        let mut client_spoke = false;
        loop {
            if let Some(b) = out.take() {
                session
                    .write_response_body(Some(b), false)
                    .await
                    .map_err(|e| e.into_down())?;
            }
            let next = tokio::select! {
                n = sub.next(until) => n,
                r = session.read_body_or_idle(true), if !client_spoke => match r {
                    Err(_) => return Err(client_left()),
                    Ok(_) => {
                        client_spoke = true;
                        continue;
                    }
                },
            };
            let failure = match next {
                Next::Event(e) => {
                    out = Some(sse_frame(&e, id.as_ref()));
                    continue;
                }
                Next::End => {
                    let r = session.write_response_body(Some(Bytes::new()), true).await;
                    return r.map(|_| true).map_err(|e| e.into_down());
                }
                Next::Expired => Failure::StreamExpired {
                    limit_secs: limits.relay.max_wait.as_secs(),
                },
                Next::Lost => Failure::Internal {
                    detail: "more relayed events than limits.relay_max_buffer_bytes".into(),
                },
            };
            ctx.failure = Some(failure);
            return Error::e_explain(
                ErrorType::Custom("relayed subscription ended"),
                "a relayed subscription ended before its task did",
            );
        }
    }

    /// One piece of a translated stream of our own: framed, its events
    /// translated in order, the large ones on the blocking pool so that the
    /// I/O worker goes on serving its other connections meanwhile. An event
    /// over `limits.max_event_bytes` ends the stream (see [`settle_piece`]).
    async fn rewrite_piece(&self, ctx: &mut Ctx, piece: Option<Bytes>, end: bool) -> Result<Bytes> {
        let RespRewrite::Sse { framer, tr } = &mut ctx.resp else {
            return Ok(piece.unwrap_or_default());
        };
        let tr = tr.clone();
        let mut events = Vec::new();
        let framed = frame(framer, piece.as_deref(), end, &mut events);
        drop(piece);
        let mut created = tr.take_created(&mut ctx.push);
        let mut out = Vec::new();
        for event in events {
            if event.len() <= OFFLOAD_EVENT_BYTES {
                tr.rewrite(&self.app, &event, &mut created, &mut out);
                continue;
            }
            let (app, job_tr) = (self.app.clone(), tr.clone());
            let job = tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                job_tr.rewrite(&app, &event, &mut created, &mut out);
                (out, created)
            });
            match job.await {
                Ok((translated, c)) => {
                    created = c;
                    if out.is_empty() {
                        out = translated;
                    } else {
                        out.extend_from_slice(&translated);
                    }
                }
                Err(e) => {
                    ctx.unsent = Some(Bytes::from(out));
                    ctx.failure = Some(Failure::Internal {
                        detail: "an event's translation failed".into(),
                    });
                    return Error::e_explain(
                        ErrorType::InternalError,
                        format!("translating an event: {e}"),
                    );
                }
            }
        }
        settle_piece(ctx, &tr, created, out, framed)
    }
}

/// Whether a REST message body may hold an inline push config (v0.3
/// `pushNotification`, v1.0 `taskPushNotificationConfig`, or the proto
/// field names).
fn carries_push_config(body: &[u8]) -> bool {
    use crate::push::layer::contains;
    contains(body, b"ushNotification") || contains(body, b"push_notification")
}

/// Whether an answer's headers say it is an SSE stream.
fn is_event_stream(headers: &[(http::HeaderName, http::HeaderValue)]) -> bool {
    headers
        .iter()
        .any(|(k, v)| k == http::header::CONTENT_TYPE && is_event_stream_type(v))
}

/// Whether a `Content-Type` value is `text/event-stream`.
fn is_event_stream_type(v: &http::HeaderValue) -> bool {
    v.to_str().is_ok_and(|v| {
        v.trim_start()
            .to_ascii_lowercase()
            .starts_with("text/event-stream")
    })
}

/// The rest of an answer's body, at most `limit` bytes.
async fn read_rest(
    up: &mut crate::unary::Streaming,
    limit: usize,
) -> std::result::Result<Bytes, Failure> {
    let mut body = BytesMut::new();
    while let Some(piece) = up.next().await? {
        body.extend_from_slice(&piece);
        if body.len() > limit {
            return Err(Failure::BadUpstreamResponse {
                detail: format!("answer over {limit} bytes"),
            });
        }
    }
    Ok(body.freeze())
}

/// The error that ends a stream whose client went away.
fn client_left() -> Box<Error> {
    Error::explain(ErrorType::ConnectionClosed, "the client left the stream").into_down()
}

impl ProxyService {
    /// Routes a request: answers it here, leaves it to pingora's proxy
    /// (`Ok(false)`), or names the call of our own that answers it
    /// ([`Ctx::own_call`]).
    async fn route_request(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let req = session.req_header();
        let method = req.method.clone();
        let path = app.relative_path(req.uri.path()).to_string();
        let query = req.uri.query().map(str::to_string);
        let headers = req.headers.clone();
        let length = content_length(req);
        let mut info = RequestInfo {
            method: &method,
            path: &path,
            query: query.as_deref(),
            headers: &headers,
            jsonrpc_method: None,
        };
        if let Some(push) = app.push.clone() {
            if method == http::Method::POST {
                if let Some(id) = path.strip_prefix(crate::push::CALLBACK_PREFIX) {
                    let id = id.to_string();
                    return self.push_callback(session, ctx, &push, &id, length).await;
                }
            }
        }
        let mut routed = route::classify(&info);
        let is_jsonrpc = match &routed {
            Ok(r) => r.binding == Binding::JsonRpc,
            Err(e) => e.binding == Binding::JsonRpc,
        };

        // Too large by its own account: refuse before reading a byte.
        let too_large = length.is_some_and(|n| n > app.config.limits.max_body_bytes);
        let mut rpc_method = None;
        let mut prebuffered = None;
        if is_jsonrpc && !too_large {
            if let Some(n) = length.filter(|n| *n > 0 && *n <= PREBUFFER_LIMIT) {
                let (body, m, id) = self.sniff_jsonrpc(session, n, ctx.started).await?;
                prebuffered = Some(body);
                ctx.target.jsonrpc_id = id;
                rpc_method = m;
                info.jsonrpc_method = rpc_method.as_deref();
                routed = route::classify(&info);
            }
        }

        let route = match routed {
            Ok(r) => r,
            Err(e) => {
                ctx.target.version = Some(e.render_version);
                ctx.target.binding = Some(e.binding.clone());
                ctx.target.operation = e.operation;
                ctx.route = Some(Route {
                    client_version: e.render_version,
                    binding: e.binding,
                    operation: e.operation,
                    params: Default::default(),
                    version_conflict: false,
                });
                let f = Failure::VersionNotSupported {
                    requested: e.unsupported.0,
                };
                return self.respond_failure(session, ctx, f).await;
            }
        };
        if route.version_conflict {
            tracing::debug!(method = ?rpc_method, "A2A-Version disagrees with the JSON-RPC method; the method wins");
        }
        ctx.target.version = Some(route.client_version);
        ctx.target.binding = Some(route.binding.clone());
        ctx.target.operation = route.operation;
        ctx.route = Some(route.clone());

        // Local endpoints stay answerable under load; everything else counts.
        let local = matches!(
            route.binding,
            Binding::Health | Binding::Ready | Binding::Metrics
        );
        if !local {
            if !app.enter() {
                session.set_keepalive(None);
                let f = Failure::Overloaded {
                    limit: app.config.limits.max_connections,
                };
                return self.respond_failure(session, ctx, f).await;
            }
            ctx.entered = true;
        }

        if too_large {
            session.set_keepalive(None);
            let f = Failure::PayloadTooLarge {
                limit: app.config.limits.max_body_bytes,
            };
            return self.respond_failure(session, ctx, f).await;
        }

        match route.binding {
            Binding::Health => self.respond(session, ctx, app.health()).await,
            Binding::Ready => {
                let r = app.ready().await;
                self.respond(session, ctx, r).await
            }
            Binding::Metrics => self.respond(session, ctx, app.metrics_text()).await,
            Binding::AgentCard { .. } => {
                let inm = headers
                    .get(http::header::IF_NONE_MATCH)
                    .and_then(|v| v.to_str().ok());
                // No version asked (header or query): the hybrid card.
                let asked =
                    route::version_value(&headers, query.as_deref()).map(|_| route.client_version);
                match app.serve_card(asked, inm).await {
                    Ok(r) => self.respond(session, ctx, r).await,
                    Err(f) => self.respond_failure(session, ctx, f).await,
                }
            }
            Binding::JsonRpc if route.operation.is_some() => {
                let up = match app.upstream_version().await {
                    Ok(up) => up,
                    Err(f) => return self.respond_failure(session, ctx, f).await,
                };
                ctx.upstream_version = Some(up);
                if up == route.client_version {
                    if let (Some(op), Some(body)) = (route.operation, &prebuffered) {
                        if let Err(f) = self.same_version_push(ctx, op, up, body).await {
                            return self.respond_failure(session, ctx, f).await;
                        }
                        if op.is_streaming() {
                            // A stream of our own: an open stream holds
                            // little more than its sockets.
                            if ctx.new_req_body.is_none() {
                                ctx.new_req_body = Some(body.clone());
                            }
                            return Ok(ctx.own_call(OwnCall::Stream));
                        }
                    }
                    return Ok(false);
                }
                let (Some(body), Some(method)) = (prebuffered, rpc_method) else {
                    let f = Failure::CannotTranslate {
                        client: route.client_version,
                        upstream: up,
                    };
                    return self.respond_failure(session, ctx, f).await;
                };
                if let Some(f) = bad_id(&mut ctx.target) {
                    return self.respond_failure(session, ctx, f).await;
                }
                if up == crate::version::Version::V03 && method == "ListTasks" {
                    // v0.3 has no list: answered from the tasks this caller
                    // saw here.
                    let id = ctx.target.jsonrpc_id.clone();
                    let caller = app.tasks.caller(&headers);
                    return match list_tasks_locally(&self.app, &path, &body, id, &caller).await {
                        Ok(r) => self.respond(session, ctx, r).await,
                        Err(f) => self.respond_failure(session, ctx, f).await,
                    };
                }
                let mut rpc = RpcTranslation {
                    client: route.client_version,
                    upstream: up,
                    method,
                    id: ctx.target.jsonrpc_id.clone(),
                    drop_history: false,
                    asked_config: None,
                    exact_id: None,
                };
                match rpc.request(&body) {
                    Ok(new_body) => {
                        if rpc.client == crate::version::Version::V10
                            && up == crate::version::Version::V03
                            && rpc.method == "SubscribeToTask"
                        {
                            let id = ctx.target.jsonrpc_id.clone();
                            let caller =
                                crate::forward::caller_headers(&session.req_header().headers);
                            if let Some(first) =
                                first_task_frame(app, &path, &body, id, &caller).await
                            {
                                match first.refusal() {
                                    Ok((frame, sub)) => ctx.start_relay(frame, sub, app),
                                    Err(f) => return self.respond_failure(session, ctx, f).await,
                                }
                            }
                        }
                        let mut new_body = new_body;
                        if let (Some(push), Some(op)) = (&app.push, route.operation) {
                            if push.intercepts(rpc.client, up) && crate::push::rewrite::concerns(op)
                            {
                                if op == route::Operation::DeleteTaskPushNotificationConfig {
                                    ctx.push_delete =
                                        crate::push::layer::delete_target(rpc.client, &body);
                                }
                                match push.register(op, rpc.client, up, &new_body).await {
                                    Ok((changed, mut pending)) => {
                                        if let Some(b) = changed {
                                            new_body = b;
                                        }
                                        let rpc_path = app.upstream_path_and_query(&path, None);
                                        let via = crate::app::TaskFetch::JsonRpc(rpc_path);
                                        let caller = crate::forward::caller_headers(
                                            &session.req_header().headers,
                                        );
                                        seed_push_fold(app, push, op, &mut pending, via, &caller)
                                            .await;
                                        ctx.push = Some(pending);
                                    }
                                    Err(f) => return self.respond_failure(session, ctx, f).await,
                                }
                            }
                        }
                        ctx.new_req_body = Some(Bytes::from(new_body));
                        ctx.rpc = Some(rpc);
                        if route.operation.is_some_and(|op| !op.is_streaming()) {
                            // Unary: one call of our own, answered with a length.
                            return Ok(ctx.own_call(OwnCall::Unary));
                        }
                        Ok(ctx.own_call(OwnCall::Stream))
                    }
                    Err(f) => self.respond_failure(session, ctx, f).await,
                }
            }
            Binding::JsonRpc if prebuffered.is_none() && !matches!(length, Some(0)) => {
                // Too large to read before routing: the method is unknown
                // until the body has passed. The body is held back (up to
                // max_body_bytes) and decided at its end, also when the
                // header names the upstream's version: a method of the
                // other version is translated then, never passed on in
                // the wrong version (translate_accumulated).
                let up = match app.upstream_version().await {
                    Ok(up) => up,
                    Err(f) => return self.respond_failure(session, ctx, f).await,
                };
                ctx.upstream_version = Some(up);
                ctx.accumulate = Some(BytesMut::new());
                ctx.rpc = Some(RpcTranslation {
                    client: route.client_version,
                    upstream: up,
                    method: String::new(),
                    id: None,
                    drop_history: false,
                    asked_config: None,
                    exact_id: None,
                });
                Ok(false)
            }
            Binding::Rest if route.operation.is_some() => {
                // `push.intercept_same_version`: the push-config operations
                // take the translating path (read and rebuilt in the same
                // version) so the push layer can swap and restore configs.
                let push_op = route.operation.filter(|op| {
                    crate::push::rewrite::answers_configs(*op)
                        || *op == route::Operation::DeleteTaskPushNotificationConfig
                });
                let intercepts_same = |up| app.push.as_ref().is_some_and(|p| p.intercepts(up, up));
                let same_version_push = |up| push_op.is_some() && intercepts_same(up);
                // A message may carry a config inline: read, then looked at.
                let inline_push = |up| {
                    intercepts_same(up)
                        && route.operation.is_some_and(|op| {
                            matches!(
                                op,
                                route::Operation::SendMessage
                                    | route::Operation::SendStreamingMessage
                            )
                        })
                };
                let mut read_body = None;
                let upstream = app.upstream_version().await;
                if let Ok(up) = &upstream {
                    if *up == route.client_version && inline_push(*up) {
                        let b = match self.read_whole_body(session, ctx.started).await? {
                            Ok(b) => b,
                            Err(f) => return self.respond_failure(session, ctx, f).await,
                        };
                        if !carries_push_config(&b) {
                            // Nothing to intercept: on as it came.
                            ctx.upstream_version = Some(*up);
                            ctx.new_req_body = Some(b);
                            let op = route.operation.filter(|op| op.is_streaming());
                            return Ok(ctx.own_call(match op {
                                Some(_) => OwnCall::Stream,
                                None => OwnCall::Unary,
                            }));
                        }
                        read_body = Some(b);
                    }
                }
                match upstream {
                    Ok(up)
                        if up == route.client_version
                            && !same_version_push(up)
                            && read_body.is_none() =>
                    {
                        ctx.upstream_version = Some(up);
                        let streams = route.operation.is_some_and(|op| op.is_streaming());
                        if !streams {
                            return Ok(false);
                        }
                        // A stream of our own, as on JSON-RPC: its message is
                        // read first (the call holds it only until sent).
                        let chunked = headers.contains_key(http::header::TRANSFER_ENCODING);
                        if chunked || length.is_some_and(|n| n > 0) {
                            match self.read_whole_body(session, ctx.started).await? {
                                Ok(b) => ctx.new_req_body = Some(b),
                                Err(f) => return self.respond_failure(session, ctx, f).await,
                            }
                        }
                        Ok(ctx.own_call(OwnCall::Stream))
                    }
                    Ok(up) => {
                        ctx.upstream_version = Some(up);
                        let chunked = headers.contains_key(http::header::TRANSFER_ENCODING);
                        let body = match (read_body, length) {
                            (Some(b), _) => b,
                            (None, Some(0)) => Bytes::new(),
                            (None, None) if !chunked => Bytes::new(),
                            _ => {
                                // Read whole: the translation needs all of it.
                                match self.read_whole_body(session, ctx.started).await? {
                                    Ok(b) => b,
                                    Err(f) => return self.respond_failure(session, ctx, f).await,
                                }
                            }
                        };
                        let (op, client) = (route.operation, route.client_version);
                        let op = op.unwrap_or(route::Operation::GetTask);
                        if op == route::Operation::ListTasks
                            && up == crate::version::Version::V03
                            && client == crate::version::Version::V10
                        {
                            // v0.3 has no list: answered from the tasks this
                            // caller saw here.
                            let listed = match crate::tasks::params_from_query(query.as_deref()) {
                                Ok(p) => {
                                    let via = crate::app::TaskFetch::Rest;
                                    let caller = app.tasks.caller(&headers);
                                    self.app.list_tasks_via(&caller, Some(&p), via).await
                                }
                                Err(f) => Err(f),
                            };
                            return match listed {
                                Ok(result) => {
                                    let r = LocalResponse::json(200, result);
                                    self.respond(session, ctx, r).await
                                }
                                Err(f) => self.respond_failure(session, ctx, f).await,
                            };
                        }
                        let prepared = crate::rest::upstream_params(
                            client,
                            up,
                            op,
                            &route.params,
                            query.as_deref(),
                            &body,
                        );
                        let (t, mut params) = match prepared {
                            Ok(x) => x,
                            Err(f) => return self.respond_failure(session, ctx, f).await,
                        };
                        if let Some(push) = app.push.as_ref().filter(|p| {
                            p.intercepts(client, up) && crate::push::rewrite::concerns(op)
                        }) {
                            if op == route::Operation::DeleteTaskPushNotificationConfig {
                                let p = &route.params;
                                ctx.push_delete = p.task_id.clone().zip(p.config_id.clone());
                            }
                            match push.register_params(op, client, up, &mut params).await {
                                Ok(mut pending) => {
                                    let via = crate::app::TaskFetch::Rest;
                                    let caller = crate::forward::caller_headers(
                                        &session.req_header().headers,
                                    );
                                    seed_push_fold(app, push, op, &mut pending, via, &caller).await;
                                    ctx.push = Some(pending)
                                }
                                Err(f) => return self.respond_failure(session, ctx, f).await,
                            }
                        }
                        match crate::rest::upstream_request(&t, params) {
                            Ok(mut upreq) => {
                                if app.rest_other_form_first.load(Ordering::Relaxed) {
                                    upreq.switch_form();
                                }
                                if op == route::Operation::SubscribeToTask
                                    && client == crate::version::Version::V10
                                    && up == crate::version::Version::V03
                                {
                                    if let Some(id) = route.params.task_id.as_deref() {
                                        let caller = crate::forward::caller_headers(
                                            &session.req_header().headers,
                                        );
                                        if let Some(first) =
                                            first_task_frame_rest(app, id, &caller).await
                                        {
                                            match first.refusal() {
                                                Ok((frame, sub)) => {
                                                    ctx.start_relay(frame, sub, app)
                                                }
                                                Err(f) => {
                                                    return self
                                                        .respond_failure(session, ctx, f)
                                                        .await
                                                }
                                            }
                                        }
                                    }
                                }
                                ctx.new_req_body = upreq.body.clone().map(Bytes::from);
                                ctx.rest = Some((t, upreq));
                                if !op.is_streaming() {
                                    // Unary: one call of our own, answered whole (with a
                                    // length, and the status its error body calls for).
                                    return Ok(ctx.own_call(OwnCall::Unary));
                                }
                                Ok(ctx.own_call(OwnCall::Stream))
                            }
                            Err(f) => self.respond_failure(session, ctx, f).await,
                        }
                    }
                    Err(f) => self.respond_failure(session, ctx, f).await,
                }
            }
            Binding::JsonRpc if prebuffered.is_some() => {
                // No A2A method. Same version: the upstream answers itself.
                // Across versions: answer in the caller's dialect (EDGE-CASES 3).
                let up = match app.upstream_version().await {
                    Ok(up) => up,
                    Err(f) => return self.respond_failure(session, ctx, f).await,
                };
                ctx.upstream_version = Some(up);
                if up == route.client_version {
                    return Ok(false);
                }
                let body = prebuffered.unwrap_or_default();
                let f = match (&rpc_method, serde_json::from_slice::<Value>(&body)) {
                    (Some(m), _) => Failure::Translate {
                        code: -32601,
                        message: format!("method not found: {m}"),
                    },
                    (None, Ok(Value::Array(_))) => Failure::Translate {
                        code: -32600,
                        message: format!(
                            "JSON-RPC batches are not translated between A2A versions \
                             (this agent speaks {up}): send each request on its own"
                        ),
                    },
                    (None, Ok(_)) => Failure::Translate {
                        code: -32600,
                        message: "not a JSON-RPC request (no `method`)".into(),
                    },
                    (None, Err(e)) => Failure::Translate {
                        code: -32700,
                        message: format!("invalid JSON: {e}"),
                    },
                };
                self.respond_failure(session, ctx, f).await
            }
            // Non-A2A paths go through untouched.
            _ => Ok(false),
        }
    }
}

#[async_trait]
impl ProxyHttp for ProxyService {
    type CTX = Ctx;

    /// Every request of the HTTP listener carries its connection's
    /// head-read marker (crate::conn): the head is read, its bounds end.
    fn on_connection_reuse(
        &self,
        _session: &mut Session,
        _ctx: &mut Ctx,
        prev: Box<dyn std::any::Any + Send + Sync>,
    ) {
        crate::conn::head_read(&*prev);
    }

    fn new_ctx(&self) -> Ctx {
        Ctx {
            started: Instant::now(),
            route: None,
            target: ErrorTarget::default(),
            entered: false,
            body_seen: 0,
            stream_open: false,
            status: None,
            failure: None,
            upstream_version: None,
            rpc: None,
            new_req_body: None,
            accumulate: None,
            resp: RespRewrite::Pass,
            rest: None,
            first_frame: None,
            relay: None,
            push: None,
            push_delete: None,
            same_version_push: false,
            answer_status: None,
            own_call: None,
            unsent: None,
            body_over: false,
        }
    }

    async fn request_filter(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        // Each read of the body pingora passes on: no longer than the whole.
        session.set_read_timeout(Some(self.app.config.limits.body_timeout));
        // Routing runs in a future of its own, gone before a call of ours
        // starts: an open stream keeps only what the stream needs.
        let done = Box::pin(self.route_request(session, ctx)).await?;
        match ctx.own_call.take() {
            Some(OwnCall::Unary) => Box::pin(self.unary_call(session, ctx)).await,
            Some(OwnCall::Stream) => self.stream_call(session, ctx).await,
            None => Ok(done),
        }
    }

    async fn upstream_peer(&self, _session: &mut Session, ctx: &mut Ctx) -> Result<Box<HttpPeer>> {
        let addr = match self.app.upstream_addr().await {
            Ok(a) => a,
            Err(f) => {
                ctx.failure = Some(f);
                return Error::e_explain(ErrorType::ConnectError, "resolving the upstream");
            }
        };
        let limits = &self.app.config.limits;
        let mut peer = HttpPeer::new(addr, false, String::new());
        peer.options.connection_timeout = Some(limits.connect_timeout);
        peer.options.total_connection_timeout = Some(limits.connect_timeout);
        peer.options.read_timeout = Some(limits.read_timeout);
        peer.options.write_timeout = Some(limits.read_timeout);
        peer.options.idle_timeout = Some(Duration::from_secs(60));
        Ok(Box::new(peer))
    }

    fn fail_to_connect(
        &self,
        _session: &mut Session,
        _peer: &HttpPeer,
        _ctx: &mut Ctx,
        mut e: Box<Error>,
    ) -> Box<Error> {
        // One upstream: retrying the same address only delays the error.
        e.set_retry(false);
        e
    }

    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        let app = &self.app;
        upstream_request.insert_header("Host", app.config.upstream.authority())?;
        if let Some(v) = ctx.upstream_version {
            // Always the upstream's own version (EDGE-CASES 4): a v1.0 agent
            // rejects header-less calls even when the method says v1.0.
            upstream_request.insert_header("A2A-Version", v.as_str())?;
        }
        if ctx.rpc.is_some() || ctx.rest.is_some() {
            // The proxy reads this answer to translate it: unencoded
            // (accept-encoding is per call, crate::forward).
            upstream_request.remove_header(&http::header::ACCEPT_ENCODING);
        }
        if ctx.same_version_push {
            if let Some(body) = &ctx.new_req_body {
                upstream_request.remove_header(&http::header::TRANSFER_ENCODING);
                upstream_request.insert_header(http::header::CONTENT_LENGTH, body.len())?;
            }
        }
        if let Some(rpc) = &ctx.rpc {
            match &ctx.new_req_body {
                Some(body) => {
                    upstream_request.remove_header(&http::header::TRANSFER_ENCODING);
                    upstream_request.insert_header(http::header::CONTENT_LENGTH, body.len())?;
                }
                // Accumulated: the length is unknown yet, pingora sends chunked.
                None => {
                    upstream_request.remove_header(&http::header::CONTENT_LENGTH);
                }
            }
            // Extensions: send the upstream's spelling (EDGE-CASES 30).
            let (from, to) = match rpc.upstream {
                crate::version::Version::V10 => ("x-a2a-extensions", "A2A-Extensions"),
                crate::version::Version::V03 => ("a2a-extensions", "X-A2A-Extensions"),
            };
            if let Some(v) = upstream_request.headers.get(from).cloned() {
                upstream_request.remove_header(from);
                if !upstream_request.headers.contains_key(to) {
                    upstream_request.insert_header(to, v)?;
                }
            }
        }
        if let Some((t, up)) = &ctx.rest {
            let base = &app.config.upstream.base_path;
            crate::rest::set_upstream_head(base, t.upstream, up, upstream_request)?;
        } else if app.config.public_url.base_path != app.config.upstream.base_path {
            let uri = &session.req_header().uri;
            let rel = app.relative_path(uri.path());
            let pq = app.upstream_path_and_query(rel, uri.query());
            let new_uri: http::Uri = pq.parse().map_err(|_| {
                Error::explain(ErrorType::InternalError, "building the upstream path")
            })?;
            upstream_request.set_uri(new_uri);
        }
        Ok(())
    }

    async fn request_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<()> {
        // A body passed on as it arrives: whole within limits.body_timeout
        // (each read is bounded by the session's read timeout, set to it).
        if !end_of_stream && ctx.started.elapsed() > self.app.config.limits.body_timeout {
            return Err(body_too_slow(session));
        }
        if let Some(b) = body {
            ctx.body_seen += b.len();
            let limit = self.app.config.limits.max_body_bytes;
            if ctx.body_seen > limit {
                ctx.failure = Some(Failure::PayloadTooLarge { limit });
                return Error::e_explain(ErrorType::HTTPStatus(413), "request body over the limit");
            }
        }
        if let Some(acc) = ctx.accumulate.as_mut() {
            if let Some(b) = body.take() {
                acc.extend_from_slice(&b);
            }
            if !end_of_stream {
                *body = Some(Bytes::new());
                return Ok(());
            }
            let whole = ctx.accumulate.take().unwrap_or_default().freeze();
            return match self.translate_accumulated(ctx, whole) {
                Ok(out) => {
                    *body = Some(out);
                    Ok(())
                }
                Err(f) => {
                    ctx.failure = Some(f);
                    Error::e_explain(ErrorType::InternalError, "untranslatable request body")
                }
            };
        }
        if ctx.rest.is_some() && (body.is_some() || end_of_stream) {
            // The translated body replaces the original, once.
            *body = ctx
                .new_req_body
                .take()
                .or_else(|| body.as_ref().map(|_| Bytes::new()));
            return Ok(());
        }
        if (ctx.rpc.is_some() || ctx.same_version_push) && body.is_some() {
            // The replayed original is swapped for its translation, once.
            *body = Some(ctx.new_req_body.take().unwrap_or_default());
        }
        Ok(())
    }

    async fn response_filter(
        &self,
        session: &mut Session,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        ctx.status = Some(resp.status.as_u16());
        if let Some((t, _)) = &ctx.rest {
            if resp.status.as_u16() >= 400 {
                resp.set_status(t.client_status(resp.status.as_u16()))?;
            }
            if let Some((name, v)) = crate::rest::extensions_for(t.client, &resp.headers) {
                resp.remove_header("a2a-extensions");
                resp.remove_header("x-a2a-extensions");
                resp.insert_header(name, v)?;
            }
        }
        let sse = resp
            .headers
            .get(http::header::CONTENT_TYPE)
            .is_some_and(is_event_stream_type);
        if sse && !ctx.stream_open {
            ctx.stream_open = true;
            self.app.metrics.stream_opened();
            resp.insert_header("X-Accel-Buffering", "no")?;
        }
        // The extended card's interface URLs must point here too (EDGE-CASES 7).
        let card = ctx.route.as_ref().and_then(|r| r.operation)
            == Some(route::Operation::GetExtendedAgentCard)
            && resp.status.as_u16() == 200;
        if let Some(rpc) = &ctx.rpc {
            // Echoed extensions in the client's spelling (EDGE-CASES 30).
            let (from, to) = match rpc.client {
                crate::version::Version::V03 => ("a2a-extensions", "X-A2A-Extensions"),
                crate::version::Version::V10 => ("x-a2a-extensions", "A2A-Extensions"),
            };
            if let Some(v) = resp.headers.get(from).cloned() {
                resp.remove_header(from);
                resp.insert_header(to, v)?;
            }
        }
        if ctx.rpc.is_some() || ctx.rest.is_some() || card || ctx.same_version_push {
            let json = resp
                .headers
                .get(http::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| {
                    let ct = ct.to_ascii_lowercase();
                    ct.contains("/json") || ct.contains("+json")
                });
            let translated = ctx.rpc.is_some() || ctx.rest.is_some();
            if translated || json {
                // A translated call's answer that is neither JSON nor SSE
                // (an HTML error page, garbage) is never passed on: it goes
                // through the JSON translation, which answers the client
                // InvalidAgentResponse in its own version.
                if translated && !json && !sse {
                    resp.insert_header(http::header::CONTENT_TYPE, "application/json")?;
                }
                // The length changes: send the rewritten body chunked.
                resp.remove_header(&http::header::CONTENT_LENGTH);
                resp.insert_header(http::header::TRANSFER_ENCODING, "chunked")?;
                let as_sse = !sse
                    && resp.status.as_u16() == 200
                    && ctx.rpc.as_ref().is_some_and(|r| r.json_answer_as_sse());
                let tr = if sse {
                    let scope = self.app.tasks.scope_of(&session.req_header().headers);
                    EventTranslation::of(ctx, scope)
                } else {
                    None
                };
                ctx.resp = if let Some(tr) = tr {
                    RespRewrite::Sse {
                        framer: SseFramer::new(self.app.config.limits.max_event_bytes),
                        tr: Arc::new(tr),
                    }
                } else if as_sse {
                    resp.insert_header(http::header::CONTENT_TYPE, "text/event-stream")?;
                    RespRewrite::JsonAsSse(BytesMut::new())
                } else {
                    RespRewrite::Json(BytesMut::new())
                };
            }
        }
        Ok(())
    }

    fn response_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<Option<Duration>> {
        // A whole answer (not a stream, whose gaps and life have bounds of
        // their own) within limits.answer_timeout of the request, however
        // steadily the agent trickles it.
        if !ctx.stream_open
            && !end_of_stream
            && ctx.started.elapsed() > self.app.config.limits.answer_timeout
        {
            return pingora::Error::e_explain(
                pingora::ErrorType::ReadTimedout,
                "the agent's answer took longer than limits.answer_timeout",
            );
        }
        let limit = self.app.config.limits.max_event_bytes;
        match &mut ctx.resp {
            RespRewrite::Pass => {}
            RespRewrite::JsonAsSse(buf) => {
                hold(buf, body.take(), limit, &mut ctx.body_over);
                *body = match (&ctx.rpc, end_of_stream) {
                    (_, true) if ctx.body_over => Some(over_limit(ctx, limit)),
                    (Some(rpc), true) => Some(Bytes::from(rpc.response_as_sse(buf))),
                    (None, true) => Some(Bytes::from(buf.to_vec())),
                    (_, false) => Some(Bytes::new()),
                };
            }
            RespRewrite::Json(buf) => {
                hold(buf, body.take(), limit, &mut ctx.body_over);
                *body = if end_of_stream && ctx.body_over {
                    Some(over_limit(ctx, limit))
                } else if end_of_stream {
                    let mut out = match (&ctx.rpc, &ctx.rest) {
                        (Some(rpc), _) => {
                            let mut out = rpc.response(buf);
                            if rpc.client == crate::version::Version::V10 {
                                let scope = self.app.tasks.scope_of(&session.req_header().headers);
                                self.app.tasks.record(scope, &rpc.method, &out);
                                self.app.relay.publish_envelope(&rpc.method, &out);
                            }
                            if let (Some(push), Some(p)) = (&self.app.push, &ctx.push) {
                                if let Some(b) = push.restore(rpc.client, &out, p) {
                                    out = b;
                                }
                            }
                            out = rpc.settle_config(
                                out,
                                crate::push::layer::Push::known_config(ctx.push.as_ref()),
                            );
                            if let (Some(push), Some((t, c))) =
                                (&self.app.push, ctx.push_delete.take())
                            {
                                if ctx.status == Some(200) && !answer_is_error(&out) {
                                    push.forget(t, c);
                                }
                            }
                            out
                        }
                        (None, Some((t, _))) => {
                            let status = ctx.status.unwrap_or(200);
                            let (answer_status, mut out) = t.response(status, buf);
                            ctx.answer_status = answer_status;
                            let ok = (200..300).contains(&status) && answer_status.is_none();
                            if t.client == crate::version::Version::V10 && ok {
                                if let Some(op) = ctx.route.as_ref().and_then(|r| r.operation) {
                                    let h = &session.req_header().headers;
                                    let scope = self.app.tasks.scope_of(h);
                                    self.app.tasks.record_result(scope, op.as_str(), &out);
                                    self.app.relay.publish_result(op.as_str(), &out);
                                }
                            }
                            if let (Some(push), Some(p)) = (&self.app.push, &ctx.push) {
                                if let Some(b) = push.restore_rest(t.client, &out, p) {
                                    out = b;
                                }
                            }
                            if ok {
                                let (settled_status, settled) = t.settle_config(
                                    out,
                                    crate::push::layer::Push::known_config(ctx.push.as_ref()),
                                );
                                out = settled;
                                if settled_status.is_some() {
                                    ctx.answer_status = settled_status;
                                }
                            }
                            if let (Some(push), Some((task, c))) =
                                (&self.app.push, ctx.push_delete.take())
                            {
                                if ok {
                                    push.forget(task, c);
                                }
                            }
                            out
                        }
                        (None, None) => {
                            let mut out = buf.to_vec();
                            if ctx.same_version_push {
                                self.restore_same_version(ctx, &mut out);
                            }
                            out
                        }
                    };
                    if ctx.route.as_ref().and_then(|r| r.operation)
                        == Some(route::Operation::GetExtendedAgentCard)
                    {
                        let jsonrpc = ctx.target.binding == Some(Binding::JsonRpc);
                        let to = ctx
                            .target
                            .version
                            .filter(|c| ctx.upstream_version.is_some_and(|u| u != *c));
                        out = self.app.rewrite_card_body(&out, jsonrpc, to);
                    }
                    Some(Bytes::from(out))
                } else {
                    Some(Bytes::new())
                };
            }
            RespRewrite::Sse { framer, tr } => {
                // Pingora's proxy loop (a JSON-RPC stream whose request was
                // too large to read before routing): translated in place.
                let tr = tr.clone();
                let piece = body.take();
                let mut events = Vec::new();
                let framed = frame(framer, piece.as_deref(), end_of_stream, &mut events);
                drop(piece);
                let mut created = tr.take_created(&mut ctx.push);
                let mut out = Vec::new();
                for e in &events {
                    tr.rewrite(&self.app, e, &mut created, &mut out);
                }
                *body = Some(settle_piece(ctx, &tr, created, out, framed)?);
            }
        }
        if ctx.stream_open
            && !end_of_stream
            && ctx.started.elapsed() > self.app.config.limits.stream_max_duration
        {
            ctx.failure = Some(Failure::StreamExpired {
                limit_secs: self.app.config.limits.stream_max_duration.as_secs(),
            });
            return Error::e_explain(
                ErrorType::Custom("stream max duration"),
                "closing an SSE stream at its maximum duration",
            );
        }
        Ok(None)
    }

    async fn fail_to_proxy(&self, session: &mut Session, e: &Error, ctx: &mut Ctx) -> FailToProxy {
        if let Some(written) = session.response_written() {
            // Mid-response: the status line is out. A JSON-RPC stream gets a
            // last `data:` frame carrying the error envelope in the client's
            // version (EDGE-CASES 21); anything else is just closed.
            let code = written.status.as_u16();
            if let Some(b) = ctx.unsent.take().filter(|b| !b.is_empty()) {
                // The events translated ahead of the failure.
                if let Err(we) = session.write_response_body(Some(b), false).await {
                    tracing::debug!(error = %we, "could not write the last events");
                }
            }
            let jsonrpc = ctx.target.binding == Some(Binding::JsonRpc);
            let v10 = ctx.target.version == Some(crate::version::Version::V10);
            if ctx.stream_open && ctx.target.binding == Some(Binding::Rest) && v10 {
                // A v1.0 REST stream gets an `event: error` frame with the
                // REST error body (as a2a-python 1.x servers end a failing
                // stream); v0.3 has no such convention (a2a-python 0.3
                // clients parse every frame as an event): closed.
                if let Some(f) = ctx.failure.clone().or_else(|| failure_of(e)) {
                    let body = LocalResponse::failure(&f, &ctx.target).body;
                    let body = String::from_utf8_lossy(&body).replace('\n', " ");
                    let frame = Bytes::from(format!("event: error\ndata: {body}\n\n"));
                    tracing::warn!(error = %e, failure = f.label(), "stream failed; sent an error event");
                    ctx.failure = Some(f);
                    if let Err(we) = session.write_response_body(Some(frame), true).await {
                        tracing::debug!(error = %we, "could not write the error event");
                    }
                }
            }
            if ctx.stream_open && jsonrpc {
                let f = ctx.failure.clone().or_else(|| failure_of(e));
                if let (Some(f), Some(v)) = (f, ctx.target.version) {
                    let env = crate::error::jsonrpc_envelope(&f, v, ctx.target.jsonrpc_id.clone());
                    let frame = Bytes::from(format!("data: {env}\n\n"));
                    tracing::warn!(error = %e, failure = f.label(), "stream failed; sent an error frame");
                    ctx.failure = Some(f);
                    if let Err(we) = session.write_response_body(Some(frame), true).await {
                        tracing::debug!(error = %we, "could not write the error frame");
                    }
                }
            }
            return FailToProxy {
                error_code: code,
                can_reuse_downstream: false,
            };
        }
        let failure = match ctx.failure.clone().or_else(|| failure_of(e)) {
            Some(f) => f,
            None => {
                return FailToProxy {
                    error_code: 0,
                    can_reuse_downstream: false,
                }
            }
        };
        tracing::warn!(error = %e, failure = failure.label(), "proxying failed");
        let r = LocalResponse::failure(&failure, &ctx.target);
        let code = r.status;
        ctx.failure = Some(failure);
        session.set_keepalive(None);
        if let Err(we) = self.respond(session, ctx, r).await {
            tracing::debug!(error = %we, "could not write the error response");
        }
        FailToProxy {
            error_code: code,
            can_reuse_downstream: false,
        }
    }

    async fn logging(&self, _session: &mut Session, e: Option<&Error>, ctx: &mut Ctx) {
        if ctx.stream_open {
            self.app.metrics.stream_closed();
            ctx.stream_open = false;
        }
        if ctx.entered {
            self.app.leave();
            ctx.entered = false;
        }
        let route = ctx.route.as_ref();
        let method = match route {
            Some(r) => match (r.operation, &r.binding) {
                (Some(op), _) => op.as_str().to_string(),
                (None, Binding::JsonRpc | Binding::Rest) => "unknown".into(),
                (None, _) => "none".into(),
            },
            None => "none".into(),
        };
        let outcome = match (&ctx.failure, ctx.status, e) {
            (Some(f), _, _) => f.label().to_string(),
            (None, _, Some(_)) => "aborted".into(),
            (None, Some(s), None) if s >= 500 => "server_error".into(),
            (None, Some(s), None) if s >= 400 => "client_error".into(),
            (None, Some(_), None) => "ok".into(),
            (None, None, None) => "aborted".into(),
        };
        let binding = binding_label(route.map(|r| &r.binding));
        let elapsed = ctx.started.elapsed();
        tracing::info!(
            target: "access",
            method = %method,
            binding,
            client_version = ?route.map(|r| r.client_version.as_str()),
            upstream_version = ?ctx.upstream_version.map(|v| v.as_str()),
            translated = ctx.rpc.is_some() || ctx.rest.is_some(),
            status = ?ctx.status,
            outcome = %outcome,
            ms = elapsed.as_millis() as u64,
            "request"
        );
        self.app.metrics.record(
            RequestLabels {
                method,
                direction: crate::metrics::direction(
                    route.map(|r| r.client_version),
                    ctx.upstream_version,
                ),
                binding,
                outcome,
            },
            elapsed,
        );
    }
}
