//! Proptest strategies for the push-config, params, JSON-RPC envelope and
//! error types of both versions.
//!
//! The plain strategies generate the *lossless domain*, on which
//! `to_v03(to_v10(x)) == x` and `to_v10(to_v03(y)) == y` hold exactly:
//! - no v1.0 `tenant`; no v0.3 `metadata` where v1.0 has no slot (GetTask,
//!   resubscribe, push-config get / list / delete); no v1.0 list paging;
//! - v0.3 send configuration always present with explicit `blocking`;
//!   v1.0 configuration absent or non-empty, `returnImmediately` absent or
//!   true; `historyLength` absent or positive;
//! - v0.3 outer `TaskPushNotificationConfig` without unknown members; v1.0
//!   full configs with a non-empty `taskId`, inline configs without one;
//! - v1.0 error `data` in the normal form produced from v0.3.
//!
//! Unknown members are named `x-…` so they never collide with a field of
//! either version. Messages, tasks and events come from
//! [`crate::strategy::payload`], cards from [`crate::strategy::card`].

use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::json::{Extras, Metadata};
use crate::method::Method;
use crate::{code, v03, v10, Version};

/// A short identifier.
fn ident() -> impl Strategy<Value = String> {
    "[a-z0-9-]{1,8}"
}

/// A short free text.
fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 ._-]{0,10}"
}

/// A URL-ish string.
fn url() -> impl Strategy<Value = String> {
    "https://[a-z]{1,6}\\.example/[a-z0-9]{0,4}"
}

/// A small JSON scalar (integers only: floats are not the point here).
fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

/// A small JSON value.
fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => scalar(),
        1 => vec(scalar(), 0..3).prop_map(Value::Array),
        1 => btree_map("[a-z]{1,4}", scalar(), 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}

/// A `metadata` object.
pub fn metadata() -> impl Strategy<Value = Metadata> {
    btree_map("[a-z]{1,5}", value(), 0..3).prop_map(|m| m.into_iter().collect())
}

/// Unknown members (`x-…` names).
pub fn extras() -> impl Strategy<Value = Extras> {
    prop_oneof![
        2 => Just(Extras::new()),
        1 => btree_map("x-[a-z]{1,5}", value(), 1..3).prop_map(|m| m.into_iter().collect()),
    ]
}

/// A JSON-RPC id: absent, `null`, numbers (0 included) or strings ("0" included).
pub fn id() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        Just(None),
        Just(Some(Value::Null)),
        Just(Some(json!(0))),
        Just(Some(json!("0"))),
        any::<i64>().prop_map(|n| Some(json!(n))),
        text().prop_map(|s| Some(json!(s))),
    ]
}

/// A v0.3 message (lossless domain; from [`crate::strategy::payload`]).
pub fn v03_message() -> impl Strategy<Value = v03::message::Message> {
    crate::strategy::payload::v03_message()
}

/// A v1.0 message (lossless domain; from [`crate::strategy::payload`]).
pub fn v10_message() -> impl Strategy<Value = v10::message::Message> {
    crate::strategy::payload::v10_message()
}

/// v0.3 `PushNotificationAuthenticationInfo` with exactly one scheme.
pub fn v03_auth() -> impl Strategy<Value = v03::push_config::PushNotificationAuthenticationInfo> {
    (ident(), option::of(text()), extras()).prop_map(|(s, c, extra)| {
        v03::push_config::PushNotificationAuthenticationInfo {
            schemes: vec![s],
            credentials: c,
            extra,
        }
    })
}

/// v0.3 `PushNotificationAuthenticationInfo`, any number of schemes (lossy).
pub fn v03_auth_any() -> impl Strategy<Value = v03::push_config::PushNotificationAuthenticationInfo>
{
    (vec(ident(), 0..4), option::of(text()), extras()).prop_map(|(schemes, c, extra)| {
        v03::push_config::PushNotificationAuthenticationInfo {
            schemes,
            credentials: c,
            extra,
        }
    })
}

/// v1.0 `AuthenticationInfo`.
pub fn v10_auth() -> impl Strategy<Value = v10::push_config::AuthenticationInfo> {
    (ident(), option::of(text()), extras()).prop_map(|(scheme, credentials, extra)| {
        v10::push_config::AuthenticationInfo {
            scheme,
            credentials,
            extra,
        }
    })
}

