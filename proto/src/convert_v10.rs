//! Conversions between the prost v1.0 messages ([`crate::v10`]) and the
//! `translate::v10` models (ProtoJSON of the same proto).
//!
//! Dropped on the way to prost: unknown JSON members (`extra`) and, for
//! fields without proto3 presence, the difference between absent and
//! `""` / `[]` / `false` (read back as absent). `optional` fields keep it.
//! Unrecognized task states survive when they are numbers. Nothing here
//! panics; invalid input yields a [`TranslateError`].

use translate::json::Extras;
use translate::v10 as m;
use translate::TranslateError;

use crate::v10 as pb;
use crate::wkt::{
    metadata_from_pb, metadata_to_pb, non_empty, non_empty_vec, timestamp_from_pb, timestamp_to_pb,
    value_from_pb, value_to_pb,
};

fn missing(what: &'static str, field: &str) -> TranslateError {
    TranslateError::invalid(what, format!("{field} is missing"))
}

// ---- Part ------------------------------------------------------------------

/// Model part -> prost part.
pub fn part_to_pb(p: m::part::Part) -> pb::Part {
    use m::part::PartContent as C;
    use pb::part::Content;
    let content = match p.content {
        C::Text(t) => Content::Text(t),
        C::Raw(r) => Content::Raw(r),
        C::Url(u) => Content::Url(u),
        C::Data(v) => Content::Data(value_to_pb(v)),
    };
    pb::Part {
        content: Some(content),
        metadata: metadata_to_pb(p.metadata),
        filename: p.filename.unwrap_or_default(),
        media_type: p.media_type.unwrap_or_default(),
    }
}

/// Prost part -> model part (a part without content is rejected).
pub fn part_from_pb(p: pb::Part) -> Result<m::part::Part, TranslateError> {
    use m::part::PartContent as C;
    use pb::part::Content;
    let content = match p
        .content
        .ok_or_else(|| missing("part", "text / raw / url / data"))?
    {
        Content::Text(t) => C::Text(t),
        Content::Raw(r) => C::Raw(r),
        Content::Url(u) => C::Url(u),
        Content::Data(v) => C::Data(value_from_pb(v)?),
    };
    Ok(m::part::Part {
        content,
        metadata: metadata_from_pb(p.metadata)?,
        filename: non_empty(p.filename),
        media_type: non_empty(p.media_type),
        extra: Extras::new(),
    })
}

// ---- Message ---------------------------------------------------------------

/// Model role -> prost role.
pub fn role_to_pb(r: m::message::Role) -> pb::Role {
    match r {
        m::message::Role::Unspecified => pb::Role::Unspecified,
        m::message::Role::User => pb::Role::User,
        m::message::Role::Agent => pb::Role::Agent,
    }
}

/// Prost role number -> model role (unknown numbers rejected, as the model's
/// ProtoJSON parser does).
pub fn role_from_pb(r: i32) -> Result<m::message::Role, TranslateError> {
    match pb::Role::try_from(r) {
        Ok(pb::Role::Unspecified) => Ok(m::message::Role::Unspecified),
        Ok(pb::Role::User) => Ok(m::message::Role::User),
        Ok(pb::Role::Agent) => Ok(m::message::Role::Agent),
        Err(_) => Err(TranslateError::invalid(
            "message",
            format!("unknown role number {r}"),
        )),
    }
}

/// Model message -> prost message.
pub fn message_to_pb(x: m::message::Message) -> pb::Message {
    pb::Message {
        message_id: x.message_id,
        context_id: x.context_id.unwrap_or_default(),
        task_id: x.task_id.unwrap_or_default(),
        role: role_to_pb(x.role) as i32,
        parts: x.parts.into_iter().map(part_to_pb).collect(),
        metadata: metadata_to_pb(x.metadata),
        extensions: x.extensions.unwrap_or_default(),
        reference_task_ids: x.reference_task_ids.unwrap_or_default(),
    }
}

