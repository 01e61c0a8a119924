//! Pure request classification: (HTTP method, path, headers, JSON-RPC method)
//! → [`Route`]. No IO; table-tested below.
//!
//! # Which version a client speaks
//!
//! * The `A2A-Version` header decides; when it is absent or empty the
//!   `A2A-Version` query parameter (key matched case-insensitively) is used;
//!   when both are absent or empty the client speaks 0.3 (spec v1.0 §3.6.2).
//!   Only `Major.Minor` counts ([`ProtocolVersion::from_header`]): 0.3
//!   and every 1.N are read; the wire family ([`Version`]) goes in
//!   [`Route::client_version`], the precise version in
//!   [`Route::client_protocol`].
//! * REST: the version is decided by the header/query **first** and only then
//!   is the path parsed with that version's grammar, so with `A2A-Version: 1.0`
//!   the path `/v1/tasks/x` means tenant `v1` (EDGE-CASES 2, 31). The path
//!   alone never decides.
//! * JSON-RPC, when the header and the method disagree (EDGE-CASES 3): **a
//!   known method name wins**. The two method-name sets are disjoint and the
//!   method name fixes the shape of `params`, so `SendMessage` without a
//!   header is a v1.0 call (as a2a-js does, unlike a2a-python's -32009) and
//!   `message/send` with `A2A-Version: 1.0` is a v0.3 call. The disagreement
//!   is recorded in [`Route::version_conflict`] for logs and metrics. For an
//!   unknown or missing method the header/query decides.
//! * An unparseable or unsupported version value is always an error
//!   ([`RouteError`], rendered as VersionNotSupported -32009). It is rendered in
//!   the dialect of the JSON-RPC method when that is known, otherwise as v1.0,
//!   because only v1.0-era clients send the header at all.
//!
//! # Which 1.N minors are served (A2A 1.x readiness)
//!
//! Every 1.N shares the v1.0 wire shapes, so translators work on the
//! family; the minor decides three things, all here and pure:
//! * [`refused_minor`]: a JSON-RPC or REST call whose 1.N is newer than
//!   what the proxy serves for this agent ([`served_v1`]: the agent's own
//!   1.N, or 1.0 for a v0.3 agent, the version translation produces) is
//!   VersionNotSupported, as the spec requires of an agent, unless
//!   `versions.newer_minor = "passthrough"`. Earlier minors of a 1.N agent
//!   pass through: the agent answers them by their `A2A-Version`.
//! * [`upstream_header`]: the `A2A-Version` sent upstream is the client's
//!   own `Major.Minor` when the call stays in its family (passthrough), and
//!   the family's first version (`0.3`, `1.0`) when the proxy translates:
//!   a v0.3 client of a 1.1 agent is served by talking 1.0 to it.
//! * The agent's version is read from its card (`card::card_protocol`: the
//!   highest 1.N among its interfaces) or `upstream.version`.

use http::{HeaderMap, Method};

use translate::method::Method as Op;

use crate::config::NewerMinor;
use crate::version::{UnsupportedVersion, Version};
use translate::version::ProtocolVersion;

/// Header and query parameter carrying the client's version.
pub const VERSION_HEADER: &str = "a2a-version";

pub use crate::binding::Binding;

/// The version and operation of a JSON-RPC method name of either version
/// (MAPPING-FACTS §1; names matched exactly, [`Op::from_name`]).
pub fn jsonrpc_method(name: &str) -> Option<(Version, Op)> {
    Op::from_name(name).map(|(m, v)| (v, m))
}

/// Values taken from a REST path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathParams {
    /// v1.0 `/{tenant}` prefix.
    pub tenant: Option<String>,
    pub task_id: Option<String>,
    /// Push notification config id.
    pub config_id: Option<String>,
}

/// The classification of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The wire version the client speaks (errors are rendered in it).
    pub client_version: Version,
    /// The precise version the client speaks: its `A2A-Version` when that
    /// names `client_version`'s family, else the family's first version
    /// (a v0.3 method under `A2A-Version: 1.1` is a 0.3 call).
    pub client_protocol: ProtocolVersion,
    pub binding: Binding,
    /// `None` for local endpoints, [`Binding::Other`] and unknown JSON-RPC methods.
    pub operation: Option<Op>,
    pub params: PathParams,
    /// A known JSON-RPC method disagreed with the header/query version.
    pub version_conflict: bool,
}

/// The request could not be classified: its version value is unsupported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteError {
    pub unsupported: UnsupportedVersion,
    /// The dialect to answer in.
    pub render_version: Version,
    pub binding: Binding,
    pub operation: Option<Op>,
}

/// The parts of a request that classification looks at.
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    pub method: &'a Method,
    /// Path relative to the proxy's public base path, starting with `/`.
    pub path: &'a str,
    /// The part of `path` under the agent's HTTP+JSON interface, read with
    /// the REST grammar; `None`: not under it, no REST operation ([`locate`]).
    pub rest_path: Option<&'a str>,
    pub query: Option<&'a str>,
    pub headers: &'a HeaderMap,
    /// The JSON-RPC `method` member, when the body was read and had one.
    pub jsonrpc_method: Option<&'a str>,
}

