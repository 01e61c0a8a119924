//! The error-code table (MAPPING-FACTS §6.1) and the translation of JSON-RPC
//! `error` objects between the versions (DECISIONS "Errors").
//!
//! - Codes `-32700..-32603` and `-32001..-32007` are identical in both
//!   versions; `-32008` / `-32009` exist only in v1.0 and pass unchanged to
//!   v0.3 (legal in its server-defined range). `-32010`
//!   (TaskGenerationMismatch) is A2A 1.1's: read from any 1.N peer, passed
//!   unchanged to v0.3 likewise, its ErrorInfo metadata kept as `data`
//!   there. Any other code passes through.
//! - v0.3 → v1.0: `data` becomes an array whose first element is a
//!   `google.rpc.ErrorInfo` (A2A codes only; reason from this table, domain
//!   `a2a-protocol.org`, metadata = the scalar members of the v0.3 `data`
//!   object as strings), followed by a `google.protobuf.Value` detail holding
//!   the original `data` if there was one.
//! - v1.0 → v0.3: `data` = the `value` of the first `google.protobuf.Value`
//!   detail, else absent; other details are dropped. A v1.0 `data` that is
//!   not an array (non-conforming peer) is passed through unchanged.

use serde_json::{Map, Value};

use crate::lossy::{Direction, Lossy};
use crate::v03::jsonrpc as v03;
use crate::v10::jsonrpc as v10;
use crate::v10::jsonrpc::{ERROR_DOMAIN, ERROR_INFO_TYPE, VALUE_TYPE};
use crate::{TranslateError, Version};

/// A canonical gRPC status code (only those the A2A tables use).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrpcCode {
    /// 3
    InvalidArgument,
    /// 5
    NotFound,
    /// 9
    FailedPrecondition,
    /// 12
    Unimplemented,
    /// 13
    Internal,
    /// 2
    Unknown,
    /// 10
    Aborted,
}

impl GrpcCode {
    /// The numeric status code.
    pub fn number(self) -> i32 {
        match self {
            GrpcCode::Unknown => 2,
            GrpcCode::InvalidArgument => 3,
            GrpcCode::NotFound => 5,
            GrpcCode::FailedPrecondition => 9,
            GrpcCode::Unimplemented => 12,
            GrpcCode::Aborted => 10,
            GrpcCode::Internal => 13,
        }
    }

    /// The upper-snake name used in `google.rpc.Status.status` JSON.
    pub fn name(self) -> &'static str {
        match self {
            GrpcCode::Unknown => "UNKNOWN",
            GrpcCode::InvalidArgument => "INVALID_ARGUMENT",
            GrpcCode::NotFound => "NOT_FOUND",
            GrpcCode::FailedPrecondition => "FAILED_PRECONDITION",
            GrpcCode::Unimplemented => "UNIMPLEMENTED",
            GrpcCode::Aborted => "ABORTED",
            GrpcCode::Internal => "INTERNAL",
        }
    }
}

/// A JSON-RPC / A2A error the protocol names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// -32700
    JsonParse,
    /// -32600
    InvalidRequest,
    /// -32601
    MethodNotFound,
    /// -32602
    InvalidParams,
    /// -32603
    Internal,
    /// -32001
    TaskNotFound,
    /// -32002
    TaskNotCancelable,
    /// -32003
    PushNotificationNotSupported,
    /// -32004
    UnsupportedOperation,
    /// -32005
    ContentTypeNotSupported,
    /// -32006
    InvalidAgentResponse,
    /// -32007 (v0.3 name: AuthenticatedExtendedCardNotConfiguredError)
    ExtendedAgentCardNotConfigured,
    /// -32008, v1.0 only
    ExtensionSupportRequired,
    /// -32009, v1.0 only
    VersionNotSupported,
    /// -32010, A2A 1.1 (`ifGenerationMatch` did not match the task's
    /// `generation`); no v0.3 or v1.0 name
    TaskGenerationMismatch,
}

