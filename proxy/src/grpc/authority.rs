//! Several agents on one gRPC listener (issue #23): [`ByAuthority`] sits
//! in front of each version's service of every agent served there and
//! picks the call's agent by its `:authority` ([`GrpcRouter`]), then that
//! agent's services toward its current target ([`super::target`]); a call
//! naming no agent's host (and the listener has no default agent) gets
//! `NOT_FOUND` naming that authority, reaches no agent, and is counted in
//! `/metrics` as the HTTP listener counts a request no agent is served at:
//! `a2a_proxy_requests_total` with `agent=""`, here `binding="grpc"`,
//! `direction="local"`, `outcome="grpc_notfound"` and the call's method.
//!
//! Each call runs in the `a2a_call` span the HTTP listener opens for its
//! calls (`front::agents`): `trace_id` (the caller's W3C `traceparent`
//! metadata), `agent`, `method` (the A2A method), `path` (the gRPC path)
//! and `status` (the gRPC status code), closed when the answer ends.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tonic::body::Body;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::NamedService;
use tonic::Status;
use tracing::Instrument;

use super::target::{Pair, Targets};
use crate::agents::GrpcRouter;
use crate::metrics::{Metrics, RequestLabels};
use crate::version::Version;

/// The agents one gRPC listener serves (each with its name) and their
/// router: swapped whole by a reload (crate::reload); a call keeps the
/// agent it was routed to.
pub struct GrpcAgents {
    agents: Vec<(Arc<Targets>, String)>,
    router: GrpcRouter,
}

impl GrpcAgents {
    pub(super) fn new(agents: Vec<(Arc<Targets>, String)>, router: GrpcRouter) -> GrpcAgents {
        GrpcAgents { agents, router }
    }

    /// The names of the agents served, in the router's order.
    pub fn names(&self) -> Vec<&str> {
        self.router
            .routes()
            .iter()
            .map(|r| r.name.as_str())
            .collect()
    }
}

/// One version's service of every agent on a listener, in the router's
/// order.
#[derive(Clone)]
pub(super) struct ByAuthority<S> {
    state: Arc<arc_swap::ArcSwap<GrpcAgents>>,
    /// The proxy's requests of no agent (rendered with `agent=""`).
    unrouted: Arc<Metrics>,
    /// This version's service of an agent's services.
    version: fn(&Pair) -> S,
}

impl<S> ByAuthority<S> {
    /// The current agents of `state` serve the calls their router gives
    /// them, with the service `version` picks; calls of no agent count in
    /// `unrouted`.
    pub(super) fn new(
        state: Arc<arc_swap::ArcSwap<GrpcAgents>>,
        unrouted: Arc<Metrics>,
        version: fn(&Pair) -> S,
    ) -> Self {
        ByAuthority {
            state,
            unrouted,
            version,
        }
    }
}

impl<S: NamedService> NamedService for ByAuthority<S> {
    const NAME: &'static str = S::NAME;
}

/// The call's authority: HTTP/2 `:authority`, else a `Host` header.
fn authority(req: &http::Request<Body>) -> Option<&str> {
    req.uri().authority().map(|a| a.as_str()).or_else(|| {
        req.headers()
            .get(http::header::HOST)
            .and_then(|h| h.to_str().ok())
    })
}

/// The span of one gRPC call: disabled (nothing recorded) unless the log
/// filter enables `a2a_call` at DEBUG, as on the HTTP listener.
fn call_span(req: &http::Request<Body>) -> tracing::Span {
    use tracing::field::Empty;
    // With telemetry on, also the call's OTel server span (the RPC
    // semantic conventions' attributes and `a2a.*`; crate::telemetry).
    let span = tracing::debug_span!(
        target: "a2a_call",
        "call",
        trace_id = Empty,
        agent = Empty,
        method = Empty,
        path = Empty,
        status = Empty,
        otel.name = Empty,
        otel.kind = "server",
        otel.status_code = Empty,
        rpc.system = "grpc",
        rpc.service = Empty,
        rpc.method = Empty,
        rpc.grpc.status_code = Empty,
        a2a.agent = Empty,
        a2a.method = Empty,
        a2a.client_version = Empty,
        a2a.agent_version = Empty,
        a2a.translated = Empty,
    );
    if !span.is_disabled() {
        let path = req.uri().path();
        let method = super::passthrough::method_of(path)
            .and_then(|m| m.name(Version::V10))
            .unwrap_or("unknown");
        span.record("method", method);
        span.record("path", crate::agents::echo(path));
        let (service, rpc) = crate::agents::echo(path)
            .trim_start_matches('/')
            .split_once('/')
            .unwrap_or(("unknown", "unknown"));
        span.record("otel.name", format!("{service}/{rpc}"));
        span.record("rpc.service", service);
        span.record("rpc.method", rpc);
        if let Some(t) = crate::tracectx::TraceContext::from_headers(req.headers()) {
            span.record("trace_id", t.trace_id());
            crate::telemetry::adopt_parent(&span, &t);
        }
    }
    span
}

