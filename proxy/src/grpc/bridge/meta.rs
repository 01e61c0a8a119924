//! What a gRPC call carries besides its message: version, deadline,
//! extensions and the caller's credentials.

use super::*;

/// What a gRPC call carries besides its message.
#[derive(Debug, Clone, Default)]
pub struct CallMeta {
    /// From `grpc-timeout`.
    pub timeout: Option<Duration>,
    /// The call's metadata as headers: the ListTasks caller scope and the
    /// credentials its page is fetched with are read from it, and its
    /// end-to-end entries go on to the agent (crate::forward).
    pub presented: Presented,
    /// The client's precise A2A version when it sent one (`a2a-version`:
    /// 1.N on the v1.0 service).
    pub protocol: Option<crate::version::ProtocolVersion>,
}

impl CallMeta {
    /// The `A2A-Version` an agent of `upstream`'s family is sent: the
    /// client's own 1.N when the call stays in its family (a 1.1 client's
    /// call reaches a 1.1 agent as 1.1), else the family's `Major.Minor`.
    pub fn upstream_header(&self, upstream: Version) -> String {
        match self.protocol {
            Some(p) if p.family() == upstream => p.to_string(),
            _ => upstream.as_str().to_string(),
        }
    }
}

/// A call's metadata, kept for the ListTasks caller (see
/// [`crate::tasks::TaskIndex::caller`]); never shown (credentials).
#[derive(Clone, Default)]
pub struct Presented(pub http::HeaderMap);

impl std::fmt::Debug for Presented {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Presented(..)")
    }
}

/// Parses a `grpc-timeout` value (`<digits><H|M|S|m|u|n>`).
pub fn parse_grpc_timeout(v: &str) -> Option<Duration> {
    let v = v.trim();
    if v.len() < 2 || v.len() > 9 {
        return None;
    }
    let (digits, unit) = v.split_at(v.len() - 1);
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "H" => Duration::from_secs(n.checked_mul(3600)?),
        "M" => Duration::from_secs(n.checked_mul(60)?),
        "S" => Duration::from_secs(n),
        "m" => Duration::from_millis(n),
        "u" => Duration::from_micros(n),
        "n" => Duration::from_nanos(n),
        _ => return None,
    })
}

/// Checks `a2a-version` against the service's version and reads the rest.
/// Missing or empty is accepted on both services: the service descriptor
/// already names the version unambiguously (a2a-js routes the same way).
/// An unparseable, unsupported or disagreeing value is VersionNotSupported.
pub fn call_meta(client: Version, md: &MetadataMap) -> Result<CallMeta, Status> {
    use crate::version::ProtocolVersion;
    let mut protocol = None;
    if let Some(raw) = md.get("a2a-version") {
        let text = raw.to_str().unwrap_or("?");
        if !text.trim().is_empty() {
            // Any 1.N on the v1.0 service (A2A 1.N shares its shapes).
            match ProtocolVersion::from_header(Some(text)) {
                Ok(p) if p.family() == client => protocol = Some(p),
                _ => {
                    return Err(from_failure(
                        client,
                        &Failure::VersionNotSupported {
                            requested: text.to_string(),
                        },
                    ))
                }
            }
        }
    }
    let presented = md.clone().into_headers();
    Ok(CallMeta {
        timeout: md
            .get("grpc-timeout")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_grpc_timeout),
        presented: Presented(presented),
        protocol,
    })
}
