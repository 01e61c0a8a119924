//! Whole-document translation, used by the `translate` CLI and the fixtures
//! runner (DECISIONS "Fixture layout"): a [`Kind`] names what the input
//! bytes are, [`translate`] turns them into the other version.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::method::Method;
use crate::{
    agent_card, artifact, code, event, json, jsonrpc, message, part, push_body, push_config, task,
    v03, v10, TranslateError, Version,
};

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `part`: a message / artifact part.
    Part,
    /// `message`.
    Message,
    /// `task`.
    Task,
    /// `task-status`.
    TaskStatus,
    /// `artifact`.
    Artifact,
    /// `status-update`: a task status update event.
    StatusUpdate,
    /// `artifact-update`: a task artifact update event.
    ArtifactUpdate,
    /// `stream-response`: a v0.3 kind-tagged stream result / v1.0 `StreamResponse`.
    StreamResponse,
    /// `push-config`: a `TaskPushNotificationConfig`.
    PushConfig,
    /// `auth-info`: push authentication info.
    AuthInfo,
    /// `card`: an agent card.
    Card,
    /// `push-body`: a webhook body.
    PushBody,
    /// `error`: a bare JSON-RPC `error` object.
    Error,
    /// `request`: a JSON-RPC request envelope, or bare params (method given).
    Request,
    /// `response`: a JSON-RPC response envelope, or a bare result (method given).
    Response,
    /// `event`: a stream-event envelope (SSE `data`), or a bare stream result.
    Event,
}

impl Kind {
    /// Every kind.
    pub const ALL: [Kind; 16] = [
        Kind::Part,
        Kind::Message,
        Kind::Task,
        Kind::TaskStatus,
        Kind::Artifact,
        Kind::StatusUpdate,
        Kind::ArtifactUpdate,
        Kind::StreamResponse,
        Kind::PushConfig,
        Kind::AuthInfo,
        Kind::Card,
        Kind::PushBody,
        Kind::Error,
        Kind::Request,
        Kind::Response,
        Kind::Event,
    ];

    /// The kebab-case name (also the fixture directory name).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Part => "part",
            Kind::Message => "message",
            Kind::Task => "task",
            Kind::TaskStatus => "task-status",
            Kind::Artifact => "artifact",
            Kind::StatusUpdate => "status-update",
            Kind::ArtifactUpdate => "artifact-update",
            Kind::StreamResponse => "stream-response",
            Kind::PushConfig => "push-config",
            Kind::AuthInfo => "auth-info",
            Kind::Card => "card",
            Kind::PushBody => "push-body",
            Kind::Error => "error",
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::Event => "event",
        }
    }

    /// The kind named `name` (exact kebab-case name).
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// Parses `input` straight into `A` (no intermediate `Value`), translates it
/// with `f` and renders the result. Syntax errors are `Json`, shape errors
/// `Invalid`.
fn via<A: DeserializeOwned, B: Serialize>(
    what: &'static str,
    input: &[u8],
    f: impl FnOnce(A) -> Result<B, TranslateError>,
) -> Result<Vec<u8>, TranslateError> {
    let a: A = serde_json::from_slice(input).map_err(|e| {
        if e.is_syntax() || e.is_eof() {
            TranslateError::Json(e.to_string())
        } else {
            TranslateError::invalid(what, e.to_string())
        }
    })?;
    Ok(json::render(&f(a)?))
}

/// Chooses the v0.3 or the v1.0 translator by target version.
macro_rules! pick {
    ($to:expr, $input:expr, $what:literal, $f10:path, $f03:path) => {
        match $to {
            Version::V10 => via($what, $input, $f10),
            Version::V03 => via($what, $input, $f03),
        }
    };
}

/// The method named `name` in either version (the sets are disjoint).
fn method_of(name: Option<&str>) -> Result<Option<Method>, TranslateError> {
    match name {
        None => Ok(None),
        Some(n) => Method::from_name(n)
            .map(|(m, _)| Some(m))
            .ok_or_else(|| TranslateError::MethodNotFound(n.to_string())),
    }
}

fn need_method(m: Option<Method>, kind: Kind) -> Result<Method, TranslateError> {
    m.ok_or_else(|| {
        TranslateError::invalid(
            "document",
            format!("a {} document needs the method name", kind.name()),
        )
    })
}

fn is_envelope(v: &Value) -> bool {
    v.as_object().is_some_and(|o| o.contains_key("jsonrpc"))
}

/// Translates the document `input` of `kind` from `to.other()` into `to`.
///
/// `method` is the JSON-RPC method name (either version's spelling is
/// accepted; the two sets are disjoint). It is required for `response`
/// documents and for bare `request` params; `event` documents default to
/// `SendStreamingMessage`. Request envelopes carry their own method.
///
/// The streaming transcoder ([`crate::transcode::document`]) is tried
/// first; what it does not take goes through the typed path
/// ([`translate_typed`]), whose output it matches byte for byte and whose
/// errors are the reference.
pub fn translate(
    kind: Kind,
    to: Version,
    method: Option<&str>,
    input: &[u8],
) -> Result<Vec<u8>, TranslateError> {
    let m = method_of(method)?;
    match crate::transcode::document(kind, to, m, input) {
        Some(out) => Ok(out),
        None => typed(kind, to, m, input),
    }
}