impl ErrorCode {
    /// Every named error, in table order.
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::JsonParse,
        ErrorCode::InvalidRequest,
        ErrorCode::MethodNotFound,
        ErrorCode::InvalidParams,
        ErrorCode::Internal,
        ErrorCode::TaskNotFound,
        ErrorCode::TaskNotCancelable,
        ErrorCode::PushNotificationNotSupported,
        ErrorCode::UnsupportedOperation,
        ErrorCode::ContentTypeNotSupported,
        ErrorCode::InvalidAgentResponse,
        ErrorCode::ExtendedAgentCardNotConfigured,
        ErrorCode::ExtensionSupportRequired,
        ErrorCode::VersionNotSupported,
        ErrorCode::TaskGenerationMismatch,
    ];

    /// The JSON-RPC code (same in both versions).
    pub fn code(self) -> i64 {
        match self {
            ErrorCode::JsonParse => -32700,
            ErrorCode::InvalidRequest => -32600,
            ErrorCode::MethodNotFound => -32601,
            ErrorCode::InvalidParams => -32602,
            ErrorCode::Internal => -32603,
            ErrorCode::TaskNotFound => -32001,
            ErrorCode::TaskNotCancelable => -32002,
            ErrorCode::PushNotificationNotSupported => -32003,
            ErrorCode::UnsupportedOperation => -32004,
            ErrorCode::ContentTypeNotSupported => -32005,
            ErrorCode::InvalidAgentResponse => -32006,
            ErrorCode::ExtendedAgentCardNotConfigured => -32007,
            ErrorCode::ExtensionSupportRequired => -32008,
            ErrorCode::VersionNotSupported => -32009,
            ErrorCode::TaskGenerationMismatch => -32010,
        }
    }

    /// The named error with JSON-RPC code `code`, if any.
    pub fn from_code(code: i64) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|e| e.code() == code)
    }

    /// The error's type name in `version` (`None`: it does not exist there).
    pub fn name(self, version: Version) -> Option<&'static str> {
        match (self, version) {
            (ErrorCode::JsonParse, _) => Some("JSONParseError"),
            (ErrorCode::InvalidRequest, _) => Some("InvalidRequestError"),
            (ErrorCode::MethodNotFound, _) => Some("MethodNotFoundError"),
            (ErrorCode::InvalidParams, _) => Some("InvalidParamsError"),
            (ErrorCode::Internal, _) => Some("InternalError"),
            (ErrorCode::TaskNotFound, _) => Some("TaskNotFoundError"),
            (ErrorCode::TaskNotCancelable, _) => Some("TaskNotCancelableError"),
            (ErrorCode::PushNotificationNotSupported, _) => {
                Some("PushNotificationNotSupportedError")
            }
            (ErrorCode::UnsupportedOperation, _) => Some("UnsupportedOperationError"),
            (ErrorCode::ContentTypeNotSupported, _) => Some("ContentTypeNotSupportedError"),
            (ErrorCode::InvalidAgentResponse, _) => Some("InvalidAgentResponseError"),
            (ErrorCode::ExtendedAgentCardNotConfigured, Version::V03) => {
                Some("AuthenticatedExtendedCardNotConfiguredError")
            }
            (ErrorCode::ExtendedAgentCardNotConfigured, Version::V10) => {
                Some("ExtendedAgentCardNotConfiguredError")
            }
            (ErrorCode::ExtensionSupportRequired, Version::V03) => None,
            (ErrorCode::ExtensionSupportRequired, Version::V10) => {
                Some("ExtensionSupportRequiredError")
            }
            (ErrorCode::VersionNotSupported, Version::V03) => None,
            (ErrorCode::VersionNotSupported, Version::V10) => Some("VersionNotSupportedError"),
            // Named in A2A 1.1; a 1.0 peer reads it as an unknown A2A code.
            (ErrorCode::TaskGenerationMismatch, Version::V03) => None,
            (ErrorCode::TaskGenerationMismatch, Version::V10) => {
                Some("TaskGenerationMismatchError")
            }
        }
    }

    /// The default message (v0.3 `types.ts`; for the v1.0-only errors a
    /// message in the same style).
    pub fn default_message(self) -> &'static str {
        match self {
            ErrorCode::JsonParse => "Invalid JSON payload",
            ErrorCode::InvalidRequest => "Request payload validation error",
            ErrorCode::MethodNotFound => "Method not found",
            ErrorCode::InvalidParams => "Invalid parameters",
            ErrorCode::Internal => "Internal error",
            ErrorCode::TaskNotFound => "Task not found",
            ErrorCode::TaskNotCancelable => "Task cannot be canceled",
            ErrorCode::PushNotificationNotSupported => "Push Notification is not supported",
            ErrorCode::UnsupportedOperation => "This operation is not supported",
            ErrorCode::ContentTypeNotSupported => "Incompatible content types",
            ErrorCode::InvalidAgentResponse => "Invalid agent response",
            ErrorCode::ExtendedAgentCardNotConfigured => {
                "Authenticated Extended Card is not configured"
            }
            ErrorCode::ExtensionSupportRequired => "Extension support is required",
            ErrorCode::VersionNotSupported => "Version is not supported",
            ErrorCode::TaskGenerationMismatch => "Task generation mismatch",
        }
    }

    /// The v1.0 `ErrorInfo.reason` (A2A errors only; `None` for the
    /// JSON-RPC standard errors, for which the spec names none).
    pub fn reason(self) -> Option<&'static str> {
        match self {
            ErrorCode::JsonParse
            | ErrorCode::InvalidRequest
            | ErrorCode::MethodNotFound
            | ErrorCode::InvalidParams
            | ErrorCode::Internal => None,
            ErrorCode::TaskNotFound => Some("TASK_NOT_FOUND"),
            ErrorCode::TaskNotCancelable => Some("TASK_NOT_CANCELABLE"),
            ErrorCode::PushNotificationNotSupported => Some("PUSH_NOTIFICATION_NOT_SUPPORTED"),
            ErrorCode::UnsupportedOperation => Some("UNSUPPORTED_OPERATION"),
            ErrorCode::ContentTypeNotSupported => Some("CONTENT_TYPE_NOT_SUPPORTED"),
            ErrorCode::InvalidAgentResponse => Some("INVALID_AGENT_RESPONSE"),
            ErrorCode::ExtendedAgentCardNotConfigured => Some("EXTENDED_AGENT_CARD_NOT_CONFIGURED"),
            ErrorCode::ExtensionSupportRequired => Some("EXTENSION_SUPPORT_REQUIRED"),
            ErrorCode::VersionNotSupported => Some("VERSION_NOT_SUPPORTED"),
            ErrorCode::TaskGenerationMismatch => Some("TASK_GENERATION_MISMATCH"),
        }
    }

    /// A reason for every error, for bindings that always need one (REST
    /// `google.rpc.Status` details): [`ErrorCode::reason`] for A2A errors, and
    /// the same UPPER_SNAKE rule (name without `Error`) for the JSON-RPC
    /// standard errors. JSON-RPC `error.data` uses [`ErrorCode::reason`] only.
    pub fn reason_any(self) -> &'static str {
        match self {
            ErrorCode::JsonParse => "JSON_PARSE",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::MethodNotFound => "METHOD_NOT_FOUND",
            ErrorCode::InvalidParams => "INVALID_PARAMS",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::TaskNotFound
            | ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ContentTypeNotSupported
            | ErrorCode::InvalidAgentResponse
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported
            | ErrorCode::TaskGenerationMismatch => self.reason().unwrap_or("UNKNOWN"),
        }
    }

    /// The named error whose `ErrorInfo.reason` is `reason`.
    pub fn from_reason(reason: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|e| e.reason() == Some(reason))
    }

    /// The v1.0 HTTP status (spec v1.0.1 §5.4; JSON parse and method-not-found
    /// are not in the table: 400 by the validation category, 404 as a2a-python).
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::JsonParse
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidParams
            | ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ContentTypeNotSupported
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => 400,
            ErrorCode::MethodNotFound | ErrorCode::TaskNotFound => 404,
            ErrorCode::Internal | ErrorCode::InvalidAgentResponse => 500,
            // A2A 1.1 §5.4.
            ErrorCode::TaskGenerationMismatch => 409,
        }
    }

    /// The v1.0 gRPC status (spec v1.0.1 §5.4; method-not-found as a2a-js).
    pub fn grpc_code(self) -> GrpcCode {
        match self {
            ErrorCode::JsonParse
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidParams
            | ErrorCode::ContentTypeNotSupported => GrpcCode::InvalidArgument,
            ErrorCode::MethodNotFound => GrpcCode::Unimplemented,
            ErrorCode::Internal | ErrorCode::InvalidAgentResponse => GrpcCode::Internal,
            ErrorCode::TaskNotFound => GrpcCode::NotFound,
            ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ExtendedAgentCardNotConfigured
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => GrpcCode::FailedPrecondition,
            // A2A 1.1 §5.4.
            ErrorCode::TaskGenerationMismatch => GrpcCode::Aborted,
        }
    }

    /// The HTTP status a2a-python 0.3 REST servers answer with (v0.3 has no
    /// normative table; the v1.0-only errors get 400).
    pub fn v03_rest_status(self) -> u16 {
        match self {
            ErrorCode::JsonParse
            | ErrorCode::InvalidRequest
            | ErrorCode::ExtensionSupportRequired
            | ErrorCode::VersionNotSupported => 400,
            ErrorCode::MethodNotFound
            | ErrorCode::TaskNotFound
            | ErrorCode::ExtendedAgentCardNotConfigured => 404,
            ErrorCode::InvalidParams => 422,
            ErrorCode::Internal => 500,
            // A conflict with the task's state, as TaskNotCancelable.
            ErrorCode::TaskNotCancelable | ErrorCode::TaskGenerationMismatch => 409,
            ErrorCode::PushNotificationNotSupported | ErrorCode::UnsupportedOperation => 501,
            ErrorCode::ContentTypeNotSupported => 415,
            ErrorCode::InvalidAgentResponse => 502,
        }
    }
}

