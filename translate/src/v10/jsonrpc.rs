//! v1.0 JSON-RPC 2.0 envelopes (spec v1.0 §9). Same envelope as v0.3; the
//! `error.data` member is, by the spec, an array of ProtoJSON `Any` objects
//! (`google.rpc.ErrorInfo` first); it is kept as untyped JSON so that
//! non-conforming peers can still be read.
//!
//! `id` is kept exactly as sent: a string, a number (including `0`) or
//! `null`; an absent `id` (a notification) stays absent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Extras;
use crate::v03::jsonrpc::present;

/// A JSON-RPC request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The request id, verbatim (`null` is `Some(Value::Null)`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Value>,
    /// The v1.0 method name (`SendMessage`, ...).
    pub method: String,
    /// The method's params, verbatim (`null` is `Some(Value::Null)`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub params: Option<Value>,
    #[serde(flatten)]
    pub extra: Extras,
}

/// A JSON-RPC response: exactly one of `result` and `error` is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Response {
    /// Always `"2.0"`.
    pub jsonrpc: String,
    /// The id of the request answered, verbatim (`null` is `Some(Value::Null)`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub id: Option<Value>,
    /// The result (may be JSON `null`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub result: Option<Value>,
    /// The error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
    #[serde(flatten)]
    pub extra: Extras,
}

/// A JSON-RPC `error` object; `data` should be an array of `Any` details.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorObject {
    /// The error code (see [`crate::code`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// The details, verbatim (`null` is `Some(Value::Null)`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
    #[serde(flatten)]
    pub extra: Extras,
}

/// `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of a `google.protobuf.Value` detail.
pub const VALUE_TYPE: &str = "type.googleapis.com/google.protobuf.Value";
/// `ErrorInfo.domain` of A2A errors.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
