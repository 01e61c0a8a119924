//! What the front answers itself or reads from the client: local
//! responses, errors in the client's version, request bodies within their
//! limits and time, the push callback endpoint, pingora errors as failures.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::proxy::Session;
use pingora::{Error, ErrorSource, ErrorType, Result};
use serde_json::Value;

use super::*;
use crate::error::{ErrorTarget, Failure};
use crate::local::LocalResponse;
use crate::route::Binding;

/// A request id JSON-RPC 2.0 does not allow (only a string, a number or
/// null): InvalidRequest, answered with a null id.
pub(crate) fn bad_id(target: &mut ErrorTarget) -> Option<Failure> {
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

pub(crate) fn content_length(req: &RequestHeader) -> Option<usize> {
    req.headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// A call's `outcome` label (metrics, access log): its failure, else what
/// its status says; a call that ended with an error or without an answer
/// was aborted.
pub(crate) fn outcome_label(ctx: &Ctx, e: Option<&pingora::Error>) -> &'static str {
    match (&ctx.failure, ctx.status, e) {
        (Some(f), _, _) => f.label(),
        (None, _, Some(_)) | (None, None, None) => "aborted",
        (None, Some(s), None) if s >= 500 => "server_error",
        (None, Some(s), None) if s >= 400 => "client_error",
        (None, Some(_), None) => "ok",
    }
}

pub(crate) fn binding_label(b: Option<&Binding>) -> &'static str {
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
pub(crate) fn failure_of(e: &Error) -> Option<Failure> {
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
pub(crate) async fn body_chunk(
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
pub(crate) fn body_too_slow(session: &mut Session) -> Box<Error> {
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
    pub(crate) async fn respond(
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
        if matches!(ctx.kind, Kind::Undecided) {
            ctx.kind = Kind::Local;
        }
        let empty = r.body.is_empty();
        session.write_response_header(Box::new(h), empty).await?;
        if !empty {
            session.write_response_body(Some(r.body), true).await?;
        }
        Ok(true)
    }

    pub(crate) async fn respond_failure(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        f: Failure,
    ) -> Result<bool> {
        let r = ctx.failure_response(&f);
        tracing::info!(
            failure = f.label(),
            status = r.status,
            "answered with an error"
        );
        ctx.failure = Some(f);
        self.respond(session, ctx, r).await
    }

    /// `POST /a2a-proxy/push/<id>`: a notification from the agent. Counted
    /// against `limits.max_connections` like any request (503 beyond);
    /// before a byte of its body is read, a body too large by its own
    /// account is refused (413: over `limits.max_body_bytes` or
    /// `push.callback_read_bytes`) and the id and secret are checked from
    /// the head (404, 401); the body is then read within those limits and
    /// `limits.body_timeout`, its bytes reserved in the budget all
    /// callbacks share (`push.callback_read_bytes`: reserved whole when its
    /// length is announced, else as it comes; 503 when not free within the
    /// body's time) until its accept is over. A refusal that leaves a body
    /// unread closes the connection.
    pub(crate) async fn push_callback(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        push: &crate::push::layer::Push,
        id: &str,
        (length, body_expected): (Option<usize>, bool),
    ) -> Result<bool> {
        let app = &self.app;
        if !app.enter() {
            let r = push.busy("too many requests at once: retry later");
            return self.refuse_callback(session, ctx, body_expected, r).await;
        }
        ctx.entered = true;
        let limit = app
            .config
            .limits
            .max_body_bytes
            .min(push.settings.callback_read_bytes);
        let too_large = || push.refusal(413, &format!("body exceeds {limit} bytes"));
        if length.is_some_and(|n| n > limit) {
            return self
                .refuse_callback(session, ctx, body_expected, too_large())
                .await;
        }
        let headers = session.req_header().headers.clone();
        let config = match push.callback_config(id, &headers).await {
            Ok(c) => c,
            Err(r) => return self.refuse_callback(session, ctx, body_expected, r).await,
        };
        let body_timeout = app.config.limits.body_timeout;
        let deadline = ctx.started + body_timeout;
        let busy =
            || push.busy("push callback bodies being read at once are at their bound: retry later");
        let mut held = None;
        if let Some(n) = length.filter(|n| *n > 0) {
            match push.reserve(n, deadline).await {
                Some(r) => held = Some(r),
                None => return self.refuse_callback(session, ctx, true, busy()).await,
            }
        }
        let mut buf = BytesMut::new();
        while let Some(chunk) = body_chunk(session, ctx.started, body_timeout).await? {
            if buf.len() + chunk.len() > limit {
                return self.refuse_callback(session, ctx, true, too_large()).await;
            }
            if length.is_none() {
                match (push.reserve(chunk.len(), deadline).await, held.as_mut()) {
                    (Some(r), Some(h)) => h.merge(r),
                    (Some(r), None) => held = Some(r),
                    (None, _) => return self.refuse_callback(session, ctx, true, busy()).await,
                }
            }
            buf.extend_from_slice(&chunk);
        }
        let r = push.accept(config, &headers, buf.freeze()).await;
        drop(held);
        self.respond(session, ctx, r).await
    }

    /// A refused callback's answer; its connection closed when a body may
    /// be left unread.
    async fn refuse_callback(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        unread: bool,
        r: LocalResponse,
    ) -> Result<bool> {
        if unread {
            session.set_keepalive(None);
        }
        self.respond(session, ctx, r).await
    }

    /// Reads a JSON-RPC body whole for routing, within `limits.max_body_bytes`
    /// (past it: PayloadTooLarge, the connection not kept) and
    /// `limits.body_timeout`, into `inc` with its method; its id goes to
    /// the error target. Retry-buffered, so that pingora can replay a body
    /// within [`super::dispatch::PREBUFFER_LIMIT`] byte for byte.
    pub(super) async fn read_jsonrpc(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        inc: &mut super::dispatch::Incoming,
    ) -> Result<std::result::Result<(), Failure>> {
        session.enable_retry_buffering();
        let body = match self.read_whole_body(session, ctx.started).await? {
            Ok(b) => b,
            Err(f) => return Ok(Err(f)),
        };
        inc.replayable = session.get_retry_buffer().is_some();
        // The method decides the route: a body whose method some parser
        // reads otherwise (a member given twice or in another case, a
        // batch, a byte order mark, no JSON) is refused here, never passed
        // on as if it named none.
        let env = match crate::json_strict::envelope(&body) {
            Ok(env) => env,
            Err(crate::json_strict::Refusal::Parse(m)) => {
                let ct = session.req_header().headers.get(http::header::CONTENT_TYPE);
                return Ok(Err(not_json(ct, m)));
            }
            Err(r) => return Ok(Err(r.into())),
        };
        inc.rpc_method = env.method;
        ctx.exact_id = env
            .id
            .as_ref()
            .and_then(|id| crate::translation::ExactId::of_request(id, &body));
        ctx.target.jsonrpc_id = env.id;
        inc.body = Some(body);
        Ok(Ok(()))
    }
}

impl ProxyService {
    /// The whole request body, for a call of our own, within
    /// `limits.max_body_bytes`: past it, PayloadTooLarge (and the client's
    /// connection is not kept, its body unread).
    pub(crate) async fn read_whole_body(
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
    /// its config swapped for the proxy's callback like a cross-version one:
    /// the call of our own that sends it, when it is intercepted.
    pub(crate) async fn same_version_push(
        &self,
        plan: &crate::call::Plan,
        body: &Bytes,
    ) -> std::result::Result<Option<OwnCall>, Failure> {
        let Some(push) = self.app.push.as_deref().filter(|_| plan.intercepts_push()) else {
            return Ok(None);
        };
        let version = plan.client;
        let delete = plan.push == crate::call::PushStep::InterceptDelete;
        let push_delete = crate::push::layer::delete_target(version, body).filter(|_| delete);
        let (changed, pending) = push.register(plan.op, version, version, body).await?;
        let body = changed.map(Bytes::from).unwrap_or_else(|| body.clone());
        let mut own = OwnCall::new(super::dispatch::mode_for(plan.op), Some(body));
        own.push_delete = push_delete;
        own.push = Some(pending);
        Ok(Some(own))
    }

    /// The answer of a [`Self::same_version_push`] call (`status`, agent of
    /// version `v`): subscriber values back; a successful delete forgotten.
    pub(crate) fn restore_same_version(
        &self,
        own: &mut OwnCall,
        v: Option<crate::version::Version>,
        status: Option<u16>,
        out: &mut Vec<u8>,
    ) {
        let (Some(push), Some(v)) = (&self.app.push, v) else {
            return;
        };
        if let Some(p) = &own.push {
            if let Some(b) = push.restore(v, out, p) {
                *out = b;
            }
        }
        if let Some(deleted) = own.push_delete.take() {
            if status == Some(200) && !answer_is_error(out) {
                own.forget = Some(deleted);
            }
        }
    }
}

/// A JSON-RPC body that is no JSON: -32005 ContentTypeNotSupported when it
/// says it is something else (`Content-Type: text/plain`), as an agent
/// checking the type first answers; else -32700 (`message`: why it is no
/// JSON).
fn not_json(content_type: Option<&http::HeaderValue>, message: String) -> Failure {
    use translate::code::ErrorCode;
    let json = |ct: &str| {
        let ct = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        ct == "application/json" || (ct.starts_with("application/") && ct.ends_with("+json"))
    };
    match content_type.map(|v| v.to_str().map(json)) {
        Some(Ok(false)) | Some(Err(_)) => Failure::Translate {
            code: ErrorCode::ContentTypeNotSupported.code(),
            message: "the request body is not JSON and its Content-Type is not application/json"
                .into(),
        },
        None | Some(Ok(true)) => Failure::Translate {
            code: ErrorCode::JsonParse.code(),
            message,
        },
    }
}

#[cfg(test)]
mod not_json_tests {
    use super::*;

    #[test]
    fn a_body_of_another_content_type_is_content_type_not_supported() {
        let code = |ct: Option<&str>| match not_json(
            ct.map(|c| http::HeaderValue::from_str(c).unwrap()).as_ref(),
            "bad".into(),
        ) {
            Failure::Translate { code, .. } => code,
            f => panic!("{f:?}"),
        };
        assert_eq!(code(Some("text/plain")), -32005);
        assert_eq!(code(Some("application/x-www-form-urlencoded")), -32005);
        assert_eq!(code(Some("application/json")), -32700);
        assert_eq!(code(Some("Application/JSON; charset=utf-8")), -32700);
        assert_eq!(code(Some("application/a2a+json")), -32700);
        assert_eq!(code(None), -32700);
    }
}