impl ErrorCode {
    /// The gRPC status a2a-python 0.3 servers answer with (message prefixed
    /// `"<ErrorName>: "`); the v1.0-only errors get their v1.0 status.
    pub fn v03_grpc_code(self) -> GrpcCode {
        match self {
            ErrorCode::JsonParse | ErrorCode::Internal | ErrorCode::InvalidAgentResponse => {
                GrpcCode::Internal
            }
            ErrorCode::InvalidRequest | ErrorCode::InvalidParams => GrpcCode::InvalidArgument,
            ErrorCode::MethodNotFound | ErrorCode::TaskNotFound => GrpcCode::NotFound,
            ErrorCode::TaskNotCancelable
            | ErrorCode::PushNotificationNotSupported
            | ErrorCode::UnsupportedOperation
            | ErrorCode::ContentTypeNotSupported => GrpcCode::Unimplemented,
            ErrorCode::ExtendedAgentCardNotConfigured => GrpcCode::Unknown,
            ErrorCode::ExtensionSupportRequired | ErrorCode::VersionNotSupported => {
                GrpcCode::FailedPrecondition
            }
            ErrorCode::TaskGenerationMismatch => GrpcCode::Aborted,
        }
    }
}

/// Builds the v1.0 `google.rpc.ErrorInfo` detail for an A2A error, with the
/// scalar members of `data` (if it is an object) as string metadata.
pub fn error_info(code: ErrorCode, data: Option<&Value>) -> Option<Value> {
    let reason = code.reason()?;
    let mut info = Map::new();
    info.insert("@type".into(), Value::from(ERROR_INFO_TYPE));
    info.insert("reason".into(), Value::from(reason));
    info.insert("domain".into(), Value::from(ERROR_DOMAIN));
    let mut meta = Map::new();
    if let Some(Value::Object(obj)) = data {
        for (k, v) in obj {
            let s = match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                Value::Null | Value::Array(_) | Value::Object(_) => None,
            };
            if let Some(s) = s {
                meta.insert(k.clone(), Value::String(s));
            }
        }
    }
    if !meta.is_empty() {
        info.insert("metadata".into(), Value::Object(meta));
    }
    Some(Value::Object(info))
}

