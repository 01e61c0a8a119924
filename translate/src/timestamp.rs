//! Timestamp normalisation. v1.0 requires RFC 3339 in UTC with `Z`; v0.3
//! producers also emit naive (`2025-04-02T16:59:25.331844`) and `+00:00`
//! forms. Naive timestamps are taken as UTC.

use chrono::{DateTime, Datelike, NaiveDateTime, SecondsFormat, Timelike, Utc};

use crate::TranslateError;

/// Parses an RFC 3339 timestamp (any offset) or a naive ISO 8601 date-time
/// (taken as UTC) and renders it in UTC with `Z` and 0, 3, 6 or 9 fractional
/// digits, as ProtoJSON does.
pub fn to_utc_z(raw: &str) -> Result<String, TranslateError> {
    let parsed = parse(raw).ok_or_else(|| {
        TranslateError::invalid(
            "timestamp",
            format!("{raw:?} is not an RFC 3339 / ISO 8601 date-time"),
        )
    })?;
    let mut out = Vec::with_capacity(32);
    write_utc_z(&parsed, &mut out);
    // Only ASCII digits and punctuation were written.
    Ok(String::from_utf8(out)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
}

/// The instant [`to_utc_z`] reads from `raw`.
pub fn parse(raw: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        Some(t.with_timezone(&Utc))
    } else if let Ok(n) = NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f") {
        Some(n.and_utc())
    } else {
        None
    }
}

/// Appends `t` as [`to_utc_z`] renders it (without quotes), without an
/// allocation of its own for a year of four digits.
pub fn write_utc_z(t: &DateTime<Utc>, out: &mut Vec<u8>) {
    let year = t.year();
    let nanos = t.nanosecond();
    if !(0..=9999).contains(&year) || nanos >= 2_000_000_000 {
        out.extend_from_slice(t.to_rfc3339_opts(SecondsFormat::AutoSi, true).as_bytes());
        return;
    }
    // A leap second is written as second 60.
    let (sec, nanos) = if nanos >= 1_000_000_000 {
        (t.second() + 1, nanos - 1_000_000_000)
    } else {
        (t.second(), nanos)
    };
    let y = year as u32;
    two_digits(out, y / 100);
    two_digits(out, y % 100);
    for (sep, n) in [
        (b'-', t.month()),
        (b'-', t.day()),
        (b'T', t.hour()),
        (b':', t.minute()),
        (b':', sec),
    ] {
        out.push(sep);
        two_digits(out, n);
    }
    let digits = match nanos {
        0 => 0,
        n if n % 1_000_000 == 0 => 3,
        n if n % 1_000 == 0 => 6,
        _ => 9,
    };
    if digits > 0 {
        out.push(b'.');
        let mut frac = nanos / 10u32.pow(9 - digits);
        let at = out.len();
        out.resize(at + digits as usize, b'0');
        for k in (0..digits as usize).rev() {
            out[at + k] = b'0' + (frac % 10) as u8;
            frac /= 10;
        }
    }
    out.push(b'Z');
}

fn two_digits(out: &mut Vec<u8>, n: u32) {
    out.push(b'0' + (n / 10 % 10) as u8);
    out.push(b'0' + (n % 10) as u8);
}

/// True when `raw` is already in the normal form [`to_utc_z`] produces.
pub fn is_normal(raw: &str) -> bool {
    to_utc_z(raw).is_ok_and(|n| n == raw)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Strategy as _;

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

    proptest::proptest! {
        /// The hand-written rendering is chrono's, for every instant
        /// (leap seconds and years outside 0..=9999 included).
        #[test]
        fn writes_what_chrono_writes(
            secs in -70_000_000_000i64..300_000_000_000i64,
            nanos in proptest::prop_oneof![
                0u32..2_000_000_000,
                (0u32..2_000).prop_map(|n| n * 1_000_000),
                (0u32..2_000_000).prop_map(|n| n * 1_000),
                proptest::strategy::Just(0u32),
            ],
        ) {
            if let Some(t) = DateTime::from_timestamp(secs, nanos) {
                let mut out = Vec::new();
                write_utc_z(&t, &mut out);
                proptest::prop_assert_eq!(
                    String::from_utf8(out).unwrap(),
                    t.to_rfc3339_opts(SecondsFormat::AutoSi, true)
                );
            }
        }
    }

    #[test]
    fn writes_leap_seconds_and_far_years() {
        for raw in [
            "2016-12-31T23:59:60Z",
            "2016-12-31T23:59:60.5Z",
            "9999-12-31T23:59:59-01:00",
            "0000-01-01T00:00:00+01:00",
            "0000-01-01T00:00:00.000000001Z",
        ] {
            let t = parse(raw).unwrap();
            let mut out = Vec::new();
            write_utc_z(&t, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                t.to_rfc3339_opts(SecondsFormat::AutoSi, true),
                "{raw}"
            );
        }
    }
}
