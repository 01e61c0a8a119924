//! Strategies for the payload types (parts, messages, tasks, artifacts,
//! events) of both versions, on the lossless domain: every generated value
//! satisfies `to_v03(to_v10(x)) == x` (v0.3) or `to_v10(to_v03(y)) == y`
//! (v1.0).
//!
//! The domain excludes: non-normal timestamps, non-standard base64, unknown
//! members inside a v0.3 `file`, `mediaType`/`filename` on v1.0 text and data
//! parts, an empty metadata object next to a v1.0 non-object `data`, metadata
//! keys named `data_part_compat` (except the v0.3 compat form itself),
//! `ROLE_UNSPECIFIED`, unrecognized v1.0 states, an empty v1.0 task
//! `contextId`, a v0.3 `final` that disagrees with the state, and unknown
//! members that collide with member names (all generated ones start `x-`).

use chrono::{DateTime, SecondsFormat};
use proptest::collection::{btree_map, vec};
use proptest::option;
use proptest::prelude::*;
use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};
use crate::v10::part::{encode_base64, PartContent};
use crate::{v03, v10};

/// Short strings of arbitrary (non-newline) characters.
pub fn text() -> impl Strategy<Value = String> {
    ".{0,8}"
}

/// A JSON leaf: null, boolean, integer or string (no floats, whose text
/// form does not always round-trip).
pub fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        text().prop_map(Value::String),
    ]
}