/// Translates a v0.3 JSON-RPC `error` object to v1.0.
pub fn error_to_v10(e: v03::ErrorObject) -> Result<v10::ErrorObject, TranslateError> {
    let mut details = Vec::new();
    if let Some(info) = ErrorCode::from_code(e.code).and_then(|c| error_info(c, e.data.as_ref())) {
        details.push(info);
    }
    if let Some(d) = e.data {
        let mut any = Map::new();
        any.insert("@type".into(), Value::from(VALUE_TYPE));
        any.insert("value".into(), d);
        details.push(Value::Object(any));
    }
    Ok(v10::ErrorObject {
        code: e.code,
        message: e.message,
        data: if details.is_empty() {
            None
        } else {
            Some(Value::Array(details))
        },
        extra: e.extra,
    })
}

/// Translates a v1.0 JSON-RPC `error` object to v0.3.
pub fn error_to_v03(e: v10::ErrorObject) -> Result<v03::ErrorObject, TranslateError> {
    let data = match e.data {
        None => None,
        Some(Value::Array(details)) => {
            // -32010's ErrorInfo metadata (the generations) is all a v0.3
            // client can act on: it becomes `data` when nothing else does.
            let metadata = (e.code == ErrorCode::TaskGenerationMismatch.code())
                .then(|| {
                    details.iter().find_map(|d| {
                        let is_info =
                            d.get("@type").and_then(Value::as_str) == Some(ERROR_INFO_TYPE);
                        d.get("metadata")
                            .filter(|m| is_info && m.is_object())
                            .cloned()
                    })
                })
                .flatten();
            details
                .into_iter()
                .find_map(|d| match d {
                    Value::Object(mut o)
                        if o.get("@type").and_then(Value::as_str) == Some(VALUE_TYPE) =>
                    {
                        Some(o.remove("value").unwrap_or(Value::Null))
                    }
                    _ => None,
                })
                .or(metadata)
        }
        Some(other) => Some(other),
    };
    Ok(v03::ErrorObject {
        code: e.code,
        message: e.message,
        data,
        extra: e.extra,
    })
}

