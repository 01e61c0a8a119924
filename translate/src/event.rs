//! Stream event translation: status / artifact updates and the stream result
//! union (v0.3 kind-tagged object <-> v1.0 `StreamResponse` wrapper).

use crate::lossy::{Direction, Lossy};
use crate::part::carry;
use crate::{artifact, message, task, v03, v10, TranslateError};

/// Members of a v0.3 status-update event.
const V03_STATUS_FIELDS: &[&str] = &["kind", "taskId", "contextId", "status", "final", "metadata"];
/// Members of a v1.0 status-update event, proto names included.
const V10_STATUS_FIELDS: &[&str] = &[
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "status",
    "metadata",
];
/// Members of a v0.3 artifact-update event.
const V03_ARTIFACT_FIELDS: &[&str] = &[
    "kind",
    "taskId",
    "contextId",
    "artifact",
    "append",
    "lastChunk",
    "metadata",
];
/// Members of a v1.0 artifact-update event, proto names included.
const V10_ARTIFACT_FIELDS: &[&str] = &[
    "taskId",
    "task_id",
    "contextId",
    "context_id",
    "artifact",
    "append",
    "lastChunk",
    "last_chunk",
    "metadata",
];

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "TaskStatusUpdateEvent.final",
        direction: Direction::Both,
        what: "v1.0 has no `final` (stream closure ends the interaction)",
        decision: "dropped going to v1.0 (the stream layer closes after `final: true`); going to v0.3 `final` is true exactly for the terminal states completed, canceled, failed, rejected (a2a-python compat); interrupted states get false here and the stream layer marks the last event before close; a v0.3 event without `final` (.NET) reads as false",
        fixture: "status-update/input-required-final-true.v03.json, status-update/input-required-final-true.to-v03.json, status-update/working-final-true.v03.json, status-update/working-final-true.to-v03.json",
        at: &["final"],
    },
    Lossy {
        entity: "StreamEvent",
        direction: Direction::ToV10,
        what: "v0.3 stream result without `kind`",
        decision: "inferred: `artifact` -> artifact-update, `messageId` -> message, `id` + `status` -> task, `status` -> status-update; `kind` always emitted going to v0.3; a wrong kind is rejected",
        fixture: "status-update/kind-missing.v03.json, status-update/kind-missing.to-v03.json, artifact-update/kind-missing.v03.json, artifact-update/kind-missing.to-v03.json, task/kind-missing.v03.json, task/kind-missing.to-v03.json, rejected/status-update/wrong-kind.v03.json",
        at: &["kind"],
    },
];

/// Translates a v0.3 status-update event to v1.0 (`final` dropped).
pub fn status_update_to_v10(
    e: v03::event::TaskStatusUpdateEvent,
) -> Result<v10::event::TaskStatusUpdateEvent, TranslateError> {
    Ok(v10::event::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: task::status_to_v10(e.status)?,
        metadata: e.metadata,
        extra: carry(e.extra, V10_STATUS_FIELDS),
    })
}

/// Translates a v1.0 status-update event to v0.3; `final` is true exactly for
/// terminal states.
pub fn status_update_to_v03(
    e: v10::event::TaskStatusUpdateEvent,
) -> Result<v03::event::TaskStatusUpdateEvent, TranslateError> {
    let status = task::status_to_v03(e.status)?;
    Ok(v03::event::TaskStatusUpdateEvent {
        kind: Default::default(),
        task_id: e.task_id,
        context_id: e.context_id,
        is_final: status.state.is_terminal(),
        status,
        metadata: e.metadata,
        extra: carry(e.extra, V03_STATUS_FIELDS),
    })
}

/// Translates a v0.3 artifact-update event to v1.0.
pub fn artifact_update_to_v10(
    e: v03::event::TaskArtifactUpdateEvent,
) -> Result<v10::event::TaskArtifactUpdateEvent, TranslateError> {
    Ok(v10::event::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: artifact::to_v10(e.artifact)?,
        append: e.append,
        last_chunk: e.last_chunk,
        metadata: e.metadata,
        extra: carry(e.extra, V10_ARTIFACT_FIELDS),
    })
}

/// Translates a v1.0 artifact-update event to v0.3.
pub fn artifact_update_to_v03(
    e: v10::event::TaskArtifactUpdateEvent,
) -> Result<v03::event::TaskArtifactUpdateEvent, TranslateError> {
    Ok(v03::event::TaskArtifactUpdateEvent {
        kind: Default::default(),
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: artifact::to_v03(e.artifact)?,
        append: e.append,
        last_chunk: e.last_chunk,
        metadata: e.metadata,
        extra: carry(e.extra, V03_ARTIFACT_FIELDS),
    })
}

/// Translates a v0.3 stream result to a v1.0 `StreamResponse`.
pub fn stream_to_v10(
    e: v03::event::StreamEvent,
) -> Result<v10::event::StreamResponse, TranslateError> {
    use v03::event::StreamEvent as E;
    use v10::event::StreamResponse as R;
    Ok(match e {
        E::Task(t) => R::Task(task::to_v10(t)?),
        E::Message(m) => R::Message(message::to_v10(m)?),
        E::StatusUpdate(s) => R::StatusUpdate(status_update_to_v10(s)?),
        E::ArtifactUpdate(a) => R::ArtifactUpdate(artifact_update_to_v10(a)?),
    })
}

/// Translates a v1.0 `StreamResponse` to a v0.3 kind-tagged stream result.
pub fn stream_to_v03(
    r: v10::event::StreamResponse,
) -> Result<v03::event::StreamEvent, TranslateError> {
    use v03::event::StreamEvent as E;
    use v10::event::StreamResponse as R;
    Ok(match r {
        R::Task(t) => E::Task(task::to_v03(t)?),
        R::Message(m) => E::Message(message::to_v03(m)?),
        R::StatusUpdate(s) => E::StatusUpdate(status_update_to_v03(s)?),
        R::ArtifactUpdate(a) => E::ArtifactUpdate(artifact_update_to_v03(a)?),
    })
}
