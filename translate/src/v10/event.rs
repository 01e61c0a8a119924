//! v1.0 streaming events and `StreamResponse` (ProtoJSON).

use serde::{Deserialize, Serialize};

use crate::json::{Extras, Metadata};
use crate::v10::artifact::Artifact;
use crate::v10::message::Message;
use crate::v10::part::null_as_default;
use crate::v10::task::{Task, TaskStatus};

/// `TaskStatusUpdateEvent` (no `final` in v1.0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Context id (absent = empty).
    #[serde(default, alias = "context_id", deserialize_with = "null_as_default")]
    pub context_id: String,
    /// New status.
    pub status: TaskStatus,
    /// Event metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `TaskArtifactUpdateEvent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Task id.
    #[serde(alias = "task_id")]
    pub task_id: String,
    /// Context id (absent = empty).
    #[serde(default, alias = "context_id", deserialize_with = "null_as_default")]
    pub context_id: String,
    /// The artifact (or chunk).
    pub artifact: Artifact,
    /// Append to a previously sent artifact with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Last chunk of the artifact.
    #[serde(default, alias = "last_chunk", skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Event metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// One streamed result: `{"task":…}`, `{"message":…}`, `{"statusUpdate":…}`
/// or `{"artifactUpdate":…}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// `task`.
    Task(Task),
    /// `message`.
    Message(Message),
    /// `statusUpdate`.
    #[serde(alias = "status_update")]
    StatusUpdate(TaskStatusUpdateEvent),
    /// `artifactUpdate`.
    #[serde(alias = "artifact_update")]
    ArtifactUpdate(TaskArtifactUpdateEvent),
}
