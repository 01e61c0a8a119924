//! v0.3 `Task` (`kind: "task"`), `TaskStatus` and `TaskState`.

use serde::{Deserialize, Serialize};

use crate::json::{Extras, Metadata};
use crate::v03::artifact::Artifact;
use crate::v03::message::Message;
use crate::v03::part::TaskKind;

/// The state of a task (kebab-case strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TaskState {
    /// `"submitted"`.
    Submitted,
    /// `"working"`.
    Working,
    /// `"input-required"`.
    InputRequired,
    /// `"completed"`.
    Completed,
    /// `"canceled"`.
    Canceled,
    /// `"failed"`.
    Failed,
    /// `"rejected"`.
    Rejected,
    /// `"auth-required"`.
    AuthRequired,
    /// `"unknown"`.
    Unknown,
}

impl TaskState {
    /// Terminal states: completed, canceled, failed, rejected.
    pub fn is_terminal(self) -> bool {
        match self {
            TaskState::Completed
            | TaskState::Canceled
            | TaskState::Failed
            | TaskState::Rejected => true,
            TaskState::Submitted
            | TaskState::Working
            | TaskState::InputRequired
            | TaskState::AuthRequired
            | TaskState::Unknown => false,
        }
    }
}

/// The status of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// Current state.
    pub state: TaskState,
    /// Message accompanying the status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// ISO 8601 time of the status (any form a producer emits).
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
    /// Always `"task"`.
    #[serde(default)]
    pub kind: TaskKind,
    /// Task id.
    pub id: String,
    /// Context id (required in v0.3).
    pub context_id: String,
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
