//! v1.0 `Artifact` (ProtoJSON).

use serde::{Deserialize, Serialize};

use crate::json::{Extras, Metadata};
use crate::v10::part::{null_as_default, Part};

/// An output of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Artifact id.
    #[serde(alias = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Content parts (absent = empty).
    #[serde(default, deserialize_with = "null_as_default")]
    pub parts: Vec<Part>,
    /// Artifact metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Extension URIs in use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Vec<String>>,
    /// Unknown members.
    #[serde(flatten)]
    pub extra: Extras,
}
