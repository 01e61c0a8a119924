//! Picking the agent of a request (issue #23): the [`Router`] of the HTTP
//! listener (`Host`, then the longest path prefix) and the [`GrpcRouter`]
//! of a gRPC listener serving several agents (`:authority`), over each
//! agent's [`AgentRoute`] (its name, prefix and hosts).

use super::DEFAULT_AGENT;

/// A `hosts` entry: a host name (lower case, no trailing dot) and, when
/// given, the one port it matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    pub host: String,
    pub port: Option<u16>,
}

impl HostPattern {
    /// Parses `name`, `name:port`, an IP literal or `[v6]:port`; `None`
    /// when it is none of these.
    pub fn parse(s: &str) -> Option<HostPattern> {
        let s = s.trim();
        if s.is_empty()
            || s.len() > 255
            || s.chars()
                .any(|c| c.is_whitespace() || matches!(c, '/' | '@' | '?' | '#' | '*' | ','))
        {
            return None;
        }
        let (host, port) = split_host_port(s)?;
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            return None;
        }
        Some(HostPattern { host, port })
    }

    /// `host` as a request gives it (any case, a trailing dot ignored).
    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host.trim_end_matches('.'))
            && (self.port.is_none() || self.port == port)
    }

    /// `host` as a gRPC call gives it, whatever the port.
    fn matches_name(&self, host: &str) -> bool {
        self.host.eq_ignore_ascii_case(host.trim_end_matches('.'))
    }

    /// Whether one request could match both.
    pub(crate) fn overlaps(&self, other: &HostPattern) -> bool {
        self.host == other.host
            && (self.port.is_none() || other.port.is_none() || self.port == other.port)
    }
}

/// `host[:port]` or `[v6][:port]` split; `None` when the port is not a
/// number or brackets are unbalanced.
fn split_host_port(s: &str) -> Option<(&str, Option<u16>)> {
    if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        return match after {
            "" => Some((h, None)),
            p => Some((h, Some(p.strip_prefix(':')?.parse().ok()?))),
        };
    }
    match s.rsplit_once(':') {
        // A bare IPv6 literal: no port.
        Some((h, _)) if h.contains(':') => Some((s, None)),
        Some((h, p)) => Some((h, Some(p.parse().ok()?))),
        None => Some((s, None)),
    }
}

/// Where one agent is served: its name, path prefix and hosts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRoute {
    /// The `agent` label of its metrics.
    pub name: String,
    /// Path prefix without a trailing `/`; empty: every path.
    pub prefix: String,
    /// Empty: every host.
    pub hosts: Vec<HostPattern>,
    /// It takes the gRPC calls of its gRPC listener that name no agent's
    /// host ([`GrpcRouter`]): the one agent of a listener of its own, the
    /// default agent of the shared one.
    pub grpc_default: bool,
}

impl Default for AgentRoute {
    fn default() -> AgentRoute {
        AgentRoute {
            name: DEFAULT_AGENT.into(),
            prefix: String::new(),
            hosts: Vec::new(),
            grpc_default: true,
        }
    }
}

impl AgentRoute {
    /// `(host rank, prefix length)` when this agent serves the request.
    fn score(&self, host: Option<(&str, Option<u16>)>, path: &str) -> Option<(u8, usize)> {
        let host_rank = if self.hosts.is_empty() {
            0
        } else {
            let (h, p) = host?;
            if !self.hosts.iter().any(|x| x.matches(h, p)) {
                return None;
            }
            1
        };
        on_prefix(path, &self.prefix).then_some((host_rank, self.prefix.len()))
    }
}

