//! Conversions between the prost v0.3 push-notification configs and RPC
//! request / response messages ([`crate::v03`]) and the `translate::v03`
//! models (JSON-RPC params and results).
//!
//! The v0.3 proto addresses tasks and push configs by resource name:
//! `tasks/{task_id}` and `tasks/{task_id}/pushNotificationConfigs/{config_id}`.
//! Names are built from, and parsed into, plain ids; an empty id or one
//! containing `/` cannot form a name, and a name of any other shape is
//! rejected with a [`TranslateError`].
//!
//! Losses on the way to prost, besides unknown members (`extra`) and the
//! proto3 absent-vs-empty rule of [`crate::convert_v03`]:
//! * `metadata` of `tasks/get`, `tasks/cancel`, `tasks/resubscribe` and the
//!   push-config get / list / delete params (the requests have no slot);
//! * `historyLength: 0` (proto 0 means "no limit" and reads back as absent);
//! * an absent `blocking` is sent as `true` (absent = blocking, as
//!   a2a-python 0.3 servers treat it); from prost `blocking` is always set;
//! * an absent push-config id, where a resource name needs one (a
//!   `TaskPushNotificationConfig` result, get params without
//!   `pushNotificationConfigId`), is the task id — what a2a-python 0.3
//!   servers store such a config under; a create request keeps it absent;
//! * paging of the list request / response (JSON-RPC has none).
//!
//! Nothing here panics.

use translate::json::Extras;
use translate::v03 as m;
use translate::v03::params as mp;
use translate::v03::push_config as mc;
use translate::TranslateError;

use crate::convert_v03::{message_from_pb, message_to_pb};
use crate::v03 as pb;
use crate::wkt::{metadata_from_pb, metadata_to_pb, non_empty, non_empty_vec};

fn missing(what: &'static str, field: &str) -> TranslateError {
    TranslateError::invalid(what, format!("{field} is missing"))
}

// ---- Resource names --------------------------------------------------------

const TASKS: &str = "tasks/";
const CONFIGS: &str = "/pushNotificationConfigs/";

fn check_segment(what: &'static str, kind: &str, id: &str) -> Result<(), TranslateError> {
    if id.is_empty() {
        Err(TranslateError::invalid(what, format!("{kind} is empty")))
    } else if id.contains('/') {
        Err(TranslateError::invalid(
            what,
            format!("{kind} {id:?} contains '/'"),
        ))
    } else {
        Ok(())
    }
}

/// Task id -> `tasks/{task_id}` (an empty id or one with `/` is rejected).
pub fn task_name(task_id: &str) -> Result<String, TranslateError> {
    check_segment("task name", "task id", task_id)?;
    Ok(format!("{TASKS}{task_id}"))
}

/// `tasks/{task_id}` -> task id (any other shape is rejected).
pub fn parse_task_name(name: &str) -> Result<String, TranslateError> {
    let id = name.strip_prefix(TASKS).ok_or_else(|| {
        TranslateError::invalid("task name", format!("{name:?} is not tasks/{{id}}"))
    })?;
    check_segment("task name", "task id", id)?;
    Ok(id.to_owned())
}

/// Task id and config id -> `tasks/{task_id}/pushNotificationConfigs/{config_id}`.
pub fn push_config_name(task_id: &str, config_id: &str) -> Result<String, TranslateError> {
    check_segment("push config name", "task id", task_id)?;
    check_segment("push config name", "config id", config_id)?;
    Ok(format!("{TASKS}{task_id}{CONFIGS}{config_id}"))
}

/// `tasks/{task_id}/pushNotificationConfigs/{config_id}` -> (task id, config
/// id) (any other shape is rejected).
pub fn parse_push_config_name(name: &str) -> Result<(String, String), TranslateError> {
    let malformed = || {
        TranslateError::invalid(
            "push config name",
            format!("{name:?} is not tasks/{{id}}/pushNotificationConfigs/{{config_id}}"),
        )
    };
    let rest = name.strip_prefix(TASKS).ok_or_else(malformed)?;
    let (task, config) = rest.split_once(CONFIGS).ok_or_else(malformed)?;
    check_segment("push config name", "task id", task)?;
    check_segment("push config name", "config id", config)?;
    Ok((task.to_owned(), config.to_owned()))
}

