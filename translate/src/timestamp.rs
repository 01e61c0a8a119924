//! Timestamp normalisation. v1.0 requires RFC 3339 in UTC with `Z`; v0.3
//! producers also emit naive (`2025-04-02T16:59:25.331844`) and `+00:00`
//! forms. Naive timestamps are taken as UTC.

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

use crate::TranslateError;

/// Parses an RFC 3339 timestamp (any offset) or a naive ISO 8601 date-time
/// (taken as UTC) and renders it in UTC with `Z` and 0, 3, 6 or 9 fractional
/// digits, as ProtoJSON does.
pub fn to_utc_z(raw: &str) -> Result<String, TranslateError> {
    let parsed: DateTime<Utc> = if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        t.with_timezone(&Utc)
    } else if let Ok(n) = NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f") {
        n.and_utc()
    } else {
        return Err(TranslateError::invalid(
            "timestamp",
            format!("{raw:?} is not an RFC 3339 / ISO 8601 date-time"),
        ));
    };
    Ok(parsed.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// True when `raw` is already in the normal form [`to_utc_z`] produces.
pub fn is_normal(raw: &str) -> bool {
    to_utc_z(raw).is_ok_and(|n| n == raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_the_forms_seen_in_the_wild() {
        let cases = [
            ("2024-03-15T18:30:00Z", "2024-03-15T18:30:00Z"),
            ("2024-03-15T18:30:00.000Z", "2024-03-15T18:30:00Z"),
            ("2024-03-15T18:30:00.120Z", "2024-03-15T18:30:00.120Z"),
            ("2025-04-02T16:59:25.331844", "2025-04-02T16:59:25.331844Z"),
            (
                "2025-04-02T16:59:25.331844+00:00",
                "2025-04-02T16:59:25.331844Z",
            ),
            ("2025-04-02T18:59:25+02:00", "2025-04-02T16:59:25Z"),
            ("2025-04-02T16:59:25", "2025-04-02T16:59:25Z"),
        ];
        for (input, want) in cases {
            assert_eq!(to_utc_z(input).unwrap(), want, "input {input}");
            assert!(is_normal(want));
        }
    }

    #[test]
    fn rejects_garbage() {
        for bad in ["", "yesterday", "2024-13-01T00:00:00Z", "2024-03-15"] {
            assert!(to_utc_z(bad).is_err(), "{bad}");
        }
    }
}
