//! Pure request classification: (HTTP method, path, headers, JSON-RPC method)
//! → [`Route`]. No IO; table-tested below.
//!
//! # Which version a client speaks
//!
//! * The `A2A-Version` header decides; when it is absent or empty the
//!   `A2A-Version` query parameter (key matched case-insensitively) is used;
//!   when both are absent or empty the client speaks 0.3 (spec v1.0 §3.6.2).
//!   Only `Major.Minor` counts ([`Version::from_header`]).
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

use http::{HeaderMap, Method};

use crate::version::{UnsupportedVersion, Version};

/// Header and query parameter carrying the client's version.
pub const VERSION_HEADER: &str = "a2a-version";

/// What kind of endpoint a request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A POST that is not a REST path: the JSON-RPC endpoint.
    JsonRpc,
    /// An HTTP+JSON (REST) operation.
    Rest,
    /// `GET /health`, answered locally.
    Health,
    /// `GET /ready`, answered locally (upstream card reachable).
    Ready,
    /// `GET /metrics`, answered locally.
    Metrics,
    /// The public agent card; `legacy_path` for `/.well-known/agent.json`.
    AgentCard { legacy_path: bool },
    /// Anything else: forwarded unchanged, no A2A meaning attached.
    Other,
}

/// The A2A operation, named as in v1.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreateTaskPushNotificationConfig,
    GetTaskPushNotificationConfig,
    ListTaskPushNotificationConfigs,
    DeleteTaskPushNotificationConfig,
    GetExtendedAgentCard,
}

impl Operation {
    /// The v1.0 name (also the metrics label).
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::SendMessage => "SendMessage",
            Operation::SendStreamingMessage => "SendStreamingMessage",
            Operation::GetTask => "GetTask",
            Operation::ListTasks => "ListTasks",
            Operation::CancelTask => "CancelTask",
            Operation::SubscribeToTask => "SubscribeToTask",
            Operation::CreateTaskPushNotificationConfig => "CreateTaskPushNotificationConfig",
            Operation::GetTaskPushNotificationConfig => "GetTaskPushNotificationConfig",
            Operation::ListTaskPushNotificationConfigs => "ListTaskPushNotificationConfigs",
            Operation::DeleteTaskPushNotificationConfig => "DeleteTaskPushNotificationConfig",
            Operation::GetExtendedAgentCard => "GetExtendedAgentCard",
        }
    }

    /// Answers with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(
            self,
            Operation::SendStreamingMessage | Operation::SubscribeToTask
        )
    }
}

/// JSON-RPC method names of both versions (MAPPING-FACTS §1).
const JSONRPC_METHODS: &[(&str, Version, Operation)] = &[
    ("message/send", Version::V03, Operation::SendMessage),
    (
        "message/stream",
        Version::V03,
        Operation::SendStreamingMessage,
    ),
    ("tasks/get", Version::V03, Operation::GetTask),
    ("tasks/cancel", Version::V03, Operation::CancelTask),
    (
        "tasks/resubscribe",
        Version::V03,
        Operation::SubscribeToTask,
    ),
    (
        "tasks/pushNotificationConfig/set",
        Version::V03,
        Operation::CreateTaskPushNotificationConfig,
    ),
    (
        "tasks/pushNotificationConfig/get",
        Version::V03,
        Operation::GetTaskPushNotificationConfig,
    ),
    (
        "tasks/pushNotificationConfig/list",
        Version::V03,
        Operation::ListTaskPushNotificationConfigs,
    ),
    (
        "tasks/pushNotificationConfig/delete",
        Version::V03,
        Operation::DeleteTaskPushNotificationConfig,
    ),
    (
        "agent/getAuthenticatedExtendedCard",
        Version::V03,
        Operation::GetExtendedAgentCard,
    ),
    ("SendMessage", Version::V10, Operation::SendMessage),
    (
        "SendStreamingMessage",
        Version::V10,
        Operation::SendStreamingMessage,
    ),
    ("GetTask", Version::V10, Operation::GetTask),
    ("ListTasks", Version::V10, Operation::ListTasks),
    ("CancelTask", Version::V10, Operation::CancelTask),
    ("SubscribeToTask", Version::V10, Operation::SubscribeToTask),
    (
        "CreateTaskPushNotificationConfig",
        Version::V10,
        Operation::CreateTaskPushNotificationConfig,
    ),
    (
        "GetTaskPushNotificationConfig",
        Version::V10,
        Operation::GetTaskPushNotificationConfig,
    ),
    (
        "ListTaskPushNotificationConfigs",
        Version::V10,
        Operation::ListTaskPushNotificationConfigs,
    ),
    (
        "DeleteTaskPushNotificationConfig",
        Version::V10,
        Operation::DeleteTaskPushNotificationConfig,
    ),
    (
        "GetExtendedAgentCard",
        Version::V10,
        Operation::GetExtendedAgentCard,
    ),
];