/// Prost message -> model message.
pub fn message_from_pb(x: pb::Message) -> Result<m::message::Message, TranslateError> {
    Ok(m::message::Message {
        message_id: x.message_id,
        context_id: non_empty(x.context_id),
        task_id: non_empty(x.task_id),
        role: role_from_pb(x.role)?,
        parts: x
            .parts
            .into_iter()
            .map(part_from_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_from_pb(x.metadata)?,
        extensions: non_empty_vec(x.extensions),
        reference_task_ids: non_empty_vec(x.reference_task_ids),
        extra: Extras::new(),
    })
}

// ---- Task ------------------------------------------------------------------

/// Model task state -> prost enum number. An unrecognized state survives if
/// it is a number; an unrecognized name has no number and is rejected.
pub fn state_to_pb(s: &m::task::TaskState) -> Result<i32, TranslateError> {
    use m::task::TaskState as S;
    Ok(match s {
        S::Unspecified => pb::TaskState::Unspecified as i32,
        S::Submitted => pb::TaskState::Submitted as i32,
        S::Working => pb::TaskState::Working as i32,
        S::Completed => pb::TaskState::Completed as i32,
        S::Failed => pb::TaskState::Failed as i32,
        S::Canceled => pb::TaskState::Canceled as i32,
        S::InputRequired => pb::TaskState::InputRequired as i32,
        S::Rejected => pb::TaskState::Rejected as i32,
        S::AuthRequired => pb::TaskState::AuthRequired as i32,
        S::Unrecognized(raw) => raw.parse::<i32>().map_err(|_| {
            TranslateError::invalid("task state", format!("{raw:?} has no protobuf number"))
        })?,
    })
}

/// Prost enum number -> model task state (unknown numbers kept as
/// `Unrecognized("<n>")`).
pub fn state_from_pb(s: i32) -> m::task::TaskState {
    use m::task::TaskState as S;
    match pb::TaskState::try_from(s) {
        Ok(pb::TaskState::Unspecified) => S::Unspecified,
        Ok(pb::TaskState::Submitted) => S::Submitted,
        Ok(pb::TaskState::Working) => S::Working,
        Ok(pb::TaskState::Completed) => S::Completed,
        Ok(pb::TaskState::Failed) => S::Failed,
        Ok(pb::TaskState::Canceled) => S::Canceled,
        Ok(pb::TaskState::InputRequired) => S::InputRequired,
        Ok(pb::TaskState::Rejected) => S::Rejected,
        Ok(pb::TaskState::AuthRequired) => S::AuthRequired,
        Err(_) => S::Unrecognized(s.to_string()),
    }
}

/// Model status -> prost status.
pub fn status_to_pb(s: m::task::TaskStatus) -> Result<pb::TaskStatus, TranslateError> {
    Ok(pb::TaskStatus {
        state: state_to_pb(&s.state)?,
        message: s.message.map(message_to_pb),
        timestamp: s.timestamp.as_deref().map(timestamp_to_pb).transpose()?,
    })
}

/// Prost status -> model status.
pub fn status_from_pb(s: pb::TaskStatus) -> Result<m::task::TaskStatus, TranslateError> {
    Ok(m::task::TaskStatus {
        state: state_from_pb(s.state),
        message: s.message.map(message_from_pb).transpose()?,
        timestamp: s.timestamp.as_ref().map(timestamp_from_pb).transpose()?,
        extra: Extras::new(),
    })
}

/// Model artifact -> prost artifact.
pub fn artifact_to_pb(a: m::artifact::Artifact) -> pb::Artifact {
    pb::Artifact {
        artifact_id: a.artifact_id,
        name: a.name.unwrap_or_default(),
        description: a.description.unwrap_or_default(),
        parts: a.parts.into_iter().map(part_to_pb).collect(),
        metadata: metadata_to_pb(a.metadata),
        extensions: a.extensions.unwrap_or_default(),
    }
}

/// Prost artifact -> model artifact.
pub fn artifact_from_pb(a: pb::Artifact) -> Result<m::artifact::Artifact, TranslateError> {
    Ok(m::artifact::Artifact {
        artifact_id: a.artifact_id,
        name: non_empty(a.name),
        description: non_empty(a.description),
        parts: a
            .parts
            .into_iter()
            .map(part_from_pb)
            .collect::<Result<_, _>>()?,
        metadata: metadata_from_pb(a.metadata)?,
        extensions: non_empty_vec(a.extensions),
        extra: Extras::new(),
    })
}

/// Model task -> prost task.
pub fn task_to_pb(t: m::task::Task) -> Result<pb::Task, TranslateError> {
    Ok(pb::Task {
        id: t.id,
        context_id: t.context_id.unwrap_or_default(),
        status: Some(status_to_pb(t.status)?),
        artifacts: t
            .artifacts
            .unwrap_or_default()
            .into_iter()
            .map(artifact_to_pb)
            .collect(),
        history: t
            .history
            .unwrap_or_default()
            .into_iter()
            .map(message_to_pb)
            .collect(),
        metadata: metadata_to_pb(t.metadata),
    })
}

/// Prost task -> model task (`status` is required).
pub fn task_from_pb(t: pb::Task) -> Result<m::task::Task, TranslateError> {
    Ok(m::task::Task {
        id: t.id,
        context_id: non_empty(t.context_id),
        status: status_from_pb(t.status.ok_or_else(|| missing("task", "status"))?)?,
        artifacts: non_empty_vec(
            t.artifacts
                .into_iter()
                .map(artifact_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        history: non_empty_vec(
            t.history
                .into_iter()
                .map(message_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        metadata: metadata_from_pb(t.metadata)?,
        extra: Extras::new(),
    })
}

// ---- Events ----------------------------------------------------------------

/// Model status-update event -> prost.
pub fn status_update_to_pb(
    e: m::event::TaskStatusUpdateEvent,
) -> Result<pb::TaskStatusUpdateEvent, TranslateError> {
    Ok(pb::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: Some(status_to_pb(e.status)?),
        metadata: metadata_to_pb(e.metadata),
    })
}

/// Prost status-update event -> model (`status` is required).
pub fn status_update_from_pb(
    e: pb::TaskStatusUpdateEvent,
) -> Result<m::event::TaskStatusUpdateEvent, TranslateError> {
    Ok(m::event::TaskStatusUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        status: status_from_pb(e.status.ok_or_else(|| missing("status update", "status"))?)?,
        metadata: metadata_from_pb(e.metadata)?,
        extra: Extras::new(),
    })
}

/// Model artifact-update event -> prost.
pub fn artifact_update_to_pb(e: m::event::TaskArtifactUpdateEvent) -> pb::TaskArtifactUpdateEvent {
    pb::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: Some(artifact_to_pb(e.artifact)),
        append: e.append.unwrap_or(false),
        last_chunk: e.last_chunk.unwrap_or(false),
        metadata: metadata_to_pb(e.metadata),
    }
}

/// Prost artifact-update event -> model (`artifact` is required; `false`
/// flags read as absent).
pub fn artifact_update_from_pb(
    e: pb::TaskArtifactUpdateEvent,
) -> Result<m::event::TaskArtifactUpdateEvent, TranslateError> {
    Ok(m::event::TaskArtifactUpdateEvent {
        task_id: e.task_id,
        context_id: e.context_id,
        artifact: artifact_from_pb(
            e.artifact
                .ok_or_else(|| missing("artifact update", "artifact"))?,
        )?,
        append: e.append.then_some(true),
        last_chunk: e.last_chunk.then_some(true),
        metadata: metadata_from_pb(e.metadata)?,
        extra: Extras::new(),
    })
}

/// Model stream response -> prost.
pub fn stream_to_pb(s: m::event::StreamResponse) -> Result<pb::StreamResponse, TranslateError> {
    use pb::stream_response::Payload;
    let payload = match s {
        m::event::StreamResponse::Task(t) => Payload::Task(task_to_pb(t)?),
        m::event::StreamResponse::Message(x) => Payload::Message(message_to_pb(x)),
        m::event::StreamResponse::StatusUpdate(e) => Payload::StatusUpdate(status_update_to_pb(e)?),
        m::event::StreamResponse::ArtifactUpdate(e) => {
            Payload::ArtifactUpdate(artifact_update_to_pb(e))
        }
    };
    Ok(pb::StreamResponse {
        payload: Some(payload),
    })
}

/// Prost stream response -> model (empty payload rejected).
pub fn stream_from_pb(s: pb::StreamResponse) -> Result<m::event::StreamResponse, TranslateError> {
    use pb::stream_response::Payload;
    Ok(
        match s
            .payload
            .ok_or_else(|| missing("stream response", "payload"))?
        {
            Payload::Task(t) => m::event::StreamResponse::Task(task_from_pb(t)?),
            Payload::Message(x) => m::event::StreamResponse::Message(message_from_pb(x)?),
            Payload::StatusUpdate(e) => {
                m::event::StreamResponse::StatusUpdate(status_update_from_pb(e)?)
            }
            Payload::ArtifactUpdate(e) => {
                m::event::StreamResponse::ArtifactUpdate(artifact_update_from_pb(e)?)
            }
        },
    )
}
