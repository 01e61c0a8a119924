//! `upstream.allowed_hosts` resolved: the hosts an agent card may send the
//! proxy to (read by `crate::card::endpoints`).

use super::{ConfigError, HttpUrl};

/// `upstream.allowed_hosts`: the hosts an agent card may send the proxy to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AllowedHosts {
    /// (lower-cased host, port; `None`: any port).
    entries: Vec<(String, Option<u16>)>,
}

impl AllowedHosts {
    /// The configured list (`host` or `host:port`, IPv6 in brackets), or
    /// by default the hosts and ports of `upstream.url` and `upstream.grpc_url`.
    pub fn resolve(
        raw: Option<&[String]>,
        upstream: &HttpUrl,
        grpc: Option<&HttpUrl>,
    ) -> Result<AllowedHosts, ConfigError> {
        let key = "upstream.allowed_hosts";
        let Some(raw) = raw else {
            let entries = std::iter::once(upstream)
                .chain(grpc)
                .map(|u| (u.host.to_ascii_lowercase(), Some(u.port)))
                .collect();
            return Ok(AllowedHosts { entries });
        };
        let mut entries = Vec::with_capacity(raw.len());
        for item in raw {
            let bad = |why: &str| ConfigError {
                key: key.into(),
                message: format!("{item:?}: {why}"),
            };
            let s = item.trim();
            if s.is_empty() || s.contains(['/', '@', '?', '#', ' ']) {
                return Err(bad("expected a host or host:port"));
            }
            let (host, port) = if let Some(rest) = s.strip_prefix('[') {
                let (h, after) = rest.split_once(']').ok_or_else(|| bad("unclosed `[`"))?;
                match after {
                    "" => (h, None),
                    p => (h, Some(p.strip_prefix(':').ok_or_else(|| bad("bad port"))?)),
                }
            } else {
                match s.rsplit_once(':') {
                    Some((h, p)) if !h.contains(':') => (h, Some(p)),
                    Some(_) => (s, None),
                    None => (s, None),
                }
            };
            let port = match port {
                None => None,
                Some(p) => Some(p.parse::<u16>().map_err(|_| bad("bad port"))?),
            };
            if host.is_empty() {
                return Err(bad("expected a host or host:port"));
            }
            entries.push((host.to_ascii_lowercase(), port));
        }
        Ok(AllowedHosts { entries })
    }

    /// Whether the proxy may send requests to `url`'s host and port.
    pub fn allows(&self, url: &HttpUrl) -> bool {
        let host = url.host.to_ascii_lowercase();
        self.entries
            .iter()
            .any(|(h, p)| *h == host && p.is_none_or(|p| p == url.port))
    }
}
