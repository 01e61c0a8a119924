//! Configuration: the raw file form (TOML, `deny_unknown_fields`) and the
//! resolved, validated [`Config`] the server runs with.
//!
//! Raw input (file + command-line overrides) is kept apart from the resolved
//! config, so every value is checked in one place ([`Config::resolve`]) and a
//! bad value is reported with the key that carried it.
//!
//! Example file:
//!
//! ```toml
//! listen = "0.0.0.0:8080"
//! public_url = "https://agent.example.com"
//! log_format = "json"          # auto | text | json
//!
//! [upstream]
//! url = "http://127.0.0.1:9000"
//! version = "auto"            # auto | 0.3 | 1.0
//!
//! [limits]
//! max_body_bytes = 4194304
//! max_connections = 1024
//! connect_timeout_ms = 5000
//! read_timeout_ms = 60000
//! stream_max_duration_secs = 3600
//! card_default_ttl_secs = 60
//! max_event_bytes = 16777216
//! list_index_max_tasks = 10000
//! list_index_max_bytes = 8388608
//! ```

use std::fmt;
use std::net::SocketAddr;

use crate::version::{ProtocolVersion, Version};

mod agents;
mod hosts;
mod limits;
mod push;
mod raw;
mod telemetry;

pub use hosts::*;
pub use limits::*;
pub use push::*;
pub use raw::*;
pub use telemetry::{OtlpProtocol, RawTelemetry, TelemetrySettings};

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// What the proxy does with a 1.N call newer than the version it serves for
/// the agent (`versions.newer_minor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NewerMinor {
    /// VersionNotSupported (-32009), as the spec requires of an agent.
    #[default]
    Refuse,
    /// On to the agent unchanged when it speaks the client's family (the
    /// agent decides, by the client's own `A2A-Version`); translated as 1.0
    /// for a v0.3 agent.
    Passthrough,
}

/// Defined with the proxy's other errors so that `upstream::tls`, which
/// loads the `[upstream]` TLS files for [`Config`], reports with it
/// without importing `config`.
pub use crate::error::ConfigError;

fn bad(key: &str, value: impl fmt::Debug, why: impl fmt::Display) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message: format!("{value:?}: {why}"),
    }
}

/// Which version the upstream agent speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpstreamVersion {
    /// Read it from the upstream's agent card (v1.0 card = has `supportedInterfaces`).
    Auto,
    Fixed(Version),
}

/// An `http://host:port/base` URL, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl {
    /// `http` or `https`.
    pub scheme: String,
    /// Host name or IP literal (IPv6 without brackets).
    pub host: String,
    pub port: u16,
    /// Path prefix without a trailing `/` (empty for the root).
    pub base_path: String,
}

impl HttpUrl {
    /// Parses an absolute http(s) URL without query or fragment.
    pub fn parse(key: &str, s: &str) -> Result<HttpUrl, ConfigError> {
        let uri: http::Uri = s.parse().map_err(|e| bad(key, s, e))?;
        let scheme = uri
            .scheme_str()
            .ok_or_else(|| bad(key, s, "needs a scheme (http://…)"))?
            .to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return Err(bad(key, s, "scheme must be http or https")),
        };
        let auth = uri.authority().ok_or_else(|| bad(key, s, "needs a host"))?;
        if auth.as_str().contains('@') {
            return Err(bad(key, s, "user info is not allowed"));
        }
        if uri.query().is_some() {
            return Err(bad(key, s, "a query string is not allowed"));
        }
        let host = auth.host().trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(bad(key, s, "needs a host"));
        }
        let base_path = uri.path().trim_end_matches('/').to_string();
        Ok(HttpUrl {
            scheme,
            host: host.to_string(),
            port: auth.port_u16().unwrap_or(default_port),
            base_path,
        })
    }

    /// `scheme://host[:port]` (port omitted when it is the scheme's default).
    pub fn origin(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let default = matches!(
            (self.scheme.as_str(), self.port),
            ("http", 80) | ("https", 443)
        );
        if default {
            format!("{}://{}", self.scheme, host)
        } else {
            format!("{}://{}:{}", self.scheme, host, self.port)
        }
    }

    /// `host:port` for connecting and for the `Host` header.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URL as a string, `origin + base_path`.
    pub fn as_string(&self) -> String {
        format!("{}{}", self.origin(), self.base_path)
    }
}