/// The raw version value from the header, else the query parameter.
pub fn version_value<'a>(headers: &'a HeaderMap, query: Option<&'a str>) -> Option<&'a str> {
    let header = headers
        .get(VERSION_HEADER)
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
        .filter(|v| !v.trim().is_empty());
    header.or_else(|| {
        query?.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k.eq_ignore_ascii_case(VERSION_HEADER) && !v.trim().is_empty()).then_some(v)
        })
    })
}

/// `GET /health`, `/ready`, `/metrics`: answered by the proxy whatever
/// else the request says (and without asking the agent anything first).
pub fn local_endpoint(method: &Method, path: &str) -> Option<Binding> {
    if method != Method::GET && method != Method::HEAD {
        return None;
    }
    match path {
        "/health" => Some(Binding::Health),
        "/ready" => Some(Binding::Ready),
        "/metrics" => Some(Binding::Metrics),
        _ => None,
    }
}

/// Classifies a request.
pub fn classify(req: &RequestInfo<'_>) -> Result<Route, RouteError> {
    let precise = ProtocolVersion::from_header(version_value(req.headers, req.query));
    if let Some(binding) = local_endpoint(req.method, req.path) {
        // Local endpoints answer whatever the version header says.
        let version = precise.as_ref().map_or(Version::V03, |p| p.family());
        let protocol = *precise.as_ref().unwrap_or(&ProtocolVersion::V0_3);
        return Ok(Route::plain(version, protocol, binding));
    }
    let known = req.jsonrpc_method.and_then(jsonrpc_method);
    let precise = match precise {
        Ok(p) => p,
        Err(unsupported) => return Err(unsupported_version(req, known, unsupported)),
    };
    let is_get = req.method == Method::GET || req.method == Method::HEAD;
    if let Some(legacy_path) = is_card_path(req.path).filter(|_| is_get) {
        let card = Binding::AgentCard { legacy_path };
        return Ok(Route::plain(precise.family(), precise, card));
    }
    Ok(call_route(req, precise, known))
}

impl Route {
    /// A route of `binding` without an operation or path parameters.
    fn plain(client_version: Version, client_protocol: ProtocolVersion, binding: Binding) -> Route {
        Route {
            client_version,
            client_protocol,
            binding,
            operation: None,
            params: PathParams::default(),
            version_conflict: false,
        }
    }
}

/// The error for a request whose version value is `unsupported`, with the
/// binding (and operation) it is answered on: a known JSON-RPC method, a
/// card path, a v1.0 REST route, any other POST as JSON-RPC.
fn unsupported_version(
    req: &RequestInfo<'_>,
    known: Option<(Version, Op)>,
    unsupported: UnsupportedVersion,
) -> RouteError {
    let is_get = req.method == Method::GET || req.method == Method::HEAD;
    let (binding, operation) = if let Some((_, op)) = known {
        (Binding::JsonRpc, Some(op))
    } else if let Some(legacy_path) = is_card_path(req.path).filter(|_| is_get) {
        (Binding::AgentCard { legacy_path }, None)
    } else if let Some((op, _)) = req
        .rest_path
        .and_then(|p| rest_route(Version::V10, req.method, p))
    {
        (Binding::Rest, Some(op))
    } else if req.method == Method::POST {
        (Binding::JsonRpc, None)
    } else {
        (Binding::Other, None)
    };
    RouteError {
        unsupported,
        render_version: known.map_or(Version::V10, |(v, _)| v),
        binding,
        operation,
    }
}

/// The route of a call (neither a local endpoint nor a card) from a client
/// that declared `precise`: a REST route of its version, else JSON-RPC for
/// a POST (a known method names its own version; disagreeing with the
/// declared one is a conflict), else [`Binding::Other`].
fn call_route(
    req: &RequestInfo<'_>,
    precise: ProtocolVersion,
    known: Option<(Version, Op)>,
) -> Route {
    let declared = precise.family();
    if let Some((op, params)) = req
        .rest_path
        .and_then(|p| rest_route(declared, req.method, p))
    {
        return Route {
            operation: Some(op),
            params,
            ..Route::plain(declared, precise, Binding::Rest)
        };
    }
    if req.method != Method::POST {
        return Route::plain(declared, precise, Binding::Other);
    }
    let Some((version, op)) = known else {
        return Route::plain(declared, precise, Binding::JsonRpc);
    };
    // The precise version of a call in family `version`.
    let protocol = if version == declared {
        precise
    } else {
        ProtocolVersion::of(version)
    };
    Route {
        operation: Some(op),
        version_conflict: version != declared,
        ..Route::plain(version, protocol, Binding::JsonRpc)
    }
}

// Interface endpoints (area: paths).
/// The part of `path` under the interface path `prefix` (`""`: the base,
/// everything is under it), starting with `/`; `None`: not under it.
pub fn under<'a>(prefix: &str, path: &'a str) -> Option<&'a str> {
    if prefix.is_empty() {
        return Some(path);
    }
    match path.strip_prefix(prefix) {
        Some("") => Some("/"),
        Some(rest) if rest.starts_with('/') => Some(rest),
        _ => None,
    }
}