/// [`translate`] through the typed wire structs only: the reference path,
/// for callers that already tried the transcoder (or that check it).
pub fn translate_typed(
    kind: Kind,
    to: Version,
    method: Option<&str>,
    input: &[u8],
) -> Result<Vec<u8>, TranslateError> {
    typed(kind, to, method_of(method)?, input)
}

fn typed(
    kind: Kind,
    to: Version,
    m: Option<Method>,
    input: &[u8],
) -> Result<Vec<u8>, TranslateError> {
    // Whole documents of one entity parse straight from the bytes; envelopes
    // go through a `Value` first to tell envelopes from bare params/results.
    let value = input;
    match kind {
        Kind::Part => pick!(to, value, "Part", part::to_v10, part::to_v03),
        Kind::Message => pick!(to, value, "Message", message::to_v10, message::to_v03),
        Kind::Task => pick!(to, value, "Task", task::to_v10, task::to_v03),
        Kind::TaskStatus => pick!(
            to,
            value,
            "TaskStatus",
            task::status_to_v10,
            task::status_to_v03
        ),
        Kind::Artifact => pick!(to, value, "Artifact", artifact::to_v10, artifact::to_v03),
        Kind::StatusUpdate => pick!(
            to,
            value,
            "TaskStatusUpdateEvent",
            event::status_update_to_v10,
            event::status_update_to_v03
        ),
        Kind::ArtifactUpdate => pick!(
            to,
            value,
            "TaskArtifactUpdateEvent",
            event::artifact_update_to_v10,
            event::artifact_update_to_v03
        ),
        Kind::StreamResponse => pick!(
            to,
            value,
            "stream result",
            event::stream_to_v10,
            event::stream_to_v03
        ),
        Kind::PushConfig => pick!(
            to,
            value,
            "TaskPushNotificationConfig",
            push_config::to_v10,
            push_config::to_v03
        ),
        Kind::AuthInfo => pick!(
            to,
            value,
            "AuthenticationInfo",
            push_config::auth_to_v10,
            push_config::auth_to_v03
        ),
        Kind::Card => pick!(
            to,
            value,
            "AgentCard",
            agent_card::to_v10,
            agent_card::to_v03
        ),
        Kind::PushBody => pick!(to, value, "push body", push_body::to_v10, push_body::to_v03),
        Kind::Error => pick!(
            to,
            value,
            "JSON-RPC error",
            code::error_to_v10,
            code::error_to_v03
        ),
        Kind::Request => request(to, m, json::parse(input)?),
        Kind::Response => {
            let m = need_method(m, kind)?;
            response(to, m, json::parse(input)?)
        }
        Kind::Event => {
            let m = m.unwrap_or(Method::SendStreamingMessage);
            if !m.is_streaming() {
                return Err(TranslateError::invalid(
                    "event",
                    format!("{m:?} is not a streaming method"),
                ));
            }
            response(to, m, json::parse(input)?)
        }
    }
}

/// Translates the agent card `input` into `to`: the streaming transcoder
/// ([`crate::transcode::card`]) when it takes the card, else the typed path
/// (`translate_typed(Kind::Card, ..)`, the reference it matches byte for
/// byte). The same as `translate(Kind::Card, to, None, input)`.
pub fn card(to: Version, input: &[u8]) -> Result<Vec<u8>, TranslateError> {
    translate(Kind::Card, to, None, input)
}

fn envelope_of<T: DeserializeOwned>(v: Value) -> Result<T, TranslateError> {
    serde_json::from_value(v).map_err(|e| TranslateError::InvalidRequest(e.to_string()))
}

fn request(to: Version, m: Option<Method>, value: Value) -> Result<Vec<u8>, TranslateError> {
    if is_envelope(&value) {
        return match to {
            Version::V10 => {
                let r: v03::jsonrpc::Request = envelope_of(value)?;
                Ok(json::render(&jsonrpc::request_to_v10(r)?))
            }
            Version::V03 => {
                let r: v10::jsonrpc::Request = envelope_of(value)?;
                Ok(json::render(&jsonrpc::request_to_v03(r)?))
            }
        };
    }
    let m = need_method(m, Kind::Request)?;
    let out = match to {
        Version::V10 => jsonrpc::params_to_v10(m, Some(value))?,
        Version::V03 => jsonrpc::params_to_v03(m, Some(value))?,
    };
    Ok(json::render(&out.unwrap_or(Value::Null)))
}

fn response(to: Version, m: Method, value: Value) -> Result<Vec<u8>, TranslateError> {
    if is_envelope(&value) {
        return match to {
            Version::V10 => {
                let r: v03::jsonrpc::Response = envelope_of(value)?;
                Ok(json::render(&jsonrpc::response_to_v10_for(r, m)?))
            }
            Version::V03 => {
                let r: v10::jsonrpc::Response = envelope_of(value)?;
                Ok(json::render(&jsonrpc::response_to_v03_for(r, m)?))
            }
        };
    }
    let out = match to {
        Version::V10 => jsonrpc::result_to_v10(m, value)?,
        Version::V03 => jsonrpc::result_to_v03(m, value)?,
    };
    Ok(json::render(&out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("Part"), None);
    }
}
