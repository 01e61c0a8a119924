//! The `[[agents]]` table resolved (issue #23): one whole [`Config`] per
//! agent, its own values laid over the top-level ones, each checked alone
//! and then together (names, routes, listeners and push stores each their
//! own), and the agents placed on the shared gRPC listener.

use serde_json::Value;

use super::{Config, ConfigError, HttpUrl, PushBackend, RawConfig, DEFAULT_PUSH_DATA_DIR};
use crate::agents::{on_prefix, HostPattern, Router, GLOBAL_PATHS};

fn bad(key: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        key,
        message: message.into(),
    }
}

/// A `prefix` normalized (no trailing `/`; `/` alone is no prefix), or
/// what is wrong with it.
fn normalize_prefix(p: &str) -> Result<String, &'static str> {
    if !p.starts_with('/') {
        return Err("must start with `/`");
    }
    if p.len() > 200 {
        return Err("must be at most 200 characters");
    }
    let p = p.trim_end_matches('/');
    if p.chars()
        .any(|c| c.is_whitespace() || c.is_control() || matches!(c, '?' | '#' | '%' | '*' | '\\'))
    {
        return Err("must be a plain path (no spaces, `?`, `#`, `%`, `*` or `\\`)");
    }
    if p.split('/')
        .skip(1)
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return Err("must not hold empty, `.` or `..` segments");
    }
    if GLOBAL_PATHS
        .iter()
        .any(|g| on_prefix(g, p) && !p.is_empty())
    {
        return Err("must not take the proxy's own /health, /ready or /metrics");
    }
    Ok(p.to_string())
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && n != "."
        && n != ".."
}

/// `base` with `over`'s members laid on it (objects member by member,
/// `null` keeps the base's value).
fn overlay(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                if v.is_null() {
                    continue;
                }
                match b.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() => overlay(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, o) if !o.is_null() => *b = o,
        _ => {}
    }
}

/// Resolves a file with `[[agents]]`: one whole [`Config`] per agent (the
/// top-level values are every agent's defaults), checked one by one, then
/// together (names, routes, listeners and push stores each their own).
/// The config returned is the first agent's, with them all in `agents`.
pub(super) fn resolve(mut raw: RawConfig) -> Result<Config, ConfigError> {
    let entries = std::mem::take(&mut raw.agents);
    if entries.len() > 256 {
        return Err(bad("agents".into(), "at most 256 agents"));
    }
    let base = serde_json::to_value(&raw).map_err(|e| bad("agents".into(), e.to_string()))?;
    let top_public = match raw.public_url.as_deref() {
        Some(s) => Some(HttpUrl::parse("public_url", s)?),
        None => None,
    };
    if top_public.as_ref().is_some_and(|u| !u.base_path.is_empty()) {
        return Err(bad(
            "public_url".into(),
            "with [[agents]], give the top-level public_url no path: each agent's public URL path is its prefix",
        ));
    }
    let top_dir = raw
        .push
        .data_dir
        .clone()
        .unwrap_or_else(|| DEFAULT_PUSH_DATA_DIR.to_string());
    let mut out: Vec<Config> = Vec::with_capacity(entries.len());
    // Whether each agent's callback URL was derived (then checked below).
    let mut derived_callback = Vec::with_capacity(entries.len());
    // The top-level `grpc.listen` (the same in every agent's config).
    let mut shared_grpc = None;
    for (i, a) in entries.iter().enumerate() {
        let key = |k: &str| format!("agents[{i}].{k}");
        let (name, prefix, hosts, grpc_listen) = route_of(a, &key)?;
        let (one, own) = merged(a, &base, &top_dir, &name, &key(""))?;
        let own_callback = a.push.as_ref().is_some_and(|p| p.callback_url.is_some());
        let mut c = Config::resolve_one(one).map_err(|mut e| {
            // Keys the agent set are named as its own.
            let pointer = format!("/{}", e.key.replace('.', "/"));
            if own.pointer(&pointer).is_some_and(|v| !v.is_null()) {
                e.key = key(&e.key);
            }
            e
        })?;
        // Its own gRPC listener for now; the shared one (top-level
        // `grpc.listen`) is placed below, once every route is known.
        shared_grpc = c.grpc_listen;
        c.grpc_listen = grpc_listen;
        place_urls(&mut c, a, &raw, &prefix, &hosts, own_callback, &key)?;
        derived_callback.push(!own_callback);
        // An agent on a gRPC listener of its own takes its every call.
        c.agent = crate::agents::AgentRoute {
            name,
            prefix,
            hosts,
            grpc_default: c.grpc_listen.is_some(),
        };
        out.push(c);
    }
    check_together(&out, &derived_callback)?;
    if let Some(shared) = shared_grpc {
        place_on_shared_grpc(&mut out, shared)?;
    }
    let mut first = out[0].clone();
    // The listener's own bounds (request heads, idle connections) are the
    // top-level ones.
    first.limits = crate::config::resolve_limits(&raw.limits)?;
    first.agents = out;
    Ok(first)
}