/// The resolved configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub listen: SocketAddr,
    pub upstream: HttpUrl,
    pub upstream_version: UpstreamVersion,
    /// Where clients reach the proxy; card interface URLs are rewritten to it.
    pub public_url: HttpUrl,
    /// Pingora worker threads.
    pub threads: usize,
    pub limits: Limits,
    /// The gRPC listener (both services), off when `None`.
    pub grpc_listen: Option<SocketAddr>,
    /// (certificate chain, private key) PEM files: the gRPC listener speaks
    /// TLS; `None`: h2c.
    pub grpc_tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// The upstream's gRPC endpoint; calls go there instead of its JSON-RPC.
    pub upstream_grpc: Option<HttpUrl>,
    // Card gRPC interface URL form (area: cards).
    pub grpc_card_url_form: GrpcUrlForm,
    pub push: PushSettings,
    // ListTasks emulation (area: listtasks).
    pub list_tasks: ListTasksSettings,
    // TLS on the HTTP listener, log format (area: ops).
    /// (certificate chain, private key) PEM files: the HTTP listener
    /// speaks TLS (ALPN h2, http/1.1); `None`: plain HTTP and h2c.
    pub tls: Option<(std::path::PathBuf, std::path::PathBuf)>,
    pub log_format: LogFormat,
    // A2A 1.N versions (area: versions).
    /// The agent's precise version when `upstream.version` names one
    /// (`1.1`); `None`: from its card, or the first of a fixed family.
    pub upstream_protocol: Option<ProtocolVersion>,
    /// `versions.newer_minor`.
    pub newer_minor: NewerMinor,
    // Interface endpoints (area: paths).
    /// `upstream.allowed_hosts`: the hosts the agent's card may send the
    /// proxy to (crate::card::endpoints).
    pub allowed_hosts: AllowedHosts,
    // Several agents (area: agents).
    /// This agent's name and routes (the one agent of a file without
    /// `[[agents]]`: `default`, every host and path).
    pub agent: crate::agents::AgentRoute,
    /// Every agent's whole config, in file order, when the file has
    /// `[[agents]]` (this config is then the first one's); empty otherwise.
    pub agents: Vec<Config>,
    // TLS toward https:// agents (area: https).
    /// `upstream.ca_file`, `upstream.client_cert_file` and
    /// `upstream.client_key_file`, loaded (crate::upstream::tls).
    pub upstream_tls: std::sync::Arc<crate::upstream::tls::UpstreamTls>,
    /// `upstream.allow_upgrade`: requests asking for a protocol upgrade
    /// (other than h2c) go on to the agent; else they are refused.
    pub allow_upgrade: bool,
    // OpenTelemetry export (area: telemetry).
    /// `[telemetry]`: `None` when export is off (listener-level).
    pub telemetry: Option<TelemetrySettings>,
    // Reload without a restart (area: reload).
    /// The admin listener (`POST /admin/reload`), off when `None`.
    pub admin_listen: Option<SocketAddr>,
}

/// `public_url`, by default the listener's own address (`own_scheme`:
/// `https` with TLS on the listener).
fn resolve_public_url(
    raw: &RawConfig,
    listen: SocketAddr,
    own_scheme: &str,
) -> Result<HttpUrl, ConfigError> {
    Ok(match raw.public_url.as_deref() {
        Some(s) => HttpUrl::parse("public_url", s)?,
        None => HttpUrl {
            scheme: own_scheme.into(),
            host: listen.ip().to_string(),
            port: listen.port(),
            base_path: String::new(),
        },
    })
}

/// `upstream.url`: required, `http://` or `https://` (TLS settings:
/// `upstream.ca_file`, `upstream.client_cert_file`, `upstream.client_key_file`,
/// see crate::upstream::tls).
fn resolve_upstream_url(raw: &RawConfig) -> Result<HttpUrl, ConfigError> {
    let up_s = raw.upstream.url.as_deref().ok_or_else(|| ConfigError {
        key: "upstream.url".into(),
        message: "is required (--upstream URL or [upstream] url = …)".into(),
    })?;
    HttpUrl::parse("upstream.url", up_s)
}

