//! Conversions between the well-known protobuf types ([`pbjson_types`]) and
//! the JSON shapes of the `translate` models.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};
use pbjson_types::{value::Kind, ListValue, Struct, Timestamp, Value};
use serde_json::{Map, Number, Value as Json};
use translate::TranslateError;

/// Largest integer an `f64` holds exactly (2^53).
const EXACT_F64: f64 = 9_007_199_254_740_992.0;

/// JSON value -> `google.protobuf.Value`. Numbers become `f64` (as in
/// ProtoJSON); integers beyond 2^53 lose precision.
pub fn value_to_pb(v: Json) -> Value {
    let kind = match v {
        Json::Null => Kind::NullValue(0),
        Json::Bool(b) => Kind::BoolValue(b),
        Json::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => Kind::StringValue(s),
        Json::Array(a) => Kind::ListValue(ListValue {
            values: a.into_iter().map(value_to_pb).collect(),
        }),
        Json::Object(o) => Kind::StructValue(struct_to_pb(o)),
    };
    Value { kind: Some(kind) }
}

/// `google.protobuf.Value` -> JSON value. Integral numbers within 2^53 come
/// back as JSON integers; NaN and infinities are rejected (JSON has none).
/// A `Value` with no kind set reads as `null`.
pub fn value_from_pb(v: Value) -> Result<Json, TranslateError> {
    Ok(match v.kind {
        None | Some(Kind::NullValue(_)) => Json::Null,
        Some(Kind::BoolValue(b)) => Json::Bool(b),
        Some(Kind::NumberValue(f)) => Json::Number(number_from_f64(f)?),
        Some(Kind::StringValue(s)) => Json::String(s),
        Some(Kind::ListValue(l)) => Json::Array(
            l.values
                .into_iter()
                .map(value_from_pb)
                .collect::<Result<_, _>>()?,
        ),
        Some(Kind::StructValue(s)) => Json::Object(struct_from_pb(s)?),
    })
}

fn number_from_f64(f: f64) -> Result<Number, TranslateError> {
    if f.fract() == 0.0 && f.abs() <= EXACT_F64 {
        // Exact: |f| <= 2^53 fits i64 without rounding.
        #[allow(clippy::cast_possible_truncation)]
        return Ok(Number::from(f as i64));
    }
    Number::from_f64(f).ok_or_else(|| {
        TranslateError::invalid("google.protobuf.Value", format!("{f} is not a JSON number"))
    })
}

/// JSON object -> `google.protobuf.Struct`.
pub fn struct_to_pb(m: Map<String, Json>) -> Struct {
    Struct {
        fields: m.into_iter().map(|(k, v)| (k, value_to_pb(v))).collect(),
    }
}

/// `google.protobuf.Struct` -> JSON object. Keys come out sorted (a Struct
/// is an unordered map).
pub fn struct_from_pb(s: Struct) -> Result<Map<String, Json>, TranslateError> {
    let sorted: std::collections::BTreeMap<String, Value> = s.fields.into_iter().collect();
    sorted
        .into_iter()
        .map(|(k, v)| value_from_pb(v).map(|v| (k, v)))
        .collect()
}

/// Optional metadata object -> optional Struct.
pub fn metadata_to_pb(m: Option<Map<String, Json>>) -> Option<Struct> {
    m.map(struct_to_pb)
}

/// Optional Struct -> optional metadata object.
pub fn metadata_from_pb(s: Option<Struct>) -> Result<Option<Map<String, Json>>, TranslateError> {
    s.map(struct_from_pb).transpose()
}

/// An RFC 3339 (any offset) or naive ISO 8601 (taken as UTC) date-time ->
/// `google.protobuf.Timestamp`.
pub fn timestamp_to_pb(raw: &str) -> Result<Timestamp, TranslateError> {
    let t: DateTime<Utc> = if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        t.with_timezone(&Utc)
    } else if let Ok(n) = NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f") {
        n.and_utc()
    } else {
        return Err(TranslateError::invalid(
            "timestamp",
            format!("{raw:?} is not an RFC 3339 / ISO 8601 date-time"),
        ));
    };
    Ok(Timestamp {
        seconds: t.timestamp(),
        // Always < 2e9 (leap second representation), fits i32.
        nanos: i32::try_from(t.timestamp_subsec_nanos()).unwrap_or(0),
    })
}

/// `google.protobuf.Timestamp` -> RFC 3339 in UTC with `Z` and 0, 3, 6 or 9
/// fractional digits (the ProtoJSON form, as `translate::timestamp::to_utc_z`).
pub fn timestamp_from_pb(t: &Timestamp) -> Result<String, TranslateError> {
    let nanos = u32::try_from(t.nanos)
        .ok()
        .filter(|n| *n < 1_000_000_000)
        .ok_or_else(|| {
            TranslateError::invalid("timestamp", format!("nanos {} out of range", t.nanos))
        })?;
    DateTime::from_timestamp(t.seconds, nanos)
        .map(|d| d.to_rfc3339_opts(SecondsFormat::AutoSi, true))
        .ok_or_else(|| {
            TranslateError::invalid("timestamp", format!("seconds {} out of range", t.seconds))
        })
}

/// `""` -> `None` (proto3 strings have no presence).
pub fn non_empty(s: String) -> Option<String> {
    if s.is_empty() {
        None
    } else {
        Some(s)
    }
}

/// `[]` -> `None` (proto3 repeated fields have no presence).
pub fn non_empty_vec<T>(v: Vec<T>) -> Option<Vec<T>> {
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_values_round_trip() {
        let v = json!({"a": 1, "b": -2.5, "c": [true, null, "s", {"d": []}], "e": 9007199254740992_i64});
        let back = value_from_pb(value_to_pb(v.clone())).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn non_finite_numbers_are_rejected() {
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let v = Value {
                kind: Some(Kind::NumberValue(f)),
            };
            assert!(value_from_pb(v).is_err());
        }
    }

    #[test]
    fn timestamps() {
        let t = timestamp_to_pb("2025-04-02T16:59:25.331844").unwrap();
        assert_eq!(
            timestamp_from_pb(&t).unwrap(),
            "2025-04-02T16:59:25.331844Z"
        );
        let t = timestamp_to_pb("2025-04-02T18:59:25+02:00").unwrap();
        assert_eq!(timestamp_from_pb(&t).unwrap(), "2025-04-02T16:59:25Z");
        assert!(timestamp_to_pb("yesterday").is_err());
        for bad in [
            Timestamp {
                seconds: 0,
                nanos: -1,
            },
            Timestamp {
                seconds: 0,
                nanos: 1_000_000_000,
            },
            Timestamp {
                seconds: i64::MAX,
                nanos: 0,
            },
        ] {
            assert!(timestamp_from_pb(&bad).is_err());
        }
    }
}