/// Any JSON value, a few levels deep.
pub fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map("[a-z]{0,5}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON object with keys `[a-z]{0,5}`.
pub fn json_object() -> impl Strategy<Value = Map<String, Value>> {
    btree_map("[a-z]{0,5}", json_value(), 0..4).prop_map(|m| m.into_iter().collect())
}

/// Unknown members: keys start with `x-`, so they collide with no member.
pub fn extras() -> impl Strategy<Value = Extras> {
    btree_map("x-[a-z]{1,5}", json_value(), 0..3).prop_map(|m| m.into_iter().collect())
}

/// A non-empty metadata object (keys `[a-z]{1,8}`, never `data_part_compat`).
pub fn metadata_non_empty() -> impl Strategy<Value = Metadata> {
    btree_map("[a-z]{1,8}", json_value(), 1..4).prop_map(|m| m.into_iter().collect())
}

/// Absent, empty or non-empty metadata.
pub fn metadata() -> impl Strategy<Value = Option<Metadata>> {
    prop_oneof![
        Just(None),
        Just(Some(Metadata::new())),
        metadata_non_empty().prop_map(Some),
    ]
}

/// Absent or non-empty metadata.
pub fn metadata_absent_or_non_empty() -> impl Strategy<Value = Option<Metadata>> {
    option::of(metadata_non_empty())
}

/// An optional list of short strings (absent, empty or filled).
pub fn string_list() -> impl Strategy<Value = Option<Vec<String>>> {
    option::of(vec(text(), 0..3))
}

/// A timestamp already in the normal form of `crate::timestamp::to_utc_z`.
pub fn timestamp() -> impl Strategy<Value = String> {
    let nanos = prop_oneof![
        Just(0u32),
        (0u32..1000).prop_map(|ms| ms * 1_000_000),
        (0u32..1_000_000).prop_map(|us| us * 1000),
        0u32..1_000_000_000,
    ];
    (0i64..4_102_444_800, nanos).prop_map(|(secs, nanos)| {
        DateTime::from_timestamp(secs, nanos)
            .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
            .unwrap_or_else(|| "2024-01-01T00:00:00Z".to_string())
    })
}

// ---------------------------------------------------------------- v0.3

/// A v0.3 file: exactly one of standard base64 `bytes` or `uri`, no extras.
pub fn v03_file_content() -> impl Strategy<Value = v03::part::FileContent> {
    let body = prop_oneof![
        vec(any::<u8>(), 0..12).prop_map(|b| (Some(encode_base64(&b)), None)),
        text().prop_map(|u| (None, Some(u))),
    ];
    (body, option::of(text()), option::of(text())).prop_map(|((bytes, uri), name, mime_type)| {
        v03::part::FileContent {
            bytes,
            uri,
            name,
            mime_type,
            extra: Extras::new(),
        }
    })
}

/// A v0.3 data part: a plain object, or the SDK compat wrapping of a
/// non-object value (`{"value": X}` + `metadata.data_part_compat: true`).
pub fn v03_data_part() -> impl Strategy<Value = v03::part::DataPart> {
    let plain = (json_object(), metadata(), extras()).prop_map(|(data, metadata, extra)| {
        v03::part::DataPart {
            kind: Default::default(),
            data,
            metadata,
            extra,
        }
    });
    let wrapped = (
        json_value().prop_filter("non-object", |v| !v.is_object()),
        metadata(),
        extras(),
    )
        .prop_map(|(value, metadata, extra)| {
            let mut data = Map::new();
            data.insert("value".into(), value);
            let mut metadata = metadata.unwrap_or_default();
            metadata.insert(crate::part::DATA_PART_COMPAT.into(), Value::Bool(true));
            v03::part::DataPart {
                kind: Default::default(),
                data,
                metadata: Some(metadata),
                extra,
            }
        });
    prop_oneof![plain, wrapped]
}

/// A v0.3 part of any kind.
pub fn v03_part() -> impl Strategy<Value = v03::part::Part> {
    let text_part = (text(), metadata(), extras()).prop_map(|(text, metadata, extra)| {
        v03::part::Part::Text(v03::part::TextPart {
            kind: Default::default(),
            text,
            metadata,
            extra,
        })
    });
    let file_part =
        (v03_file_content(), metadata(), extras()).prop_map(|(file, metadata, extra)| {
            v03::part::Part::File(v03::part::FilePart {
                kind: Default::default(),
                file,
                metadata,
                extra,
            })
        });
    prop_oneof![
        text_part,
        file_part,
        v03_data_part().prop_map(v03::part::Part::Data)
    ]
}

/// A v0.3 role.
pub fn v03_role() -> impl Strategy<Value = v03::message::Role> {
    prop_oneof![
        Just(v03::message::Role::User),
        Just(v03::message::Role::Agent)
    ]
}

/// A v0.3 message.
pub fn v03_message() -> impl Strategy<Value = v03::message::Message> {
    (
        text(),
        option::of(text()),
        option::of(text()),
        v03_role(),
        vec(v03_part(), 0..3),
        metadata(),
        string_list(),
        string_list(),
        extras(),
    )
        .prop_map(
            |(message_id, context_id, task_id, role, parts, metadata, ext, refs, extra)| {
                v03::message::Message {
                    kind: Default::default(),
                    message_id,
                    context_id,
                    task_id,
                    role,
                    parts,
                    metadata,
                    extensions: ext,
                    reference_task_ids: refs,
                    extra,
                }
            },
        )
}

/// A v0.3 task state.
pub fn v03_task_state() -> impl Strategy<Value = v03::task::TaskState> {
    use v03::task::TaskState as S;
    prop_oneof![
        Just(S::Submitted),
        Just(S::Working),
        Just(S::InputRequired),
        Just(S::Completed),
        Just(S::Canceled),
        Just(S::Failed),
        Just(S::Rejected),
        Just(S::AuthRequired),
        Just(S::Unknown),
    ]
}

/// A v0.3 task status (normal-form timestamp).
pub fn v03_task_status() -> impl Strategy<Value = v03::task::TaskStatus> {
    (
        v03_task_state(),
        option::of(v03_message()),
        option::of(timestamp()),
        extras(),
    )
        .prop_map(|(state, message, timestamp, extra)| v03::task::TaskStatus {
            state,
            message,
            timestamp,
            extra,
        })
}

/// A v0.3 artifact.
pub fn v03_artifact() -> impl Strategy<Value = v03::artifact::Artifact> {
    (
        text(),
        option::of(text()),
        option::of(text()),
        vec(v03_part(), 0..3),
        metadata(),
        string_list(),
        extras(),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions, extra)| {
                v03::artifact::Artifact {
                    artifact_id,
                    name,
                    description,
                    parts,
                    metadata,
                    extensions,
                    extra,
                }
            },
        )
}

