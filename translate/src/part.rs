//! Part translation: v0.3 `TextPart | FilePart | DataPart` (tagged by
//! `kind`) <-> v1.0 `Part` (`text | raw | url | data` oneof).

use serde_json::{Map, Value};

use crate::json::{Extras, Metadata};
use crate::lossy::{Direction, Lossy};
use crate::v10::part::{decode_base64, encode_base64, PartContent};
use crate::{v03, v10, TranslateError};

/// The metadata flag the SDKs set when a non-object v1.0 `data` value is
/// wrapped as `{"value": X}` to fit a v0.3 `DataPart`.
pub const DATA_PART_COMPAT: &str = "data_part_compat";

/// Members of a v0.3 part (any kind).
const V03_FIELDS: &[&str] = &["kind", "text", "file", "data", "metadata"];
/// Members of a v1.0 part, proto names included.
const V10_FIELDS: &[&str] = &[
    "text",
    "raw",
    "url",
    "data",
    "metadata",
    "filename",
    "mediaType",
    "media_type",
];

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[
    Lossy {
        entity: "Part (data)",
        direction: Direction::ToV03,
        what: "v1.0 `data` may be any JSON value; a v0.3 DataPart holds only an object",
        decision: "a non-object value X becomes `{\"value\": X}` with `metadata.data_part_compat = true` (SDK convention); the reverse unwraps only when the flag is exactly `true`, `data` has exactly the key `value` and X is not an object, removing the flag (an emptied metadata becomes absent)",
        fixture: "part/data-scalar.v03.json, part/data-scalar.v10.json, part/data-null.v10.json, part/data-array.v10.json, part/data-compat-flag-not-true.v03.json, part/data-compat-extra-key.v03.json",
        at: &["parts.data", "parts.metadata"],
    },
    Lossy {
        entity: "Part (data)",
        direction: Direction::ToV03,
        what: "a v1.0 object `data` whose metadata already says `data_part_compat: true` and which has exactly the key `value` (non-object) looks like a wrapped value",
        decision: "passed to v0.3 unchanged; coming back it is unwrapped",
        fixture: "part/data-compat-lookalike.v10.json, part/data-compat-lookalike.v03.json, part/data-compat-lookalike.to-v10.json",
        at: &["parts.data", "parts.metadata"],
    },
    Lossy {
        entity: "Part (text, data)",
        direction: Direction::ToV03,
        what: "v1.0 `filename` / `mediaType` on a text or data part (v0.3 has them only on files)",
        decision: "dropped (SDKs drop)",
        fixture: "part/text-media-type.v10.json, part/text-media-type.v03.json, part/text-media-type.to-v10.json, part/data-media-type.v10.json, part/data-media-type.v03.json, part/data-media-type.to-v10.json",
        at: &["parts.filename", "parts.mediaType"],
    },
    Lossy {
        entity: "Part (file bytes)",
        direction: Direction::Both,
        what: "base64 spelling: URL-safe or unpadded input",
        decision: "accepted on input; output is always standard base64 with padding; invalid base64 is rejected (-32602)",
        fixture: "part/file-bytes-urlsafe.v03.json, part/file-bytes-urlsafe.v10.json, part/file-bytes-urlsafe.to-v03.json, part/file-bytes-unpadded.v03.json, part/file-bytes-unpadded.to-v03.json, part/file-raw-urlsafe-v10.v10.json, part/file-raw-urlsafe-v10.to-v10.json, rejected/part/invalid-base64.v03.json, rejected/part/invalid-base64-v10.v10.json",
        at: &["file.bytes", "parts.raw"],
    },
    Lossy {
        entity: "Part (file)",
        direction: Direction::ToV10,
        what: "unknown members inside the v0.3 `file` object (v1.0 has no file sub-object)",
        decision: "dropped",
        fixture: "part/file-extra-member.v03.json, part/file-extra-member.v10.json, part/file-extra-member.to-v03.json",
        at: &["file"],
    },
    Lossy {
        entity: "Part (file)",
        direction: Direction::ToV10,
        what: "a v0.3 file with both or neither of `bytes` and `uri`",
        decision: "rejected (-32602)",
        fixture: "rejected/part/file-neither.v03.json, rejected/part/file-both.v03.json",
        at: &["file"],
    },
    Lossy {
        entity: "Part",
        direction: Direction::ToV10,
        what: "v0.3 part without `kind`",
        decision: "kind inferred from `text` / `file` / `data`; always emitted going to v0.3; a wrong kind is rejected",
        fixture: "part/text-kind-missing.v03.json, part/text-kind-missing.to-v03.json, part/file-kind-missing.v03.json, part/file-kind-missing.to-v03.json, rejected/part/wrong-kind.v03.json",
        at: &["kind"],
    },
    Lossy {
        entity: "all payload entities",
        direction: Direction::Both,
        what: "an unknown member whose name is a member (or proto field name) of the target type",
        decision: "dropped, so the output stays unambiguous; other unknown members cross unchanged",
        fixture: "part/extra-kind-member.v10.json, part/extra-kind-member.v03.json, part/extra-kind-member.to-v10.json",
        at: &[],
    },
];

