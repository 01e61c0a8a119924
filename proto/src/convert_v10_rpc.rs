//! Conversions between the prost v1.0 push-notification config and RPC
//! request / response messages ([`crate::v10`]) and the `translate::v10`
//! models (ProtoJSON of the same proto).
//!
//! The usual proto3 losses apply (see [`crate::convert_v10`]): unknown
//! members are dropped, and for fields without presence `""`, `0`, `[]` and
//! `false` read back as absent — e.g. `returnImmediately: false`, a
//! `ListTasksRequest.status` of `TASK_STATE_UNSPECIFIED`, `pageSize: 0` of
//! the push-config list request. `optional` fields (`historyLength`,
//! `pageSize` of `ListTasks`, `includeArtifacts`) keep their presence.
//! Required-by-spec response members (`ListTasksResponse.*`,
//! `ListTaskPushNotificationConfigsResponse.configs`) always come back
//! present. Ids are passed through unvalidated (v1.0 has no resource
//! names). Nothing here panics.

use translate::json::Extras;
use translate::v10::params as mp;
use translate::v10::push_config as mc;
use translate::TranslateError;

use crate::convert_v10::{
    message_from_pb, message_to_pb, state_from_pb, state_to_pb, task_from_pb, task_to_pb,
};
use crate::v10 as pb;
use crate::wkt::{
    metadata_from_pb, metadata_to_pb, non_empty, non_empty_vec, timestamp_from_pb, timestamp_to_pb,
};

fn missing(what: &'static str, field: &str) -> TranslateError {
    TranslateError::invalid(what, format!("{field} is missing"))
}

fn non_zero(n: i32) -> Option<i32> {
    (n != 0).then_some(n)
}

// ---- Push-notification config ----------------------------------------------

/// Model authentication info -> prost.
pub fn auth_to_pb(a: mc::AuthenticationInfo) -> Result<pb::AuthenticationInfo, TranslateError> {
    Ok(pb::AuthenticationInfo {
        scheme: a.scheme,
        credentials: a.credentials.unwrap_or_default(),
    })
}

/// Prost authentication info -> model.
pub fn auth_from_pb(a: pb::AuthenticationInfo) -> Result<mc::AuthenticationInfo, TranslateError> {
    Ok(mc::AuthenticationInfo {
        scheme: a.scheme,
        credentials: non_empty(a.credentials),
        extra: Extras::new(),
    })
}

/// Model push config (flat) -> prost.
pub fn task_push_config_to_pb(
    c: mc::TaskPushNotificationConfig,
) -> Result<pb::TaskPushNotificationConfig, TranslateError> {
    Ok(pb::TaskPushNotificationConfig {
        tenant: c.tenant.unwrap_or_default(),
        id: c.id.unwrap_or_default(),
        task_id: c.task_id.unwrap_or_default(),
        url: c.url,
        token: c.token.unwrap_or_default(),
        authentication: c.authentication.map(auth_to_pb).transpose()?,
    })
}

/// Prost push config -> model.
pub fn task_push_config_from_pb(
    c: pb::TaskPushNotificationConfig,
) -> Result<mc::TaskPushNotificationConfig, TranslateError> {
    Ok(mc::TaskPushNotificationConfig {
        tenant: non_empty(c.tenant),
        id: non_empty(c.id),
        task_id: non_empty(c.task_id),
        url: c.url,
        token: non_empty(c.token),
        authentication: c.authentication.map(auth_from_pb).transpose()?,
        extra: Extras::new(),
    })
}

// ---- SendMessage -----------------------------------------------------------

/// Model send configuration -> prost (`returnImmediately` absent -> false).
pub fn send_configuration_to_pb(
    c: mp::SendMessageConfiguration,
) -> Result<pb::SendMessageConfiguration, TranslateError> {
    Ok(pb::SendMessageConfiguration {
        accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
        task_push_notification_config: c
            .task_push_notification_config
            .map(task_push_config_to_pb)
            .transpose()?,
        history_length: c.history_length,
        return_immediately: c.return_immediately.unwrap_or(false),
    })
}