/// A v0.3 task.
pub fn v03_task() -> impl Strategy<Value = v03::task::Task> {
    (
        text(),
        text(),
        v03_task_status(),
        option::of(vec(v03_artifact(), 0..2)),
        option::of(vec(v03_message(), 0..2)),
        metadata(),
        extras(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata, extra)| v03::task::Task {
                kind: Default::default(),
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
                extra,
            },
        )
}

/// A v0.3 status-update event whose `final` agrees with its state.
pub fn v03_status_update() -> impl Strategy<Value = v03::event::TaskStatusUpdateEvent> {
    (text(), text(), v03_task_status(), metadata(), extras()).prop_map(
        |(task_id, context_id, status, metadata, extra)| v03::event::TaskStatusUpdateEvent {
            kind: Default::default(),
            task_id,
            context_id,
            is_final: status.state.is_terminal(),
            status,
            metadata,
            extra,
        },
    )
}

/// A v0.3 artifact-update event.
pub fn v03_artifact_update() -> impl Strategy<Value = v03::event::TaskArtifactUpdateEvent> {
    (
        text(),
        text(),
        v03_artifact(),
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        metadata(),
        extras(),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata, extra)| {
                v03::event::TaskArtifactUpdateEvent {
                    kind: Default::default(),
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                    extra,
                }
            },
        )
}

/// A v0.3 stream result (also a `message/send` result when Task/Message).
pub fn v03_stream_event() -> impl Strategy<Value = v03::event::StreamEvent> {
    use v03::event::StreamEvent as E;
    prop_oneof![
        v03_task().prop_map(E::Task),
        v03_message().prop_map(E::Message),
        v03_status_update().prop_map(E::StatusUpdate),
        v03_artifact_update().prop_map(E::ArtifactUpdate),
    ]
}

// ---------------------------------------------------------------- v1.0

/// A v1.0 part: text and data parts carry no `filename`/`mediaType`; a
/// non-object `data` has absent or non-empty metadata.
pub fn v10_part() -> impl Strategy<Value = v10::part::Part> {
    let bare = |content, metadata, extra| v10::part::Part {
        content,
        metadata,
        filename: None,
        media_type: None,
        extra,
    };
    let text_part =
        (text(), metadata(), extras()).prop_map(move |(t, m, e)| bare(PartContent::Text(t), m, e));
    let object_data = (json_object(), metadata(), extras())
        .prop_map(move |(d, m, e)| bare(PartContent::Data(Value::Object(d)), m, e));
    let other_data = (
        json_value().prop_filter("non-object", |v| !v.is_object()),
        metadata_absent_or_non_empty(),
        extras(),
    )
        .prop_map(move |(d, m, e)| bare(PartContent::Data(d), m, e));
    let file_content = prop_oneof![
        vec(any::<u8>(), 0..12).prop_map(PartContent::Raw),
        text().prop_map(PartContent::Url),
    ];
    let file_part = (
        file_content,
        metadata(),
        option::of(text()),
        option::of(text()),
        extras(),
    )
        .prop_map(
            |(content, metadata, filename, media_type, extra)| v10::part::Part {
                content,
                metadata,
                filename,
                media_type,
                extra,
            },
        );
    prop_oneof![text_part, object_data, other_data, file_part]
}

/// A v1.0 role other than `ROLE_UNSPECIFIED`.
pub fn v10_role() -> impl Strategy<Value = v10::message::Role> {
    prop_oneof![
        Just(v10::message::Role::User),
        Just(v10::message::Role::Agent)
    ]
}

