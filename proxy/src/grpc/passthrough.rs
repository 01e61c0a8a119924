//! Same-version gRPC passthrough: when the caller's service version equals
//! the upstream's and the upstream has a gRPC interface, the HTTP/2 request
//! (headers, length-prefixed frames as they come, trailers) is forwarded to
//! the upstream's channel and its response streamed back unchanged: no
//! protobuf is decoded, so unknown fields, compression and the upstream's
//! own status details survive byte for byte. The call's `a2a-version` is
//! checked first, as on every other path (the agent is not called for one
//! the service does not serve).
//!
//! [`Dispatch`] sits in front of each version's tonic service and decides
//! per call. Not passed through (they take the decoding path): the card RPCs
//! (the proxy advertises its own gRPC interface), and, when the push layer
//! intercepts same-version calls, the RPCs that can carry push configs.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use hyper::body::{Body as HttpBody, Frame, SizeHint};
use tonic::body::Body;
use tonic::codegen::{http, BoxFuture, Service};
use tonic::server::NamedService;
use tonic::transport::Channel;
use tonic::{Code, Status};
use translate::method::Method;

use super::status::from_failure;
use crate::app::App;
use crate::error::Failure;
use crate::version::Version;

/// What passthrough needs: the upstream's channel and the app (limits,
/// metrics, upstream version).
#[derive(Clone)]
pub struct Passthrough {
    pub channel: Channel,
    pub app: Arc<App>,
}

/// One version's tonic service, with same-version calls passed through.
#[derive(Clone)]
pub struct Dispatch<S> {
    inner: S,
    version: Version,
    pass: Option<Passthrough>,
    /// Serves the hot unary RPCs without tonic's codec ([`super::serve`]).
    direct: Option<Arc<super::bridge::Bridge>>,
}

impl<S> Dispatch<S> {
    pub fn new(inner: S, version: Version, pass: Option<Passthrough>) -> Dispatch<S> {
        Dispatch {
            inner,
            version,
            pass,
            direct: None,
        }
    }

    /// The hot unary RPCs go to `bridge` by [`super::serve`].
    pub fn with_direct(mut self, bridge: Arc<super::bridge::Bridge>) -> Dispatch<S> {
        self.direct = Some(bridge);
        self
    }
}

impl<S: NamedService> NamedService for Dispatch<S> {
    const NAME: &'static str = S::NAME;
}

/// The A2A operation a gRPC path names (either version's RPC names).
pub fn method_of(path: &str) -> Option<Method> {
    let rpc = path.rsplit('/').next()?;
    Some(match rpc {
        "SendMessage" => Method::SendMessage,
        "SendStreamingMessage" => Method::SendStreamingMessage,
        "GetTask" => Method::GetTask,
        "ListTasks" => Method::ListTasks,
        "CancelTask" => Method::CancelTask,
        "SubscribeToTask" | "TaskSubscription" => Method::SubscribeToTask,
        "CreateTaskPushNotificationConfig" => Method::CreatePushConfig,
        "GetTaskPushNotificationConfig" => Method::GetPushConfig,
        "ListTaskPushNotificationConfigs" | "ListTaskPushNotificationConfig" => {
            Method::ListPushConfigs
        }
        "DeleteTaskPushNotificationConfig" => Method::DeletePushConfig,
        "GetExtendedAgentCard" | "GetAgentCard" => Method::GetExtendedCard,
        _ => return None,
    })
}

impl Passthrough {
    /// Whether a call of `version` on `path` is forwarded raw.
    async fn takes(&self, version: Version, path: &str) -> bool {
        match super::bridge::upstream_version_of(&self.app).await {
            Ok(up) if up == version => {}
            _ => return false,
        }
        let push_same_version = self
            .app
            .push
            .as_ref()
            .is_some_and(|p| p.intercepts(version, version));
        match method_of(path) {
            Some(Method::GetExtendedCard) => false,
            Some(
                Method::SendMessage
                | Method::SendStreamingMessage
                | Method::CreatePushConfig
                | Method::GetPushConfig
                | Method::ListPushConfigs
                | Method::DeletePushConfig,
            ) => !push_same_version,
            // Unknown RPCs of the service: the upstream answers them.
            _ => true,
        }
    }