/// Unknown members that may cross to a type whose members are `reserved`.
pub(crate) fn carry(mut extra: Extras, reserved: &[&str]) -> Extras {
    extra.retain(|k, _| !reserved.contains(&k.as_str()));
    extra
}

/// Translates a v0.3 part to v1.0.
pub fn to_v10(p: v03::part::Part) -> Result<v10::part::Part, TranslateError> {
    match p {
        v03::part::Part::Text(t) => Ok(v10::part::Part {
            content: PartContent::Text(t.text),
            metadata: t.metadata,
            filename: None,
            media_type: None,
            extra: carry(t.extra, V10_FIELDS),
        }),
        v03::part::Part::File(f) => {
            let content = match (f.file.bytes, f.file.uri) {
                (Some(b), None) => PartContent::Raw(
                    decode_base64(&b).map_err(|e| TranslateError::invalid("file part", e))?,
                ),
                (None, Some(u)) => PartContent::Url(u),
                (Some(_), Some(_)) => {
                    return Err(TranslateError::invalid(
                        "file part",
                        "file has both bytes and uri",
                    ))
                }
                (None, None) => {
                    return Err(TranslateError::invalid(
                        "file part",
                        "file has neither bytes nor uri",
                    ))
                }
            };
            Ok(v10::part::Part {
                content,
                metadata: f.metadata,
                filename: f.file.name,
                media_type: f.file.mime_type,
                extra: carry(f.extra, V10_FIELDS),
            })
        }
        v03::part::Part::Data(d) => {
            let (data, metadata) = unwrap_compat(d.data, d.metadata);
            Ok(v10::part::Part {
                content: PartContent::Data(data),
                metadata,
                filename: None,
                media_type: None,
                extra: carry(d.extra, V10_FIELDS),
            })
        }
    }
}

/// Translates a v1.0 part to v0.3.
pub fn to_v03(p: v10::part::Part) -> Result<v03::part::Part, TranslateError> {
    let extra = carry(p.extra, V03_FIELDS);
    let file = |bytes, uri| v03::part::FileContent {
        bytes,
        uri,
        name: p.filename.clone(),
        mime_type: p.media_type.clone(),
        extra: Extras::new(),
    };
    Ok(match p.content {
        PartContent::Text(text) => v03::part::Part::Text(v03::part::TextPart {
            kind: Default::default(),
            text,
            metadata: p.metadata,
            extra,
        }),
        PartContent::Raw(raw) => v03::part::Part::File(v03::part::FilePart {
            kind: Default::default(),
            file: file(Some(encode_base64(&raw)), None),
            metadata: p.metadata,
            extra,
        }),
        PartContent::Url(url) => v03::part::Part::File(v03::part::FilePart {
            kind: Default::default(),
            file: file(None, Some(url)),
            metadata: p.metadata,
            extra,
        }),
        PartContent::Data(Value::Object(data)) => v03::part::Part::Data(v03::part::DataPart {
            kind: Default::default(),
            data,
            metadata: p.metadata,
            extra,
        }),
        PartContent::Data(other) => {
            let mut data = Map::new();
            data.insert("value".into(), other);
            let mut metadata = p.metadata.unwrap_or_default();
            metadata.insert(DATA_PART_COMPAT.into(), Value::Bool(true));
            v03::part::Part::Data(v03::part::DataPart {
                kind: Default::default(),
                data,
                metadata: Some(metadata),
                extra,
            })
        }
    })
}

/// Undoes the SDK wrapping of a non-object value, when the v0.3 data part
/// carries it exactly.
fn unwrap_compat(
    mut data: Map<String, Value>,
    metadata: Option<Metadata>,
) -> (Value, Option<Metadata>) {
    let flagged = metadata
        .as_ref()
        .is_some_and(|m| m.get(DATA_PART_COMPAT) == Some(&Value::Bool(true)));
    let wrapped = data.len() == 1 && data.get("value").is_some_and(|v| !v.is_object());
    if !(flagged && wrapped) {
        return (Value::Object(data), metadata);
    }
    let value = data.remove("value").unwrap_or(Value::Null);
    let metadata = metadata.and_then(|mut m| {
        m.remove(DATA_PART_COMPAT);
        (!m.is_empty()).then_some(m)
    });
    (value, metadata)
}