/// A v1.0 message.
pub fn v10_message() -> impl Strategy<Value = v10::message::Message> {
    (
        text(),
        option::of(text()),
        option::of(text()),
        v10_role(),
        vec(v10_part(), 0..3),
        metadata(),
        string_list(),
        string_list(),
        extras(),
    )
        .prop_map(
            |(message_id, context_id, task_id, role, parts, metadata, ext, refs, extra)| {
                v10::message::Message {
                    message_id,
                    context_id,
                    task_id,
                    role,
                    parts,
                    metadata,
                    extensions: ext,
                    reference_task_ids: refs,
                    extra,
                }
            },
        )
}

/// A v1.0 task state this crate knows.
pub fn v10_task_state() -> impl Strategy<Value = v10::task::TaskState> {
    use v10::task::TaskState as S;
    prop_oneof![
        Just(S::Unspecified),
        Just(S::Submitted),
        Just(S::Working),
        Just(S::Completed),
        Just(S::Failed),
        Just(S::Canceled),
        Just(S::InputRequired),
        Just(S::Rejected),
        Just(S::AuthRequired),
    ]
}

/// A v1.0 task status (normal-form timestamp).
pub fn v10_task_status() -> impl Strategy<Value = v10::task::TaskStatus> {
    (
        v10_task_state(),
        option::of(v10_message()),
        option::of(timestamp()),
        extras(),
    )
        .prop_map(|(state, message, timestamp, extra)| v10::task::TaskStatus {
            state,
            message,
            timestamp,
            extra,
        })
}

/// A v1.0 artifact.
pub fn v10_artifact() -> impl Strategy<Value = v10::artifact::Artifact> {
    (
        text(),
        option::of(text()),
        option::of(text()),
        vec(v10_part(), 0..3),
        metadata(),
        string_list(),
        extras(),
    )
        .prop_map(
            |(artifact_id, name, description, parts, metadata, extensions, extra)| {
                v10::artifact::Artifact {
                    artifact_id,
                    name,
                    description,
                    parts,
                    metadata,
                    extensions,
                    extra,
                }
            },
        )
}

/// A v1.0 task (`contextId` absent or non-empty).
pub fn v10_task() -> impl Strategy<Value = v10::task::Task> {
    (
        text(),
        option::of(".{1,8}"),
        v10_task_status(),
        option::of(vec(v10_artifact(), 0..2)),
        option::of(vec(v10_message(), 0..2)),
        metadata(),
        extras(),
    )
        .prop_map(
            |(id, context_id, status, artifacts, history, metadata, extra)| v10::task::Task {
                id,
                context_id,
                status,
                artifacts,
                history,
                metadata,
                extra,
            },
        )
}

/// A v1.0 status-update event.
pub fn v10_status_update() -> impl Strategy<Value = v10::event::TaskStatusUpdateEvent> {
    (text(), text(), v10_task_status(), metadata(), extras()).prop_map(
        |(task_id, context_id, status, metadata, extra)| v10::event::TaskStatusUpdateEvent {
            task_id,
            context_id,
            status,
            metadata,
            extra,
        },
    )
}

/// A v1.0 artifact-update event.
pub fn v10_artifact_update() -> impl Strategy<Value = v10::event::TaskArtifactUpdateEvent> {
    (
        text(),
        text(),
        v10_artifact(),
        option::of(any::<bool>()),
        option::of(any::<bool>()),
        metadata(),
        extras(),
    )
        .prop_map(
            |(task_id, context_id, artifact, append, last_chunk, metadata, extra)| {
                v10::event::TaskArtifactUpdateEvent {
                    task_id,
                    context_id,
                    artifact,
                    append,
                    last_chunk,
                    metadata,
                    extra,
                }
            },
        )
}

/// A v1.0 `StreamResponse`.
pub fn v10_stream_response() -> impl Strategy<Value = v10::event::StreamResponse> {
    use v10::event::StreamResponse as R;
    prop_oneof![
        v10_task().prop_map(R::Task),
        v10_message().prop_map(R::Message),
        v10_status_update().prop_map(R::StatusUpdate),
        v10_artifact_update().prop_map(R::ArtifactUpdate),
    ]
}
