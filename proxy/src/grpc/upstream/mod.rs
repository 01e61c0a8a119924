//! A gRPC upstream (`upstream.grpc_url`): the bridge's JSON-RPC request in
//! the upstream's version (already translated by its [`JsonRpcCodec`]) is
//! sent as the matching RPC of the upstream's gRPC service, with a tonic
//! client of that version; the prost answer (or the status) comes back as
//! the JSON-RPC response the upstream's JSON-RPC binding would have sent,
//! so translation, push restoring and the task index work unchanged.
//!
//! Conversions are `proto`'s (`convert_v03*` / `convert_v10*`: prost <->
//! `translate` models); server-streaming answers are converted message by
//! message. Same-version calls do not come here: they are forwarded as raw
//! frames ([`super::passthrough`]).
//!
//! Here: the agent's endpoint and channel, the calls' entry points and the
//! hand-framed unary call. Each version's table of RPCs is in `v03.rs` /
//! `v10.rs`; the JSON-RPC side (the request read, answers and statuses as
//! envelopes) in `json.rs`.
//!
//! [`JsonRpcCodec`]: crate::codec::JsonRpcCodec

use std::pin::Pin;
use std::time::Duration;

use tokio_stream::Stream;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};

use super::bridge::CallMeta;
use crate::config::HttpUrl;
use crate::error::Failure;
use crate::version::Version;

mod json;
mod v03;
mod v10;

pub use json::error_of;
use json::*;
pub(in crate::grpc) use json::{envelope, transport_failure};

/// JSON-RPC response bodies (in the upstream's version), one per streamed
/// message; `Err` ends the stream with a proxy-side failure.
pub type Events = Pin<Box<dyn Stream<Item = Result<Vec<u8>, Failure>> + Send>>;

/// The upstream's gRPC endpoint (one HTTP/2 connection, opened lazily and
/// re-opened by tonic when it breaks).
#[derive(Clone)]
pub struct GrpcUpstream {
    pub channel: Channel,
    /// Largest answer message read (`limits.max_body_bytes`).
    pub max_message: usize,
    /// How long a unary call may take in all (`limits.read_timeout_ms`),
    /// whether or not the caller set a deadline.
    pub read_timeout: Duration,
}

/// The agent's gRPC endpoint and how to connect to it.
#[derive(Clone)]
pub struct UpstreamEndpoint {
    pub endpoint: Endpoint,
    /// `https://`: TLS with the `[upstream]` TLS settings
    /// (crate::upstream_tls), ALPN h2; `None`: h2c, tonic's own connector.
    tls: Option<crate::upstream_tls::Connector>,
}

/// The endpoint for `url` (`upstream.grpc_url`): h2c for `http://`, TLS
/// (ALPN h2, SNI the URL's host, the agent's certificate checked) for
/// `https://`.
pub fn endpoint(url: &HttpUrl, config: &crate::config::Config) -> Result<UpstreamEndpoint, String> {
    let connect_timeout = config.limits.connect_timeout;
    let tls = match url.scheme.as_str() {
        "http" => None,
        "https" => Some(crate::upstream_tls::Connector::new(
            &config.agent.name,
            config.upstream_tls.clone(),
            connect_timeout,
            crate::upstream_tls::Alpn::H2,
        )),
        other => {
            return Err(format!(
                "upstream.grpc_url: scheme {other} is not supported (http:// or https://)"
            ))
        }
    };
    let host = if url.host.contains(':') {
        format!("[{}]", url.host)
    } else {
        url.host.clone()
    };
    Endpoint::from_shared(format!("{}://{host}:{}", url.scheme, url.port))
        .map(|e| UpstreamEndpoint {
            endpoint: e
                .connect_timeout(connect_timeout)
                .tcp_nodelay(true)
                .http2_keep_alive_interval(Duration::from_secs(30)),
            tls,
        })
        .map_err(|e| format!("upstream.grpc_url: {e}"))
}

impl GrpcUpstream {
    /// Must run inside a tokio runtime (the channel's worker is spawned).
    pub fn new(
        endpoint: &UpstreamEndpoint,
        max_message: usize,
        read_timeout: Duration,
    ) -> GrpcUpstream {
        let channel = match &endpoint.tls {
            None => endpoint.endpoint.connect_lazy(),
            Some(c) => endpoint.endpoint.connect_with_connector_lazy(c.clone()),
        };
        GrpcUpstream {
            channel,
            max_message,
            read_timeout,
        }
    }

    /// One unary call: `body` is a JSON-RPC request in `upstream`'s version;
    /// returns the JSON-RPC response body in that version, or the agent's
    /// refusal of the caller's credentials as it gave it.
    pub async fn unary(
        &self,
        upstream: Version,
        body: &[u8],
        meta: &CallMeta,
    ) -> Result<Vec<u8>, NoAnswer> {
        let (id, method, params) = parse_request(body)?;
        let r = match upstream {
            Version::V03 => self.unary_v03(method, params, meta).await?,
            Version::V10 => self.unary_v10(method, params, meta).await?,
        };
        if let Err(s) = &r {
            if let Some(refused) = refusal(s) {
                return Err(NoAnswer::Refused(refused));
            }
        }
        Ok(envelope(upstream, &id, r))
    }

    /// One server-streaming call: each message becomes one JSON-RPC response
    /// body in `upstream`'s version; a final status that is not OK becomes a
    /// JSON-RPC error body (or a failure for transport conditions).
    pub async fn stream(
        &self,
        upstream: Version,
        body: &[u8],
        meta: &CallMeta,
    ) -> Result<Events, Failure> {
        let (id, method, params) = parse_request(body)?;
        match upstream {
            Version::V03 => self.stream_v03(id, method, params, meta).await,
            Version::V10 => self.stream_v10(id, method, params, meta).await,
        }
    }