/// `upstream.version` and `versions.newer_minor` (area: versions): any 1.N
/// names the v1.0 family.
fn resolve_versions(
    raw: &RawConfig,
) -> Result<(UpstreamVersion, Option<ProtocolVersion>, NewerMinor), ConfigError> {
    let (upstream_version, upstream_protocol) = match raw.upstream.version.as_deref().map(str::trim)
    {
        None | Some("auto") => (UpstreamVersion::Auto, None),
        Some(text) => match ProtocolVersion::parse(text) {
            Some(p) => (UpstreamVersion::Fixed(p.family()), Some(p)),
            None => {
                return Err(bad(
                    "upstream.version",
                    text,
                    "must be auto, 0.3 or a 1.N version (1.0, 1.1, ...)",
                ))
            }
        },
    };
    let newer_minor = match raw.versions.newer_minor.as_deref().map(str::trim) {
        None | Some("refuse") => NewerMinor::Refuse,
        Some("passthrough") => NewerMinor::Passthrough,
        Some(other) => {
            return Err(bad(
                "versions.newer_minor",
                other,
                "must be refuse or passthrough",
            ))
        }
    };
    Ok((upstream_version, upstream_protocol, newer_minor))
}

/// `grpc.listen` and the gRPC listener's TLS files.
#[allow(clippy::type_complexity)]
fn resolve_grpc_listener(
    raw: &RawConfig,
) -> Result<
    (
        Option<SocketAddr>,
        Option<(std::path::PathBuf, std::path::PathBuf)>,
    ),
    ConfigError,
> {
    let grpc_listen = match raw.grpc.listen.as_deref() {
        None => None,
        Some(g) => Some(
            g.parse()
                .map_err(|e| bad("grpc.listen", g, format!("not an IP:port ({e})")))?,
        ),
    };
    let grpc_tls = resolve_tls_pair(
        ("grpc.tls_cert_file", "grpc.tls_key_file"),
        &raw.grpc.tls_cert_file,
        &raw.grpc.tls_key_file,
    )?;
    Ok((grpc_listen, grpc_tls))
}

// TLS on the HTTP listener, log format (area: ops).
/// How log lines are written (`log_format`, `--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Text, with colours only when stderr is a terminal.
    #[default]
    Auto,
    /// Text without colour codes.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// `log_format`, with `log_json = true` as an alias of `json`.
    fn resolve(format: Option<&str>, json: Option<bool>) -> Result<LogFormat, ConfigError> {
        let f = match format.map(str::trim) {
            None => None,
            Some("auto") => Some(LogFormat::Auto),
            Some("text") => Some(LogFormat::Text),
            Some("json") => Some(LogFormat::Json),
            Some(other) => {
                return Err(bad(
                    "log_format",
                    other,
                    "must be \"auto\", \"text\" or \"json\"",
                ))
            }
        };
        match (f, json) {
            (Some(LogFormat::Json), _) | (None, Some(true)) => Ok(LogFormat::Json),
            (Some(f), Some(true)) => Err(bad(
                "log_json",
                true,
                format!("contradicts log_format = {f:?} (log_json = true is an alias of log_format = \"json\")"),
            )),
            (f, _) => Ok(f.unwrap_or_default()),
        }
    }
}

/// A (certificate, key) pair of PEM files named by `keys`: both or neither.
fn resolve_tls_pair(
    keys: (&str, &str),
    cert: &Option<String>,
    key: &Option<String>,
) -> Result<Option<(std::path::PathBuf, std::path::PathBuf)>, ConfigError> {
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(c), Some(k)) if !c.trim().is_empty() && !k.trim().is_empty() => {
            Ok(Some((c.into(), k.into())))
        }
        (c, _) => {
            let (which, v) = match c {
                None => (keys.0, "<missing>"),
                Some(c) if c.trim().is_empty() => (keys.0, "<empty>"),
                Some(_) => (keys.1, "<missing or empty>"),
            };
            Err(bad(
                which,
                v,
                format!("set both {} and {} (PEM files)", keys.0, keys.1),
            ))
        }
    }
}

// Card gRPC interface URL form (area: cards).
/// How served cards write the proxy's gRPC interface `url`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GrpcUrlForm {
    /// The agent's own form where the card is the agent's (same version);
    /// else each version's: v0.3 a URL (`http://host:port`, `https://`
    /// with TLS on the listener), v1.0 `host:port` (v1.0.1+ proto comment).
    #[default]
    Auto,
    /// Always `http://host:port` (`https://` with TLS).
    Url,
    /// Always `host:port`: what clients need that hand the card's string
    /// straight to their gRPC channel as its target
    /// (`grpc.insecure_channel(url)`), which a URL is not.
    HostPort,
}