    async fn forward(
        &self,
        version: Version,
        mut req: http::Request<Body>,
    ) -> http::Response<Body> {
        // The caller's metadata goes on as it came (credentials included),
        // less what is for one hop only, such as `proxy-authorization`
        // (crate::forward); the frames are not touched.
        crate::forward::strip(req.headers_mut(), true);
        if !self.app.enter() {
            let limit = self.app.config.limits.max_connections;
            return from_failure(version, &Failure::Overloaded { limit }).into_http();
        }
        let method = method_of(req.uri().path());
        let streaming = method.is_some_and(Method::is_streaming);
        let mut count = Count {
            app: self.app.clone(),
            version,
            method,
            started: Instant::now(),
            code: None,
            streaming,
        };
        if streaming {
            self.app.metrics.stream_opened();
        }
        // The proxy decides versions on every path, as on HTTP: an
        // `a2a-version` the service does not serve is refused here
        // (crate::grpc::bridge::call_meta), not passed on.
        if let Some(v) = req.headers().get("a2a-version") {
            let mut md = tonic::metadata::MetadataMap::new();
            // A value that is no text names no version either.
            let v = tonic::metadata::MetadataValue::try_from(v.as_bytes())
                .unwrap_or(tonic::metadata::MetadataValue::from_static("?"));
            md.insert("a2a-version", v);
            if let Err(s) = super::bridge::call_meta(version, &md) {
                count.code = Some(s.code());
                return s.into_http();
            }
        }
        // The agent's headers within the read timeout; a unary call's whole
        // answer too (a stream's later gaps are the caller's to bound).
        let wait = self.app.config.limits.read_timeout;
        let end = tokio::time::Instant::now() + wait;
        let mut ch = self.channel.clone();
        let call = async {
            std::future::poll_fn(|cx| ch.poll_ready(cx)).await?;
            ch.call(req).await
        };
        let Ok(resp) = tokio::time::timeout_at(end, call).await else {
            tracing::warn!(
                ?method,
                "gRPC passthrough: the upstream did not answer in time"
            );
            let s = from_failure(version, &Failure::UpstreamTimeout);
            count.code = Some(s.code());
            return s.into_http();
        };
        match resp {
            Err(e) => {
                // A TLS failure toward an https:// agent is told as such
                // (crate::upstream::tls).
                let f = crate::upstream::tls::connect_failure_in(&e).unwrap_or_else(|| {
                    Failure::UpstreamUnavailable {
                        detail: e.to_string(),
                    }
                });
                let s = from_failure(version, &f);
                count.code = Some(s.code());
                s.into_http()
            }
            Ok(resp) => {
                // A trailers-only answer carries its status in the headers.
                if let Some(s) = Status::from_header_map(resp.headers()) {
                    count.code = Some(s.code());
                }
                let (parts, body) = resp.into_parts();
                let body = Counted {
                    inner: body,
                    deadline: (!streaming).then(|| Box::pin(tokio::time::sleep_until(end))),
                    timed_out: false,
                    version,
                    count: Some(count),
                };
                http::Response::from_parts(parts, Body::new(body))
            }
        }
    }
}

impl<S> Service<http::Request<Body>> for Dispatch<S>
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

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<Body>) -> Self::Future {
        // The ready service goes into the future; a clone stays (tower's
        // usual swap, so the one polled ready is the one called).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let pass = self.pass.clone();
        let direct = self.direct.clone();
        let version = self.version;
        Box::pin(async move {
            if let Some(p) = pass {
                if p.takes(version, req.uri().path()).await {
                    return Ok(p.forward(version, req).await);
                }
            }
            let hot = super::serve::hot(version, req.uri().path());
            if let (Some(b), Some(m)) = (direct, hot) {
                let inner: super::serve::Inner = Box::new(move |r| Box::pin(inner.call(r)));
                return Ok(Box::pin(super::serve::serve(b, version, m, req, inner)).await);
            }
            inner.call(req).await
        })
    }
}

