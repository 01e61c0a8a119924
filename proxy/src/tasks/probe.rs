//! Reading what a translated v1.0 answer says about tasks (id, context,
//! status) without building the whole answer: most recorded answers are
//! never listed, and an answer may be large.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// Where an answer holds its task.
#[derive(Clone, Copy)]
pub(super) enum At {
    /// The bytes are a JSON-RPC envelope: `result` (`task`: `result.task`).
    Envelope { task: bool },
    /// The bytes are a bare result (REST): itself (`task`: its `task`).
    Bare { task: bool },
}

/// The members of a task the index needs, read without building the task.
/// Only a JSON object is a task; a repeated member fails (the caller then
/// reads the whole value, where the last one wins).
/// `id` and `context` are kept when they are strings; the status's message
/// is skipped over.
pub(super) struct TaskProbe {
    pub(super) id: Option<String>,
    pub(super) context: Option<String>,
    /// `None`: the task has no `status`.
    pub(super) status: Option<StatusFields>,
}

/// A member name, read as its place in the names looked for (`None`:
/// another name) without copying it.
#[derive(Clone, Copy)]
struct Names(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for Names {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for Names {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E>(self, s: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|n| *n == s))
    }
}

/// What a task-carrying member held: an object (`Some`), or anything else,
/// which is no task.
struct Probed(Option<TaskProbe>);

fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::custom("repeated member"));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

impl<'de> Deserialize<'de> for Probed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Probed;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Probed, A::Error> {
                let (mut id, mut context) = (None::<MaybeStr>, None::<MaybeStr>);
                let mut status = None::<StatusFields>;
                while let Some(k) = map.next_key_seed(Names(&["id", "contextId", "status"]))? {
                    match k {
                        Some(0) => once(&mut id, &mut map)?,
                        Some(1) => once(&mut context, &mut map)?,
                        Some(2) => once(&mut status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Probed(Some(TaskProbe {
                    id: id.and_then(|s| s.0),
                    context: context.and_then(|s| s.0),
                    status,
                })))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Probed, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Probed(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Probed, E> {
                Ok(Probed(None))
            }
            fn visit_unit<E>(self) -> Result<Probed, E> {
                Ok(Probed(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// What one answer says about tasks.
pub(super) enum Seen {
    Nothing,
    Task(TaskProbe),
    /// A `statusUpdate` member: an object with a string `taskId` and a
    /// `status` (any value).
    Status(StatusProbe),
}

/// The members of a `statusUpdate` the index needs: its `taskId` and its
/// status's `state` and `timestamp`, read without building the update (its
/// message is skipped over). A non-object update, a non-string `taskId`
/// or a repeated member fails the probe (the caller then reads the whole
/// value, where the last one wins).
pub(super) struct StatusProbe {
    pub(super) task_id: Option<String>,
    /// `None`: the update has no `status`.
    pub(super) status: Option<StatusFields>,
}

/// A status's `state` and `timestamp` when they are strings (a status that
/// is no object has neither).
#[derive(Default)]
pub(super) struct StatusFields {
    pub(super) state: Option<String>,
    pub(super) timestamp: Option<String>,
}

/// Any JSON value, kept only when it is a string.
struct MaybeStr(Option<String>);

impl<'de> Deserialize<'de> for MaybeStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MaybeStr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, s: &str) -> Result<MaybeStr, E> {
                Ok(MaybeStr(Some(s.to_owned())))
            }
            fn visit_string<E>(self, s: String) -> Result<MaybeStr, E> {
                Ok(MaybeStr(Some(s)))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeStr, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeStr(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeStr, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeStr(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
            fn visit_unit<E>(self) -> Result<MaybeStr, E> {
                Ok(MaybeStr(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StatusFields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StatusFields;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StatusFields, A::Error> {
                let (mut state, mut timestamp) = (None::<MaybeStr>, None::<MaybeStr>);
                while let Some(k) = map.next_key_seed(Names(&["state", "timestamp"]))? {
                    match k {
                        Some(0) => once(&mut state, &mut map)?,
                        Some(1) => once(&mut timestamp, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(StatusFields {
                    state: state.and_then(|s| s.0),
                    timestamp: timestamp.and_then(|s| s.0),
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<StatusFields, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(StatusFields::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
            fn visit_unit<E>(self) -> Result<StatusFields, E> {
                Ok(StatusFields::default())
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StatusProbe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = StatusProbe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a status update object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StatusProbe, A::Error> {
                let (mut task_id, mut status) = (None::<String>, None::<StatusFields>);
                while let Some(k) = map.next_key_seed(Names(&["taskId", "status"]))? {
                    match k {
                        Some(0) => once(&mut task_id, &mut map)?,
                        Some(1) => once(&mut status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(StatusProbe { task_id, status })
            }
        }
        d.deserialize_map(V)
    }
}

/// A result wrapping its task (`{"task": …}` or `{"statusUpdate": …}`):
/// a `task` member wins over `statusUpdate`, as in
/// `TaskIndex::record_value`.
struct WrappedProbe(Seen);

impl<'de> Deserialize<'de> for WrappedProbe {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WrappedProbe;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<WrappedProbe, A::Error> {
                let (mut task, mut status) = (None::<Probed>, None::<StatusProbe>);
                while let Some(k) = map.next_key_seed(Names(&["task", "statusUpdate"]))? {
                    match k {
                        Some(0) => once(&mut task, &mut map)?,
                        Some(1) => once(&mut status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(WrappedProbe(match (task, status) {
                    (Some(Probed(Some(t))), _) => Seen::Task(t),
                    (Some(Probed(None)), _) => Seen::Nothing,
                    (None, Some(s)) => Seen::Status(s),
                    (None, None) => Seen::Nothing,
                }))
            }
        }
        d.deserialize_map(V)
    }
}

/// An answer's result, probed as wrapping its task or as the task itself.
struct ResultSeed {
    wrapped: bool,
}

impl<'de> DeserializeSeed<'de> for ResultSeed {
    type Value = Seen;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        if self.wrapped {
            return WrappedProbe::deserialize(d).map(|w| w.0);
        }
        Ok(match Probed::deserialize(d)?.0 {
            Some(t) => Seen::Task(t),
            None => Seen::Nothing,
        })
    }
}

/// A JSON-RPC answer envelope, its `result` probed.
struct EnvelopeSeed {
    wrapped: bool,
}

impl<'de> DeserializeSeed<'de> for EnvelopeSeed {
    type Value = Seen;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Seen, D::Error> {
        struct V(bool);
        impl<'de> Visitor<'de> for V {
            type Value = Seen;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC envelope")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Seen, A::Error> {
                let mut result = None;
                while let Some(k) = map.next_key_seed(Names(&["result"]))? {
                    if k == Some(0) {
                        if result.is_some() {
                            return Err(de::Error::custom("repeated member"));
                        }
                        result = Some(map.next_value_seed(ResultSeed { wrapped: self.0 })?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(result.unwrap_or(Seen::Nothing))
            }
        }
        d.deserialize_map(V(self.wrapped))
    }
}

/// What the answer `bytes` says about tasks; `None` when the probe does not
/// take it (then the whole value is read).
pub(super) fn probe(bytes: &[u8], at: At) -> Option<Seen> {
    let mut d = serde_json::Deserializer::from_slice(bytes);
    let seen = match at {
        At::Envelope { task } => EnvelopeSeed { wrapped: task }.deserialize(&mut d),
        At::Bare { task } => ResultSeed { wrapped: task }.deserialize(&mut d),
    }
    .ok()?;
    d.end().ok()?;
    Some(seen)
}