// ---- Push-notification config ----------------------------------------------

/// Model authentication info -> prost.
pub fn auth_to_pb(
    a: mc::PushNotificationAuthenticationInfo,
) -> Result<pb::AuthenticationInfo, TranslateError> {
    Ok(pb::AuthenticationInfo {
        schemes: a.schemes,
        credentials: a.credentials.unwrap_or_default(),
    })
}

/// Prost authentication info -> model.
pub fn auth_from_pb(
    a: pb::AuthenticationInfo,
) -> Result<mc::PushNotificationAuthenticationInfo, TranslateError> {
    Ok(mc::PushNotificationAuthenticationInfo {
        schemes: a.schemes,
        credentials: non_empty(a.credentials),
        extra: Extras::new(),
    })
}

/// Model push config -> prost.
pub fn push_config_to_pb(
    c: mc::PushNotificationConfig,
) -> Result<pb::PushNotificationConfig, TranslateError> {
    Ok(pb::PushNotificationConfig {
        id: c.id.unwrap_or_default(),
        url: c.url,
        token: c.token.unwrap_or_default(),
        authentication: c.authentication.map(auth_to_pb).transpose()?,
    })
}

/// Prost push config -> model.
pub fn push_config_from_pb(
    c: pb::PushNotificationConfig,
) -> Result<mc::PushNotificationConfig, TranslateError> {
    Ok(mc::PushNotificationConfig {
        id: non_empty(c.id),
        url: c.url,
        token: non_empty(c.token),
        // ProtoJSON: an all-default message (`authentication: {}`) is the
        // same as an absent one (MAPPING-FACTS §4.16).
        authentication: c
            .authentication
            .filter(|a| !(a.schemes.is_empty() && a.credentials.is_empty()))
            .map(auth_from_pb)
            .transpose()?,
        extra: Extras::new(),
    })
}

/// Model task push config -> prost: `name` built from the task id and the
/// config id (the task id when the config has none; then the inner `id` is
/// set to it too).
pub fn task_push_config_to_pb(
    c: mc::TaskPushNotificationConfig,
) -> Result<pb::TaskPushNotificationConfig, TranslateError> {
    let mut inner = c.push_notification_config;
    let config_id = inner.id.get_or_insert_with(|| c.task_id.clone()).clone();
    Ok(pb::TaskPushNotificationConfig {
        name: push_config_name(&c.task_id, &config_id)?,
        push_notification_config: Some(push_config_to_pb(inner)?),
    })
}

/// Prost task push config -> model: task id and config id from `name`; an
/// inner `id` that disagrees with the name is rejected.
pub fn task_push_config_from_pb(
    c: pb::TaskPushNotificationConfig,
) -> Result<mc::TaskPushNotificationConfig, TranslateError> {
    if c.name.is_empty() {
        return Err(missing("task push notification config", "name"));
    }
    let (task_id, config_id) = parse_push_config_name(&c.name)?;
    let mut inner =
        push_config_from_pb(c.push_notification_config.ok_or_else(|| {
            missing("task push notification config", "push_notification_config")
        })?)?;
    if let Some(id) = &inner.id {
        if *id != config_id {
            return Err(TranslateError::invalid(
                "task push notification config",
                format!("config id {id:?} disagrees with name {:?}", c.name),
            ));
        }
    }
    inner.id = Some(config_id);
    Ok(mc::TaskPushNotificationConfig {
        task_id,
        push_notification_config: inner,
        extra: Extras::new(),
    })
}

// ---- message/send ----------------------------------------------------------

