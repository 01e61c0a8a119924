//! JSON-RPC envelope translation: requests (method renamed, params
//! translated per method), responses (result translated per method, errors
//! through [`crate::code`]) and stream-event envelopes (each SSE `data` of a
//! streaming method is a full response envelope).
//!
//! The envelope's `id` and unknown members are copied unchanged; `jsonrpc`
//! must be `"2.0"`.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;

use crate::lossy::{Direction, Lossy};
use crate::method::Method;
use crate::{agent_card, code, params, push_config, task, v03, v10, TranslateError, Version};

use v03::jsonrpc as j03;
use v10::jsonrpc as j10;

/// The only JSON-RPC version.
pub const JSONRPC_VERSION: &str = "2.0";

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "ListTasks",
        direction: Direction::ToV03,
        what: "v0.3 has no ListTasks operation",
        decision: "rejected with UnsupportedOperationError -32004 (as a2a-js), not -32601: the method is valid in v1.0",
        fixture: "rejected/request/ListTasks.v10.json",
        at: &["error:-32004"],
    },
    Lossy {
        entity: "DeleteTaskPushNotificationConfig result",
        direction: Direction::ToV10,
        what: "v0.3 result is `null`; v1.0 returns google.protobuf.Empty, whose JSON-RPC form the spec does not spell out",
        decision: "`null` both ways (a2a-js v1); v1.0 `{}` and `null` are accepted on input",
        fixture: "response/DeleteTaskPushNotificationConfig.null.v03.json, response/DeleteTaskPushNotificationConfig.null.v10.json, response/DeleteTaskPushNotificationConfig.empty-object.v10.json, response/DeleteTaskPushNotificationConfig.empty-object.v03.json, response/DeleteTaskPushNotificationConfig.empty-object.to-v10.json",
        at: &["result"],
    },
    Lossy {
        entity: "JSON-RPC method name",
        direction: Direction::Both,
        what: "a method name of the other version or no A2A method",
        decision: "rejected with MethodNotFoundError -32601 (the name sets are disjoint, so nothing is guessed)",
        fixture: "rejected/request/unknown-method.v03.json",
        at: &["error:-32601"],
    },
];

fn check_jsonrpc(v: &str) -> Result<(), TranslateError> {
    if v == JSONRPC_VERSION {
        Ok(())
    } else {
        Err(TranslateError::InvalidRequest(format!(
            "`jsonrpc` must be \"2.0\", got {v:?}"
        )))
    }
}

