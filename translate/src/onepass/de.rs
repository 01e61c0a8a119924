//! Single-pass readers of the wire types on the hot path: each reads its
//! JSON object member by member straight from the input, keeping unknown
//! members as they come, where the derived readers buffer them
//! (`#[serde(flatten)]`) or read the whole object into a `Value` first
//! (v0.3 `kind` unions).
//!
//! A reader here either yields exactly the value the derived reader of the
//! same type yields from the same JSON, or fails. It fails in more cases:
//! on a repeated member (the derived path reads a `Value` first, where the
//! last one wins) and on a union member that belongs to another variant.
//! Callers then take the derived path, whose answers and errors are the
//! reference.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::json::{Extras, Metadata};
use crate::v10::part::null_as_default;
use crate::{v03, v10};

/// A value read by this module's single-pass reader.
pub(crate) struct Fast<T>(pub(crate) T);

/// A JSON array of [`Fast`] elements.
pub(crate) struct FastVec<T>(pub(crate) Vec<T>);

/// A member name, borrowed from the input when it holds no escapes.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_string(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_string()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads the value of member `name` into `slot`; a repeated member fails.
pub(crate) fn put<'de, A, T>(
    slot: &mut Option<T>,
    name: &'static str,
    map: &mut A,
) -> Result<(), A::Error>
where
    A: MapAccess<'de>,
    T: Deserialize<'de>,
{
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// A required member.
pub(crate) fn need<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(name))
}

/// Reads an unknown member into `extra`.
pub(crate) fn other<'de, A: MapAccess<'de>>(
    extra: &mut Extras,
    key: Key<'de>,
    map: &mut A,
) -> Result<(), A::Error> {
    let v: Value = map.next_value()?;
    extra.insert(key.into_string(), v);
    Ok(())
}

/// `ProtoJSON` `null` reads as the default (see [`null_as_default`]).
pub(crate) struct NullAsDefault<T>(pub(crate) T);

impl<'de, T: Default + Deserialize<'de>> Deserialize<'de> for NullAsDefault<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        null_as_default(d).map(NullAsDefault)
    }
}

/// A type read member by member: `field` reads a known member into the
/// builder (`Ok(false)`: not a member), `build` checks and assembles.
pub(crate) trait Fields: Sized {
    const WHAT: &'static str;
    type Builder: Default;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut Self::Builder,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error>;
    fn build<E: de::Error>(b: Self::Builder, extra: Extras) -> Result<Self, E>;
}

struct FieldsVisitor<T>(PhantomData<T>);

impl<'de, T: Fields> Visitor<'de> for FieldsVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a {} object", T::WHAT)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut b = T::Builder::default();
        let mut extra = Extras::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            if !T::field(&mut b, key.as_str(), &mut map)? {
                other(&mut extra, key, &mut map)?;
            }
        }
        T::build(b, extra)
    }
}

impl<'de, T: Fields> Deserialize<'de> for Fast<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(FieldsVisitor(PhantomData)).map(Fast)
    }
}

impl<'de, T> Deserialize<'de> for FastVec<T>
where
    Fast<T>: Deserialize<'de>,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T> Visitor<'de> for V<T>
        where
            Fast<T>: Deserialize<'de>,
        {
            type Value = FastVec<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FastVec<T>, A::Error> {
                // As serde's own `Vec` reader: the size hint, capped.
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
                while let Some(Fast(x)) = seq.next_element::<Fast<T>>()? {
                    out.push(x);
                }
                Ok(FastVec(out))
            }
        }
        d.deserialize_seq(V(PhantomData))
    }
}

fn vec_of<T>(v: Option<Option<FastVec<T>>>) -> Option<Vec<T>> {
    v.flatten().map(|x| x.0)
}

// ---------------------------------------------------------------- v0.3 --

#[derive(Default)]
pub(crate) struct StatusB03 {
    state: Option<v03::task::TaskState>,
    message: Option<Option<Fast<v03::message::Message>>>,
    timestamp: Option<Option<String>>,
}

