//! v1.0 `Task`, `TaskStatus` and `TaskState` (ProtoJSON).

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use crate::json::{Extras, Metadata};
use crate::v10::artifact::Artifact;
use crate::v10::message::{Message, NameOrNumber};
use crate::v10::part::null_as_default;

/// The state of a task (`TASK_STATE_*`; integers and the v0.3 ProtoJSON
/// spelling `TASK_STATE_CANCELLED` accepted on input).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub enum TaskState {
    /// `TASK_STATE_UNSPECIFIED` (0), also the default when absent.
    #[default]
    Unspecified,
    /// `TASK_STATE_SUBMITTED` (1).
    Submitted,
    /// `TASK_STATE_WORKING` (2).
    Working,
    /// `TASK_STATE_COMPLETED` (3).
    Completed,
    /// `TASK_STATE_FAILED` (4).
    Failed,
    /// `TASK_STATE_CANCELED` (5).
    Canceled,
    /// `TASK_STATE_INPUT_REQUIRED` (6).
    InputRequired,
    /// `TASK_STATE_REJECTED` (7).
    Rejected,
    /// `TASK_STATE_AUTH_REQUIRED` (8).
    AuthRequired,
    /// A name or number this crate does not know, kept as read (numbers as
    /// their decimal string); it maps to v0.3 `"unknown"`.
    Unrecognized(String),
}

impl TaskState {
    /// The ProtoJSON name (the raw text for [`TaskState::Unrecognized`]).
    pub fn as_str(&self) -> &str {
        match self {
            TaskState::Unspecified => "TASK_STATE_UNSPECIFIED",
            TaskState::Submitted => "TASK_STATE_SUBMITTED",
            TaskState::Working => "TASK_STATE_WORKING",
            TaskState::Completed => "TASK_STATE_COMPLETED",
            TaskState::Failed => "TASK_STATE_FAILED",
            TaskState::Canceled => "TASK_STATE_CANCELED",
            TaskState::InputRequired => "TASK_STATE_INPUT_REQUIRED",
            TaskState::Rejected => "TASK_STATE_REJECTED",
            TaskState::AuthRequired => "TASK_STATE_AUTH_REQUIRED",
            TaskState::Unrecognized(raw) => raw,
        }
    }

    fn from_name(n: String) -> TaskState {
        match n.as_str() {
            "TASK_STATE_UNSPECIFIED" => TaskState::Unspecified,
            "TASK_STATE_SUBMITTED" => TaskState::Submitted,
            "TASK_STATE_WORKING" => TaskState::Working,
            "TASK_STATE_COMPLETED" => TaskState::Completed,
            "TASK_STATE_FAILED" => TaskState::Failed,
            "TASK_STATE_CANCELED" | "TASK_STATE_CANCELLED" => TaskState::Canceled,
            "TASK_STATE_INPUT_REQUIRED" => TaskState::InputRequired,
            "TASK_STATE_REJECTED" => TaskState::Rejected,
            "TASK_STATE_AUTH_REQUIRED" => TaskState::AuthRequired,
            _ => TaskState::Unrecognized(n),
        }
    }

    fn from_number(n: i64) -> TaskState {
        match n {
            0 => TaskState::Unspecified,
            1 => TaskState::Submitted,
            2 => TaskState::Working,
            3 => TaskState::Completed,
            4 => TaskState::Failed,
            5 => TaskState::Canceled,
            6 => TaskState::InputRequired,
            7 => TaskState::Rejected,
            8 => TaskState::AuthRequired,
            _ => TaskState::Unrecognized(n.to_string()),
        }
    }
}

impl Serialize for TaskState {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for TaskState {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match NameOrNumber::deserialize(d) {
            Ok(NameOrNumber::Name(n)) => Ok(TaskState::from_name(n)),
            Ok(NameOrNumber::Number(n)) => Ok(TaskState::from_number(n)),
            Err(e) => Err(de::Error::custom(format!("invalid task state: {e}"))),
        }
    }
}

/// The status of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// Current state (absent = `TASK_STATE_UNSPECIFIED`).
    #[serde(default, deserialize_with = "null_as_default")]
    pub state: TaskState,
    /// Message accompanying the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// RFC 3339 UTC time of the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// A unit of work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// Task id.
    pub id: String,
    /// Context id (optional in v1.0).
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// Current status.
    pub status: TaskStatus,
    /// Produced artifacts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<Vec<Artifact>>,
    /// Message history.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<Message>>,
    /// Task metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
