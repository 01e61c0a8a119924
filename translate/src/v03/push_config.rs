//! v0.3 push-notification configuration (schema `PushNotificationConfig`,
//! `PushNotificationAuthenticationInfo`, `TaskPushNotificationConfig`).

use serde::{Deserialize, Serialize};

use crate::json::Extras;

/// How the agent authenticates to the webhook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationAuthenticationInfo {
    /// Supported authentication schemes (`Bearer`, `Basic`, ...).
    pub schemes: Vec<String>,
    /// Credentials, format per scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// Where and how to deliver push notifications.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PushNotificationConfig {
    /// Config id (optional in v0.3; servers default it to the task id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Webhook URL.
    pub url: String,
    /// A token unique for this task or session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Authentication of the webhook call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<PushNotificationAuthenticationInfo>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A push configuration bound to a task (nested form).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// The task id.
    pub task_id: String,
    /// The configuration.
    pub push_notification_config: PushNotificationConfig,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