/// Model send configuration -> prost (`historyLength` absent -> 0, absent
/// `blocking` -> `true`).
pub fn send_configuration_to_pb(
    c: mp::MessageSendConfiguration,
) -> Result<pb::SendMessageConfiguration, TranslateError> {
    Ok(pb::SendMessageConfiguration {
        accepted_output_modes: c.accepted_output_modes.unwrap_or_default(),
        push_notification: c
            .push_notification_config
            .map(push_config_to_pb)
            .transpose()?,
        history_length: c.history_length.unwrap_or(0),
        blocking: c.blocking.unwrap_or(true),
    })
}

/// Prost send configuration -> model (`history_length` 0 -> absent;
/// `blocking` always explicit).
pub fn send_configuration_from_pb(
    c: pb::SendMessageConfiguration,
) -> Result<mp::MessageSendConfiguration, TranslateError> {
    Ok(mp::MessageSendConfiguration {
        accepted_output_modes: non_empty_vec(c.accepted_output_modes),
        // An all-default message is an absent one (ProtoJSON `{}`).
        push_notification_config: c
            .push_notification
            .filter(|p| *p != pb::PushNotificationConfig::default())
            .map(push_config_from_pb)
            .transpose()?,
        history_length: (c.history_length != 0).then_some(c.history_length),
        blocking: Some(c.blocking),
        extra: Extras::new(),
    })
}

/// Model `message/send` / `message/stream` params -> prost `SendMessageRequest`.
pub fn send_params_to_pb(
    p: mp::MessageSendParams,
) -> Result<pb::SendMessageRequest, TranslateError> {
    Ok(pb::SendMessageRequest {
        request: Some(message_to_pb(p.message)?),
        configuration: p.configuration.map(send_configuration_to_pb).transpose()?,
        metadata: metadata_to_pb(p.metadata),
    })
}