/// Looks up a JSON-RPC method name of either version.
pub fn jsonrpc_method(name: &str) -> Option<(Version, Operation)> {
    JSONRPC_METHODS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, v, o)| (*v, *o))
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
    pub binding: Binding,
    /// `None` for local endpoints, [`Binding::Other`] and unknown JSON-RPC methods.
    pub operation: Option<Operation>,
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
    pub operation: Option<Operation>,
}

/// The parts of a request that classification looks at.
#[derive(Debug, Clone, Copy)]
pub struct RequestInfo<'a> {
    pub method: &'a Method,
    /// Path relative to the proxy's public base path, starting with `/`.
    pub path: &'a str,
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

/// Classifies a request.
pub fn classify(req: &RequestInfo<'_>) -> Result<Route, RouteError> {
    let declared = Version::from_header(version_value(req.headers, req.query));
    let local = |binding| Route {
        client_version: *declared.as_ref().unwrap_or(&Version::V03),
        binding,
        operation: None,
        params: PathParams::default(),
        version_conflict: false,
    };
    let is_get = req.method == Method::GET || req.method == Method::HEAD;
    if is_get {
        // Local endpoints answer whatever the version header says.
        match req.path {
            "/health" => return Ok(local(Binding::Health)),
            "/ready" => return Ok(local(Binding::Ready)),
            "/metrics" => return Ok(local(Binding::Metrics)),
            _ => {}
        }
    }

    let known = req.jsonrpc_method.and_then(jsonrpc_method);
    let render_version = known.map_or(Version::V10, |(v, _)| v);
    let declared = match declared {
        Ok(v) => v,
        Err(unsupported) => {
            let (binding, operation) = if let Some((_, op)) = known {
                (Binding::JsonRpc, Some(op))
            } else if is_get && is_card_path(req.path).is_some() {
                let legacy_path = is_card_path(req.path) == Some(true);
                (Binding::AgentCard { legacy_path }, None)
            } else if let Some((op, _)) = rest_route(Version::V10, req.method, req.path) {
                (Binding::Rest, Some(op))
            } else if req.method == Method::POST {
                (Binding::JsonRpc, None)
            } else {
                (Binding::Other, None)
            };
            return Err(RouteError {
                unsupported,
                render_version,
                binding,
                operation,
            });
        }
    };

    if is_get {
        if let Some(legacy_path) = is_card_path(req.path) {
            return Ok(local(Binding::AgentCard { legacy_path }));
        }
    }

    if let Some((op, params)) = rest_route(declared, req.method, req.path) {
        return Ok(Route {
            client_version: declared,
            binding: Binding::Rest,
            operation: Some(op),
            params,
            version_conflict: false,
        });
    }

    if req.method == Method::POST {
        let (client_version, operation, version_conflict) = match known {
            Some((v, op)) => (v, Some(op), v != declared),
            None => (declared, None, false),
        };
        return Ok(Route {
            client_version,
            binding: Binding::JsonRpc,
            operation,
            params: PathParams::default(),
            version_conflict,
        });
    }

    Ok(Route {
        client_version: declared,
        binding: Binding::Other,
        operation: None,
        params: PathParams::default(),
        version_conflict: false,
    })
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
pub fn rest_route(
    version: Version,
    method: &Method,
    path: &str,
) -> Option<(Operation, PathParams)> {
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

fn rest_ops(
    version: Version,
    method: &Method,
    segs: &[&str],
    tenant: Option<&str>,
) -> Option<(Operation, PathParams)> {
    let params = |task: Option<&str>, config: Option<&str>| PathParams {
        tenant: tenant.map(str::to_string),
        task_id: task.map(str::to_string),
        config_id: config.map(str::to_string),
    };
    let get = method == Method::GET;
    let post = method == Method::POST;
    let delete = method == Method::DELETE;
    let op = match segs {
        ["message:send"] if post => (Operation::SendMessage, params(None, None)),
        ["message:stream"] if post => (Operation::SendStreamingMessage, params(None, None)),
        ["card"] if get && version == Version::V03 => {
            (Operation::GetExtendedAgentCard, params(None, None))
        }
        ["extendedAgentCard"] if get && version == Version::V10 => {
            (Operation::GetExtendedAgentCard, params(None, None))
        }
        // v0.3 has no ListTasks in its proto, but some v0.3 servers (Go) serve it.
        ["tasks"] if get => (Operation::ListTasks, params(None, None)),
        ["tasks", last] => {
            if let Some(id) = last.strip_suffix(":cancel") {
                if !post || id.is_empty() {
                    return None;
                }
                (Operation::CancelTask, params(Some(id), None))
            } else if let Some(id) = last.strip_suffix(":subscribe") {
                // Both verbs: the protos say GET, the spec texts say POST.
                if !(get || post) || id.is_empty() {
                    return None;
                }
                (Operation::SubscribeToTask, params(Some(id), None))
            } else if get && !last.contains(':') {
                (Operation::GetTask, params(Some(last), None))
            } else {
                return None;
            }
        }
        ["tasks", id, "pushNotificationConfigs"] if post => (
            Operation::CreateTaskPushNotificationConfig,
            params(Some(id), None),
        ),
        ["tasks", id, "pushNotificationConfigs"] if get => (
            Operation::ListTaskPushNotificationConfigs,
            params(Some(id), None),
        ),
        ["tasks", id, "pushNotificationConfigs", cid] if get => (
            Operation::GetTaskPushNotificationConfig,
            params(Some(id), Some(cid)),
        ),
        ["tasks", id, "pushNotificationConfigs", cid] if delete => (
            Operation::DeleteTaskPushNotificationConfig,
            params(Some(id), Some(cid)),
        ),
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

    use Operation as Op;
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
            (case(p(), "/v1/tasks/t1/pushNotificationConfigs"), V03, Op::CreateTaskPushNotificationConfig, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks/t1/pushNotificationConfigs"), V03, Op::ListTaskPushNotificationConfigs, plain(Some("t1"), None)),
            (case(g(), "/v1/tasks/t1/pushNotificationConfigs/c1"), V03, Op::GetTaskPushNotificationConfig, plain(Some("t1"), Some("c1"))),
            (case(d(), "/v1/tasks/t1/pushNotificationConfigs/c1"), V03, Op::DeleteTaskPushNotificationConfig, plain(Some("t1"), Some("c1"))),
            (case(g(), "/v1/card"), V03, Op::GetExtendedAgentCard, plain(None, None)),
            (case(g(), "/v1/tasks/t1").h("0.3.2"), V03, Op::GetTask, plain(Some("t1"), None)),
            // v1.0: header, no prefix.
            (case(p(), "/message:send").h("1.0"), V10, Op::SendMessage, plain(None, None)),
            (case(p(), "/message:stream").h("1.0"), V10, Op::SendStreamingMessage, plain(None, None)),
            (case(g(), "/tasks/t1").h("1.0"), V10, Op::GetTask, plain(Some("t1"), None)),
            (case(g(), "/tasks").h("1.0"), V10, Op::ListTasks, plain(None, None)),
            (case(p(), "/tasks/t1:cancel").h("1.0"), V10, Op::CancelTask, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1:subscribe").h("1.0"), V10, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/tasks/t1:subscribe").h("1.0"), V10, Op::SubscribeToTask, plain(Some("t1"), None)),
            (case(p(), "/tasks/t1/pushNotificationConfigs").h("1.0"), V10, Op::CreateTaskPushNotificationConfig, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1/pushNotificationConfigs").h("1.0"), V10, Op::ListTaskPushNotificationConfigs, plain(Some("t1"), None)),
            (case(g(), "/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::GetTaskPushNotificationConfig, plain(Some("t1"), Some("c1"))),
            (case(d(), "/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::DeleteTaskPushNotificationConfig, plain(Some("t1"), Some("c1"))),
            (case(g(), "/extendedAgentCard").h("1.0"), V10, Op::GetExtendedAgentCard, plain(None, None)),
            // v1.0 with tenant prefixes.
            (case(p(), "/acme/message:send").h("1.0"), V10, Op::SendMessage, tenant("acme", None, None)),
            (case(g(), "/acme/tasks/t1").h("1.0.1"), V10, Op::GetTask, tenant("acme", Some("t1"), None)),
            (case(g(), "/acme/tasks").h("1.0"), V10, Op::ListTasks, tenant("acme", None, None)),
            (case(g(), "/acme/extendedAgentCard").h("1.0"), V10, Op::GetExtendedAgentCard, tenant("acme", None, None)),
            (case(d(), "/acme/tasks/t1/pushNotificationConfigs/c1").h("1.0"), V10, Op::DeleteTaskPushNotificationConfig, tenant("acme", Some("t1"), Some("c1"))),
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
            (case(Method::GET, "/.well-known/agent-card.json").h("1.1"), V10, Binding::AgentCard { legacy_path: false }),
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

    #[test]
    fn method_table_is_one_to_one() {
        for v in Version::ALL {
            let ops: Vec<Op> = JSONRPC_METHODS
                .iter()
                .filter(|m| m.1 == v)
                .map(|m| m.2)
                .collect();
            let mut dedup = ops.clone();
            dedup.dedup();
            assert_eq!(ops.len(), dedup.len());
        }
        assert_eq!(jsonrpc_method("tasks/list"), None);
        assert_eq!(jsonrpc_method("ListTasks"), Some((V10, Op::ListTasks)));
    }
}