/// Counts a passed-through call when its response ends (or is dropped:
/// the caller went away), and leaves its connection slot.
struct Count {
    app: Arc<App>,
    version: Version,
    method: Option<Method>,
    started: Instant,
    /// The final status code, once seen (`Some(Ok)` for success).
    code: Option<Code>,
    streaming: bool,
}

impl Drop for Count {
    fn drop(&mut self) {
        let outcome = match self.code {
            Some(Code::Ok) => "ok".to_string(),
            Some(c) => format!("grpc_{c:?}").to_ascii_lowercase(),
            None => "grpc_cancelled".to_string(),
        };
        self.app.metrics.record(
            crate::metrics::RequestLabels {
                method: self
                    .method
                    .and_then(|m| m.name(Version::V10))
                    .unwrap_or("unknown")
                    .to_string(),
                binding: "grpc",
                direction: crate::metrics::direction(Some(self.version), Some(self.version)),
                outcome,
            },
            self.started.elapsed(),
        );
        if self.streaming {
            self.app.metrics.stream_closed();
        }
        self.app.leave();
    }
}

/// The upstream's response body, frame by frame, reading the final status
/// from the trailers on the way.
struct Counted {
    inner: Body,
    /// A unary call's end: past it the answer ends with DEADLINE_EXCEEDED.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The deadline's trailers were sent: the body is over.
    timed_out: bool,
    version: Version,
    count: Option<Count>,
}

impl HttpBody for Counted {
    type Data = bytes::Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if self.timed_out {
            return Poll::Ready(None);
        }
        let r = match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(r) => r,
            Poll::Pending => {
                let late = self
                    .deadline
                    .as_mut()
                    .is_some_and(|d| d.as_mut().poll(cx).is_ready());
                if !late {
                    return Poll::Pending;
                }
                tracing::warn!("gRPC passthrough: the upstream's answer did not end in time");
                let st = from_failure(self.version, &Failure::UpstreamTimeout);
                let mut t = http::HeaderMap::new();
                if st.add_header(&mut t).is_err() {
                    t.insert("grpc-status", http::HeaderValue::from_static("4"));
                }
                self.timed_out = true;
                if let Some(c) = self.count.as_mut() {
                    c.code = Some(st.code());
                }
                self.count = None;
                return Poll::Ready(Some(Ok(Frame::trailers(t))));
            }
        };
        match &r {
            Some(Ok(f)) => {
                if let Some(t) = f.trailers_ref() {
                    if let (Some(c), Some(s)) = (self.count.as_mut(), Status::from_header_map(t)) {
                        c.code = Some(s.code());
                    }
                }
            }
            Some(Err(s)) => {
                if let Some(c) = self.count.as_mut() {
                    c.code = Some(s.code());
                }
            }
            None => {
                if let Some(c) = self.count.as_mut() {
                    c.code.get_or_insert(Code::Ok);
                }
                self.count = None;
            }
        }
        Poll::Ready(r)
    }

    fn is_end_stream(&self) -> bool {
        self.timed_out || self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_methods_in_both_versions() {
        assert_eq!(
            method_of("/a2a.v1.A2AService/TaskSubscription"),
            Some(Method::SubscribeToTask)
        );
        assert_eq!(
            method_of("/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs"),
            Some(Method::ListPushConfigs)
        );
        assert_eq!(
            method_of("/a2a.v1.A2AService/GetAgentCard"),
            Some(Method::GetExtendedCard)
        );
        assert_eq!(method_of("/lf.a2a.v1.A2AService/Nope"), None);
    }
}
