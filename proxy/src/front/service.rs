//! The pingora [`ProxyHttp`] hooks of the HTTP front.

use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, ProxyHttp, Session};
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::app::LocalResponse;
use crate::error::Failure;
use crate::metrics::RequestLabels;
use crate::route::Binding;

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
        Ctx::new()
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
        let addr = match self.app.dest_addr(ctx.dest.as_ref()).await {
            Ok(a) => a,
            Err(f) => {
                ctx.failure = Some(f);
                return Error::e_explain(ErrorType::ConnectError, "resolving the upstream");
            }
        };
        let limits = &self.app.config.limits;
        // TLS toward an https:// agent (crate::upstream_tls).
        let mut peer = match crate::upstream_tls::http_peer(
            &addr,
            limits.connect_timeout,
            limits.read_timeout,
        ) {
            Ok(p) => p,
            Err(f) => {
                ctx.failure = Some(f);
                return Error::e_explain(ErrorType::ConnectError, "the upstream TLS socket");
            }
        };
        peer.options.idle_timeout = Some(Duration::from_secs(60));
        Ok(Box::new(peer))
    }

    fn fail_to_connect(
        &self,
        _session: &mut Session,
        peer: &HttpPeer,
        ctx: &mut Ctx,
        mut e: Box<Error>,
    ) -> Box<Error> {
        // A TLS failure toward an https:// agent: the client is told which
        // agent and what kind (crate::upstream_tls).
        if let Some(f) = crate::upstream_tls::pingora_failure(
            &self.app.config.agent.name,
            &self.app.config.upstream_tls,
            peer,
            &e,
        ) {
            ctx.failure = Some(f);
        }
        // One upstream: retrying the same address only delays the error.
        e.set_retry(false);
        e
    }

    /// An error on an upstream connection once connected: pingora's own
    /// rule for a retry, and a TLS failure (the agent refusing the client
    /// certificate after the handshake) told as such (crate::upstream_tls).
    fn error_while_proxy(
        &self,
        peer: &HttpPeer,
        session: &mut Session,
        e: Box<Error>,
        ctx: &mut Ctx,
        client_reused: bool,
    ) -> Box<Error> {
        if let Some(f) = crate::upstream_tls::pingora_failure(
            &self.app.config.agent.name,
            &self.app.config.upstream_tls,
            peer,
            &e,
        ) {
            ctx.failure = Some(f);
        }
        let mut e = e.more_context("on the upstream connection");
        if !session.req_header().method.is_idempotent() || session.as_ref().retry_buffer_truncated()
        {
            e.set_retry(false);
        } else {
            e.retry.decide_reuse(client_reused);
        }
        e
    }

    /// Before pingora sends a passed-through request's head to the agent.
    async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        self.upstream_head(&session.req_header().uri, upstream_request, ctx)
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

    /// When the agent's answer head arrives on pingora's proxy loop.
    async fn response_filter(
        &self,
        session: &mut Session,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        self.answer_head(&session.req_header().headers, resp, ctx)
    }

    /// For each piece of the agent's answer body on pingora's proxy loop.
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
        self.answer_body(&session.req_header().headers, body, end_of_stream, ctx)?;
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
        let outcome = outcome_label(ctx, e);
        let binding = binding_label(route.map(|r| &r.binding));
        let elapsed = ctx.started.elapsed();
        tracing::info!(
            target: "access",
            agent = %self.app.config.agent.name,
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
                outcome: outcome.into(),
            },
            elapsed,
        );
    }
}
