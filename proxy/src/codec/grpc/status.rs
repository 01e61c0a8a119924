//! Errors toward gRPC callers: a JSON-RPC `error` object (already in the
//! caller's version) or a proxy [`Failure`] becomes a `tonic::Status`.
//!
//! * v1.0 callers: the v1.0.1 §5.4 status, the message unchanged, and a
//!   `google.rpc.Status` in `grpc-status-details-bin` carrying a
//!   `google.rpc.ErrorInfo` (the upstream's own when it sent one, else
//!   synthesised from the code; domain `a2a-protocol.org`).
//! * v0.3 callers: the status a2a-python 0.3 servers use, the message
//!   prefixed `"<ErrorName>: "` (what a2a-python 0.3 clients parse), and the
//!   same ErrorInfo details (EDGE-CASES 24).

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;
use serde_json::Value;
use tonic::{Code, Status};
use translate::code::{ErrorCode, GrpcCode};

use crate::error::{jsonrpc_envelope, reason_of, Failure};
use crate::version::Version;

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<ProtoAny>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProtoAny {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorInfo {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub domain: String,
    #[prost(map = "string, string", tag = "3")]
    pub metadata: HashMap<String, String>,
}

pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
const DOMAIN: &str = "a2a-protocol.org";

fn code_of(g: GrpcCode) -> Code {
    Code::from_i32(g.number())
}

/// The ErrorInfo a v1.0 `data` array carries, if any.
fn info_in(data: Option<&Value>) -> Option<ErrorInfo> {
    let Some(Value::Array(items)) = data else {
        return None;
    };
    let item = items
        .iter()
        .find(|d| d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE))?;
    let s = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let metadata = match item.get("metadata") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), v)
            })
            .collect(),
        _ => HashMap::new(),
    };
    Some(ErrorInfo {
        reason: s("reason"),
        domain: s("domain"),
        metadata,
    })
}

/// Scalar members of a v0.3 `data` object as ErrorInfo metadata.
fn metadata_of(data: Option<&Value>) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if let Some(Value::Object(m)) = data {
        for (k, v) in m {
            match v {
                Value::String(s) => {
                    out.insert(k.clone(), s.clone());
                }
                Value::Number(_) | Value::Bool(_) => {
                    out.insert(k.clone(), v.to_string());
                }
                _ => {}
            }
        }
    }
    out
}

/// A JSON-RPC `error` object of the `client`'s version as a gRPC status;
/// `force` overrides the code (transport conditions).
pub fn from_rpc_error(client: Version, error: &Value, force: Option<Code>) -> Status {
    let num = error.get("code").and_then(Value::as_i64).unwrap_or(-32603);
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let known = ErrorCode::from_code(num);
    let data = error.get("data");
    let info = match client {
        Version::V10 => info_in(data),
        Version::V03 => None,
    }
    .unwrap_or_else(|| ErrorInfo {
        reason: known.map_or("UNKNOWN", reason_of).to_string(),
        domain: DOMAIN.to_string(),
        metadata: match client {
            Version::V03 => metadata_of(data),
            Version::V10 => HashMap::new(),
        },
    });
    let (code, text) = match client {
        Version::V10 => {
            // Inbound classification: ErrorInfo.reason first, then the code.
            let by_reason = ErrorCode::from_reason(&info.reason).or(known);
            (
                by_reason.map_or(Code::Unknown, |c| code_of(c.grpc_code())),
                message,
            )
        }
        Version::V03 => {
            let name = known
                .and_then(|c| c.name(Version::V03).or(c.name(Version::V10)))
                .unwrap_or("A2AError");
            (
                known.map_or(Code::Unknown, |c| code_of(c.v03_grpc_code())),
                format!("{name}: {message}"),
            )
        }
    };
    let code = force.unwrap_or(code);
    let details = RpcStatus {
        code: code as i32,
        message: text.clone(),
        details: vec![ProtoAny {
            type_url: ERROR_INFO_TYPE.to_string(),
            value: info.encode_to_vec(),
        }],
    };
    Status::with_details(code, text, Bytes::from(details.encode_to_vec()))
}

/// A proxy failure as a gRPC status in the `client`'s dialect.
pub fn from_failure(client: Version, failure: &Failure) -> Status {
    tracing::info!(
        reason = failure.label(),
        ?client,
        "gRPC call failed in the proxy"
    );
    failure.log_detail();
    let force = match failure {
        Failure::UpstreamUnavailable { .. }
        | Failure::UpstreamTls { .. }
        | Failure::Overloaded { .. } => Some(Code::Unavailable),
        Failure::UpstreamTimeout | Failure::StreamExpired { .. } => Some(Code::DeadlineExceeded),
        Failure::OutcomeUnknown { .. } => Some(Code::Unknown),
        // The proxy's own refusal of an `a2a-version` (the agent never sees
        // the call): UNIMPLEMENTED, as v1.0.0 §5.4 and the A2A TCK have it
        // (v1.0.1 moved it to FAILED_PRECONDITION); the ErrorInfo reason
        // VERSION_NOT_SUPPORTED names it for readers of either table.
        Failure::VersionNotSupported { .. } | Failure::VersionNotServed { .. }
            if client == Version::V10 =>
        {
            Some(Code::Unimplemented)
        }
        _ => None,
    };
    let env = jsonrpc_envelope(failure, client, None);
    from_rpc_error(client, &env["error"], force)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn details(s: &Status) -> (RpcStatus, ErrorInfo) {
        let st = RpcStatus::decode(s.details()).unwrap();
        let info = ErrorInfo::decode(st.details[0].value.as_slice()).unwrap();
        (st, info)
    }

    #[test]
    fn v10_task_not_found() {
        let e = json!({"code":-32001,"message":"no such task","data":[{"@type":ERROR_INFO_TYPE,"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t1"}}]});
        let s = from_rpc_error(Version::V10, &e, None);
        assert_eq!(s.code(), Code::NotFound);
        assert_eq!(s.message(), "no such task");
        let (st, info) = details(&s);
        assert_eq!(st.code, Code::NotFound as i32);
        assert_eq!(st.details[0].type_url, ERROR_INFO_TYPE);
        assert_eq!(info.reason, "TASK_NOT_FOUND");
        assert_eq!(info.domain, "a2a-protocol.org");
        assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t1"));
    }

    #[test]
    fn v03_prefix_and_python_status() {
        let e = json!({"code":-32002,"message":"done already"});
        let s = from_rpc_error(Version::V03, &e, None);
        assert_eq!(s.code(), Code::Unimplemented);
        assert_eq!(s.message(), "TaskNotCancelableError: done already");
        assert_eq!(details(&s).1.reason, "TASK_NOT_CANCELABLE");
    }

    #[test]
    fn failures_keep_transport_codes() {
        let s = from_failure(Version::V10, &Failure::UpstreamTimeout);
        assert_eq!(s.code(), Code::DeadlineExceeded);
        let s = from_failure(
            Version::V10,
            &Failure::VersionNotSupported {
                requested: "2.0".into(),
            },
        );
        assert_eq!(s.code(), Code::Unimplemented);
        assert_eq!(details(&s).1.reason, "VERSION_NOT_SUPPORTED");
        assert_eq!(details(&s).0.code, Code::Unimplemented as i32);
        // An agent's own VersionNotSupported keeps the v1.0.1 table's status.
        let e = json!({"code": -32009, "message": "no"});
        assert_eq!(
            from_rpc_error(Version::V10, &e, None).code(),
            Code::FailedPrecondition
        );
    }
}
