//! Unary calls the proxy makes itself (cross-version and intercepted
//! ones): the upstream request's wire bytes, the call, the fallbacks of a
//! REST agent (other body form, push configs over its JSON-RPC binding),
//! and the answer written whole.

use std::sync::atomic::Ordering;

use bytes::Bytes;
use pingora::http::ResponseHeader;
use pingora::proxy::Session;
use pingora::Result;
use serde_json::Value;

use super::*;
use crate::error::Failure;

/// An agent's status for a request body it could not read: the cue to
/// try a request's other body form.
pub(crate) fn refuses_form(status: u16) -> bool {
    matches!(status, 400 | 415 | 422 | 500)
}

impl ProxyService {
    /// The whole upstream request (head and body) of a call the proxy
    /// makes itself, with the head `upstream_head` gives it (the work of
    /// `upstream_request_filter`).
    pub(crate) async fn upstream_wire(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<std::result::Result<crate::upstream::Outgoing, Failure>> {
        let mut req = session.req_header().clone();
        // Hop-by-hop headers (and `proxy-*`) stay here (crate::forward).
        for h in crate::forward::to_strip(&req.headers, false) {
            req.remove_header(&h);
        }
        self.upstream_head(&session.req_header().uri, &mut req, ctx)?;
        let body = ctx
            .own_mut()
            .and_then(|o| o.body.take())
            .unwrap_or_default();
        // The body goes whole: its length (set by the client), whatever
        // the client framed.
        req.remove_header(&http::header::TRANSFER_ENCODING);
        req.remove_header(&http::header::CONTENT_LENGTH);
        let raw = req.raw_path();
        let target = if raw.starts_with(b"/") {
            raw
        } else {
            req.uri
                .path_and_query()
                .map_or(&b"/"[..], |p| p.as_str().as_bytes())
        };
        let Ok(uri) = http::Uri::try_from(target) else {
            return Ok(Err(Failure::BadRequest {
                detail: "request target not sendable".into(),
            }));
        };
        let parts = http::request::Parts::from(req);
        let mut out = http::Request::new(body);
        *out.method_mut() = parts.method;
        *out.uri_mut() = uri;
        *out.headers_mut() = parts.headers;
        Ok(Ok(out))
    }

    /// The answer to the request's other body form (see
    /// [`crate::rest::UpstreamRequest::other_form`]) when the agent takes
    /// it; `None` when there is none or it is refused too (the first
    /// answer stands).
    pub(crate) async fn other_form_answer(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<Option<crate::upstream::Answer>> {
        let Some(own) = ctx.own_mut() else {
            return Ok(None);
        };
        let Some(up) = own.upstream_request_mut() else {
            return Ok(None);
        };
        if !up.switch_form() {
            return Ok(None);
        }
        own.body = up.body.clone().map(Bytes::from);
        let Ok(wire) = self.upstream_wire(session, ctx).await? else {
            return Ok(None);
        };
        let app = &self.app;
        let Ok(addr) = app.dest_addr(ctx.dest.as_ref()).await else {
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
    /// binding (its card's JSON-RPC interface, crate::card::endpoints) and
    /// answered in the shape of its REST answer, so the response goes
    /// through the REST translation and the push layer as any other.
    /// `None` when it does not apply or that call fails too.
    pub(crate) async fn push_config_over_jsonrpc(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        status: u16,
    ) -> Result<Option<crate::upstream::Answer>> {
        let Some((op, method, p)) = jsonrpc_fallback(ctx, status) else {
            return Ok(None);
        };
        let app = &self.app;
        // The agent's JSON-RPC interface (area: paths; crate::card::endpoints).
        let Ok(addr) = app.upstream_addr().await else {
            return Ok(None);
        };
        let Ok(card) = app.cards.get(addr, true).await else {
            return Ok(None);
        };
        let Some(rpc) = app.endpoints_of(&card).jsonrpc.clone() else {
            return Ok(None);
        };
        let path = if rpc.url.base_path.is_empty() {
            "/"
        } else {
            ""
        }
        .to_string();
        ctx.dest = Some(crate::card::endpoints::Dest {
            path_and_query: format!("{}{path}", rpc.url.base_path),
            url: rpc.url,
        });
        let Ok(addr) = app.dest_addr(ctx.dest.as_ref()).await else {
            return Ok(None);
        };
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": p});
        let body = serde_json::to_vec(&body).unwrap_or_default();
        if let Some(own) = ctx.own_mut() {
            if let Some(up) = own.upstream_request_mut() {
                up.method = http::Method::POST;
                up.path_and_query = path;
                up.body = Some(body.clone());
                up.other_form = None;
            }
            own.body = Some(Bytes::from(body));
        }
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
        let Some(out) = rest_shaped(op, &v) else {
            return Ok(None);
        };
        tracing::info!(
            method,
            "the agent's REST binding lacks a push-config call: asked over its JSON-RPC binding"
        );
        Ok(Some(out))
    }

    /// The limits of a call the proxy makes itself for `ctx`'s operation.
    pub(crate) fn call_limits(&self, ctx: &Ctx) -> crate::upstream::Limits {
        let limits = &self.app.config.limits;
        crate::upstream::Limits {
            connect_timeout: limits.connect_timeout,
            read_timeout: limits.read_timeout,
            answer_timeout: limits.answer_timeout,
            max_body: limits.max_event_bytes,
            repeat: crate::upstream::Repeat::of(ctx.target.operation),
        }
    }

    /// A unary call made by the proxy itself (see [`crate::upstream`]; every
    /// translated one, one the push layer intercepts, a same-version body
    /// pingora cannot replay): its head from `upstream_head`, its answer
    /// through `answer_head` and `answer_body`, the work the hooks do on
    /// pingora's proxy loop (push restores, task index, extension names,
    /// card URLs), then out whole with a `Content-Length`.
    pub(crate) async fn unary_call(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
        let app = &self.app;
        let wire = match self.upstream_wire(session, ctx).await? {
            Ok(w) => w,
            Err(f) => return self.respond_failure(session, ctx, f).await,
        };
        let call = self.call_limits(ctx);
        let mut answer = match app.dest_addr(ctx.dest.as_ref()).await {
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

    /// Sends a whole upstream answer through `answer_head` and
    /// `answer_body`, with a length and the status its translated
    /// body calls for.
    pub(crate) async fn answer_whole(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
        answer: crate::upstream::Answer,
    ) -> Result<bool> {
        let mut resp = ResponseHeader::build(answer.status, Some(answer.headers.len() + 2))?;
        for (k, v) in answer.headers {
            resp.append_header(k, v)?;
        }
        self.answer_head(&session.req_header().headers, &mut resp, ctx)?;
        let mut out = Some(answer.body);
        self.answer_body(&session.req_header().headers, &mut out, true, ctx)?;
        let out = out.unwrap_or_default();
        // A confirmed delete leaves the push store before it is answered.
        let forget = ctx.own_mut().and_then(|o| o.forget.take());
        if let (Some(push), Some((task, config))) = (&self.app.push, forget) {
            push.forget(task, config).await;
        }
        // The status the translated body calls for (the codec's answer
        // already read a v1.0 error body's code for a v0.3 REST client).
        if let Some(s) = ctx.own().and_then(|o| o.answer_status) {
            resp.set_status(s)?;
            ctx.status = Some(s);
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

/// The JSON-RPC call standing in for a v1.0 client's push-config list or
/// delete that a v0.3 agent's REST binding refused with `status`: the
/// operation, the v0.3 method and its params.
fn jsonrpc_fallback(
    ctx: &Ctx,
    status: u16,
) -> Option<(translate::method::Method, &'static str, Value)> {
    use crate::version::Version;
    let t = ctx.rest()?;
    let op = t.op;
    let method = match op {
        translate::method::Method::ListPushConfigs => "tasks/pushNotificationConfig/list",
        translate::method::Method::DeletePushConfig => "tasks/pushNotificationConfig/delete",
        _ => return None,
    };
    if (t.client, t.upstream) != (Version::V10, Version::V03) || !matches!(status, 405 | 500 | 501)
    {
        return None;
    }
    let params = &ctx.route.as_ref()?.params;
    let mut p = serde_json::json!({ "id": params.task_id.clone()? });
    if let Some(cid) = &params.config_id {
        p["pushNotificationConfigId"] = Value::from(cid.as_str());
    }
    Some((op, method, p))
}

/// A v0.3 JSON-RPC answer (`v`) to [`jsonrpc_fallback`]'s call in the shape
/// of the agent's REST answer, so it goes through the REST translation and
/// the push layer as any other; `None` when its result does not convert.
fn rest_shaped(op: translate::method::Method, v: &Value) -> Option<crate::upstream::Answer> {
    let json = |status: u16, v: &Value| crate::upstream::Answer {
        status,
        headers: vec![(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        )],
        body: Bytes::from(v.to_string()),
    };
    match (v.get("result"), v.get("error")) {
        (_, Some(e)) => {
            let code = e.get("code").and_then(Value::as_i64);
            let code = code.and_then(translate::code::ErrorCode::from_code);
            let status = code.map_or(500, |c| c.v03_rest_status());
            Some(json(status, e))
        }
        // a2a-python 0.3 leaves a delete's null result out.
        (r, None) => crate::rest::v03_pb_json(op, r.cloned().unwrap_or(Value::Null))
            .ok()
            .map(|b| json(200, &b)),
    }
}