/// Prost send configuration -> model (`return_immediately` false -> absent).
pub fn send_configuration_from_pb(
    c: pb::SendMessageConfiguration,
) -> Result<mp::SendMessageConfiguration, TranslateError> {
    Ok(mp::SendMessageConfiguration {
        accepted_output_modes: non_empty_vec(c.accepted_output_modes),
        task_push_notification_config: c
            .task_push_notification_config
            .map(task_push_config_from_pb)
            .transpose()?,
        history_length: c.history_length,
        return_immediately: c.return_immediately.then_some(true),
        extra: Extras::new(),
    })
}

/// Model `SendMessageRequest` -> prost.
pub fn send_request_to_pb(
    r: mp::SendMessageRequest,
) -> Result<pb::SendMessageRequest, TranslateError> {
    Ok(pb::SendMessageRequest {
        tenant: r.tenant.unwrap_or_default(),
        message: Some(message_to_pb(r.message)),
        configuration: r.configuration.map(send_configuration_to_pb).transpose()?,
        metadata: metadata_to_pb(r.metadata),
    })
}

/// Prost `SendMessageRequest` -> model (the message is required).
pub fn send_request_from_pb(
    r: pb::SendMessageRequest,
) -> Result<mp::SendMessageRequest, TranslateError> {
    Ok(mp::SendMessageRequest {
        tenant: non_empty(r.tenant),
        message: message_from_pb(
            r.message
                .ok_or_else(|| missing("send message request", "message"))?,
        )?,
        configuration: r
            .configuration
            .map(send_configuration_from_pb)
            .transpose()?,
        metadata: metadata_from_pb(r.metadata)?,
        extra: Extras::new(),
    })
}

/// Model `SendMessageResponse` -> prost.
pub fn send_response_to_pb(
    r: mp::SendMessageResponse,
) -> Result<pb::SendMessageResponse, TranslateError> {
    use pb::send_message_response::Payload;
    let payload = match r {
        mp::SendMessageResponse::Task(t) => Payload::Task(task_to_pb(t)?),
        mp::SendMessageResponse::Message(x) => Payload::Message(message_to_pb(x)),
    };
    Ok(pb::SendMessageResponse {
        payload: Some(payload),
    })
}

/// Prost `SendMessageResponse` -> model (empty payload rejected).
pub fn send_response_from_pb(
    r: pb::SendMessageResponse,
) -> Result<mp::SendMessageResponse, TranslateError> {
    use pb::send_message_response::Payload;
    Ok(
        match r
            .payload
            .ok_or_else(|| missing("send message response", "payload"))?
        {
            Payload::Task(t) => mp::SendMessageResponse::Task(task_from_pb(t)?),
            Payload::Message(x) => mp::SendMessageResponse::Message(message_from_pb(x)?),
        },
    )
}

// ---- Tasks -----------------------------------------------------------------

/// Model `GetTaskRequest` -> prost.
pub fn get_task_to_pb(r: mp::GetTaskRequest) -> Result<pb::GetTaskRequest, TranslateError> {
    Ok(pb::GetTaskRequest {
        tenant: r.tenant.unwrap_or_default(),
        id: r.id,
        history_length: r.history_length,
    })
}

/// Prost `GetTaskRequest` -> model.
pub fn get_task_from_pb(r: pb::GetTaskRequest) -> Result<mp::GetTaskRequest, TranslateError> {
    Ok(mp::GetTaskRequest {
        tenant: non_empty(r.tenant),
        id: r.id,
        history_length: r.history_length,
        extra: Extras::new(),
    })
}

/// Model `ListTasksRequest` -> prost (an unparseable
/// `statusTimestampAfter` or a state without a number is rejected).
pub fn list_tasks_to_pb(r: mp::ListTasksRequest) -> Result<pb::ListTasksRequest, TranslateError> {
    Ok(pb::ListTasksRequest {
        tenant: r.tenant.unwrap_or_default(),
        context_id: r.context_id.unwrap_or_default(),
        status: r.status.as_ref().map(state_to_pb).transpose()?.unwrap_or(0),
        page_size: r.page_size,
        page_token: r.page_token.unwrap_or_default(),
        history_length: r.history_length,
        status_timestamp_after: r
            .status_timestamp_after
            .as_deref()
            .map(timestamp_to_pb)
            .transpose()?,
        include_artifacts: r.include_artifacts,
    })
}

