//! The two A2A wire versions and the `A2A-Version` service parameter.
//!
//! A2A versions are read as "0.3 and 1.N": [`Version`] is the wire *family*
//! every translator works in (all 1.N messages share the v1.0 ProtoJSON and
//! proto shapes, later minors only add members), and [`ProtocolVersion`] is
//! the precise `Major.Minor` where a decision depends on the minor (which
//! calls pass through, which are refused, what `A2A-Version` is sent).

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
    /// `0.3.0`, `0.3.5` and `1.0.1` are accepted. Later 1.N minors are not
    /// read here: where they are served, [`ProtocolVersion::from_header`]
    /// reads them.
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

/// A precise A2A protocol version, `Major.Minor` (the patch never counts:
/// spec v1.0 §3.6). Only 0.3 and 1.N exist for this crate; `family` says
/// which wire shapes a message of this version has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion {
    pub major: u16,
    pub minor: u16,
}

impl ProtocolVersion {
    /// A2A 0.3.
    pub const V0_3: ProtocolVersion = ProtocolVersion { major: 0, minor: 3 };
    /// A2A 1.0.
    pub const V1_0: ProtocolVersion = ProtocolVersion { major: 1, minor: 0 };

    /// Interprets an `A2A-Version` header or query value like
    /// [`Version::from_header`], but accepting every 1.N (`1.1`, `1.2.0`):
    /// missing, empty or blank means 0.3; other 0.N and 2.N or later are
    /// unsupported.
    pub fn from_header(value: Option<&str>) -> Result<ProtocolVersion, UnsupportedVersion> {
        let raw = value.unwrap_or("").trim();
        if raw.is_empty() {
            return Ok(ProtocolVersion::V0_3);
        }
        ProtocolVersion::parse(raw).ok_or_else(|| UnsupportedVersion(raw.to_string()))
    }

    /// Parses `Major[.Minor[.Patch...]]` (all decimal) naming 0.3 or 1.N:
    /// an interface's `protocolVersion` or a config value. `None` for any
    /// other text or version.
    pub fn parse(text: &str) -> Option<ProtocolVersion> {
        let mut it = text.trim().split('.');
        let number = |s: &str| {
            (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u16>().ok())
                .flatten()
        };
        let major = number(it.next()?)?;
        let minor = match it.next() {
            None => 0,
            Some(s) => number(s)?,
        };
        if !it.all(|s| number(s).is_some()) {
            return None;
        }
        match (major, minor) {
            (0, 3) | (1, _) => Some(ProtocolVersion { major, minor }),
            _ => None,
        }
    }

    /// The wire family: 0.3 messages are v0.3 shapes, every 1.N is v1.0 shapes.
    pub fn family(self) -> Version {
        if self.major == 0 {
            Version::V03
        } else {
            Version::V10
        }
    }

    /// The first minor of a family (what the proxy speaks when it translates).
    pub fn of(family: Version) -> ProtocolVersion {
        match family {
            Version::V03 => ProtocolVersion::V0_3,
            Version::V10 => ProtocolVersion::V1_0,
        }
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
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

    #[test]
    fn protocol_header_values() {
        let p = |major, minor| Some(ProtocolVersion { major, minor });
        let cases: &[(Option<&str>, Option<ProtocolVersion>)] = &[
            (None, p(0, 3)),
            (Some(" "), p(0, 3)),
            (Some("0.3"), p(0, 3)),
            (Some("0.3.9"), p(0, 3)),
            (Some("1"), p(1, 0)),
            (Some("1.0"), p(1, 0)),
            (Some("1.0.2"), p(1, 0)),
            (Some(" 1.1 "), p(1, 1)),
            (Some("1.1.0"), p(1, 1)),
            (Some("1.12"), p(1, 12)),
            (Some("0.2"), None),
            (Some("0.4"), None),
            (Some("2.0"), None),
            (Some("1.x"), None),
            (Some("1.1.x"), None),
            (Some("1..1"), None),
            (Some("+1.1"), None),
            (Some("1.-1"), None),
            (Some("1.99999"), None),
            (Some("v1.1"), None),
        ];
        for (input, want) in cases {
            let got = ProtocolVersion::from_header(*input).ok();
            assert_eq!(got, *want, "input {input:?}");
            if let Some(v) = got {
                // The family agrees with the strict reading where that has one.
                if let Ok(f) = Version::from_header(*input) {
                    assert_eq!(v.family(), f, "input {input:?}");
                }
            }
        }
        assert_eq!(ProtocolVersion::parse("1.1").unwrap().to_string(), "1.1");
        assert_eq!(
            ProtocolVersion::parse("1.1").unwrap().family(),
            Version::V10
        );
        assert_eq!(ProtocolVersion::V0_3.family(), Version::V03);
        assert_eq!(ProtocolVersion::of(Version::V10), ProtocolVersion::V1_0);
        assert!(ProtocolVersion::V1_0 < ProtocolVersion::parse("1.1").unwrap());
    }
}
