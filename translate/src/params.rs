//! Request-params and result translation of the JSON-RPC methods
//! (MAPPING-FACTS §4.8, §4.10, §4.11; DECISIONS "SendMessage", "Push
//! configs", "Other params", with the 15:55 revisions).
//!
//! The module's main entity is `MessageSendParams` ⇄ `SendMessageRequest`
//! ([`to_v10`] / [`to_v03`]); the other methods use named variants.

use serde_json::Value;

use crate::json::Extras;
use crate::lossy::{Direction, Lossy};
use crate::push_config::{self, carry};
use crate::{event, message, task, v03, v10, TranslateError};

use v03::params as q03;
use v10::params as q10;

const V10_SEND_FIELDS: &[&str] = &["tenant", "message", "configuration", "metadata"];
const V03_SEND_FIELDS: &[&str] = &["message", "configuration", "metadata"];
const V10_CONFIGURATION_FIELDS: &[&str] = &[
    "acceptedOutputModes",
    "accepted_output_modes",
    "taskPushNotificationConfig",
    "task_push_notification_config",
    "historyLength",
    "history_length",
    "returnImmediately",
    "return_immediately",
];
const V03_CONFIGURATION_FIELDS: &[&str] = &[
    "acceptedOutputModes",
    "pushNotificationConfig",
    "historyLength",
    "blocking",
];
const V10_GET_TASK_FIELDS: &[&str] = &["tenant", "id", "historyLength", "history_length"];
const V03_GET_TASK_FIELDS: &[&str] = &["id", "historyLength", "metadata"];
const V10_CANCEL_FIELDS: &[&str] = &["tenant", "id", "metadata"];
const V03_TASK_ID_FIELDS: &[&str] = &["id", "metadata"];
const V10_SUBSCRIBE_FIELDS: &[&str] = &["tenant", "id"];
const V10_PUSH_ID_FIELDS: &[&str] = &["tenant", "taskId", "task_id", "id"];
const V03_PUSH_ID_FIELDS: &[&str] = &["id", "pushNotificationConfigId", "metadata"];
const V10_LIST_PUSH_FIELDS: &[&str] = &[
    "tenant",
    "taskId",
    "task_id",
    "pageSize",
    "page_size",
    "pageToken",
    "page_token",
];
const V10_EXTENDED_CARD_FIELDS: &[&str] = &["tenant"];

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "request params `tenant`",
        direction: Direction::ToV03,
        what: "every v1.0 request has `tenant`; v0.3 has none",
        decision: "dropped (the proxy routes by it instead)",
        fixture: "request/SendMessage.tenant.v10.json, request/SendMessage.tenant.v03.json, request/SendMessage.tenant.to-v10.json",
        at: &["tenant"],
    },
    Lossy {
        entity: "historyLength (SendMessage configuration, GetTask)",
        direction: Direction::Both,
        what: "v0.3 0 means unlimited, v1.0 0 means no history and unset means unlimited",
        decision: "v0.3 0 or absent -> v1.0 absent; v1.0 n (0 included) -> v0.3 n; negative values rejected",
        fixture: "request/GetTask.history-zero.v03.json, request/GetTask.history-zero.v10.json, request/GetTask.history-zero.to-v03.json, request/GetTask.history-zero-v10.v10.json, request/GetTask.history-zero-v10.v03.json, request/GetTask.history-zero-v10.to-v10.json",
        at: &["historyLength"],
    },
    Lossy {
        entity: "SendMessage configuration.blocking / returnImmediately",
        direction: Direction::Both,
        what: "inverted flag; v0.3 default unspecified (reference servers block), v1.0 default blocking",
        decision: "returnImmediately = !blocking; absent blocking = blocking (returnImmediately absent); going to v0.3 `blocking` is always explicit (a configuration is created if absent); a v1.0 configuration left empty becomes absent",
        fixture: "request/SendMessage.blocking-absent.v03.json, request/SendMessage.blocking-absent.v10.json, request/SendMessage.blocking-absent.to-v03.json, request/SendMessage.return-immediately-false.v10.json, request/SendMessage.return-immediately-false.v03.json, request/SendMessage.return-immediately-false.to-v10.json, request/SendMessage.no-configuration.v10.json, request/SendMessage.no-configuration.v03.json",
        at: &["configuration"],
    },
    Lossy {
        entity: "v0.3 REST (HTTP+JSON) `message:send` without `blocking`",
        direction: Direction::ToV10,
        what: "the v0.3 REST body is ProtoJSON of the v0.3 proto, where `blocking` is a plain proto3 bool: absent (no `configuration`, `configuration: {}` or one without the member) reads as false, 'returned immediately' (a2a-python 0.3's REST server returns at once; a2a-js 0.3's blocks only when `configuration` itself is absent); on JSON-RPC an absent `blocking` blocks in every v0.3 SDK",
        decision: "per binding: v0.3 REST SendMessage without `blocking` -> v1.0 `returnImmediately: true` (the proto3 reading, as a2a-python 0.3's REST server); explicit `blocking: true` -> absent (blocking); JSON-RPC and streaming sends unchanged (absent = blocking; the flag has no effect on streams). Done by the proxy's REST codec (`proxy/src/rest.rs`), not by this module",
        fixture: "rest-v03/request/SendMessage.no-configuration.v03.json, rest-v03/request/SendMessage.no-configuration.v10.json, rest-v03/request/SendMessage.empty-configuration.v03.json, rest-v03/request/SendMessage.configuration-without-blocking.v03.json, rest-v03/request/SendMessage.blocking-true.v03.json, rest-v03/request/SendMessage.blocking-true.v10.json, rest-v03/request/SendStreamingMessage.no-configuration.v03.json",
        at: &["configuration.blocking"],
    },
    Lossy {
        entity: "SendMessage configuration.taskPushNotificationConfig",
        direction: Direction::ToV03,
        what: "v1.0 inline config may carry `taskId` / `tenant`; v0.3 `pushNotificationConfig` has neither",
        decision: "dropped",
        fixture: "request/SendMessage.push-config.v10.json, request/SendMessage.push-config.v03.json, request/SendMessage.push-config.to-v10.json",
        at: &["taskPushNotificationConfig", "pushNotificationConfig"],
    },
    Lossy {
        entity: "params `metadata` (GetTask, SubscribeToTask, push-config get / list / delete)",
        direction: Direction::ToV10,
        what: "these v1.0 requests have no `metadata`",
        decision: "dropped (CancelTask and SendMessage keep it)",
        fixture: "request/GetTask.metadata.v03.json, request/GetTask.metadata.v10.json, request/GetTask.metadata.to-v03.json, request/SubscribeToTask.metadata.v03.json, request/SubscribeToTask.metadata.v10.json, request/SubscribeToTask.metadata.to-v03.json",
        at: &["params.metadata"],
    },
    Lossy {
        entity: "ListTaskPushNotificationConfigs pagination",
        direction: Direction::ToV03,
        what: "v0.3 list has no paging: request `pageSize` / `pageToken` and result `nextPageToken` have no slot",
        decision: "dropped; the v0.3 bare array becomes `{configs: [...]}` (always present, even empty)",
        fixture: "request/ListTaskPushNotificationConfigs.page.v10.json, request/ListTaskPushNotificationConfigs.page.v03.json, request/ListTaskPushNotificationConfigs.page.to-v10.json, response/ListTaskPushNotificationConfigs.next-page.v10.json, response/ListTaskPushNotificationConfigs.next-page.v03.json, response/ListTaskPushNotificationConfigs.next-page.to-v10.json",
        at: &["pageSize", "pageToken", "nextPageToken"],
    },
    Lossy {
        entity: "GetTaskPushNotificationConfig params without config id",
        direction: Direction::Both,
        what: "v0.3 `pushNotificationConfigId` is optional, v1.0 `id` is required by the proto",
        decision: "v0.3 without it (a v0.3 server answers the task's config) -> v1.0 {taskId, id: taskId}, the id servers (a2a-python 1.x among them) give a config registered without one, since a v1.0 get without `id` matches nothing; v1.0 without `id` -> v0.3 {id: taskId}",
        fixture: "request/GetTaskPushNotificationConfig.no-config-id.v03.json, request/GetTaskPushNotificationConfig.no-config-id.v10.json, request/GetTaskPushNotificationConfig.no-config-id.to-v10.json",
        at: &["pushNotificationConfigId", "params.id"],
    },
    Lossy {
        entity: "GetExtendedAgentCard params",
        direction: Direction::ToV10,
        what: "v0.3 has no params (null, absent or {}); v1.0 {tenant?} or absent",
        decision: "null and absent -> `{}` in both directions (the proxy always sends `params`: some v1.0 servers refuse GetExtendedAgentCard without it, -32602); an object is carried (tenant dropped going to v0.3)",
        fixture: "request/GetExtendedAgentCard.null-params.v03.json, request/GetExtendedAgentCard.null-params.v10.json, request/GetExtendedAgentCard.null-params.to-v03.json, request/GetExtendedAgentCard.null-params.to-v10.json",
        at: &["params"],
    },
];

