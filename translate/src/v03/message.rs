//! v0.3 `Message` (`kind: "message"`) and `Role`.

use serde::{Deserialize, Serialize};

use crate::json::{Extras, Metadata};
use crate::v03::part::{MessageKind, Part};

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum Role {
    /// `"user"`.
    User,
    /// `"agent"`.
    Agent,
}

impl TryFrom<String> for Role {
    type Error = String;

    fn try_from(s: String) -> Result<Self, String> {
        match s.as_str() {
            "user" => Ok(Role::User),
            "agent" => Ok(Role::Agent),
            _ => Err(format!(
                "unknown role {s:?}, expected \"user\" or \"agent\""
            )),
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// Always `"message"`.
    #[serde(default)]
    pub kind: MessageKind,
    /// Message id.
    pub message_id: String,
    /// Context id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Task id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Sender.
    pub role: Role,
    /// Content parts.
    pub parts: Vec<Part>,
    /// Message metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Ids of tasks this message refers to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_task_ids: Option<Vec<String>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
