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
use crate::upstream::{Lost, Repeat};
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
    /// Where a call sent once more goes on a connection of its own.
    endpoint: UpstreamEndpoint,
}

/// The agent's gRPC endpoint and how to connect to it.
#[derive(Clone)]
pub struct UpstreamEndpoint {
    pub endpoint: Endpoint,
    /// `https://`: TLS with the `[upstream]` TLS settings
    /// (crate::upstream::tls), ALPN h2; `None`: h2c, tonic's own connector.
    tls: Option<crate::upstream::tls::Connector>,
}

/// The endpoint for `url` (`upstream.grpc_url`): h2c for `http://`, TLS
/// (ALPN h2, SNI the URL's host, the agent's certificate checked) for
/// `https://`.
pub fn endpoint(url: &HttpUrl, config: &crate::config::Config) -> Result<UpstreamEndpoint, String> {
    let connect_timeout = config.limits.connect_timeout;
    let tls = match url.scheme.as_str() {
        "http" => None,
        "https" => Some(crate::upstream::tls::Connector::new(
            &config.agent.name,
            config.upstream_tls.clone(),
            connect_timeout,
            crate::upstream::tls::Alpn::H2,
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

impl UpstreamEndpoint {
    /// A channel of its own toward the agent, connected on its first call.
    fn channel(&self) -> Channel {
        match &self.tls {
            None => self.endpoint.connect_lazy(),
            Some(c) => self.endpoint.connect_with_connector_lazy(c.clone()),
        }
    }
}

impl GrpcUpstream {
    /// Must run inside a tokio runtime (the channel's worker is spawned).
    pub fn new(
        endpoint: &UpstreamEndpoint,
        max_message: usize,
        read_timeout: Duration,
    ) -> GrpcUpstream {
        GrpcUpstream {
            channel: endpoint.channel(),
            max_message,
            read_timeout,
            endpoint: endpoint.clone(),
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
    /// `repeat`: the call's row of the retry table.
    async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &'static str,
        req: tonic::Request<Req>,
        repeat: Repeat,
    ) -> Result<tonic::Response<Resp>, Status> {
        let (md, _, msg) = req.into_parts();
        let headers = md.into_headers();
        let (resp, _) = self.call_with(path, &msg, &headers, repeat).await?;
        Ok(tonic::Response::new(resp))
    }

    /// [`Self::call`] for the direct path: the metadata given as the
    /// request's extra headers; also returns the answer's raw message
    /// bytes. Each attempt that has not been answered in whole within
    /// `read_timeout` gets DEADLINE_EXCEEDED (read as the upstream timing
    /// out). Under the one retry table (crate::upstream::retry): a call whose
    /// connection ended after it was sent and before any answer is sent
    /// once more on a new connection when it is a read ([`Repeat::Safe`]);
    /// any other call's outcome is then unknown. A call whose stream the
    /// agent refused unprocessed ([`crate::error::refused_unprocessed`]) is sent once
    /// more on a new connection, whatever the call.
    pub(super) async fn call_with<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        path: &'static str,
        msg: &Req,
        extra: &http::HeaderMap,
        repeat: Repeat,
    ) -> Result<(Resp, bytes::Bytes), Status> {
        let body = frame(msg)?;
        let mut attempts = crate::upstream::Attempts::new(repeat);
        let mut ch = self.channel.clone();
        loop {
            let mut answered = false;
            let call = attempt(
                ch,
                path,
                body.clone(),
                extra,
                self.max_message,
                &mut answered,
            );
            let r = tokio::time::timeout(self.read_timeout, call).await;
            let (status, lost) = match r {
                Ok(Ok(r)) => return Ok(r),
                Ok(Err(e)) => lost_by(e),
                Err(_) => {
                    let s = Status::deadline_exceeded(format!(
                        "the upstream agent did not answer {path} within {} ms",
                        self.read_timeout.as_millis()
                    ));
                    let lost = if answered {
                        Lost::Answered(Failure::UpstreamTimeout)
                    } else {
                        Lost::InDoubt {
                            failure: Failure::UpstreamTimeout,
                            timed_out: true,
                        }
                    };
                    (s, lost)
                }
            };
            // The shared channel connects anew on its own once it sees its
            // connection closed (a pooled connection found closed is not
            // seen here); a call sent again goes on a new connection of
            // its own, not on one that may be ending.
            match attempts.next(lost, false) {
                Ok(()) => ch = self.endpoint.channel(),
                Err(f @ Failure::OutcomeUnknown { .. }) => return Err(decided(f)),
                Err(_) => return Err(status),
            }
        }
    }

    /// A server stream opened by `open` under the one retry table, as
    /// [`Self::call_with`]: `req` sent once more on a new connection when
    /// its connection ended before the answer's head and `repeat` allows
    /// it; a streaming send so lost has an unknown outcome; a stream the
    /// agent refused unprocessed is opened once more, whatever the call.
    /// Once the head came, the stream is the caller's (never opened
    /// again).
    pub(in crate::grpc) async fn open_stream<Q: Clone, R, F>(
        &self,
        repeat: Repeat,
        req: tonic::Request<Q>,
        open: impl Fn(Channel, tonic::Request<Q>) -> F,
    ) -> Result<tonic::Response<tonic::Streaming<R>>, Status>
    where
        F: std::future::Future<Output = Result<tonic::Response<tonic::Streaming<R>>, Status>>,
    {
        let (md, _, msg) = req.into_parts();
        let again = |md: &tonic::metadata::MetadataMap| {
            tonic::Request::from_parts(md.clone(), Default::default(), msg.clone())
        };
        let mut attempts = crate::upstream::Attempts::new(repeat);
        let mut ch = self.channel.clone();
        loop {
            let s = match open(ch, again(&md)).await {
                Ok(r) => return Ok(r),
                Err(s) => s,
            };
            let Some(lost) = transport_error(&s).map(lost_after_sending) else {
                return Err(s);
            };
            match attempts.next(lost, false) {
                Ok(()) => ch = self.endpoint.channel(),
                Err(f @ Failure::OutcomeUnknown { .. }) => return Err(decided(f)),
                Err(_) => return Err(s),
            }
        }
    }
}

/// The channel's own error behind a status tonic's client made of it (no
/// answer's head came); `None` for a status the agent answered with.
fn transport_error(s: &Status) -> Option<&tonic::transport::Error> {
    crate::error::in_chain(s)
}

fn gone(e: &tonic::transport::Error) -> Failure {
    Failure::UpstreamUnavailable {
        detail: e.to_string(),
    }
}

/// One attempt of [`GrpcUpstream::call_with`] on `ch`; `answered` is set
/// once the answer's head came.
async fn attempt<Resp: prost::Message + Default>(
    mut ch: Channel,
    path: &'static str,
    body: bytes::Bytes,
    extra: &http::HeaderMap,
    max_message: usize,
    answered: &mut bool,
) -> Result<(Resp, bytes::Bytes), Sent> {
    let mut b = http::Request::post(path)
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    if let Some(h) = b.headers_mut() {
        h.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let req = b
        .body(tonic::body::Body::new(http_body_util::Full::new(body)))
        .map_err(|e| Sent::Answer(Status::internal(e.to_string())))?;
    std::future::poll_fn(|cx| tonic::codegen::Service::poll_ready(&mut ch, cx))
        .await
        .map_err(Sent::Not)?;
    let resp = tonic::codegen::Service::call(&mut ch, req)
        .await
        .map_err(Sent::Lost)?;
    *answered = true;
    read_answer(resp, max_message).await.map_err(Sent::Answer)
}

/// `msg` as one uncompressed gRPC length-prefixed frame.
fn frame<Req: prost::Message>(msg: &Req) -> Result<bytes::Bytes, Status> {
    let len = msg.encoded_len();
    let mut buf = Vec::with_capacity(5 + len);
    buf.push(0);
    buf.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_be_bytes());
    msg.encode(&mut buf)
        .map_err(|e| Status::internal(format!("encoding the request: {e}")))?;
    Ok(bytes::Bytes::from(buf))
}

/// The answer's status (in its head, or its trailers) or its one message
/// (at most `max_message` bytes), decoded; also its raw bytes.
async fn read_answer<Resp: prost::Message + Default>(
    resp: http::Response<tonic::body::Body>,
    max_message: usize,
) -> Result<(Resp, bytes::Bytes), Status> {
    if let Some(s) = Status::from_header_map(resp.headers()) {
        if s.code() != Code::Ok {
            return Err(s);
        }
    }
    let limited = http_body_util::Limited::new(resp.into_body(), max_message + 5);
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

/// How an attempt of a unary call failed.
enum Sent {
    /// The channel was not ready (no request written).
    Not(tonic::transport::Error),
    /// The request went to the channel and no answer's head came.
    Lost(tonic::transport::Error),
    /// The agent's answer (its status), or a failure inside it.
    Answer(Status),
}

/// The status the caller is told for a failed attempt, and what the retry
/// table knows of it: a failed connect (or TLS) reached no agent; a
/// request handed to the connection and then lost before the answer's
/// head may have arrived, unless the agent refused it unprocessed; an
/// answer is final.
fn lost_by(e: Sent) -> (Status, Lost) {
    match e {
        Sent::Lost(e) => {
            let lost = lost_after_sending(&e);
            (unavailable(e), lost)
        }
        Sent::Not(e) => {
            let lost = Lost::NotSent(gone(&e));
            (unavailable(e), lost)
        }
        Sent::Answer(s) => {
            let lost = Lost::Answered(Failure::BadUpstreamResponse {
                detail: s.message().to_string(),
            });
            (s, lost)
        }
    }
}

/// What the retry table knows of a request handed to the channel that
/// failed with `e` before any answer's head: not acted on when the agent
/// refused its stream unprocessed, nothing written when the connect (TCP
/// or TLS) failed, else it may have arrived.
fn lost_after_sending(e: &tonic::transport::Error) -> Lost {
    if crate::error::refused_unprocessed(e) {
        Lost::Refused(gone(e))
    } else if never_connected(e) {
        Lost::NotSent(gone(e))
    } else {
        Lost::InDoubt {
            failure: gone(e),
            timed_out: false,
        }
    }
}

/// The channel never had a connection for the call: its connect (TCP or
/// TLS) failed, so nothing was written.
fn never_connected(e: &tonic::transport::Error) -> bool {
    crate::error::in_chain::<tonic::ConnectError>(e).is_some()
}

/// A failure the retry table decided (the outcome of a call that must
/// not act twice is unknown), carried by the status the caller's path
/// reads with [`transport_failure`].
#[derive(Debug)]
pub(in crate::grpc) struct Decided(pub Failure);

impl std::fmt::Display for Decided {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Its label only: the detail is for the log.
        f.write_str(self.0.label())
    }
}

impl std::error::Error for Decided {}

fn decided(f: Failure) -> Status {
    // No detail in the message: it is the failure's (for the log).
    let mut s = Status::unknown("the agent's connection ended before its answer");
    s.set_source(std::sync::Arc::new(Decided(f)));
    s
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
