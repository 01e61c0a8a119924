//! Routing one request: answered here, passed to pingora's proxy loop, or
//! handed to a call of the proxy's own (see [`super::ctx::OwnCall`]).

use std::sync::atomic::Ordering;

use bytes::{Bytes, BytesMut};
use pingora::proxy::Session;
use pingora::Result;
use serde_json::Value;

use super::*;
use crate::app::LocalResponse;
use crate::error::Failure;
use crate::route::{self, Binding, RequestInfo, Route};
use crate::translation::RpcTranslation;

/// Bodies up to this size are read before routing (pingora replays at most
/// 64 KiB from its retry buffer, and one read may return up to 64 KiB, so
/// only a body announced by `Content-Length` within the limit is read).
pub(crate) const PREBUFFER_LIMIT: usize = 64 * 1024;

/// Whether a REST message body may hold an inline push config (v0.3
/// `pushNotification`, v1.0 `taskPushNotificationConfig`, or the proto
/// field names).
pub(crate) fn carries_push_config(body: &[u8]) -> bool {
    use crate::push::layer::contains;
    contains(body, b"ushNotification") || contains(body, b"push_notification")
}

impl ProxyService {
    /// Routes a request: answers it here, leaves it to pingora's proxy
    /// (`Ok(false)`), or names the call of our own that answers it
    /// ([`Ctx::own_call`]).
    pub(crate) async fn route_request(&self, session: &mut Session, ctx: &mut Ctx) -> Result<bool> {
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
                                    Ok(frame) => ctx.first_frame = Some(frame),
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
                                                Ok(frame) => ctx.first_frame = Some(frame),
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