/// Prost `SendMessageRequest` -> model params (the message is required).
pub fn send_params_from_pb(
    r: pb::SendMessageRequest,
) -> Result<mp::MessageSendParams, TranslateError> {
    Ok(mp::MessageSendParams {
        message: message_from_pb(
            r.request
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

/// Model `message/send` result -> prost (see [`crate::convert_v03::send_response_to_pb`]).
pub fn send_response_to_pb(
    e: m::event::StreamEvent,
) -> Result<pb::SendMessageResponse, TranslateError> {
    crate::convert_v03::send_response_to_pb(e)
}

/// Prost `SendMessageResponse` -> model result.
pub fn send_response_from_pb(
    s: pb::SendMessageResponse,
) -> Result<m::event::StreamEvent, TranslateError> {
    crate::convert_v03::send_response_from_pb(s)
}

// ---- tasks/get, tasks/cancel, tasks/resubscribe ----------------------------

/// Model `tasks/get` params -> prost (`metadata` dropped, absent
/// `historyLength` -> 0).
pub fn get_task_to_pb(p: mp::TaskQueryParams) -> Result<pb::GetTaskRequest, TranslateError> {
    Ok(pb::GetTaskRequest {
        name: task_name(&p.id)?,
        history_length: p.history_length.unwrap_or(0),
    })
}

/// Prost `GetTaskRequest` -> model params (`history_length` 0 -> absent).
pub fn get_task_from_pb(r: pb::GetTaskRequest) -> Result<mp::TaskQueryParams, TranslateError> {
    Ok(mp::TaskQueryParams {
        id: parse_task_name(&r.name)?,
        history_length: (r.history_length != 0).then_some(r.history_length),
        metadata: None,
        extra: Extras::new(),
    })
}

/// Model `tasks/cancel` params -> prost (`metadata` dropped).
pub fn cancel_task_to_pb(p: mp::TaskIdParams) -> Result<pb::CancelTaskRequest, TranslateError> {
    Ok(pb::CancelTaskRequest {
        name: task_name(&p.id)?,
    })
}

/// Prost `CancelTaskRequest` -> model params.
pub fn cancel_task_from_pb(r: pb::CancelTaskRequest) -> Result<mp::TaskIdParams, TranslateError> {
    task_id_params(&r.name)
}

/// Model `tasks/resubscribe` params -> prost (`metadata` dropped).
pub fn task_subscription_to_pb(
    p: mp::TaskIdParams,
) -> Result<pb::TaskSubscriptionRequest, TranslateError> {
    Ok(pb::TaskSubscriptionRequest {
        name: task_name(&p.id)?,
    })
}

/// Prost `TaskSubscriptionRequest` -> model params.
pub fn task_subscription_from_pb(
    r: pb::TaskSubscriptionRequest,
) -> Result<mp::TaskIdParams, TranslateError> {
    task_id_params(&r.name)
}

fn task_id_params(name: &str) -> Result<mp::TaskIdParams, TranslateError> {
    Ok(mp::TaskIdParams {
        id: parse_task_name(name)?,
        metadata: None,
        extra: Extras::new(),
    })
}

// ---- tasks/pushNotificationConfig/* ----------------------------------------

/// Model `tasks/pushNotificationConfig/set` params -> prost
/// `CreateTaskPushNotificationConfigRequest` (`parent` = `tasks/{taskId}`,
/// `config_id` = the config id, `config.name` built from both; without a
/// config id both stay empty).
pub fn create_push_config_to_pb(
    c: mc::TaskPushNotificationConfig,
) -> Result<pb::CreateTaskPushNotificationConfigRequest, TranslateError> {
    let parent = task_name(&c.task_id)?;
    let config_id = c.push_notification_config.id.clone();
    let name = match &config_id {
        Some(cid) => push_config_name(&c.task_id, cid)?,
        None => String::new(),
    };
    Ok(pb::CreateTaskPushNotificationConfigRequest {
        parent,
        config_id: config_id.unwrap_or_default(),
        config: Some(pb::TaskPushNotificationConfig {
            name,
            push_notification_config: Some(push_config_to_pb(c.push_notification_config)?),
        }),
    })
}

/// Prost `CreateTaskPushNotificationConfigRequest` -> model params. The task
/// id comes from `parent`; the config id from `config_id`, the inner config
/// `id` or `config.name` (whichever are set must agree, and a set
/// `config.name` must be well formed and name the parent's task; one that
/// ends at the collection, `{parent}/pushNotificationConfigs/`, names no
/// config). With none set the config id stays absent.
pub fn create_push_config_from_pb(
    r: pb::CreateTaskPushNotificationConfigRequest,
) -> Result<mc::TaskPushNotificationConfig, TranslateError> {
    const WHAT: &str = "create push config request";
    let task_id = parse_task_name(&r.parent)?;
    let config = r.config.ok_or_else(|| missing(WHAT, "config"))?;
    let mut inner = push_config_from_pb(
        config
            .push_notification_config
            .ok_or_else(|| missing(WHAT, "config.push_notification_config"))?,
    )?;
    let mut ids: Vec<String> = Vec::new();
    ids.extend(non_empty(r.config_id));
    ids.extend(inner.id.take());
    let collection = format!("{}/pushNotificationConfigs/", r.parent);
    if !config.name.is_empty() && config.name != collection {
        let (t, cid) = parse_push_config_name(&config.name)?;
        if t != task_id {
            return Err(TranslateError::invalid(
                WHAT,
                format!(
                    "config name {:?} names another task than parent {:?}",
                    config.name, r.parent
                ),
            ));
        }
        ids.push(cid);
    }
    if let Some(first) = ids.first() {
        if ids.iter().any(|i| i != first) {
            return Err(TranslateError::invalid(
                WHAT,
                format!("config ids disagree: {ids:?}"),
            ));
        }
    }
    inner.id = ids.into_iter().next();
    Ok(mc::TaskPushNotificationConfig {
        task_id,
        push_notification_config: inner,
        extra: Extras::new(),
    })
}

/// Model `tasks/pushNotificationConfig/get` params -> prost (`metadata`
/// dropped; an absent config id is the task id).
pub fn get_push_config_to_pb(
    p: mp::GetTaskPushNotificationConfigParams,
) -> Result<pb::GetTaskPushNotificationConfigRequest, TranslateError> {
    let config_id = p.push_notification_config_id.as_deref().unwrap_or(&p.id);
    Ok(pb::GetTaskPushNotificationConfigRequest {
        name: push_config_name(&p.id, config_id)?,
    })
}

/// Prost `GetTaskPushNotificationConfigRequest` -> model params.
pub fn get_push_config_from_pb(
    r: pb::GetTaskPushNotificationConfigRequest,
) -> Result<mp::GetTaskPushNotificationConfigParams, TranslateError> {
    let (id, config_id) = parse_push_config_name(&r.name)?;
    Ok(mp::GetTaskPushNotificationConfigParams {
        id,
        push_notification_config_id: Some(config_id),
        metadata: None,
        extra: Extras::new(),
    })
}

/// Model `tasks/pushNotificationConfig/list` params -> prost (`metadata`
/// dropped, no paging).
pub fn list_push_configs_to_pb(
    p: mp::ListTaskPushNotificationConfigParams,
) -> Result<pb::ListTaskPushNotificationConfigRequest, TranslateError> {
    Ok(pb::ListTaskPushNotificationConfigRequest {
        parent: task_name(&p.id)?,
        page_size: 0,
        page_token: String::new(),
    })
}

/// Prost `ListTaskPushNotificationConfigRequest` -> model params (paging
/// dropped).
pub fn list_push_configs_from_pb(
    r: pb::ListTaskPushNotificationConfigRequest,
) -> Result<mp::ListTaskPushNotificationConfigParams, TranslateError> {
    Ok(mp::ListTaskPushNotificationConfigParams {
        id: parse_task_name(&r.parent)?,
        metadata: None,
        extra: Extras::new(),
    })
}

/// Model `tasks/pushNotificationConfig/list` result -> prost response (no
/// next page).
pub fn list_push_configs_response_to_pb(
    configs: Vec<mc::TaskPushNotificationConfig>,
) -> Result<pb::ListTaskPushNotificationConfigResponse, TranslateError> {
    Ok(pb::ListTaskPushNotificationConfigResponse {
        configs: configs
            .into_iter()
            .map(task_push_config_to_pb)
            .collect::<Result<_, _>>()?,
        next_page_token: String::new(),
    })
}

/// Prost `ListTaskPushNotificationConfigResponse` -> model result
/// (`next_page_token` dropped).
pub fn list_push_configs_response_from_pb(
    r: pb::ListTaskPushNotificationConfigResponse,
) -> Result<Vec<mc::TaskPushNotificationConfig>, TranslateError> {
    r.configs
        .into_iter()
        .map(task_push_config_from_pb)
        .collect()
}

/// Model `tasks/pushNotificationConfig/delete` params -> prost (`metadata`
/// dropped).
pub fn delete_push_config_to_pb(
    p: mp::DeleteTaskPushNotificationConfigParams,
) -> Result<pb::DeleteTaskPushNotificationConfigRequest, TranslateError> {
    Ok(pb::DeleteTaskPushNotificationConfigRequest {
        name: push_config_name(&p.id, &p.push_notification_config_id)?,
    })
}

/// Prost `DeleteTaskPushNotificationConfigRequest` -> model params.
pub fn delete_push_config_from_pb(
    r: pb::DeleteTaskPushNotificationConfigRequest,
) -> Result<mp::DeleteTaskPushNotificationConfigParams, TranslateError> {
    let (id, config_id) = parse_push_config_name(&r.name)?;
    Ok(mp::DeleteTaskPushNotificationConfigParams {
        id,
        push_notification_config_id: config_id,
        metadata: None,
        extra: Extras::new(),
    })
}

// ---- agent/getAuthenticatedExtendedCard ------------------------------------

/// `agent/getAuthenticatedExtendedCard` (no params) -> prost `GetAgentCardRequest`.
pub fn get_agent_card_to_pb() -> Result<pb::GetAgentCardRequest, TranslateError> {
    Ok(pb::GetAgentCardRequest {})
}

/// Prost `GetAgentCardRequest` -> no params.
pub fn get_agent_card_from_pb(_r: pb::GetAgentCardRequest) -> Result<(), TranslateError> {
    Ok(())
}
