//! v0.3 JSON-RPC 2.0 envelopes (schema `JSONRPCRequest`, `JSONRPCResponse`,
//! `JSONRPCError`). `params` and `result` stay untyped JSON here; the
//! per-method shapes live in [`crate::v03::params`] and the payload modules.
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
    /// The v0.3 method name (`message/send`, ...).
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

/// A JSON-RPC `error` object (schema `JSONRPCError`); `data` is free-form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorObject {
    /// The error code (see [`crate::code`]).
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Free-form detail, verbatim (`null` is `Some(Value::Null)`).
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