/// Prost `ListTasksRequest` -> model (`status` 0 = no filter -> absent).
pub fn list_tasks_from_pb(r: pb::ListTasksRequest) -> Result<mp::ListTasksRequest, TranslateError> {
    Ok(mp::ListTasksRequest {
        tenant: non_empty(r.tenant),
        context_id: non_empty(r.context_id),
        status: (r.status != 0).then(|| state_from_pb(r.status)),
        page_size: r.page_size,
        page_token: non_empty(r.page_token),
        history_length: r.history_length,
        status_timestamp_after: r
            .status_timestamp_after
            .as_ref()
            .map(timestamp_from_pb)
            .transpose()?,
        include_artifacts: r.include_artifacts,
        extra: Extras::new(),
    })
}

/// Model `ListTasksResponse` -> prost (absent members -> defaults).
pub fn list_tasks_response_to_pb(
    r: mp::ListTasksResponse,
) -> Result<pb::ListTasksResponse, TranslateError> {
    Ok(pb::ListTasksResponse {
        tasks: r
            .tasks
            .unwrap_or_default()
            .into_iter()
            .map(task_to_pb)
            .collect::<Result<_, _>>()?,
        next_page_token: r.next_page_token.unwrap_or_default(),
        page_size: r.page_size.unwrap_or(0),
        total_size: r.total_size.unwrap_or(0),
    })
}

