//! v1.0 request and response messages of the JSON-RPC methods (ProtoJSON;
//! proto field names accepted on input). `CreateTaskPushNotificationConfig`
//! takes and returns a
//! [`TaskPushNotificationConfig`];
//! `GetTask` / `CancelTask` return a [`Task`]; streaming methods yield
//! [`StreamResponse`](crate::v10::event::StreamResponse)s.

use serde::{Deserialize, Serialize};

use crate::json::{Extras, Metadata};
use crate::v10::message::Message;
use crate::v10::push_config::TaskPushNotificationConfig;
use crate::v10::task::{Task, TaskState};

/// `SendMessage` / `SendStreamingMessage` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The message sent.
    pub message: Message,
    /// Send options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configuration: Option<SendMessageConfiguration>,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// Send options (`SendMessageConfiguration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Output media types the client accepts.
    #[serde(
        default,
        alias = "accepted_output_modes",
        skip_serializing_if = "Option::is_none"
    )]
    pub accepted_output_modes: Option<Vec<String>>,
    /// Push notifications for this task (`taskId` empty here).
    #[serde(
        default,
        alias = "task_push_notification_config",
        skip_serializing_if = "Option::is_none"
    )]
    pub task_push_notification_config: Option<TaskPushNotificationConfig>,
    /// How many recent history messages to return (unset: no limit; 0: none).
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Return right after the task is created (default false = blocking).
    #[serde(
        default,
        alias = "return_immediately",
        skip_serializing_if = "Option::is_none"
    )]
    pub return_immediately: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `SendMessage` result: `{"task":…}` or `{"message":…}`.
// Mirrors the proto oneof; boxing the Task would only complicate matching.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SendMessageResponse {
    /// The task created or updated.
    Task(Task),
    /// A direct reply.
    Message(Message),
}

/// `GetTask` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    pub id: String,
    /// How many recent history messages to return (unset: no limit; 0: none).
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `ListTasks` request (v1.0 only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Filter by context.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Filter by state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<TaskState>,
    /// Page size (1..100, default 50).
    #[serde(default, alias = "page_size", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Continuation token.
    #[serde(default, alias = "page_token", skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    /// History messages per task.
    #[serde(
        default,
        alias = "history_length",
        skip_serializing_if = "Option::is_none"
    )]
    pub history_length: Option<i32>,
    /// Only tasks whose status changed at or after this time.
    #[serde(
        default,
        alias = "status_timestamp_after",
        skip_serializing_if = "Option::is_none"
    )]
    pub status_timestamp_after: Option<String>,
    /// Include artifacts (default false).
    #[serde(
        default,
        alias = "include_artifacts",
        skip_serializing_if = "Option::is_none"
    )]
    pub include_artifacts: Option<bool>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `ListTasks` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// The page of tasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Vec<Task>>,
    /// Next page token (`""` on the last page).
    #[serde(
        default,
        alias = "next_page_token",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
    /// Page size used.
    #[serde(default, alias = "page_size", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Total number of matching tasks.
    #[serde(default, alias = "total_size", skip_serializing_if = "Option::is_none")]
    pub total_size: Option<i32>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `CancelTask` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelTaskRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    pub id: String,
    /// Request metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `SubscribeToTask` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeToTaskRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    pub id: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `GetTaskPushNotificationConfig` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskPushNotificationConfigRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Config id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `ListTaskPushNotificationConfigs` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Page size.
    #[serde(default, alias = "page_size", skip_serializing_if = "Option::is_none")]
    pub page_size: Option<i32>,
    /// Continuation token.
    #[serde(default, alias = "page_token", skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `ListTaskPushNotificationConfigs` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTaskPushNotificationConfigsResponse {
    /// The configs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub configs: Option<Vec<TaskPushNotificationConfig>>,
    /// Next page token.
    #[serde(
        default,
        alias = "next_page_token",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_page_token: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `DeleteTaskPushNotificationConfig` request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DeleteTaskPushNotificationConfigRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Config id.
    pub id: String,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `GetExtendedAgentCard` request (params may be omitted entirely).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetExtendedAgentCardRequest {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
