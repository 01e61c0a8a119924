//! Timestamp normalisation. v1.0 requires RFC 3339 in UTC with `Z`; v0.3
//! producers also emit naive (`2025-04-02T16:59:25.331844`) and `+00:00`
//! forms. Naive timestamps are taken as UTC.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, SecondsFormat, Timelike, Utc};

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
    if let Some(t) = parse_normal(raw) {
        Some(t)
    } else if let Ok(t) = DateTime::parse_from_rfc3339(raw) {
        Some(t.with_timezone(&Utc))
    } else if let Ok(n) = NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f") {
        Some(n.and_utc())
    } else {
        None
    }
}

/// The instant of `raw` when it is already in the normal form [`to_utc_z`]
/// writes (`YYYY-MM-DDTHH:MM:SS`, then nothing or `.` and 3, 6 or 9 digits
/// not ending in `000`, then `Z`; seconds 00-59), read digit by digit
/// without the general parser: then [`write_utc_z`] of the instant writes
/// `raw` back exactly. `None` for every other form (which [`parse`] still
/// reads the general way).
pub fn parse_normal(raw: &str) -> Option<DateTime<Utc>> {
    let b = raw.as_bytes();
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
        || b[b.len() - 1] != b'Z'
    {
        return None;
    }
    let num = |s: usize, n: usize| -> Option<u32> {
        b.get(s..s + n)?.iter().try_fold(0u32, |acc, &c| {
            c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
        })
    };
    let frac = &b[19..b.len() - 1];
    let nanos = match frac.len() {
        0 => 0,
        // `.` and 3, 6 or 9 digits, scaled to nanoseconds.
        4 | 7 | 10 if frac[0] == b'.' && !frac.ends_with(b"000") => {
            num(20, frac.len() - 1)? * 10u32.pow(10 - frac.len() as u32)
        }
        _ => return None,
    };
    let sec = num(17, 2)?;
    if sec > 59 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(num(0, 4)? as i32, num(5, 2)?, num(8, 2)?)?;
    Some(
        date.and_hms_nano_opt(num(11, 2)?, num(14, 2)?, sec, nanos)?
            .and_utc(),
    )
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

    proptest::proptest! {
        /// Whatever the digit-by-digit reader takes is read the same by
        /// chrono's RFC 3339 parser, and written back as it is; every
        /// instant of years 0000-9999 (leap seconds aside) written in the
        /// normal form is taken.
        #[test]
        fn normal_form_read_as_chrono_reads_it(
            raw in "[0-9]{4}-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\\.[0-9]{1,10})?[Zz]?",
            secs in -62_167_219_200i64..253_402_300_800i64,
            nanos in proptest::prop_oneof![
                0u32..1_000_000_000,
                (0u32..1_000).prop_map(|n| n * 1_000_000),
                (0u32..1_000_000).prop_map(|n| n * 1_000),
                proptest::strategy::Just(0u32),
            ],
        ) {
            if let Some(t) = parse_normal(&raw) {
                let chrono = DateTime::parse_from_rfc3339(&raw).map(|t| t.with_timezone(&Utc));
                proptest::prop_assert_eq!(Ok(t), chrono);
                let mut out = Vec::new();
                write_utc_z(&t, &mut out);
                proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), raw);
            }
            let t = DateTime::from_timestamp(secs, nanos).unwrap();
            let mut out = Vec::new();
            write_utc_z(&t, &mut out);
            let written = String::from_utf8(out).unwrap();
            proptest::prop_assert_eq!(parse_normal(&written), Some(t), "{}", written);
        }
    }

    #[test]
    fn normal_form_only() {
        for (raw, taken) in [
            ("2024-03-15T18:30:00Z", true),
            ("2024-03-15T18:30:00.120Z", true),
            ("2024-03-15T18:30:00.000120Z", true),
            ("2024-03-15T18:30:00.000000120Z", true),
            ("2024-03-15T18:30:00.000Z", false),
            ("2024-03-15T18:30:00.120000Z", false),
            ("2024-03-15T18:30:00.12Z", false),
            ("2024-03-15T18:30:00.1234Z", false),
            ("2024-03-15T18:30:00z", false),
            ("2024-03-15t18:30:00Z", false),
            ("2024-03-15T18:30:00+00:00", false),
            ("2024-03-15T18:30:60Z", false),
            ("2024-02-30T18:30:00Z", false),
            ("2024-03-15T24:00:00Z", false),
            ("+024-03-15T18:30:00Z", false),
            ("2024-03-15T18:30:00.+12Z", false),
        ] {
            assert_eq!(parse_normal(raw).is_some(), taken, "{raw}");
            // The general reader still reads the others.
            assert_eq!(
                parse(raw),
                DateTime::parse_from_rfc3339(raw)
                    .ok()
                    .map(|t| t.with_timezone(&Utc)),
                "{raw}"
            );
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