/// Parses untyped JSON as `T`, reporting failures as invalid `what`.
fn typed<T: DeserializeOwned>(what: &'static str, v: Value) -> Result<T, TranslateError> {
    serde_json::from_value(v).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

/// Renders `T` as untyped JSON (cannot fail for the crate's wire types).
fn untyped<T: Serialize>(what: &'static str, t: T) -> Result<Value, TranslateError> {
    serde_json::to_value(t).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

fn required(what: &'static str, p: Option<Value>) -> Result<Value, TranslateError> {
    match p {
        Some(Value::Null) | None => Err(TranslateError::invalid(what, "params are required")),
        Some(v) => Ok(v),
    }
}

/// Translates the v0.3 `params` of `method` to v1.0.
pub fn params_to_v10(method: Method, p: Option<Value>) -> Result<Option<Value>, TranslateError> {
    const W: &str = "params";
    let out = match method {
        Method::SendMessage | Method::SendStreamingMessage => untyped(
            W,
            params::to_v10(typed("MessageSendParams", required(W, p)?)?)?,
        )?,
        Method::GetTask => untyped(
            W,
            params::get_task_to_v10(typed("TaskQueryParams", required(W, p)?)?)?,
        )?,
        Method::ListTasks => return Err(TranslateError::unsupported("ListTasks", Version::V03)),
        Method::CancelTask => untyped(
            W,
            params::cancel_to_v10(typed("TaskIdParams", required(W, p)?)?)?,
        )?,
        Method::SubscribeToTask => untyped(
            W,
            params::subscribe_to_v10(typed("TaskIdParams", required(W, p)?)?)?,
        )?,
        Method::CreatePushConfig => untyped(
            W,
            push_config::to_v10(typed("TaskPushNotificationConfig", required(W, p)?)?)?,
        )?,
        Method::GetPushConfig => untyped(
            W,
            params::get_push_config_to_v10(typed(
                "GetTaskPushNotificationConfigParams",
                required(W, p)?,
            )?)?,
        )?,
        Method::ListPushConfigs => untyped(
            W,
            params::list_push_configs_to_v10(typed(
                "ListTaskPushNotificationConfigParams",
                required(W, p)?,
            )?)?,
        )?,
        Method::DeletePushConfig => untyped(
            W,
            params::delete_push_config_to_v10(typed(
                "DeleteTaskPushNotificationConfigParams",
                required(W, p)?,
            )?)?,
        )?,
        Method::GetExtendedCard => {
            return params::extended_card_to_v10(p)?
                .map(|r| untyped(W, r))
                .transpose()
        }
    };
    Ok(Some(out))
}

/// Translates the v1.0 `params` of `method` to v0.3 (`ListTasks` is
/// [`TranslateError::Unsupported`]).
pub fn params_to_v03(method: Method, p: Option<Value>) -> Result<Option<Value>, TranslateError> {
    const W: &str = "params";
    let out = match method {
        Method::SendMessage | Method::SendStreamingMessage => untyped(
            W,
            params::to_v03(typed("SendMessageRequest", required(W, p)?)?)?,
        )?,
        Method::GetTask => untyped(
            W,
            params::get_task_to_v03(typed("GetTaskRequest", required(W, p)?)?)?,
        )?,
        Method::ListTasks => return Err(TranslateError::unsupported("ListTasks", Version::V03)),
        Method::CancelTask => untyped(
            W,
            params::cancel_to_v03(typed("CancelTaskRequest", required(W, p)?)?)?,
        )?,
        Method::SubscribeToTask => untyped(
            W,
            params::subscribe_to_v03(typed("SubscribeToTaskRequest", required(W, p)?)?)?,
        )?,
        Method::CreatePushConfig => untyped(
            W,
            push_config::to_v03(typed("TaskPushNotificationConfig", required(W, p)?)?)?,
        )?,
        Method::GetPushConfig => untyped(
            W,
            params::get_push_config_to_v03(typed(
                "GetTaskPushNotificationConfigRequest",
                required(W, p)?,
            )?)?,
        )?,
        Method::ListPushConfigs => untyped(
            W,
            params::list_push_configs_to_v03(typed(
                "ListTaskPushNotificationConfigsRequest",
                required(W, p)?,
            )?)?,
        )?,
        Method::DeletePushConfig => untyped(
            W,
            params::delete_push_config_to_v03(typed(
                "DeleteTaskPushNotificationConfigRequest",
                required(W, p)?,
            )?)?,
        )?,
        Method::GetExtendedCard => {
            let req = match p {
                None | Some(Value::Null) => None,
                Some(v) => Some(typed("GetExtendedAgentCardRequest", v)?),
            };
            return params::extended_card_to_v03(req);
        }
    };
    Ok(Some(out))
}

/// Translates the v0.3 `result` of `method` to v1.0.
pub fn result_to_v10(method: Method, r: Value) -> Result<Value, TranslateError> {
    const W: &str = "result";
    match method {
        Method::SendMessage => {
            untyped(W, params::send_result_to_v10(typed("Task or Message", r)?)?)
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            untyped(W, params::stream_result_to_v10(typed("stream event", r)?)?)
        }
        Method::GetTask | Method::CancelTask => untyped(W, task::to_v10(typed("Task", r)?)?),
        Method::ListTasks => Err(TranslateError::unsupported("ListTasks", Version::V03)),
        Method::CreatePushConfig | Method::GetPushConfig => untyped(
            W,
            push_config::to_v10(typed("TaskPushNotificationConfig", r)?)?,
        ),
        Method::ListPushConfigs => untyped(
            W,
            params::list_push_configs_result_to_v10(typed("TaskPushNotificationConfig[]", r)?)?,
        ),
        Method::DeletePushConfig => delete_result(r),
        Method::GetExtendedCard => untyped(W, agent_card::to_v10(typed("AgentCard", r)?)?),
    }
}

/// Translates the v1.0 `result` of `method` to v0.3.
pub fn result_to_v03(method: Method, r: Value) -> Result<Value, TranslateError> {
    const W: &str = "result";
    match method {
        Method::SendMessage => untyped(
            W,
            params::send_result_to_v03(typed("SendMessageResponse", r)?)?,
        ),
        Method::SendStreamingMessage | Method::SubscribeToTask => untyped(
            W,
            params::stream_result_to_v03(typed("StreamResponse", r)?)?,
        ),
        Method::GetTask | Method::CancelTask => untyped(W, task::to_v03(typed("Task", r)?)?),
        Method::ListTasks => Err(TranslateError::unsupported("ListTasks", Version::V03)),
        Method::CreatePushConfig | Method::GetPushConfig => untyped(
            W,
            push_config::to_v03(typed("TaskPushNotificationConfig", r)?)?,
        ),
        Method::ListPushConfigs => untyped(
            W,
            params::list_push_configs_result_to_v03(typed(
                "ListTaskPushNotificationConfigsResponse",
                r,
            )?)?,
        ),
        Method::DeletePushConfig => delete_result(r),
        Method::GetExtendedCard => untyped(W, agent_card::to_v03(typed("AgentCard", r)?)?),
    }
}

/// Delete answers `null` in both versions; `{}` (ProtoJSON `Empty`) is accepted.
fn delete_result(r: Value) -> Result<Value, TranslateError> {
    match r {
        Value::Null => Ok(Value::Null),
        Value::Object(o) if o.is_empty() => Ok(Value::Null),
        other => Err(TranslateError::invalid(
            "DeleteTaskPushNotificationConfig result",
            format!("expected null or {{}}, got {other}"),
        )),
    }
}

/// Translates a v0.3 request to v1.0 (unknown or v1.0 method names are
/// [`TranslateError::MethodNotFound`]).
pub fn request_to_v10(r: j03::Request) -> Result<j10::Request, TranslateError> {
    check_jsonrpc(&r.jsonrpc)?;
    let m = Method::resolve(&r.method, Version::V03)?;
    let name = m
        .name(Version::V10)
        .ok_or_else(|| TranslateError::unsupported(r.method.clone(), Version::V10))?;
    Ok(j10::Request {
        jsonrpc: r.jsonrpc,
        id: r.id,
        method: name.to_string(),
        params: params_to_v10(m, r.params)?,
        extra: r.extra,
    })
}

/// Translates a v1.0 request to v0.3 (`ListTasks` is Unsupported -32004).
pub fn request_to_v03(r: j10::Request) -> Result<j03::Request, TranslateError> {
    check_jsonrpc(&r.jsonrpc)?;
    let m = Method::resolve(&r.method, Version::V10)?;
    let name = m
        .name(Version::V03)
        .ok_or_else(|| TranslateError::unsupported(r.method.clone(), Version::V03))?;
    Ok(j03::Request {
        jsonrpc: r.jsonrpc,
        id: r.id,
        method: name.to_string(),
        params: params_to_v03(m, r.params)?,
        extra: r.extra,
    })
}

/// A delete answered with neither `result` nor `error` succeeded: its
/// result is `null`, which a2a-python 0.3 leaves out of the answer.
fn implied_result(m: Method, result: Option<Value>, has_error: bool) -> Option<Value> {
    match result {
        None if m == Method::DeletePushConfig && !has_error => Some(Value::Null),
        r => r,
    }
}

fn one_of(has_result: bool, has_error: bool) -> Result<(), TranslateError> {
    match (has_result, has_error) {
        (true, false) | (false, true) => Ok(()),
        (true, true) => Err(TranslateError::invalid(
            "JSON-RPC response",
            "has both `result` and `error`",
        )),
        (false, false) => Err(TranslateError::invalid(
            "JSON-RPC response",
            "has neither `result` nor `error`",
        )),
    }
}

/// Translates a v0.3 response to the request `method` (the v0.3 name) to v1.0.
pub fn response_to_v10(r: j03::Response, method: &str) -> Result<j10::Response, TranslateError> {
    response_to_v10_for(r, Method::resolve(method, Version::V03)?)
}

/// [`response_to_v10`] for an already resolved method.
pub fn response_to_v10_for(r: j03::Response, m: Method) -> Result<j10::Response, TranslateError> {
    check_jsonrpc(&r.jsonrpc)?;
    let result = implied_result(m, r.result, r.error.is_some());
    one_of(result.is_some(), r.error.is_some())?;
    Ok(j10::Response {
        jsonrpc: r.jsonrpc,
        id: r.id,
        result: result.map(|v| result_to_v10(m, v)).transpose()?,
        error: r.error.map(code::error_to_v10).transpose()?,
        extra: r.extra,
    })
}

/// Translates a v1.0 response to the request `method` (the v1.0 name) to v0.3.
pub fn response_to_v03(r: j10::Response, method: &str) -> Result<j03::Response, TranslateError> {
    response_to_v03_for(r, Method::resolve(method, Version::V10)?)
}

/// [`response_to_v03`] for an already resolved method.
pub fn response_to_v03_for(r: j10::Response, m: Method) -> Result<j03::Response, TranslateError> {
    check_jsonrpc(&r.jsonrpc)?;
    let result = implied_result(m, r.result, r.error.is_some());
    one_of(result.is_some(), r.error.is_some())?;
    Ok(j03::Response {
        jsonrpc: r.jsonrpc,
        id: r.id,
        result: result.map(|v| result_to_v03(m, v)).transpose()?,
        error: r.error.map(code::error_to_v03).transpose()?,
        extra: r.extra,
    })
}

fn streaming(m: Method) -> Result<Method, TranslateError> {
    if m.is_streaming() {
        Ok(m)
    } else {
        Err(TranslateError::invalid(
            "stream event",
            format!("{m:?} is not a streaming method"),
        ))
    }
}

/// Translates one v0.3 stream-event envelope (SSE `data`) of the streaming
/// `method` (v0.3 name) to v1.0.
pub fn event_to_v10(r: j03::Response, method: &str) -> Result<j10::Response, TranslateError> {
    response_to_v10_for(r, streaming(Method::resolve(method, Version::V03)?)?)
}

/// Translates one v1.0 stream-event envelope (SSE `data`) of the streaming
/// `method` (v1.0 name) to v0.3.
pub fn event_to_v03(r: j10::Response, method: &str) -> Result<j03::Response, TranslateError> {
    response_to_v03_for(r, streaming(Method::resolve(method, Version::V10)?)?)
}

/// A v0.3 error response reporting `err` for the request `id`.
pub fn error_response_v03(id: Option<Value>, err: &TranslateError) -> j03::Response {
    j03::Response {
        jsonrpc: JSONRPC_VERSION.to_string(),
        id: Some(id.unwrap_or(Value::Null)),
        result: None,
        error: Some(code::from_translate_error(err)),
        extra: Default::default(),
    }
}

/// A v1.0 error response reporting `err` for the request `id`.
pub fn error_response_v10(id: Option<Value>, err: &TranslateError) -> j10::Response {
    j10::Response {
        jsonrpc: JSONRPC_VERSION.to_string(),
        id: Some(id.unwrap_or(Value::Null)),
        result: None,
        error: Some(code::from_translate_error_v10(err)),
        extra: Default::default(),
    }
}
