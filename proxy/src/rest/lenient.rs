//! ProtoJSON answers of a v0.3 agent read as an answer reader should: a
//! member its message does not have is skipped, never a failure.
//!
//! The v0.3 REST bodies are read with the pbjson impls of `proto::v03`,
//! which refuse an unknown member (`unknown field taskId, expected one of
//! name, ...`). That strictness is wanted for the requests of clients (the
//! push layer decides on what it reads: `json_strict.rs`), not for what an
//! agent answers: a v0.3 agent may add members of its own, or of a newer
//! proto, and a2a-sdk's own readers ignore them (`ParseDict(...,
//! ignore_unknown_fields=True)`, `parse_lenient`). [`from_slice`] runs the
//! same pbjson impls over a deserializer that keeps, of each message, only
//! the members its `deserialize_struct` names (pbjson passes every field's
//! JSON and proto name there) and reports the others, so nothing else of
//! pbjson's reading changes: types, enums, duplicates and maps are read
//! as strictly as before.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde_json::{Map, Number, Value};

/// At most this many skipped members are named (the rest are counted).
const NAMED: usize = 8;

/// The message `T` read from `body`, and the members skipped on the way
/// (their paths, `configs[0].taskId`, at most [`NAMED`] of them).
pub fn from_slice<T: DeserializeOwned>(body: &[u8]) -> Result<(T, Vec<String>), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    from_value(v)
}

/// [`from_slice`] of a JSON value.
pub fn from_value<T: DeserializeOwned>(v: Value) -> Result<(T, Vec<String>), String> {
    let skipped = RefCell::new(Vec::new());
    let t = T::deserialize(Lenient {
        v,
        path: String::new(),
        skipped: &skipped,
    })
    .map_err(|e| e.0)?;
    Ok((t, skipped.into_inner()))
}

#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

struct Lenient<'a> {
    v: Value,
    /// Where `v` is, for the names of skipped members.
    path: String,
    skipped: &'a RefCell<Vec<String>>,
}

impl<'a> Lenient<'a> {
    fn at(&self, v: Value, step: fmt::Arguments<'_>) -> Lenient<'a> {
        Lenient {
            v,
            path: format!("{}{step}", self.path),
            skipped: self.skipped,
        }
    }

    fn skip(&self, key: &str) {
        let mut s = self.skipped.borrow_mut();
        match s.len() {
            n if n < NAMED => s.push(self.member_path(key)),
            NAMED => s.push("...".into()),
            _ => {}
        }
    }

    fn member_path(&self, key: &str) -> String {
        let key: String = key.chars().take(64).collect();
        if self.path.is_empty() {
            key
        } else {
            format!("{}.{key}", self.path)
        }
    }
}

fn number<'de, V: Visitor<'de>>(n: Number, visitor: V) -> Result<V::Value, Error> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

impl<'de> de::Deserializer<'de> for Lenient<'_> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.v {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(ref n) => number(n.clone(), visitor),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(ref a) => {
                let items: Vec<Lenient<'_>> = a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| self.at(x.clone(), format_args!("[{i}]")))
                    .collect();
                visitor.visit_seq(Seq(items.into_iter()))
            }
            Value::Object(ref o) => {
                let members = members(&self, o, None);
                visitor.visit_map(Members {
                    members: members.into_iter(),
                    next: None,
                })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match self.v {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    /// A message: only the members pbjson named in `fields`; the others
    /// are skipped and reported.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match &self.v {
            Value::Object(o) => {
                let members = members(&self, o, Some(fields));
                visitor.visit_map(Members {
                    members: members.into_iter(),
                    next: None,
                })
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        match self.v {
            Value::String(s) => visitor.visit_enum(s.into_deserializer()),
            _ => Err(de::Error::custom("expected an enum value as a string")),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
        ignored_any
    }
}

/// The members of an object as (key, value deserializer); with `fields`,
/// only those it names (the others reported as skipped).
fn members<'a>(
    at: &Lenient<'a>,
    o: &Map<String, Value>,
    fields: Option<&'static [&'static str]>,
) -> Vec<(String, Lenient<'a>)> {
    o.iter()
        .filter(|(k, _)| match fields {
            Some(f) if !f.contains(&k.as_str()) => {
                at.skip(k);
                false
            }
            _ => true,
        })
        .map(|(k, v)| {
            let d = Lenient {
                v: v.clone(),
                path: at.member_path(k),
                skipped: at.skipped,
            };
            (k.clone(), d)
        })
        .collect()
}