impl GrpcUrlForm {
    fn parse(v: Option<&str>) -> Result<GrpcUrlForm, ConfigError> {
        match v.map(str::trim) {
            None | Some("auto") => Ok(GrpcUrlForm::Auto),
            Some("url") => Ok(GrpcUrlForm::Url),
            Some("host-port") => Ok(GrpcUrlForm::HostPort),
            Some(other) => Err(bad(
                "grpc.card_url_form",
                other,
                "must be \"auto\", \"url\" or \"host-port\"",
            )),
        }
    }
}

// ListTasks emulation (area: listtasks).
/// How a v1.0 client's ListTasks toward a v0.3 agent is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListTasksMode {
    /// From the proxy's index, per caller credentials (`per-caller`).
    PerCaller,
    /// UnsupportedOperation, as the agent would (`off`).
    Off,
}

/// `list_tasks`, `list_identity_headers` (area: listtasks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListTasksSettings {
    pub mode: ListTasksMode,
    /// Headers besides `Authorization` whose values make a caller's scope
    /// (and are forwarded on the page's GetTask calls). Default: none.
    pub identity_headers: Vec<http::HeaderName>,
    /// `limits.list_refresh_max` was set (it is ignored).
    pub refresh_max_ignored: bool,
}

impl Default for ListTasksSettings {
    fn default() -> Self {
        ListTasksSettings {
            mode: ListTasksMode::PerCaller,
            identity_headers: Vec::new(),
            refresh_max_ignored: false,
        }
    }
}

fn resolve_list_tasks(raw: &RawConfig) -> Result<ListTasksSettings, ConfigError> {
    let mode = match raw.list_tasks.as_deref().map(str::trim) {
        None | Some("per-caller") => ListTasksMode::PerCaller,
        Some("off") => ListTasksMode::Off,
        Some(other) => return Err(bad("list_tasks", other, "must be per-caller or off")),
    };
    let mut identity_headers = Vec::new();
    for h in raw.list_identity_headers.iter().flatten() {
        let name = http::HeaderName::from_bytes(h.trim().as_bytes())
            .map_err(|_| bad("list_identity_headers", h, "not a header name"))?;
        if name == http::header::AUTHORIZATION {
            continue;
        }
        if identity_headers.len() >= 16 {
            return Err(bad("list_identity_headers", h, "at most 16 headers"));
        }
        identity_headers.push(name);
    }
    Ok(ListTasksSettings {
        mode,
        identity_headers,
        refresh_max_ignored: raw.limits.list_refresh_max.is_some(),
    })
}

impl Config {
    /// Validates raw input. Missing values get the safe defaults.
    pub fn resolve(raw: RawConfig) -> Result<Config, ConfigError> {
        // Several agents (area: agents).
        if !raw.agents.is_empty() {
            return agents::resolve(raw);
        }
        Config::resolve_one(raw)
    }

    /// Several agents (area: agents): the configs of the agents served,
    /// in file order (this one alone without `[[agents]]`).
    pub fn agent_configs(&self) -> Vec<Config> {
        if self.agents.is_empty() {
            vec![self.clone()]
        } else {
            self.agents.clone()
        }
    }

