//! The one rescue function: any failure → a well-formed error in the client's
//! wire version and binding (invariant 5); and [`ConfigError`], the error of
//! a configuration value.
//!
//! Codes, statuses and reasons come from `translate::code` (MAPPING-FACTS §6).

use bytes::Bytes;
use serde_json::{json, Map, Value};
use translate::code::ErrorCode;

use crate::binding::Binding;
use crate::version::{ProtocolVersion, Version};
use translate::method::Method;

/// A configuration value that failed validation (`crate::config`, and the
/// `[upstream]` TLS files `crate::upstream::tls` loads for it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The key (`upstream.url`, `limits.max_body_bytes`, …) or file name.
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid configuration `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// The A2A / JSON-RPC error kinds (the `translate` table).
pub type A2aCode = ErrorCode;

/// The row of the code table the proxy renders with.
struct Row {
    jsonrpc: i64,
    reason: &'static str,
    grpc: &'static str,
    http_v10: u16,
    http_v03: u16,
}

/// `ErrorInfo.reason` for every code: the spec names reasons for A2A errors
/// only; the JSON-RPC standard errors get one by the same rule (UPPER_SNAKE
/// of the name without `Error`), so a v1.0 client always finds an ErrorInfo.
pub fn reason_of(code: ErrorCode) -> &'static str {
    code.reason().unwrap_or(match code {
        ErrorCode::JsonParse => "JSON_PARSE",
        ErrorCode::InvalidRequest => "INVALID_REQUEST",
        ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
        ErrorCode::InvalidParams => "INVALID_PARAMS",
        _ => "INTERNAL",
    })
}

fn row(code: ErrorCode) -> Row {
    Row {
        jsonrpc: code.code(),
        reason: reason_of(code),
        grpc: code.grpc_code().name(),
        http_v10: code.http_status(),
        http_v03: code.v03_rest_status(),
    }
}

/// The first error of type `T` in `e`'s chain of sources, `e` itself
/// first.
pub fn in_chain<'a, T: std::error::Error + 'static>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a T> {
    let mut cur = Some(e);
    while let Some(c) = cur {
        if let Some(t) = c.downcast_ref::<T>() {
            return Some(t);
        }
        cur = c.source();
    }
    None
}

/// An h2 agent closed the call's stream before processing any of it (RFC
/// 9113 §8.7), so the call did not happen: a `RST_STREAM` with
/// `REFUSED_STREAM`, or a `GOAWAY` whose last stream id is below the
/// call's stream (h2 ends only such streams with the agent's GOAWAY, and
/// refuses with it a stream opened after it). Any other reset (CANCEL,
/// INTERNAL_ERROR...) or a connection that ended leaves it in doubt.
pub fn refused_unprocessed(e: &(dyn std::error::Error + 'static)) -> bool {
    crate::error::in_chain::<h2::Error>(e).is_some_and(|h| {
        h.is_remote()
            && (h.is_go_away() || (h.is_reset() && h.reason() == Some(h2::Reason::REFUSED_STREAM)))
    })
}

/// Everything that can go wrong inside the proxy, before or instead of an
/// upstream answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The `A2A-Version` value names no supported version.
    VersionNotSupported { requested: String },
    /// A 1.N the proxy does not serve for this agent: newer than `served`,
    /// the agent's own 1.N (or 1.0, what translation produces for a v0.3
    /// agent); see `route::refused_minor`.
    VersionNotServed {
        requested: ProtocolVersion,
        served: ProtocolVersion,
    },
    /// The client's version differs from the upstream's and translation is
    /// not available (yet) for this request.
    CannotTranslate { client: Version, upstream: Version },
    /// The request body exceeds the configured limit.
    PayloadTooLarge { limit: usize },
    /// Too many requests in flight.
    Overloaded { limit: usize },
    /// The upstream could not be reached (refused, reset, DNS).
    UpstreamUnavailable { detail: String },
    /// The request reached the agent's connection and the connection ended
    /// (or, `timed_out`, no answer came in time) before any answer: the
    /// agent may have acted, and the call (one that must not act twice)
    /// was not sent again (crate::upstream::retry).
    OutcomeUnknown { detail: String, timed_out: bool },
    /// TLS toward an `https://` agent failed (crate::upstream::tls): the
    /// client is told the agent's config name and the kind; `detail` (its
    /// URL, the rustls error) goes to the log.
    UpstreamTls {
        agent: String,
        kind: TlsFailureKind,
        detail: String,
    },
    /// The upstream did not answer in time.
    UpstreamTimeout,
    /// An SSE stream reached its maximum duration.
    StreamExpired { limit_secs: u64 },
    /// The upstream answered with something unusable.
    BadUpstreamResponse { detail: String },
    /// A request malformed at the HTTP level.
    BadRequest { detail: String },
    /// A request that could not be translated to the upstream's version;
    /// `code` is the JSON-RPC code the translator assigned.
    Translate { code: i64, message: String },
    /// A bug or unexpected condition.
    Internal { detail: String },
}

