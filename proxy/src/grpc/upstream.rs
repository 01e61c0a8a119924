//! A gRPC upstream (`upstream.grpc_url`): the bridge's JSON-RPC request in
//! the upstream's version (already translated by [`RpcTranslation`]) is sent
//! as the matching RPC of the upstream's gRPC service, with a tonic client of
//! that version; the prost answer (or the status) comes back as the JSON-RPC
//! response the upstream's JSON-RPC binding would have sent, so translation,
//! push restoring and the task index work unchanged.
//!
//! Conversions are `proto`'s (`convert_v03*` / `convert_v10*`: prost <->
//! `translate` models); server-streaming answers are converted message by
//! message. Same-version calls do not come here: they are forwarded as raw
//! frames ([`super::passthrough`]).
//!
//! [`RpcTranslation`]: crate::translation::RpcTranslation

use std::pin::Pin;
use std::time::Duration;

use prost::Message as _;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio_stream::{Stream, StreamExt};
use tonic::metadata::MetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Code, Status};
use translate::code::ErrorCode;
use translate::method::Method;
use translate::TranslateError;

use super::bridge::CallMeta;
use super::status::{ErrorInfo, RpcStatus, ERROR_INFO_TYPE};
use crate::config::HttpUrl;
use crate::error::Failure;
use crate::version::Version;

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
        let ch = self.channel.clone();
        match upstream {
            Version::V03 => {
                use proto::convert_v03_rpc as r;
                use proto::v03::a2a_service_client::A2aServiceClient;
                let mut c = A2aServiceClient::new(ch);
                let s = match method {
                    Method::SendStreamingMessage => {
                        let req = request(upstream, r::send_params_to_pb(model(params)?), meta)?;
                        c.send_streaming_message(req).await
                    }
                    Method::SubscribeToTask => {
                        let req =
                            request(upstream, r::task_subscription_to_pb(model(params)?), meta)?;
                        c.task_subscription(req).await
                    }
                    other => return Err(not_streaming(other)),
                };
                Ok(events(upstream, id, s, |m| {
                    json_of(proto::convert_v03::stream_from_pb(m))
                }))
            }
            Version::V10 => {
                use proto::convert_v10_rpc as r;
                use proto::v10::a2a_service_client::A2aServiceClient;
                let mut c = A2aServiceClient::new(ch);
                let s = match method {
                    Method::SendStreamingMessage => {
                        let req = request(upstream, r::send_request_to_pb(model(params)?), meta)?;
                        c.send_streaming_message(req).await
                    }
                    Method::SubscribeToTask => {
                        let req = request(upstream, r::subscribe_to_pb(model(params)?), meta)?;
                        c.subscribe_to_task(req).await
                    }
                    other => return Err(not_streaming(other)),
                };
                Ok(events(upstream, id, s, |m| {
                    json_of(proto::convert_v10::stream_from_pb(m))
                }))
            }
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

    async fn unary_v03(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v03 as c;
        use proto::convert_v03_rpc as r;
        const V: Version = Version::V03;
        Ok(match method {
            Method::SendMessage => {
                let req = request(V, r::send_params_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/SendMessage", req).await,
                    r::send_response_from_pb,
                )?
            }
            Method::GetTask => {
                let req = request(V, r::get_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CancelTask => {
                let req = request(V, r::cancel_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/CancelTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CreatePushConfig => {
                let req = request(V, r::create_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/CreateTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::GetPushConfig => {
                let req = request(V, r::get_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::ListPushConfigs => {
                let req = request(V, r::list_push_configs_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/ListTaskPushNotificationConfig", req)
                        .await,
                    r::list_push_configs_response_from_pb,
                )?
            }
            Method::DeletePushConfig => {
                let req = request(V, r::delete_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/DeleteTaskPushNotificationConfig", req)
                        .await,
                    |_: proto::pbjson_types::Empty| Ok::<_, TranslateError>(Value::Null),
                )?
            }
            // v0.3's gRPC binding has one card RPC (the agent's card).
            Method::GetExtendedCard => {
                let req = request(V, r::get_agent_card_to_pb(), meta)?;
                answer(
                    self.call("/a2a.v1.A2AService/GetAgentCard", req).await,
                    c::agent_card_from_pb,
                )?
            }
            Method::SendStreamingMessage | Method::SubscribeToTask | Method::ListTasks => {
                return Err(Failure::Internal {
                    detail: format!("{method:?} is not a unary v0.3 gRPC call"),
                })
            }
        })
    }

    async fn unary_v10(
        &self,
        method: Method,
        params: Value,
        meta: &CallMeta,
    ) -> Result<Result<Value, Status>, Failure> {
        use proto::convert_v10 as c;
        use proto::convert_v10_rpc as r;
        const V: Version = Version::V10;
        Ok(match method {
            Method::SendMessage => {
                let req = request(V, r::send_request_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/SendMessage", req).await,
                    r::send_response_from_pb,
                )?
            }
            Method::GetTask => {
                let req = request(V, r::get_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::ListTasks => {
                let req = request(V, r::list_tasks_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/ListTasks", req).await,
                    r::list_tasks_response_from_pb,
                )?
            }
            Method::CancelTask => {
                let req = request(V, r::cancel_task_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/CancelTask", req).await,
                    c::task_from_pb,
                )?
            }
            Method::CreatePushConfig => {
                let req = request(V, r::task_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call(
                        "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
                        req,
                    )
                    .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::GetPushConfig => {
                let req = request(V, r::get_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig", req)
                        .await,
                    r::task_push_config_from_pb,
                )?
            }
            Method::ListPushConfigs => {
                let req = request(V, r::list_push_configs_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs", req)
                        .await,
                    r::list_push_configs_response_from_pb,
                )?
            }
            Method::DeletePushConfig => {
                let req = request(V, r::delete_push_config_to_pb(model(params)?), meta)?;
                answer(
                    self.call(
                        "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
                        req,
                    )
                    .await,
                    |_: proto::pbjson_types::Empty| Ok::<_, TranslateError>(Value::Null),
                )?
            }
            Method::GetExtendedCard => {
                let req = request(V, r::get_extended_card_to_pb(model(params)?), meta)?;
                answer(
                    self.call("/lf.a2a.v1.A2AService/GetExtendedAgentCard", req)
                        .await,
                    c::agent_card_from_pb,
                )?
            }
            Method::SendStreamingMessage | Method::SubscribeToTask => {
                return Err(not_streaming(method));
            }
        })
    }
}

fn not_streaming(method: Method) -> Failure {
    Failure::Internal {
        detail: format!("{method:?} is not a server-streaming gRPC call"),
    }
}

/// (id, method, params) of a JSON-RPC request the bridge built.
fn parse_request(body: &[u8]) -> Result<(Value, Method, Value), Failure> {
    let internal = |detail: String| Failure::Internal { detail };
    let mut v: Value = serde_json::from_slice(body).map_err(|e| internal(e.to_string()))?;
    let name = v["method"].as_str().unwrap_or_default().to_string();
    let (method, _) = Method::from_name(&name)
        .ok_or_else(|| internal(format!("no gRPC call for JSON-RPC method {name:?}")))?;
    let params = match v.get_mut("params").map(Value::take) {
        Some(Value::Null) | None => json!({}),
        Some(p) => p,
    };
    Ok((v["id"].take(), method, params))
}

/// Upstream-version params as the model the converters take; a mismatch
/// is the caller's (invalid params).
fn model<M: DeserializeOwned>(params: Value) -> Result<M, Failure> {
    serde_json::from_value(params).map_err(|e| Failure::Translate {
        code: -32602,
        message: format!("invalid params: {e}"),
    })
}

/// The tonic request with the caller's end-to-end metadata
/// (crate::forward), the upstream's `a2a-version`, extensions and the
/// caller's remaining deadline.
fn request<T>(
    upstream: Version,
    msg: Result<T, TranslateError>,
    meta: &CallMeta,
) -> Result<tonic::Request<T>, Failure> {
    let msg = msg.map_err(|e| Failure::Translate {
        code: i64::from(e.jsonrpc_code()),
        message: e.to_string(),
    })?;
    let mut req = tonic::Request::new(msg);
    let mut caller = http::HeaderMap::new();
    crate::forward::append_caller_headers(&meta.presented.0, &mut caller);
    *req.metadata_mut() = tonic::metadata::MetadataMap::from_headers(caller);
    let md = req.metadata_mut();
    if let Ok(v) = MetadataValue::try_from(meta.upstream_header(upstream)) {
        md.insert("a2a-version", v);
    }
    if let Some(ext) = &meta.extensions {
        if let Ok(v) = MetadataValue::try_from(ext.as_str()) {
            let key = match upstream {
                Version::V10 => "a2a-extensions",
                Version::V03 => "x-a2a-extensions",
            };
            md.insert(key, v);
        }
    }
    if let Some(t) = meta.timeout {
        req.set_timeout(t);
    }
    Ok(req)
}

fn json_of<M: Serialize>(m: Result<M, TranslateError>) -> Result<Value, Failure> {
    let m = m.map_err(|e| Failure::BadUpstreamResponse {
        detail: e.to_string(),
    })?;
    serde_json::to_value(m).map_err(|e| Failure::Internal {
        detail: e.to_string(),
    })
}

/// A unary answer as the JSON `result` (or the upstream's status, kept for
/// [`error_of`]); transport conditions are failures.
fn answer<P, M: Serialize>(
    r: Result<tonic::Response<P>, Status>,
    conv: impl FnOnce(P) -> Result<M, TranslateError>,
) -> Result<Result<Value, Status>, Failure> {
    match r {
        Ok(resp) => json_of(conv(resp.into_inner())).map(Ok),
        Err(s) => {
            transport_failure(&s)?;
            Ok(Err(s))
        }
    }
}

/// Why an upstream call gave no answer to translate.
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

/// Statuses that say the upstream could not be reached or did not answer
/// in time (no A2A error details) are the proxy's failures.
pub(super) fn transport_failure(s: &Status) -> Result<(), Failure> {
    // A TLS failure toward an https:// agent: which agent, what kind.
    if let Some(f) = std::error::Error::source(s).and_then(crate::upstream_tls::connect_failure_in)
    {
        return Err(f);
    }
    let timed_out = std::error::Error::source(s)
        .is_some_and(|e| e.downcast_ref::<tonic::TimeoutExpired>().is_some());
    if timed_out {
        return Err(Failure::UpstreamTimeout);
    }
    if s.details().is_empty() {
        match s.code() {
            Code::Unavailable | Code::Cancelled => {
                return Err(Failure::UpstreamUnavailable {
                    detail: format!("{:?}: {}", s.code(), s.message()),
                })
            }
            Code::DeadlineExceeded => return Err(Failure::UpstreamTimeout),
            _ => {}
        }
    }
    Ok(())
}

pub(super) fn envelope(upstream: Version, id: &Value, r: Result<Value, Status>) -> Vec<u8> {
    let v = match r {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(s) => json!({"jsonrpc": "2.0", "id": id, "error": error_of(upstream, &s)}),
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

fn events<P: Send + 'static>(
    upstream: Version,
    id: Value,
    opened: Result<tonic::Response<tonic::Streaming<P>>, Status>,
    conv: fn(P) -> Result<Value, Failure>,
) -> Events {
    let s = match opened {
        Ok(r) => r.into_inner(),
        Err(s) => {
            let item = transport_failure(&s).map(|()| envelope(upstream, &id, Err(s)));
            return Box::pin(tokio_stream::once(item));
        }
    };
    // tonic's stream ends after an error item.
    Box::pin(s.map(move |item| match item {
        Ok(m) => conv(m).map(|v| envelope(upstream, &id, Ok(v))),
        Err(s) => transport_failure(&s).map(|()| envelope(upstream, &id, Err(s))),
    }))
}

/// The JSON-RPC `error` object in `upstream`'s version for a status the
/// upstream answered with.
///
/// * v1.0: the `google.rpc.ErrorInfo` in the details decides (its reason
///   names the A2A error) and goes into `data` as is; without one the
///   status code does (v1.0.1 §5.4 read backwards).
/// * v0.3: the `"<ErrorName>: "` prefix a2a-python 0.3 servers put in the
///   message decides, then the status code; ErrorInfo metadata becomes
///   `data`.
pub fn error_of(upstream: Version, s: &Status) -> Value {
    let info = error_info(s);
    let by_code = match s.code() {
        Code::InvalidArgument => ErrorCode::InvalidParams,
        Code::NotFound => ErrorCode::TaskNotFound,
        Code::Unimplemented => match upstream {
            Version::V10 => ErrorCode::MethodNotFound,
            Version::V03 => ErrorCode::UnsupportedOperation,
        },
        Code::FailedPrecondition => ErrorCode::UnsupportedOperation,
        _ => ErrorCode::Internal,
    };
    let mut message = s.message().to_string();
    let code = match upstream {
        Version::V10 => info
            .as_ref()
            .and_then(|i| ErrorCode::from_reason(&i.reason))
            .unwrap_or(by_code),
        Version::V03 => {
            let named = message.split_once(": ").and_then(|(name, rest)| {
                ErrorCode::ALL
                    .into_iter()
                    .find(|c| c.name(Version::V03).or(c.name(Version::V10)) == Some(name))
                    .map(|c| (c, rest.to_string()))
            });
            match named {
                Some((c, rest)) => {
                    message = rest;
                    c
                }
                None => info
                    .as_ref()
                    .and_then(|i| ErrorCode::from_reason(&i.reason))
                    .unwrap_or(by_code),
            }
        }
    };
    let mut err = json!({"code": code.code(), "message": message});
    match (upstream, info) {
        (Version::V10, Some(i)) => {
            let metadata: Map<String, Value> = i
                .metadata
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            err["data"] = json!([{"@type": ERROR_INFO_TYPE, "reason": i.reason,
                "domain": i.domain, "metadata": metadata}]);
        }
        (Version::V03, Some(i)) if !i.metadata.is_empty() => {
            let data: Map<String, Value> = i
                .metadata
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            err["data"] = Value::Object(data);
        }
        _ => {}
    }
    err
}

/// The ErrorInfo in a status's `grpc-status-details-bin`, if any.
fn error_info(s: &Status) -> Option<ErrorInfo> {
    if s.details().is_empty() {
        return None;
    }
    let st = RpcStatus::decode(s.details()).ok()?;
    st.details
        .iter()
        .find(|d| d.type_url == ERROR_INFO_TYPE)
        .and_then(|d| ErrorInfo::decode(d.value.as_slice()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grpc::status::from_rpc_error;

    #[test]
    fn statuses_back_to_jsonrpc_errors() {
        // What the proxy itself renders reads back to the same error.
        let e10 = json!({"code":-32001,"message":"gone","data":[{"@type":ERROR_INFO_TYPE,"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]});
        let s = from_rpc_error(Version::V10, &e10, None);
        assert_eq!(error_of(Version::V10, &s), e10);
        let s = from_rpc_error(Version::V03, &json!({"code":-32002,"message":"done"}), None);
        assert_eq!(
            error_of(Version::V03, &s),
            json!({"code":-32002,"message":"done"})
        );
        // Bare statuses: by code.
        let s = Status::new(Code::NotFound, "nope");
        assert_eq!(
            error_of(Version::V10, &s),
            json!({"code":-32001,"message":"nope"})
        );
        let s = Status::new(Code::Internal, "x: y");
        assert_eq!(
            error_of(Version::V03, &s),
            json!({"code":-32603,"message":"x: y"})
        );
        assert!(transport_failure(&Status::unavailable("down")).is_err());
        assert!(transport_failure(&Status::not_found("t")).is_ok());
    }

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