/// Which of the agent's interfaces a request addresses and where it goes:
/// the one decision every binding of the HTTP front uses.
///
/// * Under the path the HTTP+JSON interface is advertised at, the part
///   under it is read with the REST grammar (`/rest/message:send` with the
///   agent's REST at `…/rest`: `rest` is never a v1.0 tenant) and a REST
///   operation goes to that interface's agent URL with that part appended.
///   A REST path elsewhere is read whole and goes to `upstream.url` under
///   its path, as before interfaces had paths.
/// * A POST to the JSON-RPC interface's path goes to its agent URL.
/// * Everything else goes to `upstream.url` under its path, as it came.
///
/// `req.rest_path` is set here; `path` is relative to the public base.
pub fn locate(
    req: &RequestInfo<'_>,
    ends: &crate::card::endpoints::Endpoints,
    upstream: &crate::config::HttpUrl,
) -> (Result<Route, RouteError>, crate::card::endpoints::Dest) {
    use crate::card::endpoints::Dest;
    let rest_prefix = ends.rest.as_ref().map_or("", |r| r.public_path.as_str());
    let mut rest_path = under(rest_prefix, req.path);
    let mut routed = classify(&RequestInfo { rest_path, ..*req });
    let is_rest = |r: &Result<Route, RouteError>| match r {
        Ok(r) => r.binding == Binding::Rest,
        Err(e) => e.binding == Binding::Rest,
    };
    if !is_rest(&routed) && rest_path != Some(req.path) {
        // Not a REST path under the interface: the whole path, read as
        // before there were interface paths, to upstream.url.
        let whole = classify(&RequestInfo {
            rest_path: Some(req.path),
            ..*req
        });
        if is_rest(&whole) {
            (routed, rest_path) = (whole, None);
        }
    }
    let binding = match &routed {
        Ok(r) => &r.binding,
        Err(e) => &e.binding,
    };
    let with_query = |mut p: String| {
        if p.is_empty() {
            p.push('/');
        }
        if let Some(q) = req.query {
            p.push('?');
            p.push_str(q);
        }
        p
    };
    let to = |url: &crate::config::HttpUrl, tail: &str| Dest {
        url: url.clone(),
        path_and_query: with_query(format!("{}{tail}", url.base_path)),
    };
    let base = || to(upstream, req.path);
    let dest = match (binding, routed.is_ok()) {
        (Binding::Rest, true) => match (&ends.rest, rest_path) {
            (Some(r), Some(tail)) => to(&r.url, tail),
            _ => base(),
        },
        (Binding::JsonRpc, true) => match &ends.jsonrpc {
            Some(j) => match under(&j.public_path, req.path) {
                Some(tail @ ("/" | "")) => {
                    let tail = if req.path.ends_with('/') { tail } else { "" };
                    to(&j.url, tail)
                }
                _ => base(),
            },
            None => base(),
        },
        _ => base(),
    };
    (routed, dest)
}

/// The newest 1.N the proxy serves for an agent speaking `upstream`: the
/// agent's own 1.N (earlier minors pass through too), or 1.0 for a v0.3
/// agent (what translation produces).
pub fn served_v1(upstream: ProtocolVersion) -> ProtocolVersion {
    match upstream.family() {
        Version::V03 => ProtocolVersion::V1_0,
        Version::V10 => upstream,
    }
}

/// Whether the minor can matter for `route`: a JSON-RPC or REST call of a
/// 1.N client with N > 0 (0.3 and 1.0 calls are always served, so they
/// never wait for the agent's version here).
pub fn minor_matters(route: &Route) -> bool {
    matches!(route.binding, Binding::JsonRpc | Binding::Rest)
        && route.client_version == Version::V10
        && route.client_protocol > ProtocolVersion::V1_0
}

/// `Some(served)` when `route`'s call must be refused: its 1.N is newer
/// than [`served_v1`] of the agent's `upstream` version and `policy` is
/// [`NewerMinor::Refuse`].
pub fn refused_minor(
    route: &Route,
    upstream: ProtocolVersion,
    policy: NewerMinor,
) -> Option<ProtocolVersion> {
    let served = served_v1(upstream);
    (minor_matters(route) && route.client_protocol > served && policy == NewerMinor::Refuse)
        .then_some(served)
}

/// The `A2A-Version` sent to an agent whose family is `upstream` for
/// `route`'s call: the client's own `Major.Minor` when the call stays in
/// its family (passthrough: a 1.1 client's call reaches a 1.1 agent as
/// 1.1), else `upstream`'s first version (the proxy translates, and speaks
/// only 0.3 and 1.0 itself).
pub fn upstream_header(route: Option<&Route>, upstream: Version) -> std::borrow::Cow<'static, str> {
    match route {
        Some(r) if r.client_version == upstream && r.client_protocol.family() == upstream => {
            r.client_protocol.to_string().into()
        }
        _ => upstream.as_str().into(),
    }
}