/// Whether `path` is `prefix` or below it on a segment boundary.
pub(crate) fn on_prefix(path: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// Picks the agent of a request: among the agents whose hosts (if any)
/// hold the request's host and whose prefix (if any) the path is on, the
/// one named by host over one for every host, then the longest prefix.
#[derive(Debug, Clone)]
pub struct Router {
    routes: Vec<AgentRoute>,
}

impl Router {
    pub fn new(routes: Vec<AgentRoute>) -> Router {
        Router { routes }
    }

    /// The index of the agent serving `host` (the `Host` header or the
    /// URI's authority, port optional) and `path`; `None`: no agent.
    pub fn pick(&self, host: Option<&str>, path: &str) -> Option<usize> {
        let host = host.and_then(|h| split_host_port(h.trim()));
        let mut best: Option<((u8, usize), usize)> = None;
        for (i, r) in self.routes.iter().enumerate() {
            if let Some(score) = r.score(host, path) {
                if best.is_none_or(|(b, _)| score > b) {
                    best = Some((score, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    pub fn routes(&self) -> &[AgentRoute] {
        &self.routes
    }
}

/// Picks the agent of a gRPC call on a listener serving several agents,
/// by the call's `:authority` (or `Host`): its host name (any case, a
/// trailing dot ignored; the port is ignored, a gRPC listener's port is
/// never the one an HTTP `hosts` entry names) against each agent's
/// `hosts`. Several agents naming the host (by prefix on HTTP): the one
/// with the shortest prefix, then the first. No agent naming it: the
/// listener's default agent, if it has one. Path prefixes play no part
/// (a gRPC path is `/package.Service/Method`).
#[derive(Debug, Clone)]
pub struct GrpcRouter {
    routes: Vec<AgentRoute>,
    default: Option<usize>,
}

impl GrpcRouter {
    /// The router of the agents served on one gRPC listener, in config
    /// order. One agent alone takes every call.
    pub fn new(routes: Vec<AgentRoute>) -> GrpcRouter {
        let default = routes.iter().position(|r| r.grpc_default);
        GrpcRouter { routes, default }
    }

    /// The index of the agent serving a call whose authority is
    /// `authority` (`host[:port]`); `None`: no agent.
    pub fn pick(&self, authority: Option<&str>) -> Option<usize> {
        if self.routes.len() == 1 && self.default == Some(0) {
            return Some(0);
        }
        let host = authority
            .and_then(|a| split_host_port(a.trim()))
            .map(|(h, _)| h);
        let by_host = host.and_then(|h| {
            self.routes
                .iter()
                .enumerate()
                .filter(|(_, r)| r.hosts.iter().any(|p| p.matches_name(h)))
                .min_by_key(|(i, r)| (r.prefix.len(), *i))
                .map(|(i, _)| i)
        });
        by_host.or(self.default)
    }

    pub fn routes(&self) -> &[AgentRoute] {
        &self.routes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn route(name: &str, prefix: &str, hosts: &[&str]) -> AgentRoute {
        AgentRoute {
            name: name.into(),
            prefix: prefix.into(),
            hosts: hosts
                .iter()
                .map(|h| HostPattern::parse(h).unwrap())
                .collect(),
            grpc_default: false,
        }
    }

    #[test]
    fn host_first_then_longest_prefix_on_a_segment_boundary() {
        let r = Router::new(vec![
            route("a", "/a", &[]),
            route("ab", "/a/b", &[]),
            route("h", "", &["A.example.com"]),
            route("hp", "", &["p.example.com:8443"]),
        ]);
        assert_eq!(r.pick(Some("127.0.0.1:80"), "/a"), Some(0));
        assert_eq!(r.pick(Some("127.0.0.1:80"), "/a/x"), Some(0));
        assert_eq!(r.pick(None, "/a/b/x"), Some(1));
        assert_eq!(r.pick(None, "/ab"), None);
        assert_eq!(r.pick(None, "/"), None);
        assert_eq!(r.pick(Some("a.example.com"), "/a/x"), Some(2));
        assert_eq!(r.pick(Some("a.EXAMPLE.com.:9"), "/z"), Some(2));
        assert_eq!(r.pick(Some("p.example.com:8443"), "/"), Some(3));
        assert_eq!(r.pick(Some("p.example.com:8444"), "/"), None);
        assert_eq!(r.pick(Some("p.example.com"), "/"), None);
        assert_eq!(r.pick(Some("[::1]:80"), "/a"), Some(0));
    }

    #[test]
    fn one_catch_all_takes_what_no_other_does() {
        let r = Router::new(vec![route("all", "", &[]), route("a", "/a", &[])]);
        assert_eq!(r.pick(None, "/x"), Some(0));
        assert_eq!(r.pick(None, "/a/x"), Some(1));
    }

    #[test]
    fn grpc_calls_go_by_authority_host_then_to_the_default() {
        let mut d = route("d", "", &[]);
        d.grpc_default = true;
        let r = GrpcRouter::new(vec![
            route("a", "/a", &["a.example"]),
            route("a2", "", &["a.example"]),
            d,
            route("b", "", &["B.example:8443"]),
        ]);
        // Several agents on one host: the shortest prefix.
        assert_eq!(r.pick(Some("a.example:50051")), Some(1));
        // The port is ignored; case and a trailing dot too.
        assert_eq!(r.pick(Some("b.EXAMPLE.:1")), Some(3));
        assert_eq!(r.pick(Some("b.example")), Some(3));
        assert_eq!(r.pick(Some("c.example")), Some(2));
        assert_eq!(r.pick(Some("")), Some(2));
        assert_eq!(r.pick(None), Some(2));
        // No default: only named hosts are served.
        let r = GrpcRouter::new(vec![
            route("a", "", &["a.example"]),
            route("b", "", &["[::1]"]),
        ]);
        assert_eq!(r.pick(Some("[::1]:9")), Some(1));
        assert_eq!(r.pick(Some("c.example")), None);
        assert_eq!(r.pick(Some("a.example@x")), None);
        assert_eq!(r.pick(None), None);
        let r = GrpcRouter::new(vec![route("a", "", &["a.example"])]);
        assert_eq!(r.pick(Some("a.example")), Some(0));
        assert_eq!(r.pick(Some("b.example")), None);
        // The one agent of its own listener: every call.
        let mut own = route("a", "/a", &["a.example"]);
        own.grpc_default = true;
        assert_eq!(GrpcRouter::new(vec![own]).pick(Some("b.example")), Some(0));
    }
}