/// One agent's file as written: its own values laid over the top-level
/// ones (`base`), its embedded push store a subdirectory of the top-level
/// one unless it names its own. Also returns the agent's own values, to
/// name its keys in errors.
fn merged(
    a: &crate::config::RawAgent,
    base: &Value,
    top_dir: &str,
    name: &str,
    key: &str,
) -> Result<(RawConfig, Value), ConfigError> {
    let mut own = serde_json::to_value(a).map_err(|e| bad("agents".into(), e.to_string()))?;
    if let Value::Object(m) = &mut own {
        for k in ["name", "prefix", "hosts", "grpc_listen"] {
            m.remove(k);
        }
    }
    let mut merged = base.clone();
    overlay(&mut merged, own.clone());
    let mut one: RawConfig =
        serde_json::from_value(merged).map_err(|e| bad(key.to_string(), e.to_string()))?;
    let own_dir = a.push.as_ref().is_some_and(|p| p.data_dir.is_some());
    let own_pg = a.push.as_ref().is_some_and(|p| p.postgres_url.is_some());
    if !own_dir && !own_pg && one.push.postgres_url.is_none() {
        let dir = std::path::Path::new(top_dir).join(name);
        one.push.data_dir = Some(dir.to_string_lossy().into_owned());
    }
    Ok((one, own))
}

/// The agents served on the shared gRPC listener (top-level
/// `grpc.listen`), each given it as its `grpc_listen` (so its card
/// advertises it): every agent with `hosts` and no listener of its own
/// (routed by `:authority`), and the listener's default agent, the one
/// calls naming no agent's host go to ([`grpc_default`]). An agent with
/// neither (a prefix-only agent that is not the default) is not served
/// there: gRPC paths cannot carry a prefix.
fn place_on_shared_grpc(
    agents: &mut [Config],
    shared: std::net::SocketAddr,
) -> Result<(), ConfigError> {
    if let Some(j) = agents.iter().position(|c| c.grpc_listen == Some(shared)) {
        return Err(bad(
            format!("agents[{j}].grpc_listen"),
            "is the top-level grpc.listen (the shared gRPC listener): leave it out to be served there",
        ));
    }
    // Its default: the catch-all agent (no hosts, no prefix), else the
    // first agent when it has no hosts (it kept `grpc.listen` before
    // routing by `:authority`); none: calls naming no agent's host are
    // refused.
    let hostless = |c: &Config| c.grpc_listen.is_none() && c.agent.hosts.is_empty();
    let default = agents
        .iter()
        .position(|c| hostless(c) && c.agent.prefix.is_empty())
        .or_else(|| agents.first().filter(|c| hostless(c)).map(|_| 0));
    for (i, c) in agents.iter_mut().enumerate() {
        if c.grpc_listen.is_none() && (!c.agent.hosts.is_empty() || default == Some(i)) {
            c.grpc_listen = Some(shared);
            c.agent.grpc_default = default == Some(i);
        }
    }
    Ok(())
}