/// The call's final gRPC status on its span.
fn record_status(span: &tracing::Span, code: tonic::Code) {
    span.record("status", code as i32);
    span.record("rpc.grpc.status_code", code as i32);
    // The RPC conventions' server errors.
    use tonic::Code as C;
    if matches!(
        code,
        C::Unknown
            | C::DeadlineExceeded
            | C::Unimplemented
            | C::Internal
            | C::Unavailable
            | C::DataLoss
    ) {
        span.record("otel.status_code", "ERROR");
    }
}

/// The answer to a call no agent on this listener is served at.
fn no_agent(authority: Option<&str>) -> Status {
    let what = match authority {
        Some(a) => format!("{:?}", crate::agents::echo(a)),
        None => "(none)".to_string(),
    };
    Status::not_found(format!(
        "no agent is served at authority {what} on this gRPC listener"
    ))
}

impl<S> Service<http::Request<Body>> for ByAuthority<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    /// Each agent's service is made ready when it is called.
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        let started = std::time::Instant::now();
        let span = call_span(&req);
        let state = self.state.load();
        let Some(i) = state.router.pick(authority(&req)) else {
            let s = no_agent(authority(&req));
            tracing::debug!(
                parent: &span,
                authority = crate::agents::echo(authority(&req).unwrap_or("")),
                "gRPC call for no agent"
            );
            record_status(&span, s.code());
            self.unrouted
                .record(refusal(req.uri().path(), s.code()), started.elapsed());
            return Box::pin(std::future::ready(Ok(s.into_http())));
        };
        let (targets, name) = &state.agents[i];
        span.record("agent", name.as_str());
        span.record("a2a.agent", name.as_str());
        let (targets, version) = (targets.clone(), self.version);
        Box::pin(async move {
            let call = async {
                let mut svc = version(&*targets.current().await);
                std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
                svc.call(req).await
            };
            let resp = call.instrument(span.clone()).await?;
            Ok(spanned(resp, span))
        })
    }
}

/// The labels a call refused before reaching an agent counts under:
/// those of a request of no agent on the HTTP listener (`direction`
/// `local`), with the gRPC binding, the call's method (its v1.0 name, or
/// `unknown`) and its status as a gRPC outcome (`grpc_notfound`).
fn refusal(path: &str, code: tonic::Code) -> RequestLabels {
    let method = super::passthrough::method_of(path).and_then(|m| m.name(Version::V10));
    RequestLabels {
        method: method.unwrap_or("unknown").to_string(),
        binding: "grpc",
        direction: "local",
        outcome: format!("grpc_{code:?}").to_ascii_lowercase(),
    }
}

/// `resp` with `span` kept open until its body ends, the final status
/// recorded in it.
fn spanned(resp: http::Response<Body>, span: tracing::Span) -> http::Response<Body> {
    if span.is_disabled() {
        return resp;
    }
    // A trailers-only answer carries its status in the headers.
    if let Some(s) = Status::from_header_map(resp.headers()) {
        record_status(&span, s.code());
    }
    let (parts, body) = resp.into_parts();
    http::Response::from_parts(parts, Body::new(Spanned { inner: body, span }))
}

/// A response body in its call's span, reading the final status from the
/// trailers on the way.
struct Spanned {
    inner: Body,
    span: tracing::Span,
}

impl HttpBody for Spanned {
    type Data = bytes::Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let this = &mut *self;
        let r = {
            let _in = this.span.enter();
            Pin::new(&mut this.inner).poll_frame(cx)
        };
        match &r {
            Poll::Ready(Some(Ok(f))) => {
                if let Some(s) = f.trailers_ref().and_then(Status::from_header_map) {
                    record_status(&this.span, s.code());
                }
            }
            Poll::Ready(Some(Err(s))) => {
                record_status(&this.span, s.code());
            }
            _ => {}
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_authority_cut_short() {
        let s = no_agent(Some("c.example:50051"));
        assert_eq!(s.code(), tonic::Code::NotFound);
        assert!(
            s.message().contains("\"c.example:50051\""),
            "{}",
            s.message()
        );
        let long = "x".repeat(1000);
        let s = no_agent(Some(&long));
        assert!(s.message().len() < 300, "{}", s.message());
        assert!(no_agent(None).message().contains("(none)"));
    }

    #[test]
    fn a_refusal_counts_as_a_request_of_no_agent() {
        let l = refusal("/lf.a2a.v1.A2AService/SendMessage", tonic::Code::NotFound);
        assert_eq!(
            (
                l.method.as_str(),
                l.binding,
                l.direction,
                l.outcome.as_str()
            ),
            ("SendMessage", "grpc", "local", "grpc_notfound")
        );
        assert_eq!(refusal("/x.Y/Z", tonic::Code::NotFound).method, "unknown");
    }
}