    /// One agent's config from raw input (`[[agents]]` ignored).
    pub(crate) fn resolve_one(raw: RawConfig) -> Result<Config, ConfigError> {
        let listen_s = raw.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen: SocketAddr = listen_s
            .parse()
            .map_err(|e| bad("listen", listen_s, format!("not an IP:port ({e})")))?;

        let upstream = resolve_upstream_url(&raw)?;
        let (upstream_version, upstream_protocol, newer_minor) = resolve_versions(&raw)?;

        // TLS on the HTTP listener (area: ops).
        let tls = resolve_tls_pair(
            ("tls_cert_file", "tls_key_file"),
            &raw.tls_cert_file,
            &raw.tls_key_file,
        )?;
        let log_format = LogFormat::resolve(raw.log_format.as_deref(), raw.log_json)?;
        let own_scheme = if tls.is_some() { "https" } else { "http" };

        let public_url = resolve_public_url(&raw, listen, own_scheme)?;
        let threads = raw.threads.unwrap_or(2);
        if threads == 0 || threads > 256 {
            return Err(bad("threads", threads, "must be between 1 and 256"));
        }

        let limits = resolve_limits(&raw.limits)?;
        let (grpc_listen, grpc_tls) = resolve_grpc_listener(&raw)?;
        let upstream_grpc = match raw.upstream.grpc_url.as_deref() {
            None => None,
            Some(g) => Some(HttpUrl::parse("upstream.grpc_url", g)?),
        };
        let mut push = resolve_push(&raw.push, listen)?;
        if raw.push.callback_url.is_none() {
            // The default callback is the listener itself (area: ops).
            push.callback_url.scheme = own_scheme.into();
        }
        let list_tasks = resolve_list_tasks(&raw)?;
        let grpc_card_url_form = GrpcUrlForm::parse(raw.grpc.card_url_form.as_deref())?;
        // Interface endpoints (area: paths).
        let allowed_hosts = AllowedHosts::resolve(
            raw.upstream.allowed_hosts.as_deref(),
            &upstream,
            upstream_grpc.as_ref(),
        )?;
        // TLS toward https:// agents (area: https).
        let upstream_tls = std::sync::Arc::new(crate::upstream::tls::UpstreamTls::load(
            raw.upstream.ca_file.as_deref(),
            raw.upstream.client_cert_file.as_deref(),
            raw.upstream.client_key_file.as_deref(),
        )?);
        let telemetry = telemetry::resolve_telemetry(&raw.telemetry)?;
        let admin_listen = match raw.admin_listen.as_deref() {
            None => None,
            Some(a) => {
                let addr: SocketAddr = a
                    .parse()
                    .map_err(|e| bad("admin_listen", a, format!("not an IP:port ({e})")))?;
                if addr == listen || Some(addr) == grpc_listen {
                    return Err(bad(
                        "admin_listen",
                        a,
                        "must be an address of its own, not the HTTP or gRPC listener's",
                    ));
                }
                Some(addr)
            }
        };
        Ok(Config {
            admin_listen,
            telemetry,
            upstream_tls,
            allow_upgrade: raw.upstream.allow_upgrade.unwrap_or(false),
            allowed_hosts,
            // Several agents (area: agents).
            agent: crate::agents::AgentRoute::default(),
            agents: Vec::new(),
            upstream_protocol,
            newer_minor,
            grpc_card_url_form,
            list_tasks,
            push,
            grpc_listen,
            grpc_tls,
            upstream_grpc,
            listen,
            upstream,
            upstream_version,
            public_url,
            tls,
            log_format,
            threads,
            limits,
        })
    }