/// An entry's own route: its name, path prefix, hosts and gRPC listener.
type EntryRoute = (
    String,
    String,
    Vec<HostPattern>,
    Option<std::net::SocketAddr>,
);

/// An entry's own route ([`EntryRoute`]), each part checked.
fn route_of(
    a: &crate::config::RawAgent,
    key: &dyn Fn(&str) -> String,
) -> Result<EntryRoute, ConfigError> {
    let name = a
        .name
        .clone()
        .ok_or_else(|| bad(key("name"), "is required"))?;
    if !valid_name(&name) {
        return Err(bad(
            key("name"),
            format!("{name:?}: must be 1..=64 letters, digits, `-`, `_` or `.`"),
        ));
    }
    let prefix = match a.prefix.as_deref() {
        None => String::new(),
        Some(p) => normalize_prefix(p).map_err(|m| bad(key("prefix"), format!("{p:?}: {m}")))?,
    };
    let mut hosts = Vec::new();
    for h in a.hosts.iter().flatten() {
        let pat = HostPattern::parse(h).ok_or_else(|| {
            bad(
                key("hosts"),
                format!("{h:?}: must be a host name or IP literal, with an optional :port"),
            )
        })?;
        if hosts.contains(&pat) {
            return Err(bad(key("hosts"), format!("{h:?} is listed twice")));
        }
        hosts.push(pat);
    }
    let grpc_listen = match a.grpc_listen.as_deref() {
        None => None,
        Some(g) => Some(
            g.parse::<std::net::SocketAddr>()
                .map_err(|e| bad(key("grpc_listen"), format!("{g:?}: not an IP:port ({e})")))?,
        ),
    };
    Ok((name, prefix, hosts, grpc_listen))
}

/// An agent's public URL (its path is the prefix; by default the
/// top-level one's origin, or its first host's when served by host) and
/// its push callback under its own prefix (and first host).
fn place_urls(
    c: &mut Config,
    a: &crate::config::RawAgent,
    raw: &RawConfig,
    prefix: &str,
    hosts: &[HostPattern],
    own_callback: bool,
    key: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    // Its public URL: the path is its prefix; by default the top-level
    // one's origin, or its first host's when it is served by host.
    if a.public_url.is_some() {
        if c.public_url.base_path.is_empty() {
            c.public_url.base_path = prefix.to_string();
        } else if c.public_url.base_path != prefix {
            return Err(bad(
                key("public_url"),
                format!(
                    "its path {:?} must be the agent's prefix {prefix:?} (or left out)",
                    c.public_url.base_path
                ),
            ));
        }
    } else {
        if let Some(h) = hosts.first() {
            c.public_url.host = h.host.clone();
            if let Some(p) = h.port {
                c.public_url.port = p;
            }
        }
        c.public_url.base_path = prefix.to_string();
    }
    // Its push callback: under its own prefix (and first host).
    if !own_callback {
        let cb = &mut c.push.callback_url;
        if raw.push.callback_url.is_none() {
            if let Some(h) = hosts.first() {
                cb.host = h.host.clone();
                if let Some(p) = h.port {
                    cb.port = p;
                }
            }
        }
        cb.base_path = format!("{}{}", cb.base_path, prefix);
    }
    Ok(())
}

/// Whether two push backends are one store: the same directory, or the
/// same database (host, port, database and user, however the connection
/// strings are written).
fn same_store(a: &PushBackend, b: &PushBackend) -> bool {
    match (a, b) {
        (PushBackend::Embedded(x), PushBackend::Embedded(y)) => x == y,
        (PushBackend::Postgres(x), PushBackend::Postgres(y)) => {
            let target = |u: &str| {
                let c: postgres::Config = u.trim().parse().ok()?;
                // No port: PostgreSQL's default.
                let ports = match c.get_ports() {
                    [] => vec![5432],
                    p => p.to_vec(),
                };
                Some(format!(
                    "{:?} {:?} {:?} {:?}",
                    c.get_hosts(),
                    ports,
                    c.get_dbname(),
                    c.get_user()
                ))
            };
            x == y || matches!((target(x), target(y)), (Some(p), Some(q)) if p == q)
        }
        _ => false,
    }
}

