//! The JSON-RPC 2.0 envelope, identical in A2A v0.3 and v1.0 (v0.3 schema
//! `JSONRPCRequest` / `JSONRPCResponse` / `JSONRPCError`, spec v1.0 §9).
//! `params`, `result` and `error.data` stay untyped JSON here; the per-method
//! shapes live in each version's `params` and payload modules.
//!
//! `id` is kept exactly as sent: a string, a number (including `0`) or
//! `null`; an absent `id` (a notification) stays absent.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::json::Extras;

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
    /// The method name (`message/send` in v0.3, `SendMessage` in v1.0, ...).
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
    /// The result (may be JSON `null`, e.g. for delete).
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

/// A JSON-RPC `error` object. In v0.3 `data` is free-form; in v1.0 it
/// should be an array of ProtoJSON `Any` details (`google.rpc.ErrorInfo` first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorObject {
    /// The error code (see [`crate::code`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// The detail, verbatim (`null` is `Some(Value::Null)`).
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub data: Option<Value>,
    #[serde(flatten)]
    pub extra: Extras,
}

/// Deserialises a member that is present (even as `null`) as `Some`.
pub(crate) fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}
