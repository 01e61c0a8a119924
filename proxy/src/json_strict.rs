//! Strict readings of a request's JSON: what the proxy decides a request
//! means must be what every agent's parser reads in it.
//!
//! JSON parsers part ways on what the JSON text leaves open: a leading
//! byte order mark (Python's `json.loads` of bytes skips it), member names
//! given twice (most parsers keep the last, some the first, some refuse),
//! member names that differ only in case or underscores (Go's
//! `encoding/json` matches names case-insensitively, with Unicode folds such
//! as `ſ` for `s`; pydantic models accept their field names beside their
//! camelCase aliases; ProtoJSON parsers accept proto field names), `NaN`,
//! numbers beyond an f64, lone surrogates. A request whose meaning the proxy
//! decides on (its JSON-RPC method, the push config it intercepts) is
//! refused when it holds any of these, rather than passed on for the agent
//! to read another way.
//!
//! Pure: no IO; imports none of the proxy's folders.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// Why a body was refused: JSON it is not (JSON-RPC -32700), or JSON that
/// is not one clear request (-32600).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Parse(String),
    Invalid(String),
}

impl Refusal {
    pub fn message(&self) -> &str {
        match self {
            Refusal::Parse(m) | Refusal::Invalid(m) => m,
        }
    }
}

impl From<Refusal> for crate::error::Failure {
    fn from(r: Refusal) -> Self {
        use translate::code::ErrorCode;
        let (code, message) = match r {
            Refusal::Parse(m) => (ErrorCode::JsonParse, m),
            Refusal::Invalid(m) => (ErrorCode::InvalidRequest, m),
        };
        crate::error::Failure::Translate {
            code: code.code(),
            message,
        }
    }
}

/// A member name as lenient readers match it: ASCII case folded, the
/// Unicode folds Go's `encoding/json` applies (`ſ` is `s`, the Kelvin sign
/// is `k`), `_` and `-` dropped (snake_case field names, kebab aliases).
pub fn fold(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .map(|c| match c {
            '\u{017f}' => 's',
            '\u{212a}' => 'k',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

const BOM: &[u8] = b"\xef\xbb\xbf";

fn no_bom(body: &[u8]) -> Result<(), Refusal> {
    if body.starts_with(BOM) {
        return Err(Refusal::Parse(
            "the body starts with a byte order mark: JSON text must not".into(),
        ));
    }
    Ok(())
}

/// The members of a JSON-RPC request the router needs.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Envelope {
    pub method: Option<String>,
    pub id: Option<Value>,
}

/// The JSON-RPC request members, as JSON-RPC 2.0 spells them.
const MEMBERS: [&str; 4] = ["jsonrpc", "id", "method", "params"];

/// Reads a JSON-RPC request's envelope, strictly: one JSON object (no
/// batch), no member given twice, no envelope member spelled in another
/// case or with underscores, `method` a string, the whole body valid JSON.
pub fn envelope(body: &[u8]) -> Result<Envelope, Refusal> {
    no_bom(body)?;
    let refusal = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let read = EnvelopeSeed { refusal: &refusal }
        .deserialize(&mut de)
        .and_then(|env| de.end().map(|()| env));
    match (read, refusal.into_inner()) {
        (_, Some(r)) => Err(r),
        (Ok(env), None) => Ok(env),
        (Err(e), None) => Err(Refusal::Parse(format!("invalid JSON: {e}"))),
    }
}

struct EnvelopeSeed<'a> {
    refusal: &'a RefCell<Option<Refusal>>,
}

impl EnvelopeSeed<'_> {
    fn refuse<E: de::Error>(&self, r: Refusal) -> E {
        let e = E::custom(r.message());
        *self.refusal.borrow_mut() = Some(r);
        e
    }
}

impl<'de> DeserializeSeed<'de> for EnvelopeSeed<'_> {
    type Value = Envelope;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Envelope, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for EnvelopeSeed<'_> {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC request object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Envelope, A::Error> {
        Err(self.refuse(Refusal::Invalid(
            "JSON-RPC batches are not served: send each request on its own".into(),
        )))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut env = Envelope::default();
        let mut seen: Vec<String> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if seen.contains(&key) {
                return Err(self.refuse(Refusal::Invalid(format!(
                    "the member `{}` is given twice",
                    shown(&key)
                ))));
            }
            let folded = fold(&key);
            let member = MEMBERS.iter().find(|m| **m == folded);
            match member {
                Some(m) if **m != key => {
                    return Err(self.refuse(Refusal::Invalid(format!(
                        "the member `{}`: JSON-RPC member names are `{m}`, in lower case",
                        shown(&key)
                    ))))
                }
                _ => {}
            }
            match key.as_str() {
                "method" => match map.next_value::<Value>()? {
                    Value::String(s) => env.method = Some(s),
                    _ => {
                        return Err(
                            self.refuse(Refusal::Invalid("`method` must be a string".into()))
                        )
                    }
                },
                "id" => env.id = Some(map.next_value::<Value>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            seen.push(key);
        }
        Ok(env)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
    fn visit_unit<E: de::Error>(self) -> Result<Envelope, E> {
        Err(self.not_an_object())
    }
}