    /// A config for `upstream` on `listen` with every default (tests,
    /// embedding), except that push interception is off: it needs a data
    /// directory of its own (see [`RawPush`]).
    pub fn new(listen: SocketAddr, upstream: &str) -> Result<Config, ConfigError> {
        Config::resolve(RawConfig {
            listen: Some(listen.to_string()),
            upstream: RawUpstream {
                url: Some(upstream.to_string()),
                version: None,
                grpc_url: None,
                allowed_hosts: None,
                ..RawUpstream::default()
            },
            push: RawPush {
                enabled: Some(false),
                ..RawPush::default()
            },
            ..RawConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn raw(text: &str) -> Result<Config, ConfigError> {
        Config::resolve(RawConfig::from_toml(text, "test.toml")?)
    }

    #[test]
    fn defaults_are_safe() {
        let c = raw("[upstream]\nurl = \"http://127.0.0.1:9000\"\n").unwrap();
        assert_eq!(c.listen.to_string(), DEFAULT_LISTEN);
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.limits.max_body_bytes, 4 * 1024 * 1024);
        assert_eq!(c.limits.connect_timeout, Duration::from_secs(5));
        assert_eq!(c.limits.read_timeout, Duration::from_secs(60));
        assert_eq!(c.limits.stream_max_duration, Duration::from_secs(3600));
        assert_eq!(c.limits.max_connections, 1024);
        assert_eq!(c.upstream_version, UpstreamVersion::Auto);
        assert_eq!(c.public_url.as_string(), "http://127.0.0.1:8080");
        let p = &c.push;
        assert!(p.enabled && !p.allow_private_targets && !p.intercept_same_version);
        assert_eq!(
            p.backend,
            PushBackend::Embedded(DEFAULT_PUSH_DATA_DIR.into())
        );
        assert_eq!(p.callback_url.as_string(), "http://127.0.0.1:8080");
        assert_eq!(p.max_attempts, 10);
        assert_eq!(c.list_tasks, ListTasksSettings::default());
        assert_eq!(c.list_tasks.mode, ListTasksMode::PerCaller);
        assert_eq!(c.limits.list_index.max_tasks, 10_000);
        assert_eq!(c.limits.list_index.max_bytes, 8 * 1024 * 1024);
        assert_eq!(c.limits.list_fetch_parallel, 8);
        let c = raw("list_tasks = \"off\"\nlist_identity_headers = [\"X-User\", \"authorization\"]\n[upstream]\nurl = \"http://a\"\n").unwrap();
        assert_eq!(c.list_tasks.mode, ListTasksMode::Off);
        assert_eq!(c.list_tasks.identity_headers, ["x-user"]);
    }

    // pg (issue #25)
    #[test]
    fn postgres_strings_libpq_and_url_accepted_tls_refused_at_config_time() {
        let pg = |url: &str| {
            raw(&format!(
                "[upstream]\nurl = \"http://a\"\n[push]\npostgres_url = \"{url}\"\n"
            ))
        };
        for ok in [
            "host=127.0.0.1 port=5432 user=proxy password=sekrit-pw dbname=push",
            "host=db.internal dbname=push sslmode=disable",
            "host=db.internal dbname=push sslmode=prefer",
            "postgres://proxy:sekrit-pw@127.0.0.1:5432/push",
            "postgresql://127.0.0.1/push?sslmode=disable",
        ] {
            let c = pg(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(c.push.backend, PushBackend::Postgres(ok.into()));
        }
        for (bad, says) in [
            (
                "host=db dbname=push password=sekrit-pw sslmode=require",
                "TLS",
            ),
            ("postgres://u:sekrit-pw@db/push?sslmode=require", "TLS"),
            ("host=db sslmode=verify-full password=sekrit-pw", "TLS"),
            ("host=db sslnegotiation=direct password=sekrit-pw", "TLS"),
            ("mysql://u:sekrit-pw@db/x", "postgres://"),
            ("just-a-name", "key=value"),
            ("dbname=push password=sekrit-pw", "no host"),
            ("host=db port=notaport password=sekrit-pw", "not a valid"),
            ("host=db nosuchoption=1 password=sekrit-pw", "not a valid"),
        ] {
            let e = pg(bad).unwrap_err();
            assert_eq!(e.key, "push.postgres_url", "{bad}: {e}");
            assert!(e.message.contains(says), "{bad}: {e}");
            assert!(!e.to_string().contains("sekrit-pw"), "{e}");
        }
    }

    // pg (issue #25)
    #[test]
    fn push_lease_has_a_safe_default_and_bounds() {
        let c = raw("[upstream]\nurl = \"http://a\"\n").unwrap();
        assert_eq!(c.push.lease, Duration::from_millis(DEFAULT_PUSH_LEASE_MS));
        assert!(c.push.lease <= Duration::from_secs(10));
        let c = raw("[upstream]\nurl = \"http://a\"\n[push]\nlease_ms = 2000\n").unwrap();
        assert_eq!(c.push.lease, Duration::from_millis(2000));
        for bad in ["0", "299", "3600001"] {
            let e = raw(&format!(
                "[upstream]\nurl = \"http://a\"\n[push]\nlease_ms = {bad}\n"
            ))
            .unwrap_err();
            assert_eq!(e.key, "push.lease_ms", "{bad}");
        }
    }

    #[test]
    fn push_section() {
        let c = raw(r#"
            listen = "0.0.0.0:9999"
            [upstream]
            url = "http://a"
            [push]
            postgres_url = "postgres://u:secret@127.0.0.1/db"
            allow_private_targets = true
            allow_hosts = ["Hooks.Example.com", "[::1]"]
            max_attempts = 3
        "#)
        .unwrap();
        assert_eq!(c.push.callback_url.as_string(), "http://127.0.0.1:9999");
        assert_eq!(c.push.allow_hosts, vec!["hooks.example.com", "::1"]);
        assert!(!format!("{:?}", c.push).contains("secret"));
        assert!(
            !Config::new("127.0.0.1:1".parse().unwrap(), "http://a")
                .unwrap()
                .push
                .enabled
        );
    }

    #[test]
    fn full_file() {
        let c = raw(r#"
            listen = "0.0.0.0:9999"
            public_url = "https://agent.example.com/a2a/"
            log_json = true
            threads = 4
            [upstream]
            url = "http://agent.internal:7000/base"
            version = "1.0"
            [limits]
            max_body_bytes = 1024
            max_connections = 10
            connect_timeout_ms = 100
            read_timeout_ms = 200
            stream_max_duration_secs = 30
            card_default_ttl_secs = 0
            list_refresh_max = 0
            list_index_max_tasks = 5
            list_index_max_bytes = 4096
            list_index_max_id_bytes = 64
            list_fetch_parallel = 2
        "#)
        .unwrap();
        assert_eq!(c.upstream.host, "agent.internal");
        assert_eq!(c.upstream.port, 7000);
        assert_eq!(c.upstream.base_path, "/base");
        assert_eq!(c.upstream_version, UpstreamVersion::Fixed(Version::V10));
        assert_eq!(c.public_url.as_string(), "https://agent.example.com/a2a");
        assert_eq!(c.limits.max_body_bytes, 1024);
        assert_eq!(c.limits.card_default_ttl, Duration::ZERO);
        // Accepted, ignored (warned at start).
        assert!(c.list_tasks.refresh_max_ignored);
        assert_eq!(c.limits.list_index.max_tasks, 5);
        assert_eq!(c.limits.list_index.max_bytes, 4096);
        assert_eq!(c.limits.list_index.max_id_bytes, 64);
        assert_eq!(c.limits.list_fetch_parallel, 2);
        assert_eq!(c.log_format, LogFormat::Json);
    }

    // TLS on the HTTP listener, log format (area: ops).
    #[test]
    fn listener_tls_and_log_format() {
        let c = raw("tls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"\nlog_format = \"text\"\n[upstream]\nurl = \"http://a\"").unwrap();
        assert_eq!(c.tls, Some(("c.pem".into(), "k.pem".into())));
        assert_eq!(c.log_format, LogFormat::Text);
        // The listener's own URLs are https:// by default.
        assert_eq!(c.public_url.scheme, "https");
        assert_eq!(c.push.callback_url.scheme, "https");
        let c = raw("[upstream]\nurl = \"http://a\"").unwrap();
        assert_eq!((c.tls, c.log_format), (None, LogFormat::Auto));
        assert_eq!(c.public_url.scheme, "http");
        for (text, key) in [
            ("tls_cert_file = \"c.pem\"", "tls_key_file"),
            ("tls_key_file = \"k.pem\"", "tls_cert_file"),
            (
                "tls_cert_file = \" \"\ntls_key_file = \"k.pem\"",
                "tls_cert_file",
            ),
            ("log_format = \"xml\"", "log_format"),
            ("log_format = \"text\"\nlog_json = true", "log_json"),
        ] {
            let e = raw(&format!("{text}\n[upstream]\nurl = \"http://a\"")).unwrap_err();
            assert_eq!(e.key, key, "{text}: {e}");
        }
    }

    #[test]
    fn errors_name_the_key() {
        let cases: &[(&str, &str)] = &[
            (
                "listen = \"nope\"\n[upstream]\nurl = \"http://a\"",
                "listen",
            ),
            ("[upstream]\nversion = \"1.0\"", "upstream.url"),
            ("[upstream]\nurl = \"ftp://a\"", "upstream.url"),
            (
                "[upstream]\nurl = \"https://a\"\nca_file = \"/nonexistent/ca.pem\"",
                "upstream.ca_file",
            ),
            (
                "[upstream]\nurl = \"https://a\"\nclient_cert_file = \"c.pem\"",
                "upstream.client_key_file",
            ),
            (
                "[upstream]\nurl = \"http://a\"\nversion = \"2.0\"",
                "upstream.version",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[limits]\nmax_body_bytes = 0",
                "limits.max_body_bytes",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[limits]\nread_timeout_ms = 0",
                "limits.read_timeout_ms",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[limits]\nlist_index_max_tasks = 0",
                "limits.list_index_max_tasks",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[limits]\nlist_index_max_bytes = 0",
                "limits.list_index_max_bytes",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[limits]\nlist_fetch_parallel = 65",
                "limits.list_fetch_parallel",
            ),
            (
                "list_tasks = \"all\"\n[upstream]\nurl = \"http://a\"",
                "list_tasks",
            ),
            (
                "list_identity_headers = [\"bad header\"]\n[upstream]\nurl = \"http://a\"",
                "list_identity_headers",
            ),
            (
                "public_url = \"x\"\n[upstream]\nurl = \"http://a\"",
                "public_url",
            ),
            ("threads = 0\n[upstream]\nurl = \"http://a\"", "threads"),
            (
                "[upstream]\nurl = \"http://a\"\n[push]\nmax_attempts = 0",
                "push.max_attempts",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[push]\npostgres_url = \"mysql://x\"",
                "push.postgres_url",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[push]\ncallback_url = \"ftp://x\"",
                "push.callback_url",
            ),
            (
                "[upstream]\nurl = \"http://a\"\n[push]\nbackoff_initial_ms = 9\nbackoff_max_ms = 5",
                "push.backoff_max_ms",
            ),
        ];
        for (text, key) in cases {
            let e = raw(text).unwrap_err();
            assert_eq!(e.key, *key, "{text}: {e}");
        }
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let e = raw("[upstream]\nurl = \"http://a\"\nversoin = \"1.0\"").unwrap_err();
        assert_eq!(e.key, "test.toml");
        assert!(e.message.contains("versoin"), "{e}");
        let e = raw("[limit]\nmax_body_bytes = 1").unwrap_err();
        assert!(e.message.contains("limit"), "{e}");
    }

    #[test]
    fn url_parts() {
        let u = HttpUrl::parse("k", "http://[::1]:8080/x/").unwrap();
        assert_eq!(u.host, "::1");
        assert_eq!(u.authority(), "[::1]:8080");
        assert_eq!(u.as_string(), "http://[::1]:8080/x");
        let u = HttpUrl::parse("k", "http://example.com").unwrap();
        assert_eq!(u.port, 80);
        assert_eq!(u.as_string(), "http://example.com");
    }

    // sse (issue #20):
    #[test]
    fn max_event_bytes_knob() {
        let base = "[upstream]\nurl = \"http://a\"\n[limits]\n";
        let c = raw("[upstream]\nurl = \"http://a\"").unwrap();
        assert_eq!(c.limits.max_event_bytes, 16 * 1024 * 1024);
        let c = raw(&format!("{base}max_event_bytes = 1000")).unwrap();
        assert_eq!(c.limits.max_event_bytes, 1000);
        for bad in ["0", "1073741825"] {
            let e = raw(&format!("{base}max_event_bytes = {bad}")).unwrap_err();
            assert_eq!(e.key, "limits.max_event_bytes", "{e}");
        }
    }

    // A2A 1.N versions (area: versions).
    #[test]
    fn versions_knobs() {
        let c = raw("[upstream]\nurl = \"http://a\"").unwrap();
        assert_eq!(c.newer_minor, NewerMinor::Refuse);
        assert_eq!(c.upstream_protocol, None);
        let c = raw("[upstream]\nurl = \"http://a\"\nversion = \"1.1\"\n[versions]\nnewer_minor = \"passthrough\"").unwrap();
        assert_eq!(c.upstream_version, UpstreamVersion::Fixed(Version::V10));
        assert_eq!(
            c.upstream_protocol.map(|p| p.to_string()).as_deref(),
            Some("1.1")
        );
        assert_eq!(c.newer_minor, NewerMinor::Passthrough);
        let c = raw("[upstream]\nurl = \"http://a\"\nversion = \"0.3\"").unwrap();
        assert_eq!(c.upstream_version, UpstreamVersion::Fixed(Version::V03));
        for bad in ["2.0", "0.2", "1.x"] {
            let e = raw(&format!(
                "[upstream]\nurl = \"http://a\"\nversion = \"{bad}\""
            ))
            .unwrap_err();
            assert_eq!(e.key, "upstream.version", "{e}");
        }
        let e =
            raw("[upstream]\nurl = \"http://a\"\n[versions]\nnewer_minor = \"allow\"").unwrap_err();
        assert_eq!(e.key, "versions.newer_minor", "{e}");
        assert!(raw("[upstream]\nurl = \"http://a\"\n[versions]\nolder = 1").is_err());
    }
}
