//! HTTP+JSON (REST) cross-version translation for one request. Pure: the
//! server hooks only move bytes in and out.
//!
//! The chain goes through the JSON-RPC params/results of `translate`:
//! * v1.0 REST bodies are v1.0 ProtoJSON, the same shapes as v1.0 JSON-RPC
//!   params and results;
//! * v0.3 REST bodies are v0.3 ProtoJSON (the `a2a.v1` proto messages),
//!   read and written with the `proto` crate's pbjson serde, converted to and
//!   from the `translate::v03` models with `proto::convert_v03[_rpc]`.
//!
//! Path and query values (task id, config id, `historyLength`) become params
//! members on the way in and path/query values of the upstream's grammar on
//! the way out. The v1.0 tenant is dropped toward a v0.3 agent.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use translate::method::Method;
use translate::TranslateError;

use crate::error::Failure;
use crate::version::Version;

mod answer;
mod lenient;
mod request;

pub use answer::*;
pub use request::*;

/// The request as it goes to the upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamRequest {
    pub method: http::Method,
    /// Relative to the upstream's base path, starting with `/`.
    pub path_and_query: String,
    /// `None`: no body (GET / DELETE).
    pub body: Option<Vec<u8>>,
    /// The same request in the other body form the binding's readers
    /// disagree on (a v0.3 push-config create: MAPPING-FACTS row 114), for
    /// an agent that refuses `body`.
    pub other_form: Option<Vec<u8>>,
}

impl UpstreamRequest {
    /// Sends [`Self::other_form`] instead of the body from now on; false
    /// when there is none (left).
    pub fn switch_form(&mut self) -> bool {
        match self.other_form.take() {
            Some(b) => {
                self.other_form = self.body.replace(b);
                true
            }
            None => false,
        }
    }
}

/// The translation context of one REST call.
#[derive(Debug, Clone, PartialEq)]
pub struct RestTranslation {
    pub client: Version,
    pub upstream: Version,
    pub op: Method,
    /// A v1.0 `historyLength: 0` ("no history") went to a v0.3 agent, which
    /// reads 0 as "unlimited": the answer's task history is removed here.
    pub drop_history: bool,
    /// A v1.0 GetTaskPushNotificationConfig toward a v0.3 agent: the answer
    /// is checked against the asked id (see [`crate::translation::AskedConfig`]).
    pub asked_config: Option<crate::translation::AskedConfig>,
}

fn tr(e: TranslateError) -> Failure {
    Failure::Translate {
        code: i64::from(e.jsonrpc_code()),
        message: e.to_string(),
    }
}

fn invalid_params(message: impl Into<String>) -> Failure {
    Failure::Translate {
        code: -32602,
        message: message.into(),
    }
}

fn typed<T: DeserializeOwned>(what: &'static str, v: Value) -> Result<T, TranslateError> {
    serde_json::from_value(v).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

fn untyped<T: Serialize>(what: &'static str, t: T) -> Result<Value, TranslateError> {
    serde_json::to_value(t).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

/// Parses v0.3 ProtoJSON as the prost message `T`.
fn pb_from<T: DeserializeOwned>(what: &'static str, body: &[u8]) -> Result<T, TranslateError> {
    serde_json::from_slice(body).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

/// Parses a v0.3 agent's ProtoJSON answer as the prost message `T`,
/// members `T` does not have skipped (named in the debug log), not refused
/// ([`lenient`]; requests of clients are read strictly, [`pb_from`]).
fn pb_answer<T: DeserializeOwned>(what: &'static str, body: &[u8]) -> Result<T, TranslateError> {
    skipped(what, lenient::from_slice(body))
}

/// [`pb_answer`] of a JSON value.
fn pb_answer_value<T: DeserializeOwned>(what: &'static str, v: Value) -> Result<T, TranslateError> {
    skipped(what, lenient::from_value(v))
}

fn skipped<T>(
    what: &'static str,
    read: Result<(T, Vec<String>), String>,
) -> Result<T, TranslateError> {
    let (t, skipped) = read.map_err(|e| TranslateError::invalid(what, e))?;
    if !skipped.is_empty() {
        tracing::debug!(
            what,
            ?skipped,
            "members of the agent's answer its v0.3 message lacks, skipped"
        );
    }
    Ok(t)
}

/// Renders a prost message as v0.3 ProtoJSON (timestamps with `Z`).
fn pb_to<T: Serialize>(what: &'static str, t: &T) -> Result<Value, TranslateError> {
    let mut v = untyped(what, t)?;
    zulu(&mut v);
    Ok(v)
}

/// pbjson renders UTC timestamps `+00:00`; the A2A wire uses `Z`.
fn zulu(v: &mut Value) {
    match v {
        Value::String(s)
            if s.len() >= 20
                && s.ends_with("+00:00")
                && chrono::DateTime::parse_from_rfc3339(s).is_ok() =>
        {
            s.truncate(s.len() - 6);
            s.push('Z');
        }
        Value::Array(a) => a.iter_mut().for_each(zulu),
        Value::Object(o) => o.values_mut().for_each(zulu),
        _ => {}
    }
}

/// One query parameter's (raw) value.
fn query_value<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

fn history_length(query: Option<&str>) -> Result<Option<i64>, Failure> {
    let raw = query_value(query, "historyLength").or_else(|| query_value(query, "history_length"));
    match raw {
        None | Some("") => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| invalid_params(format!("historyLength {s:?} is not an integer"))),
    }
}

/// A body that must be a JSON object (an empty body reads as `{}`).
fn json_object(body: &[u8]) -> Result<Map<String, Value>, Failure> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(Failure::Translate {
            code: -32600,
            message: "the request body must be a JSON object".into(),
        }),
        Err(e) => Err(Failure::Translate {
            code: -32700,
            message: format!("invalid JSON: {e}"),
        }),
    }
}

fn need<'a>(v: &'a Option<String>, what: &str) -> Result<&'a str, Failure> {
    v.as_deref()
        .ok_or_else(|| invalid_params(format!("{what} is missing from the path")))
}

/// Percent-encodes a path segment (ids are opaque), once. An id that
/// would be no segment or a dot segment (empty, `.`, `..`) is refused:
/// sent, it would address another resource.
pub fn path_segment(s: &str) -> Result<String, Failure> {
    seg(s)
}

fn seg(s: &str) -> Result<String, Failure> {
    if matches!(s, "" | "." | "..") {
        return Err(invalid_params(format!(
            "the id {s:?} cannot be sent as a path segment"
        )));
    }
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Ok(out)
}

/// A ProtoJSON member under its JSON name or its proto field name (parsers
/// accept both, MAPPING-FACTS §4.16); an explicit `null` is absent.
fn member<'a>(o: &'a Map<String, Value>, json: &str, proto: &str) -> Option<&'a Value> {
    o.get(json)
        .filter(|v| !v.is_null())
        .or_else(|| o.get(proto).filter(|v| !v.is_null()))
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests;