/// `Some(legacy)` for the two well-known card paths.
fn is_card_path(path: &str) -> Option<bool> {
    match path {
        "/.well-known/agent-card.json" => Some(false),
        "/.well-known/agent.json" => Some(true),
        _ => None,
    }
}

/// Parses a REST path with `version`'s grammar (MAPPING-FACTS §2).
pub fn rest_route(version: Version, method: &Method, path: &str) -> Option<(Op, PathParams)> {
    let rest = path.strip_prefix('/')?;
    let segs: Vec<&str> = rest.split('/').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return None;
    }
    match version {
        Version::V03 => {
            let (first, tail) = segs.split_first()?;
            if *first != "v1" {
                return None;
            }
            rest_ops(version, method, tail, None)
        }
        Version::V10 => rest_ops(version, method, &segs, None).or_else(|| {
            let (tenant, tail) = segs.split_first()?;
            rest_ops(version, method, tail, Some(tenant))
        }),
    }
}

/// A path segment with its `%XX` escapes decoded; as it is when they do not
/// decode to UTF-8 (its escapes are then kept, and sent on as they came).
pub fn percent_decoded(segment: &str) -> String {
    let b = segment.as_bytes();
    if !b.contains(&b'%') {
        return segment.to_string();
    }
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (
            b[i],
            b.get(i + 1).and_then(|c| hex(*c)),
            b.get(i + 2).and_then(|c| hex(*c)),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push(h << 4 | l);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| segment.to_string())
}