/// v0.3 `PushNotificationConfig`.
pub fn v03_push_config() -> impl Strategy<Value = v03::push_config::PushNotificationConfig> {
    (
        option::of(ident()),
        url(),
        option::of(text()),
        option::of(v03_auth()),
        extras(),
    )
        .prop_map(|(id, url, token, authentication, extra)| {
            v03::push_config::PushNotificationConfig {
                id,
                url,
                token,
                authentication,
                extra,
            }
        })
}

/// v0.3 `TaskPushNotificationConfig` (no unknown members on the outer object).
pub fn v03_task_push_config() -> impl Strategy<Value = v03::push_config::TaskPushNotificationConfig>
{
    (ident(), v03_push_config()).prop_map(|(task_id, c)| {
        v03::push_config::TaskPushNotificationConfig {
            task_id,
            push_notification_config: c,
            extra: Extras::new(),
        }
    })
}

/// v1.0 `TaskPushNotificationConfig`: with a task id (`full`) or without
/// (inline in `SendMessageConfiguration`); never a tenant.
fn v10_push_config(
    full: bool,
) -> impl Strategy<Value = v10::push_config::TaskPushNotificationConfig> {
    (
        option::of(ident()),
        ident(),
        url(),
        option::of(text()),
        option::of(v10_auth()),
        extras(),
    )
        .prop_map(move |(id, task, url, token, authentication, extra)| {
            v10::push_config::TaskPushNotificationConfig {
                tenant: None,
                id,
                task_id: if full { Some(task) } else { None },
                url,
                token,
                authentication,
                extra,
            }
        })
}

/// v1.0 `TaskPushNotificationConfig` with a task id.
pub fn v10_task_push_config() -> impl Strategy<Value = v10::push_config::TaskPushNotificationConfig>
{
    v10_push_config(true)
}

/// v1.0 `TaskPushNotificationConfig` as found inline (no task id).
pub fn v10_inline_push_config(
) -> impl Strategy<Value = v10::push_config::TaskPushNotificationConfig> {
    v10_push_config(false)
}

/// A history length of the lossless domain.
fn history() -> impl Strategy<Value = Option<i32>> {
    option::of(1..1000i32)
}

/// v0.3 `MessageSendConfiguration` with explicit `blocking`.
pub fn v03_configuration() -> impl Strategy<Value = v03::params::MessageSendConfiguration> {
    (
        option::of(vec(text(), 0..3)),
        option::of(v03_push_config()),
        history(),
        any::<bool>(),
        extras(),
    )
        .prop_map(|(modes, push, history_length, blocking, extra)| {
            v03::params::MessageSendConfiguration {
                accepted_output_modes: modes,
                push_notification_config: push,
                history_length,
                blocking: Some(blocking),
                extra,
            }
        })
}

/// v0.3 `MessageSendParams`.
pub fn v03_send_params() -> impl Strategy<Value = v03::params::MessageSendParams> {
    (
        v03_message(),
        v03_configuration(),
        option::of(metadata()),
        extras(),
    )
        .prop_map(
            |(message, c, metadata, extra)| v03::params::MessageSendParams {
                message,
                configuration: Some(c),
                metadata,
                extra,
            },
        )
}

/// v1.0 `SendMessageConfiguration`, absent or non-empty.
pub fn v10_configuration() -> impl Strategy<Value = Option<v10::params::SendMessageConfiguration>> {
    (
        option::of(vec(text(), 0..3)),
        option::of(v10_inline_push_config()),
        history(),
        option::of(Just(true)),
        extras(),
    )
        .prop_map(|(modes, push, history_length, ri, extra)| {
            let c = v10::params::SendMessageConfiguration {
                accepted_output_modes: modes,
                task_push_notification_config: push,
                history_length,
                return_immediately: ri,
                extra,
            };
            let empty = c.accepted_output_modes.is_none()
                && c.task_push_notification_config.is_none()
                && c.history_length.is_none()
                && c.return_immediately.is_none()
                && c.extra.is_empty();
            if empty {
                None
            } else {
                Some(c)
            }
        })
}

/// v1.0 `SendMessageRequest` (no tenant).
pub fn v10_send_request() -> impl Strategy<Value = v10::params::SendMessageRequest> {
    (
        v10_message(),
        v10_configuration(),
        option::of(metadata()),
        extras(),
    )
        .prop_map(|(message, configuration, metadata, extra)| {
            v10::params::SendMessageRequest {
                tenant: None,
                message,
                configuration,
                metadata,
                extra,
            }
        })
}