/// The JSON-RPC error object (v0.3 shape) reporting a translation failure.
pub fn from_translate_error(err: &TranslateError) -> v03::ErrorObject {
    v03::ErrorObject {
        code: i64::from(err.jsonrpc_code()),
        message: err.to_string(),
        data: None,
        extra: Default::default(),
    }
}

/// The same failure as a v1.0 error object (with its `ErrorInfo`, if any).
pub fn from_translate_error_v10(err: &TranslateError) -> v10::ErrorObject {
    let code = i64::from(err.jsonrpc_code());
    let data = ErrorCode::from_code(code)
        .and_then(|c| error_info(c, None))
        .map(|i| Value::Array(vec![i]));
    v10::ErrorObject {
        code,
        message: err.to_string(),
        data,
        extra: Default::default(),
    }
}

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "JSON-RPC error.data",
        direction: Direction::ToV03,
        what: "v1.0 `data` details other than a `google.protobuf.Value` (ErrorInfo, BadRequest, ...) have no v0.3 slot",
        decision: "dropped; v0.3 `data` = the `value` of the first `google.protobuf.Value` detail, else absent; a non-array `data` passes unchanged",
        fixture: "error/error-info-only.to-v03.json",
        at: &["error.data"],
    },
    Lossy {
        entity: "JSON-RPC error.data",
        direction: Direction::ToV10,
        what: "v0.3 free-form `data` has no typed v1.0 form; ErrorInfo.metadata holds strings only",
        decision: "`data` = [ErrorInfo{reason from the code table, domain a2a-protocol.org, metadata: scalar members of data as strings}, google.protobuf.Value{value: original data}]; ErrorInfo only for A2A codes -32001..-32010",
        fixture: "error/task-not-found-data.v03.json, error/task-not-found-data.v10.json",
        at: &["error.data"],
    },
    Lossy {
        entity: "JSON-RPC error.code",
        direction: Direction::ToV03,
        what: "-32008 ExtensionSupportRequired and -32009 VersionNotSupported do not exist in v0.3",
        decision: "passed unchanged (legal v0.3 server-defined range); ErrorInfo dropped",
        fixture: "error/version-not-supported.to-v03.json",
        at: &["error.code", "error.data"],
    },
    Lossy {
        entity: "JSON-RPC error.code",
        direction: Direction::ToV03,
        what: "-32010 TaskGenerationMismatch (A2A 1.1: `ifGenerationMatch` did not match the task's `generation`) has no v0.3 error; its ErrorInfo.metadata (taskId, expected and current generation) has no v0.3 slot",
        decision: "code and message passed unchanged (legal v0.3 server-defined range; v0.3 REST status 409, gRPC ABORTED as in 1.1); v0.3 `data` = the `google.protobuf.Value` detail if any, else the ErrorInfo.metadata object (strings), else absent",
        fixture: "error/task-generation-mismatch.to-v03.json, error/task-generation-mismatch-with-data.v03.json",
        at: &["error.code", "error.data"],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    #[test]
    fn table_is_one_to_one() {
        let codes: BTreeSet<_> = ErrorCode::ALL.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
        for e in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_code(e.code()), Some(e));
            if let Some(r) = e.reason() {
                assert_eq!(ErrorCode::from_reason(r), Some(e));
            }
        }
        for v in Version::ALL {
            let names: Vec<_> = ErrorCode::ALL.iter().filter_map(|e| e.name(v)).collect();
            let set: BTreeSet<_> = names.iter().collect();
            assert_eq!(names.len(), set.len());
        }
        let reasons: Vec<_> = ErrorCode::ALL.iter().filter_map(|e| e.reason()).collect();
        let set: BTreeSet<_> = reasons.iter().collect();
        assert_eq!(reasons.len(), set.len());
        assert_eq!(reasons.len(), 10);
        let any: BTreeSet<_> = ErrorCode::ALL.iter().map(|e| e.reason_any()).collect();
        assert_eq!(any.len(), ErrorCode::ALL.len());
        for e in ErrorCode::ALL {
            if let Some(r) = e.reason() {
                assert_eq!(e.reason_any(), r);
            }
        }
        let msgs: BTreeSet<_> = ErrorCode::ALL.iter().map(|e| e.default_message()).collect();
        assert_eq!(msgs.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn v10_only_errors() {
        assert_eq!(ErrorCode::ExtensionSupportRequired.name(Version::V03), None);
        assert_eq!(ErrorCode::VersionNotSupported.name(Version::V03), None);
        assert_eq!(ErrorCode::from_code(-32011), None);
        let m = ErrorCode::from_code(-32010).unwrap();
        assert_eq!(m, ErrorCode::TaskGenerationMismatch);
        assert_eq!(m.name(Version::V03), None);
        assert_eq!(m.reason(), Some("TASK_GENERATION_MISMATCH"));
        assert_eq!((m.http_status(), m.v03_rest_status()), (409, 409));
        assert_eq!(m.grpc_code().number(), 10);
        assert_eq!(m.v03_grpc_code().name(), "ABORTED");
        assert_eq!(ErrorCode::TaskNotFound.grpc_code().number(), 5);
        assert_eq!(ErrorCode::TaskNotCancelable.http_status(), 400);
        assert_eq!(ErrorCode::TaskNotCancelable.v03_rest_status(), 409);
        assert_eq!(
            ErrorCode::TaskNotCancelable.v03_grpc_code(),
            GrpcCode::Unimplemented
        );
        assert_eq!(GrpcCode::FailedPrecondition.name(), "FAILED_PRECONDITION");
    }

    fn v03_err(v: Value) -> v03::ErrorObject {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn data_becomes_error_info_and_value() {
        let e = v03_err(
            json!({"code":-32001,"message":"Task not found","data":{"taskId":"t1","n":3,"ok":true,"x":null,"l":[1]}}),
        );
        let v = serde_json::to_value(error_to_v10(e.clone()).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"code":-32001,"message":"Task not found","data":[
                {"@type":ERROR_INFO_TYPE,"reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org",
                 "metadata":{"taskId":"t1","n":"3","ok":"true"}},
                {"@type":VALUE_TYPE,"value":{"taskId":"t1","n":3,"ok":true,"x":null,"l":[1]}}
            ]})
        );
        let back = error_to_v03(serde_json::from_value(v).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn standard_errors_get_no_error_info() {
        let e = v03_err(json!({"code":-32602,"message":"bad"}));
        let v = serde_json::to_value(error_to_v10(e).unwrap()).unwrap();
        assert_eq!(v, json!({"code":-32602,"message":"bad"}));
        let e = v03_err(json!({"code":-32004,"message":"no"}));
        let v = serde_json::to_value(error_to_v10(e).unwrap()).unwrap();
        assert_eq!(
            v,
            json!({"code":-32004,"message":"no","data":[{"@type":ERROR_INFO_TYPE,"reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]})
        );
    }

    #[test]
    fn v10_details_are_dropped_and_null_value_kept() {
        let e: v10::ErrorObject = serde_json::from_value(json!({"code":-32009,"message":"m","data":[
            {"@type":ERROR_INFO_TYPE,"reason":"VERSION_NOT_SUPPORTED","domain":"a2a-protocol.org"},
            {"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[]},
            {"@type":VALUE_TYPE,"value":null}
        ]}))
        .unwrap();
        let v = serde_json::to_value(error_to_v03(e).unwrap()).unwrap();
        assert_eq!(v, json!({"code":-32009,"message":"m","data":null}));
    }
}