fn rest_ops(
    version: Version,
    method: &Method,
    segs: &[&str],
    tenant: Option<&str>,
) -> Option<(Op, PathParams)> {
    // Ids in a path are percent-encoded once; the params hold them as
    // they are (encoded once again only where a path is built).
    let params = |task: Option<&str>, config: Option<&str>| PathParams {
        tenant: tenant.map(percent_decoded),
        task_id: task.map(percent_decoded),
        config_id: config.map(percent_decoded),
    };
    let get = method == Method::GET;
    let post = method == Method::POST;
    let delete = method == Method::DELETE;
    let op = match segs {
        ["message:send"] if post => (Op::SendMessage, params(None, None)),
        ["message:stream"] if post => (Op::SendStreamingMessage, params(None, None)),
        ["card"] if get && version == Version::V03 => (Op::GetExtendedCard, params(None, None)),
        ["extendedAgentCard"] if get && version == Version::V10 => {
            (Op::GetExtendedCard, params(None, None))
        }
        // v0.3 has no ListTasks in its proto, but some v0.3 servers (Go) serve it.
        ["tasks"] if get => (Op::ListTasks, params(None, None)),
        ["tasks", last] => {
            if let Some(id) = last.strip_suffix(":cancel") {
                if !post || id.is_empty() {
                    return None;
                }
                (Op::CancelTask, params(Some(id), None))
            } else if let Some(id) = last.strip_suffix(":subscribe") {
                // Both verbs: the protos say GET, the spec texts say POST.
                if !(get || post) || id.is_empty() {
                    return None;
                }
                (Op::SubscribeToTask, params(Some(id), None))
            } else if get && !last.contains(':') {
                (Op::GetTask, params(Some(last), None))
            } else {
                return None;
            }
        }
        ["tasks", id, "pushNotificationConfigs"] if post => {
            (Op::CreatePushConfig, params(Some(id), None))
        }
        ["tasks", id, "pushNotificationConfigs"] if get => {
            (Op::ListPushConfigs, params(Some(id), None))
        }
        ["tasks", id, "pushNotificationConfigs", cid] if get => {
            (Op::GetPushConfig, params(Some(id), Some(cid)))
        }
        ["tasks", id, "pushNotificationConfigs", cid] if delete => {
            (Op::DeletePushConfig, params(Some(id), Some(cid)))
        }
        _ => return None,
    };
    Some(op)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    struct Case {
        method: Method,
        path: &'static str,
        query: Option<&'static str>,
        header: Option<&'static str>,
        rpc: Option<&'static str>,
    }

    fn case(method: Method, path: &'static str) -> Case {
        Case {
            method,
            path,
            query: None,
            header: None,
            rpc: None,
        }
    }

    impl Case {
        fn h(mut self, v: &'static str) -> Case {
            self.header = Some(v);
            self
        }
        fn q(mut self, q: &'static str) -> Case {
            self.query = Some(q);
            self
        }
        fn rpc(mut self, m: &'static str) -> Case {
            self.rpc = Some(m);
            self
        }
        fn run(&self) -> Result<Route, RouteError> {
            let mut headers = HeaderMap::new();
            if let Some(h) = self.header {
                headers.insert("A2A-Version", HeaderValue::from_static(h));
            }
            classify(&RequestInfo {
                method: &self.method,
                path: self.path,
                rest_path: Some(self.path),
                query: self.query,
                headers: &headers,
                jsonrpc_method: self.rpc,
            })
        }
    }

    fn tenant(t: &str, task: Option<&str>, cfg: Option<&str>) -> PathParams {
        PathParams {
            tenant: Some(t.into()),
            task_id: task.map(Into::into),
            config_id: cfg.map(Into::into),
        }
    }

    fn plain(task: Option<&str>, cfg: Option<&str>) -> PathParams {
        PathParams {
            tenant: None,
            task_id: task.map(Into::into),
            config_id: cfg.map(Into::into),
        }
    }
    use Version::{V03, V10};

    #[test]
    fn rest_table() {
        let g = || Method::GET;
        let p = || Method::POST;
        let d = || Method::DELETE;
        #[rustfmt::skip]
        let table: Vec<(Case, Version, Op, PathParams)> = vec![
            // v0.3: no header, /v1 prefix.
            (case(p(), "/v1/message:send"), V03, Op::SendMessage, plain(None, None)),
            (case(p(), "/v1/message:stream"), V03, Op::SendStreamingMessage, plain(None, None)),
            (case(g(), "/v1/tasks/t1"), V03, Op::GetTask, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks"), V03, Op::ListTasks, plain(None, None)),
            (case(p(), "/v1/tasks/t1:cancel"), V03, Op::CancelTask, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks/t1:subscribe"), V03, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/v1/tasks/t1:subscribe"), V03, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/v1/tasks/t1/pushNotificationConfigs"), V03, Op::CreatePushConfig, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks/t1/pushNotificationConfigs"), V03, Op::ListPushConfigs, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks/t1/pushNotificationConfigs/c1"), V03, Op::GetPushConfig, plain(Some("t1"), Some("c1"))),
            (case(d(), "/v1/tasks/t1/pushNotificationConfigs/c1"), V03, Op::DeletePushConfig, plain(Some("t1"), Some("c1"))),
            (case(g(), "/v1/card"), V03, Op::GetExtendedCard, plain(None, None)),
            (case(g(), "/v1/tasks/t1").h("0.3.2"), V03, Op::GetTask, plain(Some("t1"), None)),
            // v1.0: header, no prefix.
            (case(p(), "/message:send").h("1.0"), V10, Op::SendMessage, plain(None, None)),
            (case(p(), "/message:stream").h("1.0"), V10, Op::SendStreamingMessage, plain(None, None)),
            (case(g(), "/tasks/t1").h("1.0"), V10, Op::GetTask, plain(Some("t1"), None)),
            (case(g(), "/tasks").h("1.0"), V10, Op::ListTasks, plain(None, None)),
            (case(p(), "/tasks/t1:cancel").h("1.0"), V10, Op::CancelTask, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1:subscribe").h("1.0"), V10, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/tasks/t1:subscribe").h("1.0"), V10, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/tasks/t1/pushNotificationConfigs").h("1.0"), V10, Op::CreatePushConfig, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1/pushNotificationConfigs").h("1.0"), V10, Op::ListPushConfigs, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::GetPushConfig, plain(Some("t1"), Some("c1"))),
            (case(d(), "/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::DeletePushConfig, plain(Some("t1"), Some("c1"))),
            (case(g(), "/extendedAgentCard").h("1.0"), V10, Op::GetExtendedCard, plain(None, None)),
            // v1.0 with tenant prefixes.
            (case(p(), "/acme/message:send").h("1.0"), V10, Op::SendMessage, tenant("acme", None, None)),
            (case(g(), "/acme/tasks/t1").h("1.0.1"), V10, Op::GetTask, tenant("acme", Some("t1"), None)),
            (case(g(), "/acme/tasks").h("1.0"), V10, Op::ListTasks, tenant("acme", None, None)),
            (case(g(), "/acme/extendedAgentCard").h("1.0"), V10, Op::GetExtendedCard, tenant("acme", None, None)),
            (case(d(), "/acme/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::DeletePushConfig, tenant("acme", Some("t1"), Some("c1"))),
            // Tenant `v1` under a v1.0 header is a tenant, never the v0.3 prefix.
            (case(p(), "/v1/message:send").h("1.0"), V10, Op::SendMessage, tenant("v1", None, None)),
            (case(g(), "/v1/tasks/t1").h("1.0"), V10, Op::GetTask, tenant("v1", Some("t1"), None)),
            // Version by query parameter.
            (case(g(), "/tasks/t1").q("A2A-Version=1.0"), V10, Op::GetTask, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1").q("x=1&a2a-version=1.0"), V10, Op::GetTask, plain(Some("t1"), None)),
            // The header wins over the query parameter.
            (case(g(), "/v1/tasks/t1").h("0.3").q("A2A-Version=1.0"), V03, Op::GetTask, plain(Some("t1"), None)),
        ];
        for (c, version, op, params) in table {
            let r = c
                .run()
                .unwrap_or_else(|e| panic!("{} {}: {e:?}", c.method, c.path));
            assert_eq!(r.binding, Binding::Rest, "{} {}", c.method, c.path);
            assert_eq!(r.client_version, version, "{} {}", c.method, c.path);
            assert_eq!(r.operation, Some(op), "{} {}", c.method, c.path);
            assert_eq!(r.params, params, "{} {}", c.method, c.path);
        }
    }

    #[test]
    fn not_rest() {
        #[rustfmt::skip]
        let table: Vec<(Case, Binding)> = vec![
            // v1.0 path without header: the path alone never decides.
            (case(Method::GET, "/tasks/t1"), Binding::Other),
            (case(Method::GET, "/extendedAgentCard"), Binding::Other),
            // v0.3 card path under v1.0 is tenant `v1` + unknown op.
            (case(Method::GET, "/v1/card").h("1.0"), Binding::Other),
            (case(Method::GET, "/v1/tasks/t1:cancel"), Binding::Other),
            (case(Method::PUT, "/v1/message:send"), Binding::Other),
            (case(Method::GET, "/v1/tasks/"), Binding::Other),
            // POSTs that are not REST go to the JSON-RPC endpoint.
            (case(Method::POST, "/"), Binding::JsonRpc),
            (case(Method::POST, "/a2a/jsonrpc").h("1.0"), Binding::JsonRpc),
            (case(Method::POST, "/message:send"), Binding::JsonRpc),
            // Local endpoints and the card.
            (case(Method::GET, "/health"), Binding::Health),
            (case(Method::GET, "/ready").h("1.0"), Binding::Ready),
            (case(Method::GET, "/metrics"), Binding::Metrics),
            (case(Method::GET, "/.well-known/agent-card.json"), Binding::AgentCard { legacy_path: false }),
            (case(Method::GET, "/.well-known/agent.json").h("1.0"), Binding::AgentCard { legacy_path: true }),
            (case(Method::POST, "/health"), Binding::JsonRpc),
        ];
        for (c, binding) in table {
            let r = c.run().unwrap();
            assert_eq!(r.binding, binding, "{} {}", c.method, c.path);
            if binding != Binding::Rest {
                assert_eq!(r.operation, None, "{} {}", c.method, c.path);
            }
        }
    }

    #[test]
    fn jsonrpc_disagreement_rule() {
        let p = || Method::POST;
        #[rustfmt::skip]
        let table: Vec<(Case, Version, Option<Op>, bool)> = vec![
            (case(p(), "/").rpc("message/send"), V03, Some(Op::SendMessage), false),
            (case(p(), "/").rpc("SendMessage").h("1.0"), V10, Some(Op::SendMessage), false),
            // The method name wins over the header.
            (case(p(), "/").rpc("SendMessage"), V10, Some(Op::SendMessage), true),
            (case(p(), "/").rpc("tasks/get").h("1.0"), V03, Some(Op::GetTask), true),
            (case(p(), "/").rpc("ListTasks").h("0.3"), V10, Some(Op::ListTasks), true),
            // Unknown or missing methods follow the header.
            (case(p(), "/").rpc("tasks/list").h("1.0"), V10, None, false),
            (case(p(), "/").rpc("nope"), V03, None, false),
            (case(p(), "/"), V03, None, false),
            (case(p(), "/").h("1.0"), V10, None, false),
            (case(p(), "/rpc").rpc("tasks/resubscribe").q("A2A-Version=0.3"), V03, Some(Op::SubscribeToTask), false),
        ];
        for (c, version, op, conflict) in table {
            let r = c.run().unwrap();
            assert_eq!(r.binding, Binding::JsonRpc, "{:?}", c.rpc);
            assert_eq!(r.client_version, version, "{:?}", c.rpc);
            assert_eq!(r.operation, op, "{:?}", c.rpc);
            assert_eq!(r.version_conflict, conflict, "{:?}", c.rpc);
        }
    }

    #[test]
    fn bad_versions() {
        #[rustfmt::skip]
        let table: Vec<(Case, Version, Binding)> = vec![
            (case(Method::POST, "/").h("2.0"), V10, Binding::JsonRpc),
            (case(Method::POST, "/").h("2.0").rpc("message/send"), V03, Binding::JsonRpc),
            (case(Method::POST, "/").h("garbage").rpc("GetTask"), V10, Binding::JsonRpc),
            (case(Method::GET, "/tasks/t1").h("0.2"), V10, Binding::Rest),
            (case(Method::GET, "/x").q("A2A-Version=9"), V10, Binding::Other),
            (case(Method::GET, "/.well-known/agent-card.json").h("2.1"), V10, Binding::AgentCard { legacy_path: false }),
            (case(Method::POST, "/").h("0.4").rpc("SendMessage"), V10, Binding::JsonRpc),
        ];
        for (c, render, binding) in table {
            let e = c.run().unwrap_err();
            assert_eq!(e.render_version, render, "{:?}", c.header);
            assert_eq!(e.binding, binding, "{:?}", c.header);
        }
        // Local endpoints ignore the version value.
        assert_eq!(
            case(Method::GET, "/health").h("9.9").run().unwrap().binding,
            Binding::Health
        );
    }

    fn pv(s: &str) -> ProtocolVersion {
        ProtocolVersion::parse(s).unwrap()
    }

    #[test]
    fn one_n_versions_are_read() {
        let p = || Method::POST;
        let g = || Method::GET;
        #[rustfmt::skip]
        let table: Vec<(Case, Version, &str, Binding)> = vec![
            (case(p(), "/").rpc("SendMessage").h("1.1"), V10, "1.1", Binding::JsonRpc),
            (case(p(), "/").h("1.3.0"), V10, "1.3", Binding::JsonRpc),
            (case(p(), "/").rpc("SendMessage").h("1.0.2"), V10, "1.0", Binding::JsonRpc),
            // Header-less v1.0 method: 1.0, as the proxy has always sent.
            (case(p(), "/").rpc("GetTask"), V10, "1.0", Binding::JsonRpc),
            // A v0.3 method wins over a 1.1 header: a 0.3 call.
            (case(p(), "/").rpc("message/send").h("1.1"), V03, "0.3", Binding::JsonRpc),
            (case(g(), "/tasks/t1").h("1.1"), V10, "1.1", Binding::Rest),
            (case(g(), "/acme/tasks/t1").q("A2A-Version=1.2"), V10, "1.2", Binding::Rest),
            (case(g(), "/v1/tasks/t1").h("0.3.1"), V03, "0.3", Binding::Rest),
            (case(g(), "/.well-known/agent-card.json").h("1.1"), V10, "1.1", Binding::AgentCard { legacy_path: false }),
            (case(g(), "/unknown").h("1.1"), V10, "1.1", Binding::Other),
        ];
        for (c, family, precise, binding) in table {
            let r = c.run().unwrap_or_else(|e| panic!("{:?}: {e:?}", c.header));
            assert_eq!(r.binding, binding, "{:?}", c.header);
            assert_eq!(r.client_version, family, "{:?}", c.header);
            assert_eq!(r.client_protocol, pv(precise), "{:?}", c.header);
        }
    }

    #[test]
    fn newer_minors_are_refused_unless_configured() {
        let rpc = |h: &'static str| {
            case(Method::POST, "/")
                .rpc("SendMessage")
                .h(h)
                .run()
                .unwrap()
        };
        let rest = |h: &'static str| case(Method::GET, "/tasks/t").h(h).run().unwrap();
        let card = case(Method::GET, "/.well-known/agent-card.json")
            .h("1.1")
            .run()
            .unwrap();
        let v03_call = case(Method::POST, "/")
            .rpc("message/send")
            .h("1.1")
            .run()
            .unwrap();
        let refuse = NewerMinor::Refuse;
        #[rustfmt::skip]
        let table: Vec<(Route, &str, Option<&str>)> = vec![
            // 1.1 client, 1.0 agent: refused, served 1.0.
            (rpc("1.1"), "1.0", Some("1.0")),
            (rest("1.1"), "1.0", Some("1.0")),
            // v0.3 agent: the proxy serves 1.0 (translation).
            (rpc("1.1"), "0.3", Some("1.0")),
            (rpc("1.0"), "0.3", None),
            // Same or earlier minor of a 1.N agent: served.
            (rpc("1.1"), "1.1", None),
            (rpc("1.0.2"), "1.1", None),
            (rpc("1.1"), "1.2", None),
            (rest("1.2"), "1.1", Some("1.1")),
            // Not a 1.N call: never refused here.
            (v03_call, "1.0", None),
            (card, "1.0", None),
        ];
        for (route, upstream, want) in table {
            let got = refused_minor(&route, pv(upstream), refuse);
            assert_eq!(
                got,
                want.map(pv),
                "{:?} -> {upstream}",
                route.client_protocol
            );
            assert_eq!(
                refused_minor(&route, pv(upstream), NewerMinor::Passthrough),
                None
            );
        }
        assert!(!minor_matters(&rpc("1.0")));
        assert!(minor_matters(&rpc("1.1")));
    }

    #[test]
    fn upstream_header_follows_the_family() {
        let rpc =
            |m: &'static str, h: &'static str| case(Method::POST, "/").rpc(m).h(h).run().unwrap();
        #[rustfmt::skip]
        let table: Vec<(Option<Route>, Version, &str)> = vec![
            // Passthrough keeps the client's Major.Minor.
            (Some(rpc("SendMessage", "1.1")), V10, "1.1"),
            (Some(rpc("SendMessage", "1.0.2")), V10, "1.0"),
            (Some(rpc("message/send", "0.3")), V03, "0.3"),
            // Translated: the family's first version (v0.3 client of a 1.1 agent: 1.0).
            (Some(rpc("message/send", "0.3")), V10, "1.0"),
            (Some(rpc("SendMessage", "1.1")), V03, "0.3"),
            (Some(rpc("message/send", "1.1")), V10, "1.0"),
            (None, V10, "1.0"),
        ];
        for (route, up, want) in table {
            assert_eq!(upstream_header(route.as_ref(), up), want, "{route:?}");
        }
    }

    #[test]
    fn locate_follows_the_interface_paths() {
        use crate::card::endpoints::{Endpoint, Endpoints};
        use crate::config::HttpUrl;
        let url = |s: &str| HttpUrl::parse("t", s).unwrap();
        let up = url("http://a:9/base");
        let at = |u: &str, p: &str| {
            Some(Endpoint {
                url: url(u),
                public_path: p.into(),
            })
        };
        let ends = Endpoints {
            jsonrpc: at("http://c:5/j", "/jsonrpc"),
            rest: at("http://b:7/x/rest", "/rest"),
            ..Endpoints::default()
        };
        let (g, p) = (Method::GET, Method::POST);
        #[rustfmt::skip]
        // (method, path, query, A2A-Version, binding, operation, agent host, agent target)
        type Row<'a> = (Method, &'a str, Option<&'a str>, Option<&'a str>, Binding, Option<Op>, &'a str, &'a str);
        let table: Vec<Row> = vec![
            // REST under its interface path: the part under it, to its URL.
            (
                p.clone(),
                "/rest/message:send",
                None,
                Some("1.0"),
                Binding::Rest,
                Some(Op::SendMessage),
                "b:7",
                "/x/rest/message:send",
            ),
            (
                g.clone(),
                "/rest/v1/tasks/t1",
                Some("historyLength=2"),
                None,
                Binding::Rest,
                Some(Op::GetTask),
                "b:7",
                "/x/rest/v1/tasks/t1?historyLength=2",
            ),
            (
                g.clone(),
                "/rest/acme/tasks/t1",
                None,
                Some("1.0"),
                Binding::Rest,
                Some(Op::GetTask),
                "b:7",
                "/x/rest/acme/tasks/t1",
            ),
            // A REST path elsewhere: read whole, to upstream.url as before.
            (
                g.clone(),
                "/tasks/t1",
                None,
                Some("1.0"),
                Binding::Rest,
                Some(Op::GetTask),
                "a:9",
                "/base/tasks/t1",
            ),
            // The JSON-RPC interface's path, with or without its slash.
            (
                p.clone(),
                "/jsonrpc",
                None,
                None,
                Binding::JsonRpc,
                None,
                "c:5",
                "/j",
            ),
            (
                p.clone(),
                "/jsonrpc/",
                Some("a=1"),
                None,
                Binding::JsonRpc,
                None,
                "c:5",
                "/j/?a=1",
            ),
            // Other POSTs, and the interface path itself: JSON-RPC, to upstream.url.
            (
                p.clone(),
                "/",
                None,
                None,
                Binding::JsonRpc,
                None,
                "a:9",
                "/base/",
            ),
            (
                p.clone(),
                "/rest",
                None,
                None,
                Binding::JsonRpc,
                None,
                "a:9",
                "/base/rest",
            ),
            (
                g.clone(),
                "/restless/x",
                None,
                None,
                Binding::Other,
                None,
                "a:9",
                "/base/restless/x",
            ),
            (
                g.clone(),
                "/.well-known/agent-card.json",
                None,
                None,
                Binding::AgentCard { legacy_path: false },
                None,
                "a:9",
                "/base/.well-known/agent-card.json",
            ),
        ];
        for (method, path, query, version, binding, op, host, target) in table {
            let mut headers = HeaderMap::new();
            if let Some(v) = version {
                headers.insert("A2A-Version", HeaderValue::from_str(v).unwrap());
            }
            let req = RequestInfo {
                method: &method,
                path,
                rest_path: None,
                query,
                headers: &headers,
                jsonrpc_method: None,
            };
            let (route, dest) = locate(&req, &ends, &up);
            let route = route.unwrap();
            assert_eq!(route.binding, binding, "{method} {path}");
            assert_eq!(route.operation, op, "{method} {path}");
            assert_eq!(dest.url.authority(), host, "{method} {path}");
            assert_eq!(dest.path_and_query, target, "{method} {path}");
        }
        // Without interface paths (the card says nothing): as before.
        let plain = Endpoints::fallback(&up);
        let headers = HeaderMap::new();
        let req = RequestInfo {
            method: &g,
            path: "/v1/tasks/t1",
            rest_path: None,
            query: None,
            headers: &headers,
            jsonrpc_method: None,
        };
        let (route, dest) = locate(&req, &plain, &up);
        assert_eq!(route.unwrap().operation, Some(Op::GetTask));
        assert_eq!(dest.path_and_query, "/base/v1/tasks/t1");
        assert_eq!(under("/rest", "/restx"), None);
        assert_eq!(under("/rest", "/rest"), Some("/"));
        assert_eq!(under("", "/a"), Some("/a"));
    }

    #[test]
    fn method_table_is_one_to_one() {
        for v in Version::ALL {
            for op in Op::ALL {
                if let Some(name) = op.name(v) {
                    assert_eq!(jsonrpc_method(name), Some((v, op)), "{name}");
                }
            }
        }
        assert_eq!(jsonrpc_method("tasks/list"), None);
        assert_eq!(jsonrpc_method("ListTasks"), Some((V10, Op::ListTasks)));
    }
}