impl Failure {
    /// (A2A code, HTTP status override for transport conditions, message,
    /// gRPC status name overriding the code's own), one arm per failure.
    fn describe(&self) -> (A2aCode, Option<u16>, String, Option<&'static str>) {
        match self {
            Failure::VersionNotSupported { requested } => (
                A2aCode::VersionNotSupported,
                None,
                format!("A2A-Version {requested:?} is not supported; supported versions: 0.3, 1.0"),
                None,
            ),
            Failure::VersionNotServed { requested, served } => (
                A2aCode::VersionNotSupported,
                None,
                format!(
                    "A2A-Version {requested} is not supported by this agent; supported versions: {}",
                    supported_list(*served).replace(',', ", ")
                ),
                None,
            ),
            Failure::CannotTranslate { client, upstream } => (
                A2aCode::VersionNotSupported,
                None,
                format!("the agent speaks A2A {upstream}; translation from {client} is not available for this request"),
                None,
            ),
            Failure::PayloadTooLarge { limit } => (
                A2aCode::InvalidRequest,
                Some(413),
                format!("request body exceeds the limit of {limit} bytes"),
                Some("INVALID_ARGUMENT"),
            ),
            Failure::Overloaded { limit } => (
                A2aCode::Internal,
                Some(503),
                format!("too many requests in flight (limit {limit})"),
                Some("UNAVAILABLE"),
            ),
            // The details of these three (the agent's own bytes, its
            // address, the proxy's internals) go to the log only
            // (Failure::log_detail); the client gets a fixed message.
            Failure::UpstreamUnavailable { .. } => (
                A2aCode::Internal,
                Some(502),
                "upstream agent unavailable".to_string(),
                Some("UNAVAILABLE"),
            ),
            Failure::OutcomeUnknown {
                timed_out: false, ..
            } => (
                A2aCode::Internal,
                Some(502),
                "the agent's connection ended after the request was sent: whether the agent acted on it is unknown (not sent again)".to_string(),
                Some("UNKNOWN"),
            ),
            Failure::OutcomeUnknown {
                timed_out: true, ..
            } => (
                A2aCode::Internal,
                Some(504),
                "the agent did not answer in time after the request was sent: whether it acted on it is unknown (not sent again)".to_string(),
                Some("UNKNOWN"),
            ),
            Failure::UpstreamTls { agent, kind, .. } => (
                A2aCode::Internal,
                Some(502),
                format!("agent {agent:?} unavailable: {}", kind.describe()),
                Some("UNAVAILABLE"),
            ),
            Failure::UpstreamTimeout => (
                A2aCode::Internal,
                Some(504),
                "upstream agent did not answer in time".to_string(),
                Some("DEADLINE_EXCEEDED"),
            ),
            Failure::StreamExpired { limit_secs } => (
                A2aCode::Internal,
                Some(504),
                format!("stream closed at its maximum duration of {limit_secs} s; resubscribe to continue"),
                Some("DEADLINE_EXCEEDED"),
            ),
            Failure::BadUpstreamResponse { .. } => (
                A2aCode::InvalidAgentResponse,
                Some(502),
                "the upstream agent's answer could not be used".to_string(),
                None,
            ),
            Failure::BadRequest { detail } => (A2aCode::InvalidRequest, Some(400), detail.clone(), None),
            Failure::Translate { code, message } => (
                ErrorCode::from_code(*code).unwrap_or(ErrorCode::InvalidRequest),
                None,
                message.clone(),
                None,
            ),
            Failure::Internal { .. } => (
                A2aCode::Internal,
                Some(500),
                "internal proxy error".to_string(),
                None,
            ),
        }
    }

    /// A short label for metrics and logs.
    pub fn label(&self) -> &'static str {
        match self {
            Failure::VersionNotSupported { .. } | Failure::VersionNotServed { .. } => {
                "version_not_supported"
            }
            Failure::CannotTranslate { .. } => "cannot_translate",
            Failure::PayloadTooLarge { .. } => "payload_too_large",
            Failure::Overloaded { .. } => "overloaded",
            Failure::UpstreamUnavailable { .. } => "upstream_unavailable",
            Failure::OutcomeUnknown { .. } => "outcome_unknown",
            Failure::UpstreamTls { .. } => "upstream_tls",
            Failure::UpstreamTimeout => "upstream_timeout",
            Failure::StreamExpired { .. } => "stream_max_duration",
            Failure::BadUpstreamResponse { .. } => "bad_upstream_response",
            Failure::BadRequest { .. } => "bad_request",
            Failure::Translate { .. } => "untranslatable",
            Failure::Internal { .. } => "internal",
        }
    }
}