    /// One unary call without tonic's codec machinery: the message framed
    /// by hand, sent on the channel, the answer's single frame decoded and
    /// its status read from the trailers (or a trailers-only answer).
    async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &'static str,
        req: tonic::Request<Req>,
    ) -> Result<tonic::Response<Resp>, Status> {
        let (md, _, msg) = req.into_parts();
        let mut headers = md.into_headers();
        let (resp, _) = self.call_with(path, &msg, &mut headers).await?;
        Ok(tonic::Response::new(resp))
    }

    /// [`Self::call`] for the direct path: the metadata given as the
    /// request's extra headers (moved out of `extra`); also returns the
    /// answer's raw message bytes. An agent that has not answered in whole
    /// within `read_timeout` gets DEADLINE_EXCEEDED (read as the upstream
    /// timing out).
    pub(super) async fn call_with<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &'static str,
        msg: &Req,
        extra: &mut http::HeaderMap,
    ) -> Result<(Resp, bytes::Bytes), Status> {
        let call = self.call_unbounded(path, msg, extra);
        match tokio::time::timeout(self.read_timeout, call).await {
            Ok(r) => r,
            Err(_) => Err(Status::deadline_exceeded(format!(
                "the upstream agent did not answer {path} within {} ms",
                self.read_timeout.as_millis()
            ))),
        }
    }

    async fn call_unbounded<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &'static str,
        msg: &Req,
        extra: &mut http::HeaderMap,
    ) -> Result<(Resp, bytes::Bytes), Status> {
        let len = msg.encoded_len();
        let mut buf = Vec::with_capacity(5 + len);
        buf.push(0);
        buf.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
        msg.encode(&mut buf)
            .map_err(|e| Status::internal(format!("encoding the request: {e}")))?;
        let mut b = http::Request::post(path)
            .header("content-type", "application/grpc")
            .header("te", "trailers");
        if let Some(h) = b.headers_mut() {
            h.extend(extra.drain().filter_map(|(k, v)| k.map(|k| (k, v))));
        }
        let req = b
            .body(tonic::body::Body::new(http_body_util::Full::new(
                bytes::Bytes::from(buf),
            )))
            .map_err(|e| Status::internal(e.to_string()))?;
        let mut ch = self.channel.clone();
        std::future::poll_fn(|cx| tonic::codegen::Service::poll_ready(&mut ch, cx))
            .await
            .map_err(unavailable)?;
        let resp = tonic::codegen::Service::call(&mut ch, req)
            .await
            .map_err(unavailable)?;
        if let Some(s) = Status::from_header_map(resp.headers()) {
            if s.code() != Code::Ok {
                return Err(s);
            }
        }
        let limited = http_body_util::Limited::new(resp.into_body(), self.max_message + 5);
        let collected = http_body_util::BodyExt::collect(limited)
            .await
            .map_err(|e| match e.downcast::<Status>() {
                Ok(s) => *s,
                Err(e) => Status::resource_exhausted(format!("the upstream's answer: {e}")),
            })?;
        if let Some(s) = collected.trailers().and_then(Status::from_header_map) {
            if s.code() != Code::Ok {
                return Err(s);
            }
        }
        let body = collected.to_bytes();
        if body.len() < 5 || body[0] != 0 {
            return Err(Status::internal(
                "the upstream's answer is not one uncompressed message",
            ));
        }
        let n = u32::from_be_bytes([body[1], body[2], body[3], body[4]]) as usize;
        let end = 5usize.saturating_add(n);
        if body.len() < end {
            return Err(Status::internal("the upstream's answer is truncated"));
        }
        let m = body.slice(5..end);
        Resp::decode(m.clone())
            .map(|r| (r, m))
            .map_err(|e| Status::internal(format!("the upstream's answer: {e}")))
    }
}

#[derive(Debug)]
pub enum NoAnswer {
    /// The proxy's failure (unreachable, timed out, nonsense).
    Failed(Failure),
    /// The agent refused the caller (its credentials, or their rights):
    /// UNAUTHENTICATED / PERMISSION_DENIED, kept as the agent gave them.
    Refused(Status),
}

impl From<Failure> for NoAnswer {
    fn from(f: Failure) -> NoAnswer {
        NoAnswer::Failed(f)
    }
}

impl NoAnswer {
    /// The status a `client` caller gets.
    pub fn status(self, client: Version) -> Status {
        match self {
            NoAnswer::Failed(f) => super::status::from_failure(client, &f),
            NoAnswer::Refused(s) => s,
        }
    }
}

/// An agent's status that refuses the caller (UNAUTHENTICATED,
/// PERMISSION_DENIED): the same code and message for the caller, in
/// either version (gRPC codes are the same in both, and A2A has no error
/// of its own for these); `None` for any other status.
pub fn refusal(s: &Status) -> Option<Status> {
    matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied)
        .then(|| Status::new(s.code(), s.message()))
}

/// UNAVAILABLE for a channel error, which stays its source (a TLS
/// failure is found there by [`transport_failure`]).
fn unavailable(e: tonic::transport::Error) -> Status {
    let mut s = Status::unavailable(e.to_string());
    s.set_source(std::sync::Arc::new(e));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn h2c_and_tls_endpoints() {
        let config =
            crate::config::Config::new("127.0.0.1:0".parse().unwrap(), "http://a:1").unwrap();
        let u = HttpUrl::parse("k", "https://127.0.0.1:1").unwrap();
        assert!(endpoint(&u, &config).is_ok_and(|e| e.tls.is_some()));
        let u = HttpUrl::parse("k", "http://127.0.0.1:1").unwrap();
        assert!(endpoint(&u, &config).is_ok_and(|e| e.tls.is_none()));
    }
}
