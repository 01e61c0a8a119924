//! JSON helpers shared by the wire types of both versions.

use serde_json::{Map, Value};

/// Unknown members of a JSON object, kept on parse and written back on render
/// (`#[serde(flatten)]`). Whether they cross versions is decided per entity in
/// `docs/mapping.md`; by default they do, unchanged.
pub type Extras = Map<String, Value>;

/// A `metadata` object (`google.protobuf.Struct` in ProtoJSON).
pub type Metadata = Map<String, Value>;

/// Parses `bytes` into `T`, mapping syntax errors to `TranslateError::Json`.
pub fn parse<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, crate::TranslateError> {
    Ok(serde_json::from_slice(bytes)?)
}

/// Renders `value` as compact JSON.
pub fn render<T: serde::Serialize>(value: &T) -> Vec<u8> {
    // Serialising our own wire types (string keys, no non-finite floats can be
    // produced from parsed JSON) cannot fail.
    serde_json::to_vec(value).unwrap_or_default()
}