/// Who the error is for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorTarget {
    pub version: Option<Version>,
    /// `None` = not known; rendered as a REST error.
    pub binding: Option<Binding>,
    pub operation: Option<Method>,
    /// The JSON-RPC request `id` (`null` when unknown).
    pub jsonrpc_id: Option<Value>,
}

/// A rendered error response.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorResponse {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Bytes,
}

/// `google.rpc.ErrorInfo` as a ProtoJSON `Any`.
fn error_info(reason: &str, metadata: &Map<String, Value>) -> Value {
    let mut info = json!({
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
    });
    if !metadata.is_empty() {
        info["metadata"] = Value::Object(metadata.clone());
    }
    info
}

fn metadata_of(failure: &Failure) -> Map<String, Value> {
    let mut metadata = Map::new();
    if let Failure::VersionNotSupported { requested } = failure {
        metadata.insert("requestedVersion".into(), Value::String(requested.clone()));
        metadata.insert("supportedVersions".into(), Value::String("0.3,1.0".into()));
    }
    if let Failure::VersionNotServed { requested, served } = failure {
        metadata.insert(
            "requestedVersion".into(),
            Value::String(requested.to_string()),
        );
        metadata.insert(
            "supportedVersions".into(),
            Value::String(supported_list(*served)),
        );
    }
    metadata.insert("proxyReason".into(), Value::String(failure.label().into()));
    metadata
}

/// The versions served when `served` is the newest 1.N: `0.3,1.0,...,served`.
fn supported_list(served: ProtocolVersion) -> String {
    let mut out = String::from("0.3");
    // Bounded: a served minor comes from a card or the config (u16), but
    // the list stops at 1.0..1.9 written out and names the range beyond.
    for minor in 0..=served.minor.min(9) {
        out.push_str(&format!(",1.{minor}"));
    }
    if served.minor > 9 {
        out.push_str(&format!(",...,{served}"));
    }
    out
}

/// The JSON-RPC error response for `failure` in `version` (v1.0: `data` is
/// an array holding an `ErrorInfo`; v0.3: a free-form object).
pub fn jsonrpc_envelope(failure: &Failure, version: Version, id: Option<Value>) -> Value {
    let (code, _, message, _) = failure.describe();
    let row = row(code);
    let metadata = metadata_of(failure);
    let mut error = json!({ "code": row.jsonrpc, "message": message });
    error["data"] = match version {
        Version::V03 => Value::Object(metadata),
        Version::V10 => json!([error_info(row.reason, &metadata)]),
    };
    json!({ "jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": error })
}

/// The most of a failure's detail written to the log (an agent's garbage
/// answer can be megabytes).
const LOGGED_DETAIL: usize = 512;

impl Failure {
    /// The detail a client is never shown (addresses, the agent's own
    /// words, rustls errors): for the log and the operator's own tools.
    fn detail(&self) -> Option<&str> {
        match self {
            Failure::UpstreamUnavailable { detail }
            | Failure::OutcomeUnknown { detail, .. }
            | Failure::BadUpstreamResponse { detail }
            | Failure::UpstreamTls { detail, .. }
            | Failure::Internal { detail } => Some(detail),
            _ => None,
        }
    }

    /// What any client may be told of this failure: the message of its
    /// error body, without the detail.
    pub fn client_message(&self) -> String {
        self.describe().2
    }

    /// For the operator (`check-upstream`'s report, never a client): the
    /// client's message, then the detail.
    pub fn operator_text(&self) -> String {
        match self.detail() {
            Some(d) => format!("{}: {d}", self.client_message()),
            None => self.client_message(),
        }
    }

    /// Logs the detail a client is not shown (see [`Failure::describe`]):
    /// at most [`LOGGED_DETAIL`] bytes of it, control characters escaped.
    pub fn log_detail(&self) {
        let Some((detail, truncated)) = self.logged_detail() else {
            return;
        };
        tracing::warn!(
            reason = self.label(),
            detail = %detail.escape_debug(),
            truncated,
            "request failed"
        );
    }