/// v0.3 `TaskQueryParams` (no metadata).
pub fn v03_task_query() -> impl Strategy<Value = v03::params::TaskQueryParams> {
    (ident(), history(), extras()).prop_map(|(id, history_length, extra)| {
        v03::params::TaskQueryParams {
            id,
            history_length,
            metadata: None,
            extra,
        }
    })
}

/// v1.0 `GetTaskRequest` (no tenant).
pub fn v10_get_task() -> impl Strategy<Value = v10::params::GetTaskRequest> {
    (ident(), history(), extras()).prop_map(|(id, history_length, extra)| {
        v10::params::GetTaskRequest {
            tenant: None,
            id,
            history_length,
            extra,
        }
    })
}

/// v0.3 `TaskIdParams`; `with_metadata` for cancel (resubscribe has no slot).
pub fn v03_task_id(with_metadata: bool) -> impl Strategy<Value = v03::params::TaskIdParams> {
    (ident(), option::of(metadata()), extras()).prop_map(move |(id, m, extra)| {
        v03::params::TaskIdParams {
            id,
            metadata: if with_metadata { m } else { None },
            extra,
        }
    })
}

/// v1.0 `CancelTaskRequest` (no tenant).
pub fn v10_cancel() -> impl Strategy<Value = v10::params::CancelTaskRequest> {
    (ident(), option::of(metadata()), extras()).prop_map(|(id, metadata, extra)| {
        v10::params::CancelTaskRequest {
            tenant: None,
            id,
            metadata,
            extra,
        }
    })
}

/// v1.0 `SubscribeToTaskRequest` (no tenant).
pub fn v10_subscribe() -> impl Strategy<Value = v10::params::SubscribeToTaskRequest> {
    (ident(), extras()).prop_map(|(id, extra)| v10::params::SubscribeToTaskRequest {
        tenant: None,
        id,
        extra,
    })
}

/// v0.3 `GetTaskPushNotificationConfigParams` (no metadata; the config id
/// present: without it the get is a lossy row, defaulted to the task id).
pub fn v03_get_push() -> impl Strategy<Value = v03::params::GetTaskPushNotificationConfigParams> {
    (ident(), ident(), extras()).prop_map(|(id, cid, extra)| {
        v03::params::GetTaskPushNotificationConfigParams {
            id,
            push_notification_config_id: Some(cid),
            metadata: None,
            extra,
        }
    })
}

/// v1.0 `GetTaskPushNotificationConfigRequest` (no tenant; `id`, which
/// the proto requires, present).
pub fn v10_get_push() -> impl Strategy<Value = v10::params::GetTaskPushNotificationConfigRequest> {
    (ident(), ident(), extras()).prop_map(|(task_id, id, extra)| {
        v10::params::GetTaskPushNotificationConfigRequest {
            tenant: None,
            task_id,
            id: Some(id),
            extra,
        }
    })
}

/// v0.3 `ListTaskPushNotificationConfigParams` (no metadata).
pub fn v03_list_push() -> impl Strategy<Value = v03::params::ListTaskPushNotificationConfigParams> {
    (ident(), extras()).prop_map(
        |(id, extra)| v03::params::ListTaskPushNotificationConfigParams {
            id,
            metadata: None,
            extra,
        },
    )
}

/// v1.0 `ListTaskPushNotificationConfigsRequest` (no tenant, no paging).
pub fn v10_list_push() -> impl Strategy<Value = v10::params::ListTaskPushNotificationConfigsRequest>
{
    (ident(), extras()).prop_map(|(task_id, extra)| {
        v10::params::ListTaskPushNotificationConfigsRequest {
            tenant: None,
            task_id,
            page_size: None,
            page_token: None,
            extra,
        }
    })
}

/// v0.3 `DeleteTaskPushNotificationConfigParams` (no metadata).
pub fn v03_delete_push(
) -> impl Strategy<Value = v03::params::DeleteTaskPushNotificationConfigParams> {
    (ident(), ident(), extras()).prop_map(|(id, cid, extra)| {
        v03::params::DeleteTaskPushNotificationConfigParams {
            id,
            push_notification_config_id: cid,
            metadata: None,
            extra,
        }
    })
}

/// v1.0 `DeleteTaskPushNotificationConfigRequest` (no tenant).
pub fn v10_delete_push(
) -> impl Strategy<Value = v10::params::DeleteTaskPushNotificationConfigRequest> {
    (ident(), ident(), extras()).prop_map(|(task_id, id, extra)| {
        v10::params::DeleteTaskPushNotificationConfigRequest {
            tenant: None,
            task_id,
            id,
            extra,
        }
    })
}

