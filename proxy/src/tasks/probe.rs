//! Reading what a translated v1.0 answer says about tasks (id, context,
//! status) without building the whole answer: most recorded answers are
//! never listed, and an answer may be large.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

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
#[derive(Default)]
pub(super) struct TaskProbe {
    pub(super) id: Option<Value>,
    pub(super) context: Option<Value>,
    pub(super) status: Option<Value>,
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
                let mut p = TaskProbe::default();
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match k.as_ref() {
                        "id" => once(&mut p.id, &mut map)?,
                        "contextId" => once(&mut p.context, &mut map)?,
                        "status" => once(&mut p.status, &mut map)?,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Probed(Some(p)))
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
    /// A `statusUpdate` member (any value).
    Status(Value),
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
                let (mut task, mut status) = (None::<Probed>, None::<Value>);
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match k.as_ref() {
                        "task" => once(&mut task, &mut map)?,
                        "statusUpdate" => once(&mut status, &mut map)?,
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
                while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if k == "result" {
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