fn history_to_v10(h: Option<i32>) -> Result<Option<i32>, TranslateError> {
    match h {
        Some(n) if n < 0 => Err(TranslateError::invalid(
            "historyLength",
            format!("{n} is negative"),
        )),
        Some(0) | None => Ok(None),
        Some(n) => Ok(Some(n)),
    }
}

fn history_to_v03(h: Option<i32>) -> Result<Option<i32>, TranslateError> {
    match h {
        Some(n) if n < 0 => Err(TranslateError::invalid(
            "historyLength",
            format!("{n} is negative"),
        )),
        Some(n) => Ok(Some(n)),
        None => Ok(None),
    }
}

/// Translates v0.3 `MessageSendConfiguration` to v1.0; `None` when nothing
/// is left (blocking is the v1.0 default).
pub fn configuration_to_v10(
    c: q03::MessageSendConfiguration,
) -> Result<Option<q10::SendMessageConfiguration>, TranslateError> {
    let out = q10::SendMessageConfiguration {
        accepted_output_modes: c.accepted_output_modes,
        task_push_notification_config: c
            .push_notification_config
            .map(push_config::config_to_v10)
            .transpose()?,
        history_length: history_to_v10(c.history_length)?,
        return_immediately: match c.blocking {
            Some(false) => Some(true),
            Some(true) | None => None,
        },
        extra: carry(c.extra, V10_CONFIGURATION_FIELDS),
    };
    let empty = out.accepted_output_modes.is_none()
        && out.task_push_notification_config.is_none()
        && out.history_length.is_none()
        && out.return_immediately.is_none()
        && out.extra.is_empty();
    Ok(if empty { None } else { Some(out) })
}

