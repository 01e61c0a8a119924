//! v1.0 `Part` (ProtoJSON): one of `text | raw | url | data`, plus
//! `metadata`, `filename`, `mediaType` on every part.

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine as _;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::json::{Extras, Metadata};

/// The `content` oneof of a v1.0 part.
#[derive(Debug, Clone, PartialEq)]
pub enum PartContent {
    /// `text`.
    Text(String),
    /// `raw`: bytes (base64 on the wire).
    Raw(Vec<u8>),
    /// `url`.
    Url(String),
    /// `data`: any JSON value (`google.protobuf.Value`), `null` included.
    Data(Value),
}

/// A v1.0 message or artifact part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PartWire", into = "PartWire")]
pub struct Part {
    /// Which content member is set, and its value.
    pub content: PartContent,
    /// Part metadata.
    pub metadata: Option<Metadata>,
    /// File name (allowed on every part).
    pub filename: Option<String>,
    /// Media type (allowed on every part).
    pub media_type: Option<String>,
    /// Unknown members.
    pub extra: Extras,
}

impl Part {
    /// A bare part with `content` and nothing else.
    pub fn new(content: PartContent) -> Self {
        Part {
            content,
            metadata: None,
            filename: None,
            media_type: None,
            extra: Extras::new(),
        }
    }
}

/// The wire layout of [`Part`], before the oneof is checked.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PartWire {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) raw: Option<Base64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) url: Option<String>,
    #[serde(
        default,
        deserialize_with = "present_value",
        skip_serializing_if = "Option::is_none"
    )]
    pub(crate) data: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<Metadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) filename: Option<String>,
    #[serde(default, alias = "media_type", skip_serializing_if = "Option::is_none")]
    pub(crate) media_type: Option<String>,
    #[serde(flatten)]
    pub(crate) extra: Extras,
}

/// ProtoJSON reads `null` as the field's default value.
pub(crate) fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A present `data` member is data even when it is `null` (`NullValue`).
fn present_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl TryFrom<PartWire> for Part {
    type Error = String;

    fn try_from(w: PartWire) -> Result<Self, String> {
        let mut set = Vec::new();
        if let Some(t) = w.text {
            set.push(PartContent::Text(t));
        }
        if let Some(r) = w.raw {
            set.push(PartContent::Raw(r.0));
        }
        if let Some(u) = w.url {
            set.push(PartContent::Url(u));
        }
        if let Some(v) = w.data {
            set.push(PartContent::Data(v));
        }
        if set.len() > 1 {
            return Err("part sets more than one of text, raw, url, data".into());
        }
        let content = set
            .pop()
            .ok_or_else(|| String::from("part has none of text, raw, url, data"))?;
        Ok(Part {
            content,
            metadata: w.metadata,
            filename: w.filename,
            media_type: w.media_type,
            extra: w.extra,
        })
    }
}

impl From<Part> for PartWire {
    fn from(p: Part) -> Self {
        let mut w = PartWire {
            text: None,
            raw: None,
            url: None,
            data: None,
            metadata: p.metadata,
            filename: p.filename,
            media_type: p.media_type,
            extra: p.extra,
        };
        match p.content {
            PartContent::Text(t) => w.text = Some(t),
            PartContent::Raw(r) => w.raw = Some(Base64(r)),
            PartContent::Url(u) => w.url = Some(u),
            PartContent::Data(v) => w.data = Some(v),
        }
        w
    }
}

const LENIENT: GeneralPurposeConfig =
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
const STANDARD_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::STANDARD, LENIENT);
const URL_SAFE_LENIENT: GeneralPurpose = GeneralPurpose::new(&alphabet::URL_SAFE, LENIENT);

/// Decodes base64 as ProtoJSON parsers do: standard or URL-safe alphabet,
/// with or without padding.
pub fn decode_base64(s: &str) -> Result<Vec<u8>, String> {
    STANDARD_LENIENT
        .decode(s)
        .or_else(|_| URL_SAFE_LENIENT.decode(s))
        .map_err(|e| format!("invalid base64: {e}"))
}

/// Encodes bytes as ProtoJSON does: standard alphabet with padding.
pub fn encode_base64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// Bytes that travel as a base64 string.
pub(crate) struct Base64(pub(crate) Vec<u8>);

impl Serialize for Base64 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode_base64(&self.0))
    }
}

impl<'de> Deserialize<'de> for Base64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        decode_base64(&s)
            .map(Base64)
            .map_err(serde::de::Error::custom)
    }
}