/// What no two agents may share, and that derived callbacks come back.
fn check_together(agents: &[Config], derived_callback: &[bool]) -> Result<(), ConfigError> {
    let router = Router::new(agents.iter().map(|c| c.agent.clone()).collect());
    for (j, b) in agents.iter().enumerate() {
        let key = |k: &str| format!("agents[{j}].{k}");
        for (i, a) in agents[..j].iter().enumerate() {
            let (ra, rb) = (&a.agent, &b.agent);
            if ra.name == rb.name {
                return Err(bad(
                    key("name"),
                    format!("{:?} is also agents[{i}]'s name", rb.name),
                ));
            }
            let same_hosts = (ra.hosts.is_empty() && rb.hosts.is_empty())
                || ra
                    .hosts
                    .iter()
                    .any(|x| rb.hosts.iter().any(|y| x.overlaps(y)));
            if same_hosts && ra.prefix == rb.prefix {
                let what = if rb.hosts.is_empty() {
                    "prefix"
                } else {
                    "hosts"
                };
                return Err(bad(
                    key(what),
                    format!(
                        "the same route as agents[{i}] ({:?}): prefix {:?} on {}",
                        ra.name,
                        rb.prefix,
                        if rb.hosts.is_empty() {
                            "every host".to_string()
                        } else {
                            "a host of both".to_string()
                        }
                    ),
                ));
            }
            if b.grpc_listen.is_some() && a.grpc_listen == b.grpc_listen {
                return Err(bad(
                    key("grpc_listen"),
                    format!("also agents[{i}]'s gRPC listener"),
                ));
            }
            if b.push.enabled && a.push.enabled && same_store(&a.push.backend, &b.push.backend) {
                let which = match b.push.backend {
                    PushBackend::Embedded(_) => "push.data_dir",
                    PushBackend::Postgres(_) => "push.postgres_url",
                };
                return Err(bad(
                    key(which),
                    format!("the same push store as agents[{i}]: each agent needs its own (a data directory, or a PostgreSQL database)"),
                ));
            }
        }
        if b.grpc_listen == Some(b.listen) {
            return Err(bad(key("grpc_listen"), "is the HTTP listener"));
        }
        if b.push.enabled && derived_callback[j] {
            let cb = &b.push.callback_url;
            let path = format!("{}{}x", cb.base_path, crate::ids::CALLBACK_PREFIX);
            if router.pick(Some(&cb.authority()), &path) != Some(j) {
                return Err(bad(
                    key("push.callback_url"),
                    format!(
                        "the default {} would not reach this agent: set [agents.push] callback_url",
                        cb.as_string()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::AgentRoute;

    #[test]
    fn the_shared_grpc_listener_serves_agents_by_host_and_its_default() {
        let head = "[upstream]\nurl = \"http://127.0.0.1:9000\"\n[push]\nenabled = false\n[grpc]\nlisten = \"127.0.0.1:7000\"\n";
        let shared = Some("127.0.0.1:7000".parse().unwrap());
        let placed = |text: &str| {
            file(&format!("{head}{text}"))
                .unwrap()
                .agent_configs()
                .iter()
                .map(|c| (c.grpc_listen, c.agent.grpc_default))
                .collect::<Vec<_>>()
        };
        let own = Some("127.0.0.1:7001".parse().unwrap());
        // The first agent without hosts is the default; a prefix-only
        // agent after it is not served there; one with hosts is.
        assert_eq!(
            placed("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n[[agents]]\nname = \"c\"\nprefix = \"/c\"\n[[agents]]\nname = \"d\"\nprefix = \"/d\"\ngrpc_listen = \"127.0.0.1:7001\"\n"),
            [(shared, true), (shared, false), (None, false), (own, true)]
        );
        // The catch-all agent is the default wherever it is.
        assert_eq!(
            placed("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n[[agents]]\nname = \"all\"\n"),
            [(None, false), (shared, false), (shared, true)]
        );
        // The README's example: the first agent on a listener of its own,
        // the other by host; the shared listener has no default.
        assert_eq!(
            placed("[[agents]]\nname = \"a\"\nprefix = \"/a\"\ngrpc_listen = \"127.0.0.1:7001\"\n[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n"),
            [(own, true), (shared, false)]
        );
        // A first agent with hosts and no catch-all: no default.
        assert_eq!(
            placed("[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n[[agents]]\nname = \"a\"\nprefix = \"/a\"\n"),
            [(shared, false), (None, false)]
        );
        let e = error_of(&format!(
            "{head}[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"b\"\nprefix = \"/b\"\ngrpc_listen = \"127.0.0.1:7000\"\n"
        ));
        assert_eq!(e.key, "agents[1].grpc_listen", "{e}");
    }

    #[test]
    fn prefixes_are_checked() {
        assert_eq!(normalize_prefix("/a/").unwrap(), "/a");
        assert_eq!(normalize_prefix("/").unwrap(), "");
        assert!(normalize_prefix("a").is_err());
        assert!(normalize_prefix("/a//b").is_err());
        assert!(normalize_prefix("/a/../b").is_err());
        assert!(normalize_prefix("/a?x").is_err());
        assert!(normalize_prefix("/metrics").is_err());
        assert!(normalize_prefix("/healthz").is_ok());
    }

    fn file(text: &str) -> Result<Config, ConfigError> {
        Config::resolve(RawConfig::from_toml(text, "t.toml")?)
    }

    const TWO: &str = r#"
listen = "127.0.0.1:8080"
[upstream]
url = "http://127.0.0.1:9000"
[push]
data_dir = "/var/lib/p"
[[agents]]
name = "a"
prefix = "/a/"
[agents.upstream]
version = "0.3"
[[agents]]
name = "b"
hosts = ["b.example.com"]
list_tasks = "off"
[agents.upstream]
url = "http://127.0.0.1:9001"
[agents.limits]
max_body_bytes = 1000
"#;

    #[test]
    fn each_agent_is_a_whole_config_with_the_top_level_as_defaults() {
        let c = file(TWO).unwrap();
        let all = c.agent_configs();
        assert_eq!(all.len(), 2);
        let (a, b) = (&all[0], &all[1]);
        assert_eq!(c.agent, a.agent);
        assert_eq!(a.agent.prefix, "/a");
        assert_eq!(a.upstream.port, 9000);
        assert_eq!(b.upstream.port, 9001);
        assert_eq!(
            a.upstream_version,
            crate::config::UpstreamVersion::Fixed(crate::version::Version::V03)
        );
        assert_eq!(b.upstream_version, crate::config::UpstreamVersion::Auto);
        assert_eq!(a.limits.max_body_bytes, 4 * 1024 * 1024);
        assert_eq!(b.limits.max_body_bytes, 1000);
        assert_eq!(a.list_tasks.mode, crate::config::ListTasksMode::PerCaller);
        assert_eq!(b.list_tasks.mode, crate::config::ListTasksMode::Off);
        assert_eq!(a.public_url.as_string(), "http://127.0.0.1:8080/a");
        assert_eq!(b.public_url.as_string(), "http://b.example.com:8080");
        assert_eq!(a.push.callback_url.as_string(), "http://127.0.0.1:8080/a");
        assert_eq!(b.push.callback_url.as_string(), "http://b.example.com:8080");
        assert_eq!(a.push.backend, PushBackend::Embedded("/var/lib/p/a".into()));
        assert_eq!(b.push.backend, PushBackend::Embedded("/var/lib/p/b".into()));
    }

    #[test]
    fn a_file_without_agents_is_one_default_agent() {
        let c = file("[upstream]\nurl = \"http://127.0.0.1:9000\"\n").unwrap();
        assert!(c.agents.is_empty());
        assert_eq!(c.agent_configs().len(), 1);
        assert_eq!(c.agent, AgentRoute::default());
        assert_eq!(
            c.push.backend,
            PushBackend::Embedded(DEFAULT_PUSH_DATA_DIR.into())
        );
    }

    fn error_of(text: &str) -> ConfigError {
        file(text).unwrap_err()
    }

    #[test]
    fn bad_agents_are_named_by_key() {
        let up = "[upstream]\nurl = \"http://127.0.0.1:9000\"\n";
        let cases = [
            ("[[agents]]\nprefix = \"/a\"", "agents[0].name"),
            ("[[agents]]\nname = \"a b\"", "agents[0].name"),
            ("[[agents]]\nname = \"a\"\nprefix = \"a\"", "agents[0].prefix"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"a\"\nprefix = \"/b\"", "agents[1].name"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"b\"\nprefix = \"/a/\"", "agents[1].prefix"),
            ("[[agents]]\nname = \"a\"\nhosts = [\"x.example\"]\n[[agents]]\nname = \"b\"\nhosts = [\"X.example:80\"]", "agents[1].hosts"),
            ("[[agents]]\nname = \"a\"\nhosts = [\"x/y\"]", "agents[0].hosts"),
            ("[[agents]]\nname = \"a\"\n[agents.upstream]\nurl = \"ftp://x\"", "agents[0].upstream.url"),
            ("[[agents]]\nname = \"a\"\n[agents.limits]\nmax_body_bytes = 0", "agents[0].limits.max_body_bytes"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\npublic_url = \"https://x.example/b\"", "agents[0].public_url"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[agents.push]\ndata_dir = \"/d\"\n[[agents]]\nname = \"b\"\nprefix = \"/b\"\n[agents.push]\ndata_dir = \"/d\"", "agents[1].push.data_dir"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[agents.push]\npostgres_url = \"postgres://h/db\"\n[[agents]]\nname = \"b\"\nprefix = \"/b\"\n[agents.push]\npostgres_url = \"postgres://h/db\"", "agents[1].push.postgres_url"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[agents.push]\npostgres_url = \"postgres://u@h:5432/db\"\n[[agents]]\nname = \"b\"\nprefix = \"/b\"\n[agents.push]\npostgres_url = \"host=h user=u dbname=db\"", "agents[1].push.postgres_url"),
            ("[[agents]]\nname = \"a\"\nprefix = \"/a\"\ngrpc_listen = \"127.0.0.1:1\"\n[[agents]]\nname = \"b\"\nprefix = \"/b\"\ngrpc_listen = \"127.0.0.1:1\"", "agents[1].grpc_listen"),
            ("[[agents]]\nname = \"a\"\nunknown = 1", "t.toml"),
        ];
        for (text, key) in cases {
            let e = error_of(&format!("{up}{text}"));
            assert_eq!(e.key, key, "{text}: {e}");
        }
        // A top-level value wrong for every agent is named as top-level.
        let e = error_of("[upstream]\nurl = \"http://127.0.0.1:9000\"\n[limits]\nmax_body_bytes = 0\n[[agents]]\nname = \"a\"");
        assert_eq!(e.key, "limits.max_body_bytes");
        let e = error_of("public_url = \"https://x.example/p\"\n[upstream]\nurl = \"http://127.0.0.1:9000\"\n[[agents]]\nname = \"a\"");
        assert_eq!(e.key, "public_url");
        // A callback derived from an explicit top-level one that would
        // reach another agent is refused; an explicit per-agent one is not.
        let cb = "[upstream]\nurl = \"http://127.0.0.1:9000\"\n[push]\ncallback_url = \"https://proxy.example\"\n[[agents]]\nname = \"a\"\nprefix = \"/a\"\n[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n";
        assert_eq!(error_of(cb).key, "agents[1].push.callback_url");
        let ok = format!("{cb}[agents.push]\ncallback_url = \"https://b.example\"\n");
        assert!(file(&ok).is_ok());
    }
}