/// A JSON-RPC error code: named ones, v1.0-only ones and others.
fn error_code() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => proptest::sample::select(
            code::ErrorCode::ALL.iter().map(|c| c.code()).collect::<Vec<_>>()
        ),
        1 => any::<i64>(),
    ]
}

/// v0.3 JSON-RPC error object.
pub fn v03_error() -> impl Strategy<Value = v03::jsonrpc::ErrorObject> {
    (error_code(), text(), option::of(value()), extras()).prop_map(
        |(code, message, data, extra)| v03::jsonrpc::ErrorObject {
            code,
            message,
            data,
            extra,
        },
    )
}

/// v1.0 JSON-RPC error object in normal form (the image of v0.3 errors).
pub fn v10_error() -> impl Strategy<Value = v10::jsonrpc::ErrorObject> {
    v03_error().prop_filter_map("translates", |e| code::error_to_v10(e).ok())
}

/// Params of `method` in the lossless domain of `version`, as JSON
/// (`None`: no params). `ListTasks` has none in v0.3 (use only for v1.0).
pub fn params(method: Method, version: Version) -> BoxedStrategy<Option<Value>> {
    fn j<T: serde::Serialize>(t: T) -> Option<Value> {
        serde_json::to_value(t).ok()
    }
    match (method, version) {
        (Method::SendMessage | Method::SendStreamingMessage, Version::V03) => {
            v03_send_params().prop_map(j).boxed()
        }
        (Method::SendMessage | Method::SendStreamingMessage, Version::V10) => {
            v10_send_request().prop_map(j).boxed()
        }
        (Method::GetTask, Version::V03) => v03_task_query().prop_map(j).boxed(),
        (Method::GetTask, Version::V10) => v10_get_task().prop_map(j).boxed(),
        (Method::ListTasks, _) => Just(Some(json!({}))).boxed(),
        (Method::CancelTask, Version::V03) => v03_task_id(true).prop_map(j).boxed(),
        (Method::CancelTask, Version::V10) => v10_cancel().prop_map(j).boxed(),
        (Method::SubscribeToTask, Version::V03) => v03_task_id(false).prop_map(j).boxed(),
        (Method::SubscribeToTask, Version::V10) => v10_subscribe().prop_map(j).boxed(),
        (Method::CreatePushConfig, Version::V03) => v03_task_push_config().prop_map(j).boxed(),
        (Method::CreatePushConfig, Version::V10) => v10_task_push_config().prop_map(j).boxed(),
        (Method::GetPushConfig, Version::V03) => v03_get_push().prop_map(j).boxed(),
        (Method::GetPushConfig, Version::V10) => v10_get_push().prop_map(j).boxed(),
        (Method::ListPushConfigs, Version::V03) => v03_list_push().prop_map(j).boxed(),
        (Method::ListPushConfigs, Version::V10) => v10_list_push().prop_map(j).boxed(),
        (Method::DeletePushConfig, Version::V03) => v03_delete_push().prop_map(j).boxed(),
        (Method::DeletePushConfig, Version::V10) => v10_delete_push().prop_map(j).boxed(),
        // Always an object: absent params cross as `{}` (the proxy always
        // sends params), so only an object round-trips unchanged.
        (Method::GetExtendedCard, _) => btree_map("x-[a-z]{1,5}", value(), 0..3)
            .prop_map(|m| Some(Value::Object(m.into_iter().collect())))
            .boxed(),
    }
}

/// A method that exists in `version`.
pub fn method(version: Version) -> impl Strategy<Value = Method> {
    proptest::sample::select(
        Method::ALL
            .iter()
            .copied()
            .filter(|m| m.name(version).is_some() && *m != Method::ListTasks)
            .collect::<Vec<_>>(),
    )
}

/// A v0.3 JSON-RPC request of the lossless domain.
pub fn v03_request() -> impl Strategy<Value = v03::jsonrpc::Request> {
    (method(Version::V03), id(), extras()).prop_flat_map(|(m, id, extra)| {
        params(m, Version::V03).prop_map(move |params| v03::jsonrpc::Request {
            jsonrpc: "2.0".into(),
            id: id.clone(),
            method: m.name(Version::V03).unwrap_or_default().to_string(),
            params,
            extra: extra.clone(),
        })
    })
}