impl EnvelopeSeed<'_> {
    fn not_an_object<E: de::Error>(&self) -> E {
        self.refuse(Refusal::Invalid(
            "a JSON-RPC request is a JSON object".into(),
        ))
    }
}

/// A request body read whole, strictly: valid JSON (no `NaN`, no number
/// beyond an f64, no lone surrogate), no byte order mark, no object with a
/// member given twice, at any depth.
pub fn value(body: &[u8]) -> Result<Value, Refusal> {
    no_bom(body)?;
    let refusal = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_slice(body);
    let read = StrictValue { refusal: &refusal }
        .deserialize(&mut de)
        .and_then(|v| de.end().map(|()| v));
    match (read, refusal.into_inner()) {
        (_, Some(r)) => Err(r),
        (Ok(v), None) => Ok(v),
        (Err(e), None) => Err(Refusal::Parse(format!("invalid JSON: {e}"))),
    }
}

#[derive(Clone, Copy)]
struct StrictValue<'a> {
    refusal: &'a RefCell<Option<Refusal>>,
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Value, E> {
        Number::from_f64(n)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_string()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                let r = Refusal::Invalid(format!("the member `{}` is given twice", shown(&key)));
                let e = de::Error::custom(r.message());
                *self.refusal.borrow_mut() = Some(r);
                return Err(e);
            }
            let v = map.next_value_seed(self)?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// A member name as an error message shows it: control characters escaped,
/// at most 64 characters.
pub fn shown(name: &str) -> String {
    let mut out: String = name
        .chars()
        .take(64)
        .flat_map(char::escape_default)
        .collect();
    if name.chars().count() > 64 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_read_strictly() {
        let env = envelope(br#"{"jsonrpc":"2.0","id":7,"method":"message/send","params":{}}"#);
        assert_eq!(
            env,
            Ok(Envelope {
                method: Some("message/send".into()),
                id: Some(serde_json::json!(7)),
            })
        );
        // Escaped member names are the same names.
        let env = envelope(br#"{"\u006dethod":"SendMessage","id":"a"}"#).unwrap();
        assert_eq!(env.method.as_deref(), Some("SendMessage"));
        let invalid = |b: &[u8]| matches!(envelope(b), Err(Refusal::Invalid(_)));
        let parse = |b: &[u8]| matches!(envelope(b), Err(Refusal::Parse(_)));
        assert!(invalid(
            br#"{"method":"message/send","method":"SendMessage"}"#
        ));
        assert!(invalid(br#"{"id":1,"id":2,"method":"tasks/get"}"#));
        assert!(invalid(
            br#"{"method":"message/send","\u006dethod":"SendMessage"}"#
        ));
        assert!(invalid(
            br#"{"method":"message/send","Method":"SendMessage"}"#
        ));
        assert!(invalid(br#"{"method":"tasks/get","PARAMS":{}}"#));
        assert!(invalid(br#"[{"method":"SendMessage"}]"#));
        assert!(invalid(br#""SendMessage""#));
        assert!(invalid(br#"{"method":7}"#));
        assert!(parse(b"\xef\xbb\xbf{\"method\":\"SendMessage\"}"));
        assert!(parse(br#"{"method":"SendMessage","params":{"a":NaN}}"#));
        assert!(parse(br#"{"method":"SendMessage"} {}"#));
        assert!(parse(b"{\"method\":\"SendMessage\""));
        // Unknown members may repeat in case; they mean nothing here.
        assert!(envelope(br#"{"method":"tasks/get","x":1,"X":2}"#).is_ok());
    }

    #[test]
    fn values_read_strictly() {
        assert!(value(br#"{"a":{"b":[1,{"c":"d"}]}}"#).is_ok());
        let invalid = |b: &[u8]| matches!(value(b), Err(Refusal::Invalid(_)));
        let parse = |b: &[u8]| matches!(value(b), Err(Refusal::Parse(_)));
        assert!(invalid(br#"{"a":{"url":"x","url":"y"}}"#));
        assert!(invalid(br#"{"a":[{"u":1,"\u0075":2}]}"#));
        assert!(parse(br#"{"a":1e400}"#));
        assert!(parse(br#"{"a":-1e400}"#));
        assert!(parse(br#"{"a":"\ud800"}"#));
        assert!(parse(br#"{"a":"\udc00x"}"#));
        assert!(parse(br#"{"a":Infinity}"#));
        assert!(parse(b"\xef\xbb\xbf{}"));
        assert!(parse(b"{\"a\":\"\xff\"}"));
    }

    #[test]
    fn folds_as_lenient_readers_match() {
        assert_eq!(fold("push_notification_config"), "pushnotificationconfig");
        assert_eq!(fold("PushNotificationConfig"), "pushnotificationconfig");
        assert_eq!(
            fold("pu\u{017f}hNotificationConfig"),
            "pushnotificationconfig"
        );
        assert_eq!(fold("\u{212a}ind"), "kind");
        assert_eq!(fold("task-id"), "taskid");
        assert_eq!(shown("a\nb"), "a\\nb");
    }
}
