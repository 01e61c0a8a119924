//! The agent's part of the HTTP front's pingora hooks: what each hook of
//! [`super::Front`] does for the request's agent, and when pingora runs it.

use std::time::Duration;

use bytes::Bytes;
use pingora::http::{RequestHeader, ResponseHeader};
use pingora::prelude::HttpPeer;
use pingora::proxy::{FailToProxy, Session};
use pingora::{Error, ErrorType, Result};

use super::*;
use crate::error::Failure;
use crate::local::LocalResponse;
use crate::metrics::RequestLabels;
use crate::route::Binding;

/// The agent's part of each of the listener's hooks ([`super::Front`]
/// runs them, in the request's span): plain functions, named after the
/// hook that runs them.
impl ProxyService {
    /// When a request arrives on a kept-alive connection: its head is read,
    /// so the head's bounds of its connection's marker end (crate::front::conn).
    pub(super) fn on_connection_reuse(
        &self,
        _session: &mut Session,
        _ctx: &mut Ctx,
        prev: Box<dyn std::any::Any + Send + Sync>,
    ) {
        crate::front::conn::head_read(&*prev);
    }

    /// The first hook of a request, once its head is read: routing decides
    /// what the request is ([`Kind`]): answered here, a call of our own
    /// (made here, to its end), or passed on by pingora's proxy loop
    /// (`Ok(false)`, the only case where the hooks below run).
    pub(super) async fn request_filter(
        &self,
        session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<bool> {
        // Each read of the body pingora passes on: no longer than the whole.
        session.set_read_timeout(Some(self.app.config.limits.body_timeout));
        // Routing runs in a future of its own, gone before a call of ours
        // starts: an open stream keeps only what the stream needs.
        let done = Box::pin(self.route_request(session, ctx)).await?;
        match (&ctx.kind, done) {
            (Kind::OwnCall(own), _) => match own.mode {
                Mode::Unary => Box::pin(self.unary_call(session, ctx)).await,
                Mode::Stream | Mode::Relay => self.stream_call(session, ctx).await,
            },
            (Kind::Undecided, false) => {
                ctx.kind = Kind::Passthrough(Passthrough::default());
                Ok(false)
            }
            _ => Ok(done),
        }
    }

    /// On pingora's proxy loop, before connecting: the agent's address
    /// (the URL routing chose) and the bounds of the connection.
    pub(super) async fn upstream_peer(
        &self,
        _session: &mut Session,
        ctx: &mut Ctx,
    ) -> Result<Box<HttpPeer>> {
        let addr = match self.app.dest_addr(ctx.dest.as_ref()).await {
            Ok(a) => a,
            Err(f) => {
                ctx.failure = Some(f);
                return Error::e_explain(ErrorType::ConnectError, "resolving the upstream");
            }
        };
        let limits = &self.app.config.limits;
        // TLS toward an https:// agent: Pingora's own (crate::upstream::tls).
        let mut peer =
            crate::upstream::tls::http_peer(&addr, limits.connect_timeout, limits.read_timeout);
        peer.options.idle_timeout = Some(Duration::from_secs(60));
        if let Kind::Passthrough(pass) = &mut ctx.kind {
            pass.agent = addr.tls.is_some().then_some(addr);
        }
        Ok(Box::new(peer))
    }

    /// A failure on Pingora's connection to an https:// agent that may
    /// hide a TLS refusal: noted, for [`Self::fail_to_proxy`] to find out
    /// which (crate::upstream::tls::diagnose).
    fn note_tls_failure(&self, e: &Error, ctx: &mut Ctx) {
        if let Kind::Passthrough(pass) = &mut ctx.kind {
            let suspect = pass
                .agent
                .as_ref()
                .is_some_and(|to| crate::upstream::tls::needs_diagnosis(to, e));
            pass.diagnose |= suspect;
        }
    }

    /// On pingora's proxy loop, when the agent cannot be connected to.
    pub(super) fn fail_to_connect(
        &self,
        _session: &mut Session,
        _peer: &HttpPeer,
        ctx: &mut Ctx,
        mut e: Box<Error>,
    ) -> Box<Error> {
        self.note_tls_failure(&e, ctx);
        // One upstream: retrying the same address only delays the error.
        e.set_retry(false);
        e
    }

    /// An error on an upstream connection once connected: pingora's own
    /// rule for a retry, and a TLS failure (the agent refusing the client
    /// certificate after the handshake) told as such (crate::upstream::tls).
    pub(super) fn error_while_proxy(
        &self,
        _peer: &HttpPeer,
        session: &mut Session,
        e: Box<Error>,
        ctx: &mut Ctx,
        client_reused: bool,
    ) -> Box<Error> {
        self.note_tls_failure(&e, ctx);
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
    pub(super) async fn upstream_request_filter(
        &self,
        session: &mut Session,
        upstream_request: &mut RequestHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        self.upstream_head(&session.req_header().uri, upstream_request, ctx)
    }

    /// For each piece of a passed-through request's body, as pingora sends
    /// it on: within `limits.max_body_bytes` and `limits.body_timeout`.
    pub(super) async fn request_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<()> {
        // Whole within limits.body_timeout (each read is bounded by the
        // session's read timeout, set to it).
        if !end_of_stream && ctx.started.elapsed() > self.app.config.limits.body_timeout {
            return Err(body_too_slow(session));
        }
        let (Kind::Passthrough(pass), Some(b)) = (&mut ctx.kind, body) else {
            return Ok(());
        };
        pass.body_seen += b.len();
        let limit = self.app.config.limits.max_body_bytes;
        if pass.body_seen > limit {
            ctx.failure = Some(Failure::PayloadTooLarge { limit });
            return Error::e_explain(ErrorType::HTTPStatus(413), "request body over the limit");
        }
        Ok(())
    }

    /// When the agent's answer head arrives on pingora's proxy loop.
    pub(super) async fn response_filter(
        &self,
        session: &mut Session,
        resp: &mut ResponseHeader,
        ctx: &mut Ctx,
    ) -> Result<()> {
        self.answer_head(&session.req_header().headers, resp, ctx)
    }

    /// For each piece of the agent's answer body on pingora's proxy loop.
    pub(super) fn response_body_filter(
        &self,
        session: &mut Session,
        body: &mut Option<Bytes>,
        end_of_stream: bool,
        ctx: &mut Ctx,
    ) -> Result<Option<Duration>> {
        // A whole answer (not a stream, whose gaps and life have bounds of
        // their own) within limits.answer_timeout of the request, however
        // steadily the agent trickles it.
        let limits = &self.app.config.limits;
        if !ctx.stream_open && !end_of_stream && ctx.started.elapsed() > limits.answer_timeout {
            return pingora::Error::e_explain(
                pingora::ErrorType::ReadTimedout,
                "the agent's answer took longer than limits.answer_timeout",
            );
        }
        self.answer_body(&session.req_header().headers, body, end_of_stream, ctx)?;
        if ctx.stream_open && !end_of_stream && ctx.started.elapsed() > limits.stream_max_duration {
            ctx.failure = Some(Failure::StreamExpired {
                limit_secs: limits.stream_max_duration.as_secs(),
            });
            return Error::e_explain(
                ErrorType::Custom("stream max duration"),
                "closing an SSE stream at its maximum duration",
            );
        }
        Ok(None)
    }

    /// When a request fails with an error (pingora's proxy loop, or a call
    /// of our own that returned one): an error in the client's version
    /// when nothing was answered yet, else the stream's last error frame
    /// where its binding has one.
    pub(super) async fn fail_to_proxy(
        &self,
        session: &mut Session,
        e: &Error,
        ctx: &mut Ctx,
    ) -> FailToProxy {
        if let Some(written) = session.response_written() {
            let code = written.status.as_u16();
            self.end_broken_answer(session, e, ctx).await;
            return FailToProxy {
                error_code: code,
                can_reuse_downstream: false,
            };
        }
        if ctx.failure.is_none() {
            ctx.failure = self.diagnosed(ctx).await;
        }
        let Some(failure) = ctx.failure.clone().or_else(|| failure_of(e)) else {
            return FailToProxy {
                error_code: 0,
                can_reuse_downstream: false,
            };
        };
        tracing::warn!(error = %e, failure = failure.label(), "proxying failed");
        let r = ctx.failure_response(&failure);
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

    /// What a passed-through call's failure on its connection to an
    /// https:// agent was, when it was one that may hide a TLS refusal.
    async fn diagnosed(&self, ctx: &mut Ctx) -> Option<Failure> {
        let Kind::Passthrough(pass) = &mut ctx.kind else {
            return None;
        };
        let to = pass.agent.take().filter(|_| pass.diagnose)?;
        let within = self.app.config.limits.connect_timeout;
        crate::upstream::tls::diagnose(&to, within).await
    }

    /// The last hook of every request, answered or failed: the access log
    /// line and the request's metrics; an open stream and an admission
    /// slot are given back.
    pub(super) async fn logging(&self, _session: &mut Session, e: Option<&Error>, ctx: &mut Ctx) {
        if ctx.stream_open {
            self.app.metrics.stream_closed();
            ctx.stream_open = false;
        }
        if ctx.entered {
            self.app.leave();
            ctx.entered = false;
        }
        let route = ctx.route.as_ref();
        let method = method_label(route);
        let outcome = outcome_label(ctx, e);
        let binding = binding_label(route.map(|r| &r.binding));
        let elapsed = ctx.started.elapsed();
        tracing::info!(
            target: "access",
            agent = %self.app.config.agent.name,
            method = %method,
            binding,
            // Options as values (left out when none): `1.0`, `200`, not
            // `Some("1.0")`, in text and JSON lines alike.
            client_version = route.map(|r| r.client_version.as_str()),
            upstream_version = ctx.upstream_version.map(|v| v.as_str()),
            translated = ctx.translated(),
            status = ctx.status,
            outcome = %outcome,
            ms = elapsed.as_millis() as u64,
            "request"
        );
        let client_version = route.map(|r| r.client_version);
        let direction = crate::metrics::direction(client_version, ctx.upstream_version);
        let outcome = outcome.into();
        let labels = RequestLabels {
            method,
            direction,
            binding,
            outcome,
        };
        self.app.metrics.record(labels, elapsed);
    }
}

/// A call's `method` label: its operation, `unknown` for an A2A binding's
/// call of none, else `none`.
fn method_label(route: Option<&crate::route::Route>) -> String {
    match route {
        Some(r) => match (r.operation, &r.binding) {
            (Some(op), _) => op.as_str().to_string(),
            (None, Binding::JsonRpc | Binding::Rest) => "unknown".into(),
            (None, _) => "none".into(),
        },
        None => "none".into(),
    }
}

impl ProxyService {
    /// An answer that fails once its status line is out: the events
    /// translated ahead of the failure, then a JSON-RPC stream gets a last
    /// `data:` frame carrying the error envelope in the client's version
    /// (EDGE-CASES 21) and a v1.0 REST stream an `event: error` frame;
    /// anything else is just closed.
    async fn end_broken_answer(&self, session: &mut Session, e: &Error, ctx: &mut Ctx) {
        if let Some(b) = ctx.own_mut().and_then(|o| o.unsent.take()) {
            if !b.is_empty() {
                if let Err(we) = session.write_response_body(Some(b), false).await {
                    tracing::debug!(error = %we, "could not write the last events");
                }
            }
        }
        if !ctx.stream_open {
            return;
        }
        let v10 = ctx.target.version == Some(crate::version::Version::V10);
        let frame = match ctx.target.binding.as_ref() {
            // As a2a-python 1.x servers end a failing stream; v0.3 has no
            // such convention (a2a-python 0.3 clients parse every frame as
            // an event): closed.
            Some(Binding::Rest) if v10 => ctx.failure.clone().or_else(|| failure_of(e)).map(|f| {
                let body = ctx.failure_response(&f).body;
                let body = String::from_utf8_lossy(&body).replace('\n', " ");
                (f, format!("event: error\ndata: {body}\n\n"))
            }),
            Some(Binding::JsonRpc) if ctx.target.version.is_some() => {
                ctx.failure.clone().or_else(|| failure_of(e)).map(|f| {
                    let frame = jsonrpc_error_frame(&ctx.failure_response(&f));
                    (f, frame)
                })
            }
            _ => None,
        };
        let Some((f, frame)) = frame else {
            return;
        };
        tracing::warn!(error = %e, failure = f.label(), "stream failed; sent an error frame");
        ctx.failure = Some(f);
        if let Err(we) = session
            .write_response_body(Some(Bytes::from(frame)), true)
            .await
        {
            tracing::debug!(error = %we, "could not write the error frame");
        }
    }
}

/// A JSON-RPC error answer (as [`Ctx::failure_response`] renders it, the
/// client's id as written) as a stream's last `data:` frame: an event
/// stream's error already is one (v0.3 streaming calls, EDGE-CASES 21).
fn jsonrpc_error_frame(r: &LocalResponse) -> String {
    let body = String::from_utf8_lossy(&r.body);
    let framed = r
        .headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v == "text/event-stream");
    if framed {
        body.into_owned()
    } else {
        format!("data: {}\n\n", body.replace('\n', " "))
    }
}
