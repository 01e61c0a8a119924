//! v0.3 streaming events and the `StreamEvent` union (also the
//! `message/send` result type).

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};
use crate::v03::artifact::Artifact;
use crate::v03::message::Message;
use crate::v03::part::{object_and_kind, variant, ArtifactUpdateKind, StatusUpdateKind};
use crate::v03::task::{Task, TaskStatus};

/// `TaskStatusUpdateEvent` (`kind: "status-update"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// Always `"status-update"`.
    #[serde(default)]
    pub kind: StatusUpdateKind,
    /// Task id.
    pub task_id: String,
    /// Context id.
    pub context_id: String,
    /// New status.
    pub status: TaskStatus,
    /// The v0.3 `final` flag: last event of the stream for this interaction.
    /// Required by the schema, but some servers (.NET) omit it: absent reads
    /// as `false`; it is always rendered.
    #[serde(rename = "final", default)]
    pub is_final: bool,
    /// Event metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `TaskArtifactUpdateEvent` (`kind: "artifact-update"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// Always `"artifact-update"`.
    #[serde(default)]
    pub kind: ArtifactUpdateKind,
    /// Task id.
    pub task_id: String,
    /// Context id.
    pub context_id: String,
    /// The artifact (or chunk).
    pub artifact: Artifact,
    /// Append to a previously sent artifact with the same id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append: Option<bool>,
    /// Last chunk of the artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_chunk: Option<bool>,
    /// Event metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// One streamed result (or the `message/send` result), tagged by `kind`;
/// a missing `kind` is inferred from the members.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum StreamEvent {
    /// `kind: "task"`.
    Task(Task),
    /// `kind: "message"`.
    Message(Message),
    /// `kind: "status-update"`.
    StatusUpdate(TaskStatusUpdateEvent),
    /// `kind: "artifact-update"`.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

/// Which [`StreamEvent`] variant an object is.
#[derive(Clone, Copy)]
enum EventKind {
    Task,
    Message,
    StatusUpdate,
    ArtifactUpdate,
}

const EVENT_KINDS: &[(&str, EventKind)] = &[
    ("task", EventKind::Task),
    ("message", EventKind::Message),
    ("status-update", EventKind::StatusUpdate),
    ("artifact-update", EventKind::ArtifactUpdate),
];

/// Infers a missing `kind`: `artifact` -> artifact-update, `messageId` ->
/// message, `id` + `status` -> task, `status` -> status-update.
fn infer(m: &Map<String, Value>) -> Option<EventKind> {
    if m.contains_key("artifact") {
        Some(EventKind::ArtifactUpdate)
    } else if m.contains_key("messageId") {
        Some(EventKind::Message)
    } else if m.contains_key("status") && m.contains_key("id") {
        Some(EventKind::Task)
    } else if m.contains_key("status") {
        Some(EventKind::StatusUpdate)
    } else {
        None
    }
}

impl<'de> Deserialize<'de> for StreamEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (map, kind) = object_and_kind(d, "stream event", EVENT_KINDS, infer)?;
        match kind {
            EventKind::Task => variant(map, "task").map(StreamEvent::Task),
            EventKind::Message => variant(map, "message").map(StreamEvent::Message),
            EventKind::StatusUpdate => variant(map, "status-update").map(StreamEvent::StatusUpdate),
            EventKind::ArtifactUpdate => {
                variant(map, "artifact-update").map(StreamEvent::ArtifactUpdate)
            }
        }
    }
}