/// Translates an optional v1.0 `SendMessageConfiguration` to v0.3; the
/// result always states `blocking`.
pub fn configuration_to_v03(
    c: Option<q10::SendMessageConfiguration>,
) -> Result<q03::MessageSendConfiguration, TranslateError> {
    let c = c.unwrap_or(q10::SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: None,
        extra: Extras::new(),
    });
    Ok(q03::MessageSendConfiguration {
        accepted_output_modes: c.accepted_output_modes,
        push_notification_config: c
            .task_push_notification_config
            .map(push_config::config_to_v03)
            .transpose()?,
        history_length: history_to_v03(c.history_length)?,
        blocking: Some(c.return_immediately != Some(true)),
        extra: carry(c.extra, V03_CONFIGURATION_FIELDS),
    })
}

/// Translates v0.3 `MessageSendParams` to a v1.0 `SendMessageRequest`.
pub fn to_v10(p: q03::MessageSendParams) -> Result<q10::SendMessageRequest, TranslateError> {
    let configuration = match p.configuration {
        Some(c) => configuration_to_v10(c)?,
        None => None,
    };
    Ok(q10::SendMessageRequest {
        tenant: None,
        message: message::to_v10(p.message)?,
        configuration,
        metadata: p.metadata,
        extra: carry(p.extra, V10_SEND_FIELDS),
    })
}

