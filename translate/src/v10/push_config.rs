//! v1.0 push-notification configuration (ProtoJSON of
//! `TaskPushNotificationConfig` and `AuthenticationInfo`; proto field names
//! accepted on input).

use serde::{Deserialize, Serialize};

use crate::json::Extras;

/// How the agent authenticates to the webhook (`Authorization: {scheme} {credentials}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthenticationInfo {
    /// The HTTP authentication scheme (`Bearer`, ...).
    pub scheme: String,
    /// Credentials, format per scheme.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A push configuration (flat form; `taskId` absent inside
/// `SendMessageConfiguration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskPushNotificationConfig {
    /// Routing tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// Config id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The task id.
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Webhook URL.
    pub url: String,
    /// A token unique for this task or session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Authentication of the webhook call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authentication: Option<AuthenticationInfo>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