/// A v1.0 JSON-RPC request of the lossless domain (never `ListTasks`).
pub fn v10_request() -> impl Strategy<Value = v10::jsonrpc::Request> {
    (method(Version::V10), id(), extras()).prop_flat_map(|(m, id, extra)| {
        params(m, Version::V10).prop_map(move |params| v10::jsonrpc::Request {
            jsonrpc: "2.0".into(),
            id: id.clone(),
            method: m.name(Version::V10).unwrap_or_default().to_string(),
            params,
            extra: extra.clone(),
        })
    })
}

/// A v0.3 error response to any request.
pub fn v03_error_response() -> impl Strategy<Value = v03::jsonrpc::Response> {
    (id(), v03_error(), extras()).prop_map(|(id, e, extra)| v03::jsonrpc::Response {
        jsonrpc: "2.0".into(),
        id,
        result: None,
        error: Some(e),
        extra,
    })
}

/// A v0.3 push-config list result (bare array).
pub fn v03_push_config_list(
) -> impl Strategy<Value = Vec<v03::push_config::TaskPushNotificationConfig>> {
    vec(v03_task_push_config(), 0..3)
}

/// A v1.0 push-config list result (`configs` present, no page token).
pub fn v10_push_config_list(
) -> impl Strategy<Value = v10::params::ListTaskPushNotificationConfigsResponse> {
    vec(v10_task_push_config(), 0..3).prop_map(|c| {
        v10::params::ListTaskPushNotificationConfigsResponse {
            configs: Some(c),
            next_page_token: None,
            extra: Extras::new(),
        }
    })
}

/// A v0.3 success response to `method` whose result is in the lossless
/// domain (`ListTasks` excluded: it has no v0.3 form).
pub fn v03_success(method: Method) -> BoxedStrategy<v03::jsonrpc::Response> {
    use crate::strategy::{card, payload};
    fn j<T: serde::Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap_or(Value::Null)
    }
    let result: BoxedStrategy<Value> = match method {
        Method::SendMessage => prop_oneof![
            payload::v03_task().prop_map(|t| j(v03::event::StreamEvent::Task(t))),
            payload::v03_message().prop_map(|m| j(v03::event::StreamEvent::Message(m))),
        ]
        .boxed(),
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            payload::v03_stream_event().prop_map(j).boxed()
        }
        Method::GetTask | Method::CancelTask | Method::ListTasks => {
            payload::v03_task().prop_map(j).boxed()
        }
        Method::CreatePushConfig | Method::GetPushConfig => {
            v03_task_push_config().prop_map(j).boxed()
        }
        Method::ListPushConfigs => v03_push_config_list().prop_map(j).boxed(),
        Method::DeletePushConfig => Just(Value::Null).boxed(),
        Method::GetExtendedCard => card::v03_card().prop_map(j).boxed(),
    };
    (id(), result)
        .prop_map(|(id, result)| v03::jsonrpc::Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
            extra: Extras::new(),
        })
        .boxed()
}

/// A v1.0 success response to `method` whose result is in the lossless
/// domain (`ListTasks` excluded).
pub fn v10_success(method: Method) -> BoxedStrategy<v10::jsonrpc::Response> {
    use crate::strategy::{card, payload};
    fn j<T: serde::Serialize>(t: T) -> Value {
        serde_json::to_value(t).unwrap_or(Value::Null)
    }
    let result: BoxedStrategy<Value> = match method {
        Method::SendMessage => prop_oneof![
            payload::v10_task().prop_map(|t| j(v10::params::SendMessageResponse::Task(t))),
            payload::v10_message().prop_map(|m| j(v10::params::SendMessageResponse::Message(m))),
        ]
        .boxed(),
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            payload::v10_stream_response().prop_map(j).boxed()
        }
        Method::GetTask | Method::CancelTask | Method::ListTasks => {
            payload::v10_task().prop_map(j).boxed()
        }
        Method::CreatePushConfig | Method::GetPushConfig => {
            v10_task_push_config().prop_map(j).boxed()
        }
        Method::ListPushConfigs => v10_push_config_list().prop_map(j).boxed(),
        Method::DeletePushConfig => Just(Value::Null).boxed(),
        Method::GetExtendedCard => card::v10_card().prop_map(j).boxed(),
    };
    (id(), result)
        .prop_map(|(id, result)| v10::jsonrpc::Response {
            jsonrpc: "2.0".into(),
            id,
            result: Some(result),
            error: None,
            extra: Extras::new(),
        })
        .boxed()
}