/// Translates a v1.0 `SendMessageRequest` to v0.3 `MessageSendParams`.
pub fn to_v03(p: q10::SendMessageRequest) -> Result<q03::MessageSendParams, TranslateError> {
    Ok(q03::MessageSendParams {
        message: message::to_v03(p.message)?,
        configuration: Some(configuration_to_v03(p.configuration)?),
        metadata: p.metadata,
        extra: carry(p.extra, V03_SEND_FIELDS),
    })
}

/// `tasks/get` params -> `GetTaskRequest` (`metadata` dropped).
pub fn get_task_to_v10(p: q03::TaskQueryParams) -> Result<q10::GetTaskRequest, TranslateError> {
    Ok(q10::GetTaskRequest {
        tenant: None,
        id: p.id,
        history_length: history_to_v10(p.history_length)?,
        extra: carry(p.extra, V10_GET_TASK_FIELDS),
    })
}

/// `GetTaskRequest` -> `tasks/get` params (`tenant` dropped).
pub fn get_task_to_v03(p: q10::GetTaskRequest) -> Result<q03::TaskQueryParams, TranslateError> {
    Ok(q03::TaskQueryParams {
        id: p.id,
        history_length: history_to_v03(p.history_length)?,
        metadata: None,
        extra: carry(p.extra, V03_GET_TASK_FIELDS),
    })
}

/// `tasks/cancel` params -> `CancelTaskRequest`.
pub fn cancel_to_v10(p: q03::TaskIdParams) -> Result<q10::CancelTaskRequest, TranslateError> {
    Ok(q10::CancelTaskRequest {
        tenant: None,
        id: p.id,
        metadata: p.metadata,
        extra: carry(p.extra, V10_CANCEL_FIELDS),
    })
}

/// `CancelTaskRequest` -> `tasks/cancel` params (`tenant` dropped).
pub fn cancel_to_v03(p: q10::CancelTaskRequest) -> Result<q03::TaskIdParams, TranslateError> {
    Ok(q03::TaskIdParams {
        id: p.id,
        metadata: p.metadata,
        extra: carry(p.extra, V03_TASK_ID_FIELDS),
    })
}

/// `tasks/resubscribe` params -> `SubscribeToTaskRequest` (`metadata` dropped).
pub fn subscribe_to_v10(
    p: q03::TaskIdParams,
) -> Result<q10::SubscribeToTaskRequest, TranslateError> {
    Ok(q10::SubscribeToTaskRequest {
        tenant: None,
        id: p.id,
        extra: carry(p.extra, V10_SUBSCRIBE_FIELDS),
    })
}

/// `SubscribeToTaskRequest` -> `tasks/resubscribe` params (`tenant` dropped).
pub fn subscribe_to_v03(
    p: q10::SubscribeToTaskRequest,
) -> Result<q03::TaskIdParams, TranslateError> {
    Ok(q03::TaskIdParams {
        id: p.id,
        metadata: None,
        extra: carry(p.extra, V03_TASK_ID_FIELDS),
    })
}

/// `tasks/pushNotificationConfig/get` params -> `GetTaskPushNotificationConfigRequest`.
pub fn get_push_config_to_v10(
    p: q03::GetTaskPushNotificationConfigParams,
) -> Result<q10::GetTaskPushNotificationConfigRequest, TranslateError> {
    // Without a config id a v0.3 server answers the task's config; a
    // config registered without an id has the task id as its id.
    let id = p
        .push_notification_config_id
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| p.id.clone());
    Ok(q10::GetTaskPushNotificationConfigRequest {
        tenant: None,
        task_id: p.id,
        id: Some(id),
        extra: carry(p.extra, V10_PUSH_ID_FIELDS),
    })
}