    /// The detail as the log shows it: at most [`LOGGED_DETAIL`] bytes
    /// (to escape), and whether it was cut.
    pub fn logged_detail(&self) -> Option<(&str, bool)> {
        let detail = self.detail()?;
        let mut end = detail.len().min(LOGGED_DETAIL);
        while !detail.is_char_boundary(end) {
            end -= 1;
        }
        Some((&detail[..end], end < detail.len()))
    }
}

/// Renders `failure` for `target`. The only place error bodies are made.
pub fn rescue(failure: &Failure, target: &ErrorTarget) -> ErrorResponse {
    failure.log_detail();
    let (code, transport_status, message, grpc_override) = failure.describe();
    let row = row(code);
    let version = target.version.unwrap_or(Version::V10);
    let metadata = metadata_of(failure);
    match target.binding {
        Some(Binding::JsonRpc) => {
            let envelope = jsonrpc_envelope(failure, version, target.jsonrpc_id.clone());
            // v0.3 streaming clients (a2a-python 0.3: resubscribe, and
            // message/stream alike) insist on an event stream (EDGE-CASES 21),
            // so their errors travel as one `data:` frame.
            if version == Version::V03
                && matches!(
                    target.operation,
                    Some(Method::SubscribeToTask | Method::SendStreamingMessage)
                )
            {
                return ErrorResponse {
                    status: 200,
                    content_type: "text/event-stream",
                    body: Bytes::from(format!("data: {envelope}\n\n")),
                };
            }
            // A2A errors travel with 200 like any JSON-RPC answer; transport
            // conditions keep their HTTP status.
            ErrorResponse {
                status: transport_status.unwrap_or(200),
                content_type: "application/json",
                body: Bytes::from(envelope.to_string()),
            }
        }
        _ => match version {
            Version::V10 => {
                let status = transport_status.unwrap_or(row.http_v10);
                let body = json!({ "error": {
                    "code": status,
                    "status": grpc_override.unwrap_or(row.grpc),
                    "message": message,
                    "details": [error_info(row.reason, &metadata)],
                }});
                ErrorResponse {
                    status,
                    content_type: "application/a2a+json",
                    body: Bytes::from(body.to_string()),
                }
            }
            Version::V03 => ErrorResponse {
                status: transport_status.unwrap_or(row.http_v03),
                content_type: "application/json",
                body: Bytes::from(json!({ "code": row.jsonrpc, "message": message }).to_string()),
            },
        },
    }
}

/// What went wrong in a TLS exchange with an agent, as the client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsFailureKind {
    /// Its certificate is not signed by an authority the proxy trusts.
    UnknownAuthority,
    /// Its certificate does not name the host the proxy asked for.
    WrongName,
    /// Its certificate is expired or not valid yet.
    Expired,
    /// It refused the proxy's client certificate (or its absence).
    ClientCertRefused,
    /// Anything else (no common protocol version, a broken handshake).
    Other,
}

impl TlsFailureKind {
    pub fn describe(self) -> &'static str {
        match self {
            TlsFailureKind::UnknownAuthority => {
                "the agent's TLS certificate is not signed by an authority the proxy trusts (upstream.ca_file)"
            }
            TlsFailureKind::WrongName => {
                "the agent's TLS certificate is not valid for the agent's host name"
            }
            TlsFailureKind::Expired => "the agent's TLS certificate is expired or not yet valid",
            TlsFailureKind::ClientCertRefused => {
                "the agent refused the proxy's TLS client certificate (upstream.client_cert_file)"
            }
            TlsFailureKind::Other => "the TLS handshake with the agent failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(r: &ErrorResponse) -> Value {
        let text = std::str::from_utf8(&r.body).unwrap();
        let text = text.strip_prefix("data: ").unwrap_or(text);
        serde_json::from_str(text.trim_end()).unwrap()
    }

    fn target(v: Version, b: Binding) -> ErrorTarget {
        ErrorTarget {
            version: Some(v),
            binding: Some(b),
            operation: None,
            jsonrpc_id: Some(json!(0)),
        }
    }

    #[test]
    fn every_code_has_a_reason() {
        for c in ErrorCode::ALL {
            assert!(!reason_of(c).is_empty(), "{c:?}");
        }
        assert_eq!(
            reason_of(ErrorCode::VersionNotSupported),
            "VERSION_NOT_SUPPORTED"
        );
        assert_eq!(reason_of(ErrorCode::Internal), "INTERNAL");
        assert_eq!(row(ErrorCode::TaskNotCancelable).http_v03, 409);
    }