impl Fields for v03::task::TaskStatus {
    const WHAT: &'static str = "TaskStatus";
    type Builder = StatusB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut StatusB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "state" => put(&mut b.state, "state", map)?,
            "message" => put(&mut b.message, "message", map)?,
            "timestamp" => put(&mut b.timestamp, "timestamp", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: StatusB03, extra: Extras) -> Result<Self, E> {
        Ok(v03::task::TaskStatus {
            state: need(b.state, "state")?,
            message: b.message.flatten().map(|m| m.0),
            timestamp: b.timestamp.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct TaskB03 {
    kind: Option<v03::part::TaskKind>,
    id: Option<String>,
    context_id: Option<String>,
    status: Option<Fast<v03::task::TaskStatus>>,
    artifacts: Option<Option<FastVec<v03::artifact::Artifact>>>,
    history: Option<Option<FastVec<v03::message::Message>>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v03::task::Task {
    const WHAT: &'static str = "Task";
    type Builder = TaskB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut TaskB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "kind" => put(&mut b.kind, "kind", map)?,
            "id" => put(&mut b.id, "id", map)?,
            "contextId" => put(&mut b.context_id, "contextId", map)?,
            "status" => put(&mut b.status, "status", map)?,
            "artifacts" => put(&mut b.artifacts, "artifacts", map)?,
            "history" => put(&mut b.history, "history", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: TaskB03, extra: Extras) -> Result<Self, E> {
        Ok(v03::task::Task {
            kind: b.kind.unwrap_or_default(),
            id: need(b.id, "id")?,
            context_id: need(b.context_id, "contextId")?,
            status: need(b.status, "status")?.0,
            artifacts: vec_of(b.artifacts),
            history: vec_of(b.history),
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct MessageB03 {
    kind: Option<v03::part::MessageKind>,
    message_id: Option<String>,
    context_id: Option<Option<String>>,
    task_id: Option<Option<String>>,
    role: Option<v03::message::Role>,
    parts: Option<FastVec<v03::part::Part>>,
    metadata: Option<Option<Metadata>>,
    extensions: Option<Option<Vec<String>>>,
    reference_task_ids: Option<Option<Vec<String>>>,
}

impl Fields for v03::message::Message {
    const WHAT: &'static str = "Message";
    type Builder = MessageB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut MessageB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "kind" => put(&mut b.kind, "kind", map)?,
            "messageId" => put(&mut b.message_id, "messageId", map)?,
            "contextId" => put(&mut b.context_id, "contextId", map)?,
            "taskId" => put(&mut b.task_id, "taskId", map)?,
            "role" => put(&mut b.role, "role", map)?,
            "parts" => put(&mut b.parts, "parts", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "extensions" => put(&mut b.extensions, "extensions", map)?,
            "referenceTaskIds" => put(&mut b.reference_task_ids, "referenceTaskIds", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: MessageB03, extra: Extras) -> Result<Self, E> {
        Ok(v03::message::Message {
            kind: b.kind.unwrap_or_default(),
            message_id: need(b.message_id, "messageId")?,
            context_id: b.context_id.flatten(),
            task_id: b.task_id.flatten(),
            role: need(b.role, "role")?,
            parts: need(b.parts, "parts")?.0,
            metadata: b.metadata.flatten(),
            extensions: b.extensions.flatten(),
            reference_task_ids: b.reference_task_ids.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct ArtifactB03 {
    artifact_id: Option<String>,
    name: Option<Option<String>>,
    description: Option<Option<String>>,
    parts: Option<FastVec<v03::part::Part>>,
    metadata: Option<Option<Metadata>>,
    extensions: Option<Option<Vec<String>>>,
}

impl Fields for v03::artifact::Artifact {
    const WHAT: &'static str = "Artifact";
    type Builder = ArtifactB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut ArtifactB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "artifactId" => put(&mut b.artifact_id, "artifactId", map)?,
            "name" => put(&mut b.name, "name", map)?,
            "description" => put(&mut b.description, "description", map)?,
            "parts" => put(&mut b.parts, "parts", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "extensions" => put(&mut b.extensions, "extensions", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: ArtifactB03, extra: Extras) -> Result<Self, E> {
        Ok(v03::artifact::Artifact {
            artifact_id: need(b.artifact_id, "artifactId")?,
            name: b.name.flatten(),
            description: b.description.flatten(),
            parts: need(b.parts, "parts")?.0,
            metadata: b.metadata.flatten(),
            extensions: b.extensions.flatten(),
            extra,
        })
    }
}

/// v0.3 `Part`: `kind` may come after the members it selects, so the
/// members of every kind are read as values first (what the derived reader
/// does with the whole object), then checked for the chosen kind.
impl<'de> Deserialize<'de> for Fast<v03::part::Part> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fast<v03::part::Part>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a part object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut kind, mut text, mut file, mut data, mut metadata) = (
                    None::<Value>,
                    None::<Value>,
                    None::<Value>,
                    None::<Value>,
                    None::<Value>,
                );
                let mut extra = Extras::new();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    match key.as_str() {
                        "kind" => put(&mut kind, "kind", &mut map)?,
                        "text" => put(&mut text, "text", &mut map)?,
                        "file" => put(&mut file, "file", &mut map)?,
                        "data" => put(&mut data, "data", &mut map)?,
                        "metadata" => put(&mut metadata, "metadata", &mut map)?,
                        _ => {
                            let v: Value = map.next_value()?;
                            if extra.insert(key.into_string(), v).is_some() {
                                return Err(de::Error::custom("repeated part member"));
                            }
                        }
                    }
                }
                part03(kind, text, file, data, metadata, extra).map(Fast)
            }
        }
        d.deserialize_map(V)
    }
}

fn metadata_of<E: de::Error>(v: Option<Value>) -> Result<Option<Metadata>, E> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(E::custom("part metadata is not an object")),
    }
}

fn part03<E: de::Error>(
    kind: Option<Value>,
    text: Option<Value>,
    file: Option<Value>,
    data: Option<Value>,
    metadata: Option<Value>,
    extra: Extras,
) -> Result<v03::part::Part, E> {
    use v03::part::{DataPart, FilePart, Part, TextPart};
    let which = match &kind {
        Some(Value::String(k)) => k.as_str(),
        Some(_) => return Err(E::custom("part kind is not a string")),
        None if text.is_some() => "text",
        None if file.is_some() => "file",
        None if data.is_some() => "data",
        None => return Err(E::custom("part has no kind")),
    };
    // A member of another kind would be an unknown member of this one.
    match which {
        "text" if file.is_none() && data.is_none() => match text {
            Some(Value::String(text)) => Ok(Part::Text(TextPart {
                kind: Default::default(),
                text,
                metadata: metadata_of(metadata)?,
                extra,
            })),
            _ => Err(E::custom("text part without a text string")),
        },
        "file" if text.is_none() && data.is_none() => {
            let file = file.ok_or_else(|| E::missing_field("file"))?;
            Ok(Part::File(FilePart {
                kind: Default::default(),
                file: serde_json::from_value(file).map_err(E::custom)?,
                metadata: metadata_of(metadata)?,
                extra,
            }))
        }
        "data" if text.is_none() && file.is_none() => match data {
            Some(Value::Object(data)) => Ok(Part::Data(DataPart {
                kind: Default::default(),
                data,
                metadata: metadata_of(metadata)?,
                extra,
            })),
            _ => Err(E::custom("data part without a data object")),
        },
        _ => Err(E::custom("part kind not taken on the single pass")),
    }
}

/// The v0.3 stream result union (also the `message/send` result), read in
/// one pass: every member of every variant has the same type wherever it
/// occurs, so members are read typed and the variant is chosen at the end,
/// as the derived reader chooses it (`kind`, else inferred).
#[derive(Default)]
pub(crate) struct EventB03 {
    kind: Option<Value>,
    id: Option<String>,
    context_id: Option<Option<String>>,
    task_id: Option<Option<String>>,
    status: Option<Fast<v03::task::TaskStatus>>,
    artifacts: Option<Option<FastVec<v03::artifact::Artifact>>>,
    history: Option<Option<FastVec<v03::message::Message>>>,
    metadata: Option<Option<Metadata>>,
    message_id: Option<String>,
    role: Option<v03::message::Role>,
    parts: Option<FastVec<v03::part::Part>>,
    extensions: Option<Option<Vec<String>>>,
    reference_task_ids: Option<Option<Vec<String>>>,
    is_final: Option<bool>,
    artifact: Option<Fast<v03::artifact::Artifact>>,
    append: Option<Option<bool>>,
    last_chunk: Option<Option<bool>>,
}

impl Fields for v03::event::StreamEvent {
    const WHAT: &'static str = "stream event";
    type Builder = EventB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut EventB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "kind" => put(&mut b.kind, "kind", map)?,
            "id" => put(&mut b.id, "id", map)?,
            "contextId" => put(&mut b.context_id, "contextId", map)?,
            "taskId" => put(&mut b.task_id, "taskId", map)?,
            "status" => put(&mut b.status, "status", map)?,
            "artifacts" => put(&mut b.artifacts, "artifacts", map)?,
            "history" => put(&mut b.history, "history", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "messageId" => put(&mut b.message_id, "messageId", map)?,
            "role" => put(&mut b.role, "role", map)?,
            "parts" => put(&mut b.parts, "parts", map)?,
            "extensions" => put(&mut b.extensions, "extensions", map)?,
            "referenceTaskIds" => put(&mut b.reference_task_ids, "referenceTaskIds", map)?,
            "final" => put(&mut b.is_final, "final", map)?,
            "artifact" => put(&mut b.artifact, "artifact", map)?,
            "append" => put(&mut b.append, "append", map)?,
            "lastChunk" => put(&mut b.last_chunk, "lastChunk", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: EventB03, extra: Extras) -> Result<Self, E> {
        use v03::event::{StreamEvent, TaskArtifactUpdateEvent, TaskStatusUpdateEvent};
        let which = match &b.kind {
            Some(Value::String(k)) => k.as_str(),
            Some(_) => return Err(E::custom("stream event kind is not a string")),
            None if b.artifact.is_some() => "artifact-update",
            None if b.message_id.is_some() => "message",
            None if b.status.is_some() && b.id.is_some() => "task",
            None if b.status.is_some() => "status-update",
            None => return Err(E::custom("stream event has no kind")),
        };
        let task_members = b.id.is_some() || b.artifacts.is_some() || b.history.is_some();
        let message_members = b.message_id.is_some()
            || b.role.is_some()
            || b.parts.is_some()
            || b.extensions.is_some()
            || b.reference_task_ids.is_some();
        let artifact_members = b.artifact.is_some() || b.append.is_some() || b.last_chunk.is_some();
        // A member of another variant would be an unknown member of this one.
        let foreign = match which {
            "task" => {
                message_members || artifact_members || b.task_id.is_some() || b.is_final.is_some()
            }
            "message" => {
                task_members || artifact_members || b.status.is_some() || b.is_final.is_some()
            }
            "status-update" => task_members || message_members || artifact_members,
            "artifact-update" => {
                task_members || message_members || b.status.is_some() || b.is_final.is_some()
            }
            _ => true,
        };
        if foreign {
            return Err(E::custom("stream event kind not taken on the single pass"));
        }
        let required = |s: Option<Option<String>>, name: &'static str| {
            need::<_, E>(s, name)?.ok_or_else(|| E::custom(format!("`{name}` is null")))
        };
        Ok(match which {
            "task" => StreamEvent::Task(v03::task::Task {
                kind: Default::default(),
                id: need(b.id, "id")?,
                context_id: required(b.context_id, "contextId")?,
                status: need(b.status, "status")?.0,
                artifacts: vec_of(b.artifacts),
                history: vec_of(b.history),
                metadata: b.metadata.flatten(),
                extra,
            }),
            "message" => StreamEvent::Message(v03::message::Message {
                kind: Default::default(),
                message_id: need(b.message_id, "messageId")?,
                context_id: b.context_id.flatten(),
                task_id: b.task_id.flatten(),
                role: need(b.role, "role")?,
                parts: need(b.parts, "parts")?.0,
                metadata: b.metadata.flatten(),
                extensions: b.extensions.flatten(),
                reference_task_ids: b.reference_task_ids.flatten(),
                extra,
            }),
            "status-update" => StreamEvent::StatusUpdate(TaskStatusUpdateEvent {
                kind: Default::default(),
                task_id: required(b.task_id, "taskId")?,
                context_id: required(b.context_id, "contextId")?,
                status: need(b.status, "status")?.0,
                is_final: b.is_final.unwrap_or_default(),
                metadata: b.metadata.flatten(),
                extra,
            }),
            _ => StreamEvent::ArtifactUpdate(TaskArtifactUpdateEvent {
                kind: Default::default(),
                task_id: required(b.task_id, "taskId")?,
                context_id: required(b.context_id, "contextId")?,
                artifact: need(b.artifact, "artifact")?.0,
                append: b.append.flatten(),
                last_chunk: b.last_chunk.flatten(),
                metadata: b.metadata.flatten(),
                extra,
            }),
        })
    }
}

#[derive(Default)]
pub(crate) struct SendParamsB03 {
    message: Option<Fast<v03::message::Message>>,
    configuration: Option<Option<v03::params::MessageSendConfiguration>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v03::params::MessageSendParams {
    const WHAT: &'static str = "MessageSendParams";
    type Builder = SendParamsB03;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut SendParamsB03,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "message" => put(&mut b.message, "message", map)?,
            "configuration" => put(&mut b.configuration, "configuration", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: SendParamsB03, extra: Extras) -> Result<Self, E> {
        Ok(v03::params::MessageSendParams {
            message: need(b.message, "message")?.0,
            configuration: b.configuration.flatten(),
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

// ---------------------------------------------------------------- v1.0 --

#[derive(Default)]
pub(crate) struct PartB10 {
    text: Option<Option<String>>,
    raw: Option<Option<v10::part::Base64>>,
    url: Option<Option<String>>,
    data: Option<Value>,
    metadata: Option<Option<Metadata>>,
    filename: Option<Option<String>>,
    media_type: Option<Option<String>>,
}

impl Fields for v10::part::Part {
    const WHAT: &'static str = "Part";
    type Builder = PartB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut PartB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "text" => put(&mut b.text, "text", map)?,
            "raw" => put(&mut b.raw, "raw", map)?,
            "url" => put(&mut b.url, "url", map)?,
            "data" => put(&mut b.data, "data", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "filename" => put(&mut b.filename, "filename", map)?,
            "mediaType" | "media_type" => put(&mut b.media_type, "mediaType", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: PartB10, extra: Extras) -> Result<Self, E> {
        let wire = v10::part::PartWire {
            text: b.text.flatten(),
            raw: b.raw.flatten(),
            url: b.url.flatten(),
            data: b.data,
            metadata: b.metadata.flatten(),
            filename: b.filename.flatten(),
            media_type: b.media_type.flatten(),
            extra,
        };
        v10::part::Part::try_from(wire).map_err(E::custom)
    }
}

#[derive(Default)]
pub(crate) struct MessageB10 {
    message_id: Option<String>,
    context_id: Option<Option<String>>,
    task_id: Option<Option<String>>,
    role: Option<NullAsDefault<v10::message::Role>>,
    parts: Option<Option<FastVec<v10::part::Part>>>,
    metadata: Option<Option<Metadata>>,
    extensions: Option<Option<Vec<String>>>,
    reference_task_ids: Option<Option<Vec<String>>>,
}

impl Fields for v10::message::Message {
    const WHAT: &'static str = "Message";
    type Builder = MessageB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut MessageB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "messageId" | "message_id" => put(&mut b.message_id, "messageId", map)?,
            "contextId" | "context_id" => put(&mut b.context_id, "contextId", map)?,
            "taskId" | "task_id" => put(&mut b.task_id, "taskId", map)?,
            "role" => put(&mut b.role, "role", map)?,
            "parts" => put(&mut b.parts, "parts", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "extensions" => put(&mut b.extensions, "extensions", map)?,
            "referenceTaskIds" | "reference_task_ids" => {
                put(&mut b.reference_task_ids, "referenceTaskIds", map)?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: MessageB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::message::Message {
            message_id: need(b.message_id, "messageId")?,
            context_id: b.context_id.flatten(),
            task_id: b.task_id.flatten(),
            role: b.role.map(|r| r.0).unwrap_or_default(),
            parts: vec_of(b.parts).unwrap_or_default(),
            metadata: b.metadata.flatten(),
            extensions: b.extensions.flatten(),
            reference_task_ids: b.reference_task_ids.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct StatusB10 {
    state: Option<NullAsDefault<v10::task::TaskState>>,
    message: Option<Option<Fast<v10::message::Message>>>,
    timestamp: Option<Option<String>>,
}

impl Fields for v10::task::TaskStatus {
    const WHAT: &'static str = "TaskStatus";
    type Builder = StatusB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut StatusB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "state" => put(&mut b.state, "state", map)?,
            "message" => put(&mut b.message, "message", map)?,
            "timestamp" => put(&mut b.timestamp, "timestamp", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: StatusB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::task::TaskStatus {
            state: b.state.map(|s| s.0).unwrap_or_default(),
            message: b.message.flatten().map(|m| m.0),
            timestamp: b.timestamp.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct ArtifactB10 {
    artifact_id: Option<String>,
    name: Option<Option<String>>,
    description: Option<Option<String>>,
    parts: Option<Option<FastVec<v10::part::Part>>>,
    metadata: Option<Option<Metadata>>,
    extensions: Option<Option<Vec<String>>>,
}

impl Fields for v10::artifact::Artifact {
    const WHAT: &'static str = "Artifact";
    type Builder = ArtifactB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut ArtifactB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "artifactId" | "artifact_id" => put(&mut b.artifact_id, "artifactId", map)?,
            "name" => put(&mut b.name, "name", map)?,
            "description" => put(&mut b.description, "description", map)?,
            "parts" => put(&mut b.parts, "parts", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            "extensions" => put(&mut b.extensions, "extensions", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: ArtifactB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::artifact::Artifact {
            artifact_id: need(b.artifact_id, "artifactId")?,
            name: b.name.flatten(),
            description: b.description.flatten(),
            parts: vec_of(b.parts).unwrap_or_default(),
            metadata: b.metadata.flatten(),
            extensions: b.extensions.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct TaskB10 {
    id: Option<String>,
    context_id: Option<Option<String>>,
    status: Option<Fast<v10::task::TaskStatus>>,
    artifacts: Option<Option<FastVec<v10::artifact::Artifact>>>,
    history: Option<Option<FastVec<v10::message::Message>>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v10::task::Task {
    const WHAT: &'static str = "Task";
    type Builder = TaskB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut TaskB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "id" => put(&mut b.id, "id", map)?,
            "contextId" | "context_id" => put(&mut b.context_id, "contextId", map)?,
            "status" => put(&mut b.status, "status", map)?,
            "artifacts" => put(&mut b.artifacts, "artifacts", map)?,
            "history" => put(&mut b.history, "history", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: TaskB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::task::Task {
            id: need(b.id, "id")?,
            context_id: b.context_id.flatten(),
            status: need(b.status, "status")?.0,
            artifacts: vec_of(b.artifacts),
            history: vec_of(b.history),
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct StatusUpdateB10 {
    task_id: Option<String>,
    context_id: Option<NullAsDefault<String>>,
    status: Option<Fast<v10::task::TaskStatus>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v10::event::TaskStatusUpdateEvent {
    const WHAT: &'static str = "TaskStatusUpdateEvent";
    type Builder = StatusUpdateB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut StatusUpdateB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "taskId" | "task_id" => put(&mut b.task_id, "taskId", map)?,
            "contextId" | "context_id" => put(&mut b.context_id, "contextId", map)?,
            "status" => put(&mut b.status, "status", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: StatusUpdateB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::event::TaskStatusUpdateEvent {
            task_id: need(b.task_id, "taskId")?,
            context_id: b.context_id.map(|c| c.0).unwrap_or_default(),
            status: need(b.status, "status")?.0,
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct ArtifactUpdateB10 {
    task_id: Option<String>,
    context_id: Option<NullAsDefault<String>>,
    artifact: Option<Fast<v10::artifact::Artifact>>,
    append: Option<Option<bool>>,
    last_chunk: Option<Option<bool>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v10::event::TaskArtifactUpdateEvent {
    const WHAT: &'static str = "TaskArtifactUpdateEvent";
    type Builder = ArtifactUpdateB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut ArtifactUpdateB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "taskId" | "task_id" => put(&mut b.task_id, "taskId", map)?,
            "contextId" | "context_id" => put(&mut b.context_id, "contextId", map)?,
            "artifact" => put(&mut b.artifact, "artifact", map)?,
            "append" => put(&mut b.append, "append", map)?,
            "lastChunk" | "last_chunk" => put(&mut b.last_chunk, "lastChunk", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: ArtifactUpdateB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::event::TaskArtifactUpdateEvent {
            task_id: need(b.task_id, "taskId")?,
            context_id: b.context_id.map(|c| c.0).unwrap_or_default(),
            artifact: need(b.artifact, "artifact")?.0,
            append: b.append.flatten(),
            last_chunk: b.last_chunk.flatten(),
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

#[derive(Default)]
pub(crate) struct SendRequestB10 {
    tenant: Option<Option<String>>,
    message: Option<Fast<v10::message::Message>>,
    configuration: Option<Option<v10::params::SendMessageConfiguration>>,
    metadata: Option<Option<Metadata>>,
}

impl Fields for v10::params::SendMessageRequest {
    const WHAT: &'static str = "SendMessageRequest";
    type Builder = SendRequestB10;
    fn field<'de, A: MapAccess<'de>>(
        b: &mut SendRequestB10,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "tenant" => put(&mut b.tenant, "tenant", map)?,
            "message" => put(&mut b.message, "message", map)?,
            "configuration" => put(&mut b.configuration, "configuration", map)?,
            "metadata" => put(&mut b.metadata, "metadata", map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
    fn build<E: de::Error>(b: SendRequestB10, extra: Extras) -> Result<Self, E> {
        Ok(v10::params::SendMessageRequest {
            tenant: b.tenant.flatten(),
            message: need(b.message, "message")?.0,
            configuration: b.configuration.flatten(),
            metadata: b.metadata.flatten(),
            extra,
        })
    }
}

/// A v1.0 oneof wrapper (`{"task": …}`, …): exactly one member.
fn one_member<'de, A, T>(
    mut map: A,
    pick: impl FnOnce(&str, &mut A) -> Result<Option<T>, A::Error>,
) -> Result<T, A::Error>
where
    A: MapAccess<'de>,
{
    let Some(key) = map.next_key::<Key<'de>>()? else {
        return Err(de::Error::custom("empty oneof object"));
    };
    let out =
        pick(key.as_str(), &mut map)?.ok_or_else(|| de::Error::custom("unknown oneof member"))?;
    if map.next_key::<Key<'de>>()?.is_some() {
        return Err(de::Error::custom("oneof object with more than one member"));
    }
    Ok(out)
}

impl<'de> Deserialize<'de> for Fast<v10::params::SendMessageResponse> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fast<v10::params::SendMessageResponse>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a SendMessageResponse object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                use v10::params::SendMessageResponse as R;
                one_member(map, |k, map| {
                    Ok(match k {
                        "task" => Some(R::Task(map.next_value::<Fast<_>>()?.0)),
                        "message" => Some(R::Message(map.next_value::<Fast<_>>()?.0)),
                        _ => None,
                    })
                })
                .map(Fast)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for Fast<v10::event::StreamResponse> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fast<v10::event::StreamResponse>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a StreamResponse object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                use v10::event::StreamResponse as R;
                one_member(map, |k, map| {
                    Ok(match k {
                        "task" => Some(R::Task(map.next_value::<Fast<_>>()?.0)),
                        "message" => Some(R::Message(map.next_value::<Fast<_>>()?.0)),
                        "statusUpdate" | "status_update" => {
                            Some(R::StatusUpdate(map.next_value::<Fast<_>>()?.0))
                        }
                        "artifactUpdate" | "artifact_update" => {
                            Some(R::ArtifactUpdate(map.next_value::<Fast<_>>()?.0))
                        }
                        _ => None,
                    })
                })
                .map(Fast)
            }
        }
        d.deserialize_map(V)
    }
}
