//! v0.3 `Part` (`TextPart | FilePart | DataPart`, tagged by `kind`) and the
//! `kind` discriminator machinery shared by the other v0.3 payload types.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};

/// The constant value of one v0.3 `kind` discriminator.
pub trait KindName {
    /// The `kind` string, e.g. `"message"`.
    const NAME: &'static str;
}

/// A v0.3 `kind` member whose value is fixed to `K::NAME`: always rendered;
/// on input it may be missing (inferred), but any other value is an error.
pub struct Kind<K>(PhantomData<K>);

impl<K> Kind<K> {
    /// The marker (there is only one value).
    pub const fn new() -> Self {
        Kind(PhantomData)
    }
}

impl<K> Default for Kind<K> {
    fn default() -> Self {
        Kind::new()
    }
}

impl<K> Clone for Kind<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for Kind<K> {}

impl<K> PartialEq for Kind<K> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<K> Eq for Kind<K> {}

impl<K: KindName> fmt::Debug for Kind<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kind({:?})", K::NAME)
    }
}

impl<K: KindName> Serialize for Kind<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(K::NAME)
    }
}

impl<'de, K: KindName> Deserialize<'de> for Kind<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let got = String::deserialize(d)?;
        if got == K::NAME {
            Ok(Kind::new())
        } else {
            Err(de::Error::custom(format!(
                "wrong kind {got:?}, expected {:?}",
                K::NAME
            )))
        }
    }
}

macro_rules! kind_tag {
    ($(#[$doc:meta])* $tag:ident, $alias:ident, $name:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $tag;
        impl KindName for $tag {
            const NAME: &'static str = $name;
        }
        #[doc = concat!("The `kind: \"", $name, "\"` member.")]
        pub type $alias = Kind<$tag>;
    };
}

kind_tag!(
    /// Tag of `kind: "text"`.
    TextTag, TextKind, "text"
);
kind_tag!(
    /// Tag of `kind: "file"`.
    FileTag, FileKind, "file"
);
kind_tag!(
    /// Tag of `kind: "data"`.
    DataTag, DataKind, "data"
);
kind_tag!(
    /// Tag of `kind: "message"`.
    MessageTag, MessageKind, "message"
);
kind_tag!(
    /// Tag of `kind: "task"`.
    TaskTag, TaskKind, "task"
);
kind_tag!(
    /// Tag of `kind: "status-update"`.
    StatusUpdateTag, StatusUpdateKind, "status-update"
);
kind_tag!(
    /// Tag of `kind: "artifact-update"`.
    ArtifactUpdateTag, ArtifactUpdateKind, "artifact-update"
);

/// Reads a JSON object for a `kind`-dispatched union whose variants are
/// `kinds` (`kind` string, variant). The variant comes from `kind` when
/// present (it must name one of `kinds`), otherwise from `infer`.
pub(crate) fn object_and_kind<'de, D: Deserializer<'de>, K: Copy>(
    d: D,
    what: &str,
    kinds: &[(&'static str, K)],
    infer: fn(&Map<String, Value>) -> Option<K>,
) -> Result<(Map<String, Value>, K), D::Error> {
    let map = match Value::deserialize(d)? {
        Value::Object(m) => m,
        other => {
            return Err(de::Error::custom(format!(
                "{what} must be a JSON object, found {}",
                json_type(&other)
            )))
        }
    };
    let names = || kinds.iter().map(|(n, _)| *n).collect::<Vec<_>>();
    let kind = match map.get("kind") {
        Some(Value::String(k)) => match kinds.iter().find(|(n, _)| *n == k.as_str()) {
            Some((_, v)) => *v,
            None => {
                return Err(de::Error::custom(format!(
                    "wrong kind {k:?} for a {what}, expected one of {:?}",
                    names()
                )))
            }
        },
        Some(other) => {
            return Err(de::Error::custom(format!(
                "{what} kind must be a string, found {}",
                json_type(other)
            )))
        }
        None => match infer(&map) {
            Some(k) => k,
            None => {
                return Err(de::Error::custom(format!(
                    "{what} has no kind and none of its members identify one of {:?}",
                    names()
                )))
            }
        },
    };
    Ok((map, kind))
}

/// Deserializes one union variant (named `label` in errors) from an
/// already-read object.
pub(crate) fn variant<T: serde::de::DeserializeOwned, E: de::Error>(
    map: Map<String, Value>,
    label: &str,
) -> Result<T, E> {
    serde_json::from_value(Value::Object(map)).map_err(|e| E::custom(format!("{label}: {e}")))
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A v0.3 message or artifact part.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Part {
    /// `kind: "text"`.
    Text(TextPart),
    /// `kind: "file"`.
    File(FilePart),
    /// `kind: "data"`.
    Data(DataPart),
}

/// Which [`Part`] variant an object is.
#[derive(Clone, Copy)]
enum PartKind {
    Text,
    File,
    Data,
}

const PART_KINDS: &[(&str, PartKind)] = &[
    ("text", PartKind::Text),
    ("file", PartKind::File),
    ("data", PartKind::Data),
];

impl<'de> Deserialize<'de> for Part {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (map, kind) = object_and_kind(d, "part", PART_KINDS, |m| {
            PART_KINDS
                .iter()
                .find(|(n, _)| m.contains_key(*n))
                .map(|(_, k)| *k)
        })?;
        match kind {
            PartKind::Text => variant(map, "text part").map(Part::Text),
            PartKind::File => variant(map, "file part").map(Part::File),
            PartKind::Data => variant(map, "data part").map(Part::Data),
        }
    }
}

/// `TextPart`: `{kind:"text", text, metadata?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextPart {
    /// Always `"text"`.
    #[serde(default)]
    pub kind: TextKind,
    /// The text.
    pub text: String,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `FilePart`: `{kind:"file", file, metadata?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FilePart {
    /// Always `"file"`.
    #[serde(default)]
    pub kind: FileKind,
    /// The file, by bytes or by URI.
    pub file: FileContent,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `FileWithBytes | FileWithUri`. Exactly one of `bytes` and `uri` must be
/// set; the translators reject anything else (parsing does not).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileContent {
    /// Base64 content (`FileWithBytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<String>,
    /// Location of the content (`FileWithUri`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uri: Option<String>,
    /// File name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}

/// `DataPart`: `{kind:"data", data: object, metadata?}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DataPart {
    /// Always `"data"`.
    #[serde(default)]
    pub kind: DataKind,
    /// The structured content (a JSON object in v0.3).
    pub data: Map<String, Value>,
    /// Part metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
