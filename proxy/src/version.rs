//! The two A2A wire versions, as the proxy sees them.
//!
//! Stand-in for `translate::Version` until the lead swaps it in: same variant
//! names, same `from_header` / `as_str` / `other` API and the same parsing rule.

use std::fmt;

/// An A2A wire version the proxy speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// A2A 0.3.
    V03,
    /// A2A 1.0.
    V10,
}

/// An `A2A-Version` value naming no version the proxy speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedVersion(pub String);

impl fmt::Display for UnsupportedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "A2A version {:?} is not supported (supported: 0.3, 1.0)",
            self.0
        )
    }
}

impl std::error::Error for UnsupportedVersion {}

impl Version {
    /// Both versions, oldest first.
    pub const ALL: [Version; 2] = [Version::V03, Version::V10];

    /// Interprets an `A2A-Version` header or query value (spec v1.0 §3.6).
    ///
    /// Missing, empty or blank means 0.3. Only `Major.Minor` is compared, so
    /// `0.3.0`, `0.3.5` and `1.0.1` are accepted; a bare major (`1`) means `.0`.
    /// Anything else (`2.0`, `1.1`, `v1`, `1.0.x`) is unsupported.
    pub fn from_header(value: Option<&str>) -> Result<Version, UnsupportedVersion> {
        let raw = value.unwrap_or("").trim();
        if raw.is_empty() {
            return Ok(Version::V03);
        }
        let mut parts = raw.split('.');
        let major = parts.next().and_then(num);
        let minor = match parts.next() {
            None => Some(0),
            Some(s) => num(s),
        };
        let rest_ok = parts.all(|s| num(s).is_some());
        match (major, minor, rest_ok) {
            (Some(0), Some(3), true) => Ok(Version::V03),
            (Some(1), Some(0), true) => Ok(Version::V10),
            _ => Err(UnsupportedVersion(raw.to_string())),
        }
    }

    /// The `Major.Minor` string sent in `A2A-Version`.
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V03 => "0.3",
            Version::V10 => "1.0",
        }
    }

    /// The other version.
    pub fn other(self) -> Version {
        match self {
            Version::V03 => Version::V10,
            Version::V10 => Version::V03,
        }
    }
}

/// A decimal number of ASCII digits only (no sign, no spaces).
fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values() {
        let cases: &[(Option<&str>, Option<Version>)] = &[
            (None, Some(Version::V03)),
            (Some(""), Some(Version::V03)),
            (Some(" \t"), Some(Version::V03)),
            (Some("0.3"), Some(Version::V03)),
            (Some("0.3.0"), Some(Version::V03)),
            (Some("0.3.5"), Some(Version::V03)),
            (Some("1.0"), Some(Version::V10)),
            (Some("1.0.1"), Some(Version::V10)),
            (Some(" 1.0 "), Some(Version::V10)),
            (Some("1"), Some(Version::V10)),
            (Some("0.2"), None),
            (Some("2.0"), None),
            (Some("1.1"), None),
            (Some("v1"), None),
            (Some("1.0.x"), None),
            (Some("+1.0"), None),
            (Some("1..0"), None),
        ];
        for (input, want) in cases {
            assert_eq!(Version::from_header(*input).ok(), *want, "input {input:?}");
        }
    }
}
