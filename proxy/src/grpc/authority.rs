//! Several agents on one gRPC listener (issue #23): [`ByAuthority`] sits
//! in front of each version's service of every agent served there and
//! picks the call's agent by its `:authority` ([`GrpcRouter`]); a call
//! naming no agent's host (and the listener has no default agent) gets
//! `NOT_FOUND` naming that authority, and reaches no agent.
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

use crate::agents::GrpcRouter;
use crate::version::Version;

/// One version's service of every agent on a listener, in the router's
/// order.
#[derive(Clone)]
pub struct ByAuthority<S> {
    agents: Arc<[(S, String)]>,
    router: Arc<GrpcRouter>,
}

impl<S> ByAuthority<S> {
    /// `agents[i]` (with its name) serves the calls `router` gives `i`.
    pub fn new(agents: Vec<(S, String)>, router: Arc<GrpcRouter>) -> Self {
        ByAuthority {
            agents: agents.into(),
            router,
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
    let span = tracing::debug_span!(
        target: "a2a_call",
        "call",
        trace_id = Empty,
        agent = Empty,
        method = Empty,
        path = Empty,
        status = Empty,
    );
    if !span.is_disabled() {
        let path = req.uri().path();
        let method = super::passthrough::method_of(path)
            .and_then(|m| m.name(Version::V10))
            .unwrap_or("unknown");
        span.record("method", method);
        span.record("path", crate::agents::echo(path));
        if let Some(t) = crate::tracectx::TraceContext::from_headers(req.headers()) {
            span.record("trace_id", t.trace_id());
        }
    }
    span
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
        let span = call_span(&req);
        let Some(i) = self.router.pick(authority(&req)) else {
            let s = no_agent(authority(&req));
            tracing::debug!(
                parent: &span,
                authority = crate::agents::echo(authority(&req).unwrap_or("")),
                "gRPC call for no agent"
            );
            span.record("status", s.code() as i32);
            return Box::pin(std::future::ready(Ok(s.into_http())));
        };
        let (svc, name) = &self.agents[i];
        span.record("agent", name.as_str());
        let mut svc = svc.clone();
        Box::pin(async move {
            let call = async {
                std::future::poll_fn(|cx| svc.poll_ready(cx)).await?;
                svc.call(req).await
            };
            let resp = call.instrument(span.clone()).await?;
            Ok(spanned(resp, span))
        })
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
        span.record("status", s.code() as i32);
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
                    this.span.record("status", s.code() as i32);
                }
            }
            Poll::Ready(Some(Err(s))) => {
                this.span.record("status", s.code() as i32);
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
}
