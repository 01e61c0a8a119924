//! The configuration file as written: every member optional, unknown
//! members refused; [`super::Config::resolve`] checks each value.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// The configuration file as written (every member optional).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawConfig {
    pub listen: Option<String>,
    pub public_url: Option<String>,
    pub log_json: Option<bool>,
    pub threads: Option<usize>,
    #[serde(default)]
    pub upstream: RawUpstream,
    #[serde(default)]
    pub limits: RawLimits,
    #[serde(default)]
    pub grpc: RawGrpc,
    #[serde(default)]
    pub push: RawPush,
    // ListTasks emulation (area: listtasks).
    /// `per-caller` (default) or `off`.
    pub list_tasks: Option<String>,
    /// Headers besides `Authorization` that tell callers apart.
    pub list_identity_headers: Option<Vec<String>>,
    // TLS on the HTTP listener, log format (area: ops).
    /// PEM certificate chain: the HTTP listener speaks TLS (with `tls_key_file`).
    pub tls_cert_file: Option<String>,
    /// PEM private key of `tls_cert_file`.
    pub tls_key_file: Option<String>,
    /// `auto` (default), `text` or `json`; `log_json = true` is `json`.
    pub log_format: Option<String>,
    // A2A 1.N versions (area: versions).
    #[serde(default)]
    pub versions: RawVersions,
    // OpenTelemetry export (area: telemetry).
    #[serde(default)]
    pub telemetry: super::RawTelemetry,
    // Reload without a restart (area: reload).
    /// `IP:PORT` of the admin listener (`POST /admin/reload`); off when absent.
    pub admin_listen: Option<String>,
    // Several agents (area: agents).
    /// `[[agents]]`: several agents behind one proxy, each routed by path
    /// prefix and/or `Host`; empty: this file's one agent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<RawAgent>,
}

// Several agents (area: agents).
/// One `[[agents]]` entry: the top-level values are its defaults; what it
/// sets here overrides them (resolved in `config/agents.rs`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawAgent {
    /// Required: the `agent` label of its metrics, its push data subdirectory.
    pub name: Option<String>,
    /// The request path prefix it is served under (`/a`), stripped before
    /// the request goes on; also the path of its public URL.
    pub prefix: Option<String>,
    /// `Host` names it is served at (`a.example.com`, or with `:port`).
    pub hosts: Option<Vec<String>>,
    /// A gRPC listener of its own, taking its every call. Without it, the
    /// top-level `grpc.listen` serves the agent when the call's `:authority`
    /// names one of its `hosts`, or when it is the default agent.
    pub grpc_listen: Option<String>,
    pub public_url: Option<String>,
    pub upstream: Option<RawUpstream>,
    pub push: Option<RawPush>,
    pub limits: Option<RawLimits>,
    pub list_tasks: Option<String>,
    pub list_identity_headers: Option<Vec<String>>,
}

// A2A 1.N versions (area: versions).
/// `[versions]` of the file: which A2A 1.N calls are served.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawVersions {
    /// `refuse` (default) or `passthrough`: a 1.N client newer than the
    /// agent ([`NewerMinor`](super::NewerMinor)).
    pub newer_minor: Option<String>,
}

/// `[push]` of the file: push-notification interception and delivery.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawPush {
    pub enabled: Option<bool>,
    pub data_dir: Option<String>,
    pub postgres_url: Option<String>,
    pub callback_url: Option<String>,
    pub intercept_same_version: Option<bool>,
    pub allow_private_targets: Option<bool>,
    pub allow_hosts: Option<Vec<String>>,
    pub max_attempts: Option<u32>,
    pub backoff_initial_ms: Option<u64>,
    pub backoff_max_ms: Option<u64>,
    pub delivery_timeout_ms: Option<u64>,
    pub instance_id: Option<String>,
    pub credentials_key_file: Option<String>,
    // pg (issue #25)
    /// Delivery lease, ms: renewed every third of it while an instance
    /// works on its items; a crashed instance's items are taken over once
    /// it runs out.
    pub lease_ms: Option<u64>,
    // Outbox and callback bounds (issue #41).
    /// Notifications waiting for delivery, in all and per config.
    pub outbox_max_items: Option<u64>,
    pub outbox_max_bytes: Option<u64>,
    pub outbox_config_max_items: Option<u64>,
    pub outbox_config_max_bytes: Option<u64>,
    /// Bytes of callback bodies being read and accepted at once.
    pub callback_read_bytes: Option<u64>,
}