    #[test]
    fn jsonrpc_v03() {
        let f = Failure::VersionNotSupported {
            requested: "2.0".into(),
        };
        let r = rescue(&f, &target(Version::V03, Binding::JsonRpc));
        assert_eq!(r.status, 200);
        let v = parse(&r);
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], 0);
        assert_eq!(v["error"]["code"], -32009);
        assert!(v["error"]["data"].is_object());
    }

    #[test]
    fn jsonrpc_v10_has_error_info() {
        let f = Failure::UpstreamTimeout;
        let r = rescue(&f, &target(Version::V10, Binding::JsonRpc));
        assert_eq!(r.status, 504);
        let v = parse(&r);
        assert_eq!(v["error"]["code"], -32603);
        let info = &v["error"]["data"][0];
        assert_eq!(info["@type"], "type.googleapis.com/google.rpc.ErrorInfo");
        assert_eq!(info["reason"], "INTERNAL");
        assert_eq!(info["domain"], "a2a-protocol.org");
    }

    #[test]
    fn an_unknown_outcome_is_told_apart_from_an_unreachable_agent() {
        for (timed_out, status) in [(false, 502), (true, 504)] {
            let f = Failure::OutcomeUnknown {
                detail: "10.0.0.7:9999 reset".into(),
                timed_out,
            };
            let r = rescue(&f, &target(Version::V10, Binding::JsonRpc));
            assert_eq!(r.status, status);
            let v = parse(&r);
            assert_eq!(v["error"]["code"], -32603);
            assert_eq!(
                v["error"]["data"][0]["metadata"]["proxyReason"],
                "outcome_unknown"
            );
            let message = v["error"]["message"].as_str().unwrap();
            assert!(message.contains("unknown"), "{message}");
            assert!(!message.contains("10.0.0.7"), "{message}");
        }
    }

    #[test]
    fn rest_v10_status_body() {
        let f = Failure::VersionNotSupported {
            requested: "0.2".into(),
        };
        let r = rescue(&f, &target(Version::V10, Binding::Rest));
        assert_eq!(r.status, 400);
        assert_eq!(r.content_type, "application/a2a+json");
        let v = parse(&r);
        assert_eq!(v["error"]["code"], 400);
        assert_eq!(v["error"]["status"], "FAILED_PRECONDITION");
        assert_eq!(v["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
        assert_eq!(
            v["error"]["details"][0]["metadata"]["requestedVersion"],
            "0.2"
        );

        let r = rescue(
            &Failure::PayloadTooLarge { limit: 10 },
            &target(Version::V10, Binding::Rest),
        );
        assert_eq!(r.status, 413);
        assert_eq!(parse(&r)["error"]["code"], 413);
    }

    #[test]
    fn rest_v03_bare_body() {
        let r = rescue(
            &Failure::UpstreamUnavailable {
                detail: "refused".into(),
            },
            &target(Version::V03, Binding::Rest),
        );
        assert_eq!(r.status, 502);
        assert_eq!(r.content_type, "application/json");
        let v = parse(&r);
        assert_eq!(v["code"], -32603);
        // The detail (the agent's address, its words) stays in the log.
        assert_eq!(v["message"], "upstream agent unavailable");
        assert_eq!(v.as_object().unwrap().len(), 2);
    }

    #[test]
    fn version_not_served_names_what_is() {
        let p = |s| ProtocolVersion::parse(s).unwrap();
        let f = Failure::VersionNotServed {
            requested: p("1.2"),
            served: p("1.1"),
        };
        let r = rescue(&f, &target(Version::V10, Binding::Rest));
        assert_eq!(r.status, 400);
        let v = parse(&r);
        let info = &v["error"]["details"][0];
        assert_eq!(info["reason"], "VERSION_NOT_SUPPORTED");
        assert_eq!(info["metadata"]["requestedVersion"], "1.2");
        assert_eq!(info["metadata"]["supportedVersions"], "0.3,1.0,1.1");
        assert_eq!(info["metadata"]["proxyReason"], "version_not_supported");
        let r = rescue(&f, &target(Version::V10, Binding::JsonRpc));
        assert_eq!(parse(&r)["error"]["code"], -32009);
        assert_eq!(supported_list(p("1.0")), "0.3,1.0");
        assert!(supported_list(p("1.300")).ends_with(",1.9,...,1.300"));
    }

    #[test]
    fn v03_resubscribe_gets_sse() {
        let mut t = target(Version::V03, Binding::JsonRpc);
        t.operation = Some(Method::SubscribeToTask);
        let r = rescue(&Failure::UpstreamTimeout, &t);
        assert_eq!(r.content_type, "text/event-stream");
        assert!(r.body.starts_with(b"data: {"));
        assert!(r.body.ends_with(b"\n\n"));
        assert_eq!(parse(&r)["id"], 0);
    }
}
