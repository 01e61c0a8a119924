//! The pingora [`ProxyHttp`] hooks of the HTTP front.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::{Bytes, BytesMut};
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::app::LocalResponse;
use crate::error::{ErrorTarget, Failure};
use crate::metrics::RequestLabels;
use crate::route::{self, Binding};
use crate::sse::SseFramer;

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
            push: None,
            push_delete: None,
            same_version_push: false,
            answer_status: None,
            own_call: None,
            plan: None,
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
                            if ctx.plan.is_some_and(|p| p.record_tasks) {
                                let scope = self.app.tasks.scope_of(&session.req_header().headers);
                                self.app.tasks.record(scope, &rpc.method, &out);
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
                            if ctx.plan.is_some_and(|p| p.record_tasks) && ok {
                                if let Some(op) = ctx.route.as_ref().and_then(|r| r.operation) {
                                    let h = &session.req_header().headers;
                                    let scope = self.app.tasks.scope_of(h);
                                    self.app.tasks.record_result(scope, op.as_str(), &out);
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