/// Prost `ListTasksResponse` -> model (all four members present, as the
/// spec requires; `nextPageToken` is `""` on the last page).
pub fn list_tasks_response_from_pb(
    r: pb::ListTasksResponse,
) -> Result<mp::ListTasksResponse, TranslateError> {
    Ok(mp::ListTasksResponse {
        tasks: Some(
            r.tasks
                .into_iter()
                .map(task_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        next_page_token: Some(r.next_page_token),
        page_size: Some(r.page_size),
        total_size: Some(r.total_size),
        extra: Extras::new(),
    })
}

/// Model `CancelTaskRequest` -> prost.
pub fn cancel_task_to_pb(
    r: mp::CancelTaskRequest,
) -> Result<pb::CancelTaskRequest, TranslateError> {
    Ok(pb::CancelTaskRequest {
        tenant: r.tenant.unwrap_or_default(),
        id: r.id,
        metadata: metadata_to_pb(r.metadata),
    })
}

/// Prost `CancelTaskRequest` -> model.
pub fn cancel_task_from_pb(
    r: pb::CancelTaskRequest,
) -> Result<mp::CancelTaskRequest, TranslateError> {
    Ok(mp::CancelTaskRequest {
        tenant: non_empty(r.tenant),
        id: r.id,
        metadata: metadata_from_pb(r.metadata)?,
        extra: Extras::new(),
    })
}

/// Model `SubscribeToTaskRequest` -> prost.
pub fn subscribe_to_pb(
    r: mp::SubscribeToTaskRequest,
) -> Result<pb::SubscribeToTaskRequest, TranslateError> {
    Ok(pb::SubscribeToTaskRequest {
        tenant: r.tenant.unwrap_or_default(),
        id: r.id,
    })
}

/// Prost `SubscribeToTaskRequest` -> model.
pub fn subscribe_from_pb(
    r: pb::SubscribeToTaskRequest,
) -> Result<mp::SubscribeToTaskRequest, TranslateError> {
    Ok(mp::SubscribeToTaskRequest {
        tenant: non_empty(r.tenant),
        id: r.id,
        extra: Extras::new(),
    })
}

// ---- Push-config requests --------------------------------------------------

/// Model `GetTaskPushNotificationConfigRequest` -> prost.
pub fn get_push_config_to_pb(
    r: mp::GetTaskPushNotificationConfigRequest,
) -> Result<pb::GetTaskPushNotificationConfigRequest, TranslateError> {
    Ok(pb::GetTaskPushNotificationConfigRequest {
        tenant: r.tenant.unwrap_or_default(),
        task_id: r.task_id,
        id: r.id.unwrap_or_default(),
    })
}

/// Prost `GetTaskPushNotificationConfigRequest` -> model.
pub fn get_push_config_from_pb(
    r: pb::GetTaskPushNotificationConfigRequest,
) -> Result<mp::GetTaskPushNotificationConfigRequest, TranslateError> {
    Ok(mp::GetTaskPushNotificationConfigRequest {
        tenant: non_empty(r.tenant),
        task_id: r.task_id,
        id: non_empty(r.id),
        extra: Extras::new(),
    })
}

/// Model `ListTaskPushNotificationConfigsRequest` -> prost.
pub fn list_push_configs_to_pb(
    r: mp::ListTaskPushNotificationConfigsRequest,
) -> Result<pb::ListTaskPushNotificationConfigsRequest, TranslateError> {
    Ok(pb::ListTaskPushNotificationConfigsRequest {
        tenant: r.tenant.unwrap_or_default(),
        task_id: r.task_id,
        page_size: r.page_size.unwrap_or(0),
        page_token: r.page_token.unwrap_or_default(),
    })
}

/// Prost `ListTaskPushNotificationConfigsRequest` -> model (`page_size` 0 ->
/// absent).
pub fn list_push_configs_from_pb(
    r: pb::ListTaskPushNotificationConfigsRequest,
) -> Result<mp::ListTaskPushNotificationConfigsRequest, TranslateError> {
    Ok(mp::ListTaskPushNotificationConfigsRequest {
        tenant: non_empty(r.tenant),
        task_id: r.task_id,
        page_size: non_zero(r.page_size),
        page_token: non_empty(r.page_token),
        extra: Extras::new(),
    })
}

/// Model `ListTaskPushNotificationConfigsResponse` -> prost.
pub fn list_push_configs_response_to_pb(
    r: mp::ListTaskPushNotificationConfigsResponse,
) -> Result<pb::ListTaskPushNotificationConfigsResponse, TranslateError> {
    Ok(pb::ListTaskPushNotificationConfigsResponse {
        configs: r
            .configs
            .unwrap_or_default()
            .into_iter()
            .map(task_push_config_to_pb)
            .collect::<Result<_, _>>()?,
        next_page_token: r.next_page_token.unwrap_or_default(),
    })
}

/// Prost `ListTaskPushNotificationConfigsResponse` -> model (`configs`
/// always present; `""` page token -> absent).
pub fn list_push_configs_response_from_pb(
    r: pb::ListTaskPushNotificationConfigsResponse,
) -> Result<mp::ListTaskPushNotificationConfigsResponse, TranslateError> {
    Ok(mp::ListTaskPushNotificationConfigsResponse {
        configs: Some(
            r.configs
                .into_iter()
                .map(task_push_config_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        next_page_token: non_empty(r.next_page_token),
        extra: Extras::new(),
    })
}

/// Model `DeleteTaskPushNotificationConfigRequest` -> prost.
pub fn delete_push_config_to_pb(
    r: mp::DeleteTaskPushNotificationConfigRequest,
) -> Result<pb::DeleteTaskPushNotificationConfigRequest, TranslateError> {
    Ok(pb::DeleteTaskPushNotificationConfigRequest {
        tenant: r.tenant.unwrap_or_default(),
        task_id: r.task_id,
        id: r.id,
    })
}

/// Prost `DeleteTaskPushNotificationConfigRequest` -> model.
pub fn delete_push_config_from_pb(
    r: pb::DeleteTaskPushNotificationConfigRequest,
) -> Result<mp::DeleteTaskPushNotificationConfigRequest, TranslateError> {
    Ok(mp::DeleteTaskPushNotificationConfigRequest {
        tenant: non_empty(r.tenant),
        task_id: r.task_id,
        id: r.id,
        extra: Extras::new(),
    })
}

// ---- GetExtendedAgentCard --------------------------------------------------

/// Model `GetExtendedAgentCardRequest` -> prost.
pub fn get_extended_card_to_pb(
    r: mp::GetExtendedAgentCardRequest,
) -> Result<pb::GetExtendedAgentCardRequest, TranslateError> {
    Ok(pb::GetExtendedAgentCardRequest {
        tenant: r.tenant.unwrap_or_default(),
    })
}

/// Prost `GetExtendedAgentCardRequest` -> model.
pub fn get_extended_card_from_pb(
    r: pb::GetExtendedAgentCardRequest,
) -> Result<mp::GetExtendedAgentCardRequest, TranslateError> {
    Ok(mp::GetExtendedAgentCardRequest {
        tenant: non_empty(r.tenant),
        extra: Extras::new(),
    })
}