struct Seq<'a>(std::vec::IntoIter<Lenient<'a>>);

impl<'de> de::SeqAccess<'de> for Seq<'_> {
    type Error = Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.0.next().map(|d| seed.deserialize(d)).transpose()
    }
}

struct Members<'a> {
    members: std::vec::IntoIter<(String, Lenient<'a>)>,
    next: Option<Lenient<'a>>,
}

impl<'de> de::MapAccess<'de> for Members<'_> {
    type Error = Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((k, v)) = self.members.next() else {
            return Ok(None);
        };
        self.next = Some(v);
        let key: de::value::StringDeserializer<Error> = k.into_deserializer();
        seed.deserialize(key).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        match self.next.take() {
            Some(v) => seed.deserialize(v),
            None => Err(de::Error::custom("a value without its member")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::v03 as pb;

    #[test]
    fn unknown_members_are_skipped_and_named_known_ones_read_as_pbjson_reads_them() {
        let body = br#"{"name":"tasks/t1/pushNotificationConfigs/c1","taskId":"t1",
            "pushNotificationConfig":{"url":"https://h.example/x","extra":{"a":1},
            "authentication":{"schemes":["Bearer"],"credentials":"c"}}}"#;
        let (c, skipped): (pb::TaskPushNotificationConfig, _) = from_slice(body).unwrap();
        assert_eq!(c.name, "tasks/t1/pushNotificationConfigs/c1");
        let p = c.push_notification_config.unwrap();
        assert_eq!(p.url, "https://h.example/x");
        assert_eq!(
            p.authentication.unwrap().schemes,
            vec!["Bearer".to_string()]
        );
        assert_eq!(skipped, vec!["taskId", "pushNotificationConfig.extra"]);
        // The strict reader refuses the same body.
        assert!(serde_json::from_slice::<pb::TaskPushNotificationConfig>(body).is_err());
    }

    #[test]
    fn a_strictly_valid_body_reads_the_same_both_ways() {
        let body = br#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING",
            "timestamp":"2025-01-01T00:00:00Z"},"metadata":{"k":[1,"x",null,true]},
            "artifacts":[{"artifactId":"a","parts":[{"text":"hi"},{"data":{"data":{"n":2.5}}},
            {"file":{"fileWithBytes":"aGk=","mimeType":"text/plain"}}]}],
            "history":[{"messageId":"m","role":"ROLE_AGENT","content":[{"text":"x"}]}]}"#;
        let strict: pb::Task = serde_json::from_slice(body).unwrap();
        let (lenient, skipped): (pb::Task, _) = from_slice(body).unwrap();
        assert_eq!(strict, lenient);
        assert!(skipped.is_empty());
    }

    #[test]
    fn wrong_types_and_unknown_enum_values_still_fail() {
        for body in [
            &br#"{"id":"t","status":{"state":"TASK_STATE_NOT_A_STATE"}}"#[..],
            br#"{"id":5}"#,
            br#"{"id":"t","history":{"not":"a list"}}"#,
            b"[1,",
        ] {
            assert!(
                from_slice::<pb::Task>(body).is_err(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn skipped_names_are_bounded() {
        let mut o = serde_json::Map::new();
        o.insert("id".into(), Value::from("t"));
        for i in 0..100 {
            o.insert(format!("x{i:03}{}", "y".repeat(200)), Value::from(i));
        }
        let (_, skipped): (pb::Task, _) = from_value(Value::Object(o)).unwrap();
        assert_eq!(skipped.len(), NAMED + 1);
        assert!(skipped.iter().all(|s| s.len() <= 64));
    }
}
