//! The two A2A wire versions and the `A2A-Version` service parameter.

use std::fmt;

/// An A2A wire version this crate speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Version {
    /// A2A 0.3 (JSON-RPC schema shapes, gRPC package `a2a.v1`).
    V03,
    /// A2A 1.0 (ProtoJSON of the v1.0 proto, gRPC package `lf.a2a.v1`).
    V10,
}

/// An `A2A-Version` value that names no version this crate speaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("A2A version {0:?} is not supported (supported: 0.3, 1.0)")]
pub struct UnsupportedVersion(pub String);

impl Version {
    /// Both versions, oldest first.
    pub const ALL: [Version; 2] = [Version::V03, Version::V10];

    /// Interprets an `A2A-Version` header or query value (spec v1.0 §3.6):
    /// missing, empty or blank means 0.3; only `Major.Minor` is compared, so
    /// `0.3.0`, `0.3.5` and `1.0.1` are accepted.
    pub fn from_header(value: Option<&str>) -> Result<Version, UnsupportedVersion> {
        let raw = value.unwrap_or("").trim();
        if raw.is_empty() {
            return Ok(Version::V03);
        }
        let mut it = raw.split('.');
        let major = it.next().and_then(|s| s.parse::<u32>().ok());
        let minor = it.next().map_or(Some(0), |s| s.parse::<u32>().ok());
        let patch_ok = it.all(|s| s.parse::<u32>().is_ok());
        match (major, minor, patch_ok) {
            (Some(0), Some(3), true) => Ok(Version::V03),
            (Some(1), Some(0), true) => Ok(Version::V10),
            _ => Err(UnsupportedVersion(raw.to_string())),
        }
    }

    /// The `Major.Minor` string sent in `A2A-Version` and interface `protocolVersion`.
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
            (Some("  "), Some(Version::V03)),
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
        ];
        for (input, want) in cases {
            let got = Version::from_header(*input).ok();
            assert_eq!(got, *want, "input {input:?}");
        }
    }
}