/// `GetTaskPushNotificationConfigRequest` -> `tasks/pushNotificationConfig/get` params.
pub fn get_push_config_to_v03(
    p: q10::GetTaskPushNotificationConfigRequest,
) -> Result<q03::GetTaskPushNotificationConfigParams, TranslateError> {
    Ok(q03::GetTaskPushNotificationConfigParams {
        id: p.task_id,
        // ProtoJSON: an empty string is the unset default.
        push_notification_config_id: p.id.filter(|id| !id.is_empty()),
        metadata: None,
        extra: carry(p.extra, V03_PUSH_ID_FIELDS),
    })
}

/// `tasks/pushNotificationConfig/list` params -> `ListTaskPushNotificationConfigsRequest`.
pub fn list_push_configs_to_v10(
    p: q03::ListTaskPushNotificationConfigParams,
) -> Result<q10::ListTaskPushNotificationConfigsRequest, TranslateError> {
    Ok(q10::ListTaskPushNotificationConfigsRequest {
        tenant: None,
        task_id: p.id,
        page_size: None,
        page_token: None,
        extra: carry(p.extra, V10_LIST_PUSH_FIELDS),
    })
}

/// `ListTaskPushNotificationConfigsRequest` -> `tasks/pushNotificationConfig/list`
/// params (paging dropped).
pub fn list_push_configs_to_v03(
    p: q10::ListTaskPushNotificationConfigsRequest,
) -> Result<q03::ListTaskPushNotificationConfigParams, TranslateError> {
    Ok(q03::ListTaskPushNotificationConfigParams {
        id: p.task_id,
        metadata: None,
        extra: carry(p.extra, V03_TASK_ID_FIELDS),
    })
}

/// `tasks/pushNotificationConfig/delete` params -> `DeleteTaskPushNotificationConfigRequest`.
pub fn delete_push_config_to_v10(
    p: q03::DeleteTaskPushNotificationConfigParams,
) -> Result<q10::DeleteTaskPushNotificationConfigRequest, TranslateError> {
    Ok(q10::DeleteTaskPushNotificationConfigRequest {
        tenant: None,
        task_id: p.id,
        id: p.push_notification_config_id,
        extra: carry(p.extra, V10_PUSH_ID_FIELDS),
    })
}

/// `DeleteTaskPushNotificationConfigRequest` -> `tasks/pushNotificationConfig/delete` params.
pub fn delete_push_config_to_v03(
    p: q10::DeleteTaskPushNotificationConfigRequest,
) -> Result<q03::DeleteTaskPushNotificationConfigParams, TranslateError> {
    Ok(q03::DeleteTaskPushNotificationConfigParams {
        id: p.task_id,
        push_notification_config_id: p.id,
        metadata: None,
        extra: carry(p.extra, V03_PUSH_ID_FIELDS),
    })
}

/// `agent/getAuthenticatedExtendedCard` params (`null`, absent or an object)
/// -> `GetExtendedAgentCardRequest`, always present (`{}` for none: some
/// v1.0 servers refuse a request without `params`).
pub fn extended_card_to_v10(
    p: Option<Value>,
) -> Result<Option<q10::GetExtendedAgentCardRequest>, TranslateError> {
    match p {
        None | Some(Value::Null) => Ok(Some(q10::GetExtendedAgentCardRequest {
            tenant: None,
            extra: Default::default(),
        })),
        Some(Value::Object(extra)) => Ok(Some(q10::GetExtendedAgentCardRequest {
            tenant: None,
            extra: carry(extra, V10_EXTENDED_CARD_FIELDS),
        })),
        Some(other) => Err(TranslateError::invalid(
            "agent/getAuthenticatedExtendedCard params",
            format!("expected no params or an object, got {other}"),
        )),
    }
}

/// `GetExtendedAgentCardRequest` (or absent) -> v0.3 params (`tenant`
/// dropped), always present (`{}` for none).
pub fn extended_card_to_v03(
    p: Option<q10::GetExtendedAgentCardRequest>,
) -> Result<Option<Value>, TranslateError> {
    Ok(Some(Value::Object(p.map(|r| r.extra).unwrap_or_default())))
}

