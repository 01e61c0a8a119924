//! The JSON-RPC side of a gRPC upstream call: the bridge's request read
//! into its method and params (and those into the tonic request), and the
//! agent's answers, statuses and streams written back as the JSON-RPC
//! envelopes its JSON-RPC binding would have sent.

use prost::Message as _;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use tokio_stream::StreamExt;
use tonic::metadata::{MetadataKey, MetadataValue};
use tonic::{Code, Status};
use translate::code::ErrorCode;
use translate::method::Method;
use translate::TranslateError;

use super::Events;
use crate::error::Failure;
use crate::grpc::bridge::CallMeta;
use crate::grpc::status::{ErrorInfo, RpcStatus, ERROR_INFO_TYPE};
use crate::version::Version;

pub(super) fn not_streaming(method: Method) -> Failure {
    Failure::Internal {
        detail: format!("{method:?} is not a server-streaming gRPC call"),
    }
}

/// (id, method, params) of a JSON-RPC request the bridge built.
pub(super) fn parse_request(body: &[u8]) -> Result<(Value, Method, Value), Failure> {
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
pub(super) fn model<M: DeserializeOwned>(params: Value) -> Result<M, Failure> {
    serde_json::from_value(params).map_err(|e| Failure::Translate {
        code: -32602,
        message: format!("invalid params: {e}"),
    })
}

/// The tonic request with the caller's end-to-end metadata
/// (crate::forward), the upstream's `a2a-version`, extensions and the
/// caller's remaining deadline.
pub(super) fn request<T>(
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
    // In the agent's spelling, merged as the HTTP bindings merge them.
    if let Some((key, ext)) = crate::codec::extensions_for(upstream, &meta.presented.0) {
        let key = MetadataKey::from_bytes(key.as_bytes());
        if let (Ok(k), Ok(v)) = (key, MetadataValue::try_from(ext)) {
            md.insert(k, v);
        }
    }
    if let Some(t) = meta.timeout {
        req.set_timeout(t);
    }
    Ok(req)
}

pub(super) fn json_of<M: Serialize>(m: Result<M, TranslateError>) -> Result<Value, Failure> {
    let m = m.map_err(|e| Failure::BadUpstreamResponse {
        detail: e.to_string(),
    })?;
    serde_json::to_value(m).map_err(|e| Failure::Internal {
        detail: e.to_string(),
    })
}

/// A unary answer as the JSON `result` (or the upstream's status, kept for
/// [`error_of`]); transport conditions are failures.
pub(super) fn answer<P, M: Serialize>(
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

/// A service's unary RPCs as one table, a row per method:
/// `Method => path, request conversion, answer conversion;`. Expands to the
/// call of `$method`'s row on `$up` (a `GrpcUpstream`): `$params` read as
/// the row's request model and converted ([`model`]), sent with `$meta`
/// ([`request`], `$v` the agent's version), the answer converted to the
/// JSON `result` or kept as the agent's status ([`answer`]). A method
/// with no row is not a unary call of that service: an internal failure
/// (the bridge sends streams and local calls elsewhere).
macro_rules! unary_rpcs {
    ($up:expr, $v:expr, $method:expr, $params:expr, $meta:expr;
     $($m:ident => $path:literal, $to_pb:expr, $from_pb:expr;)*) => {
        match $method {
            $(translate::method::Method::$m => {
                let msg = ($to_pb)($crate::grpc::upstream::json::model($params)?);
                let req = $crate::grpc::upstream::json::request($v, msg, $meta)?;
                let repeat = $crate::upstream::Repeat::of(Some(translate::method::Method::$m));
                let r = $up.call($path, req, repeat).await;
                $crate::grpc::upstream::json::answer(r, $from_pb)
            })*
            other => Err($crate::error::Failure::Internal {
                detail: format!("{other:?} is not a unary v{} gRPC call", $v.as_str()),
            }),
        }
    };
}
pub(super) use unary_rpcs;

/// A service's server-streaming RPCs as one table, as [`unary_rpcs`] is
/// for the unary ones: `$client` the service's tonic client, `$item` the
/// conversion of each streamed message to the JSON `result`, then a row
/// per method: `Method => client method, request conversion;`. Expands to
/// `$method`'s stream opened on `$up`'s channel under the retry table
/// (`GrpcUpstream::open_stream`; `$params` read and converted as
/// [`unary_rpcs`] does), its messages as JSON-RPC envelopes ([`events`]);
/// a method with no row is not a stream of that service.
macro_rules! stream_rpcs {
    ($up:expr, $v:expr, $client:ident, $id:expr, $method:expr, $params:expr, $meta:expr, $item:expr;
     $($m:ident => $call:ident, $to_pb:expr;)*) => {{
        let s = match $method {
            $(translate::method::Method::$m => {
                let msg = ($to_pb)($crate::grpc::upstream::json::model($params)?);
                let req = $crate::grpc::upstream::json::request($v, msg, $meta)?;
                let repeat = $crate::upstream::Repeat::of(Some(translate::method::Method::$m));
                let open = |ch, r| async move { $client::new(ch).$call(r).await };
                $up.open_stream(repeat, req, open).await
            })*
            other => return Err($crate::grpc::upstream::json::not_streaming(other)),
        };
        Ok($crate::grpc::upstream::json::events($v, $id, s, $item))
    }};
}
pub(super) use stream_rpcs;

/// Statuses that say the upstream could not be reached or did not answer
/// in time (no A2A error details) are the proxy's failures.
pub(in crate::grpc) fn transport_failure(s: &Status) -> Result<(), Failure> {
    // What the retry table decided (crate::upstream::retry).
    if let Some(d) = std::error::Error::source(s).and_then(|e| e.downcast_ref::<super::Decided>()) {
        return Err(d.0.clone());
    }
    // A TLS failure toward an https:// agent: which agent, what kind.
    if let Some(f) = std::error::Error::source(s).and_then(crate::upstream::tls::connect_failure_in)
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

pub(in crate::grpc) fn envelope(
    upstream: Version,
    id: &Value,
    r: Result<Value, Status>,
) -> Vec<u8> {
    let v = match r {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err(s) => json!({"jsonrpc": "2.0", "id": id, "error": error_of(upstream, &s)}),
    };
    serde_json::to_vec(&v).unwrap_or_default()
}

pub(super) fn events<P: Send + 'static>(
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
pub(super) fn error_info(s: &Status) -> Option<ErrorInfo> {
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
}
