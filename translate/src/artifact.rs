//! Artifact translation (same members in both versions; parts translated).

use crate::lossy::Lossy;
use crate::part::carry;
use crate::{part, v03, v10, TranslateError};

/// Members of a v0.3 artifact.
const V03_FIELDS: &[&str] = &[
    "artifactId",
    "name",
    "description",
    "parts",
    "metadata",
    "extensions",
];
/// Members of a v1.0 artifact, proto names included.
const V10_FIELDS: &[&str] = &[
    "artifactId",
    "artifact_id",
    "name",
    "description",
    "parts",
    "metadata",
    "extensions",
];

/// Lossy mappings of this module (see `crate::lossy`); parts are covered by
/// `crate::part::LOSSY`.
pub const LOSSY: &[Lossy] = &[];

/// Translates a v0.3 artifact to v1.0.
pub fn to_v10(a: v03::artifact::Artifact) -> Result<v10::artifact::Artifact, TranslateError> {
    Ok(v10::artifact::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: a
            .parts
            .into_iter()
            .map(part::to_v10)
            .collect::<Result<_, _>>()?,
        metadata: a.metadata,
        extensions: a.extensions,
        extra: carry(a.extra, V10_FIELDS),
    })
}

/// Translates a v1.0 artifact to v0.3.
pub fn to_v03(a: v10::artifact::Artifact) -> Result<v03::artifact::Artifact, TranslateError> {
    Ok(v03::artifact::Artifact {
        artifact_id: a.artifact_id,
        name: a.name,
        description: a.description,
        parts: a
            .parts
            .into_iter()
            .map(part::to_v03)
            .collect::<Result<_, _>>()?,
        metadata: a.metadata,
        extensions: a.extensions,
        extra: carry(a.extra, V03_FIELDS),
    })
}