/// `message/send` result (bare kind-tagged Task or Message) -> `SendMessageResponse`.
pub fn send_result_to_v10(
    r: v03::event::StreamEvent,
) -> Result<q10::SendMessageResponse, TranslateError> {
    use v03::event::StreamEvent as E;
    match r {
        E::Task(t) => Ok(q10::SendMessageResponse::Task(task::to_v10(t)?)),
        E::Message(m) => Ok(q10::SendMessageResponse::Message(message::to_v10(m)?)),
        E::StatusUpdate(_) | E::ArtifactUpdate(_) => Err(TranslateError::invalid(
            "message/send result",
            "expected a Task or a Message, got a stream event",
        )),
    }
}

/// `SendMessageResponse` -> `message/send` result (bare kind-tagged object).
pub fn send_result_to_v03(
    r: q10::SendMessageResponse,
) -> Result<v03::event::StreamEvent, TranslateError> {
    match r {
        q10::SendMessageResponse::Task(t) => Ok(v03::event::StreamEvent::Task(task::to_v03(t)?)),
        q10::SendMessageResponse::Message(m) => {
            Ok(v03::event::StreamEvent::Message(message::to_v03(m)?))
        }
    }
}

/// `tasks/pushNotificationConfig/list` result (bare array) ->
/// `ListTaskPushNotificationConfigsResponse` (`configs` always present).
pub fn list_push_configs_result_to_v10(
    r: Vec<v03::push_config::TaskPushNotificationConfig>,
) -> Result<q10::ListTaskPushNotificationConfigsResponse, TranslateError> {
    Ok(q10::ListTaskPushNotificationConfigsResponse {
        configs: Some(
            r.into_iter()
                .map(push_config::to_v10)
                .collect::<Result<_, _>>()?,
        ),
        next_page_token: None,
        extra: Extras::new(),
    })
}

/// `ListTaskPushNotificationConfigsResponse` -> bare array (`nextPageToken` dropped).
pub fn list_push_configs_result_to_v03(
    r: q10::ListTaskPushNotificationConfigsResponse,
) -> Result<Vec<v03::push_config::TaskPushNotificationConfig>, TranslateError> {
    r.configs
        .unwrap_or_default()
        .into_iter()
        .map(push_config::to_v03)
        .collect()
}

/// Stream result of `message/stream` / `tasks/resubscribe` -> `StreamResponse`
/// (delegates to [`crate::event`]).
pub fn stream_result_to_v10(
    r: v03::event::StreamEvent,
) -> Result<v10::event::StreamResponse, TranslateError> {
    event::stream_to_v10(r)
}

/// `StreamResponse` -> v0.3 stream result (delegates to [`crate::event`]).
pub fn stream_result_to_v03(
    r: v10::event::StreamResponse,
) -> Result<v03::event::StreamEvent, TranslateError> {
    event::stream_to_v03(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn get_push_config_empty_id_is_unset() {
        let p: q10::GetTaskPushNotificationConfigRequest =
            serde_json::from_value(json!({"taskId":"t","id":""})).unwrap();
        let v = serde_json::to_value(get_push_config_to_v03(p).unwrap()).unwrap();
        assert_eq!(v, json!({"id":"t"}));
    }

    #[test]
    fn negative_history_is_rejected() {
        let p: q03::TaskQueryParams =
            serde_json::from_value(json!({"id":"t","historyLength":-1})).unwrap();
        assert_eq!(get_task_to_v10(p).unwrap_err().jsonrpc_code(), -32602);
    }

    #[test]
    fn send_result_must_be_task_or_message() {
        let e: v03::event::StreamEvent = serde_json::from_value(json!({
            "kind":"status-update","taskId":"t","contextId":"c",
            "status":{"state":"working"},"final":false}))
        .unwrap();
        assert_eq!(send_result_to_v10(e).unwrap_err().jsonrpc_code(), -32602);
    }
}