/// `[grpc]` of the file: the gRPC listener (off unless `listen` is set).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawGrpc {
    pub listen: Option<String>,
    /// PEM certificate chain: the gRPC listener speaks TLS (with `tls_key_file`).
    pub tls_cert_file: Option<String>,
    pub tls_key_file: Option<String>,
    // Card gRPC interface URL form (area: cards).
    /// `auto` (default), `url` or `host-port`: see [`GrpcUrlForm`].
    pub card_url_form: Option<String>,
}

/// `[upstream]` of the file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawUpstream {
    pub url: Option<String>,
    pub version: Option<String>,
    /// The upstream's gRPC endpoint (`http://host:port`), if it has one.
    pub grpc_url: Option<String>,
    // Interface endpoints (area: paths).
    /// Hosts (`host` or `host:port`) whose interfaces the agent's card may
    /// name; default: the hosts of `url` and `grpc_url`.
    pub allowed_hosts: Option<Vec<String>>,
    // TLS toward https:// agents (area: https).
    /// PEM CA certificates trusted for the agent, besides the Mozilla roots.
    pub ca_file: Option<String>,
    /// PEM client certificate chain presented to the agent (mTLS), with
    /// `client_key_file`.
    pub client_cert_file: Option<String>,
    /// PEM private key of `client_cert_file`.
    pub client_key_file: Option<String>,
    /// Requests asking for a protocol upgrade (WebSocket, ...) passed on to
    /// the agent; default: refused (400).
    pub allow_upgrade: Option<bool>,
}

/// `[limits]` of the file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLimits {
    pub max_body_bytes: Option<u64>,
    pub max_connections: Option<u64>,
    pub connect_timeout_ms: Option<u64>,
    pub read_timeout_ms: Option<u64>,
    pub stream_max_duration_secs: Option<u64>,
    pub card_default_ttl_secs: Option<u64>,
    // ListTasks emulation (area: listtasks).
    /// No longer used (ListTasks asks the agent for each listed task);
    /// accepted and ignored with a warning.
    pub list_refresh_max: Option<u64>,
    // Client connections and whole answers (hostile clients and agents).
    pub header_timeout_ms: Option<u64>,
    pub idle_timeout_ms: Option<u64>,
    pub max_header_bytes: Option<u64>,
    pub answer_timeout_ms: Option<u64>,
    pub body_timeout_ms: Option<u64>,
    // sse (issue #20): the largest SSE event or whole answer translated.
    pub max_event_bytes: Option<u64>,
    pub list_index_max_tasks: Option<u64>,
    pub list_index_max_bytes: Option<u64>,
    pub list_index_max_id_bytes: Option<u64>,
    pub list_fetch_parallel: Option<u64>,
    // Relayed subscriptions (area: relay, issue #22 item 6).
    pub relay_max_subscriptions: Option<u64>,
    pub relay_max_wait_secs: Option<u64>,
    pub relay_max_buffer_bytes: Option<u64>,
}

impl RawConfig {
    /// Parses TOML text; `origin` names the file in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<RawConfig, ConfigError> {
        toml::from_str(text).map_err(|e| ConfigError {
            key: origin.to_string(),
            message: e.to_string(),
        })
    }

    /// Reads and parses a TOML file.
    pub fn from_file(path: &Path) -> Result<RawConfig, ConfigError> {
        let origin = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            key: origin.clone(),
            message: format!("cannot read config file: {e}"),
        })?;
        RawConfig::from_toml(&text, &origin)
    }
}
