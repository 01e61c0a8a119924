//! `a2a-compat-proxy config check FILE` and `config example`.
//!
//! `check` resolves the file as `serve --config FILE` would (every key
//! validated, the TLS certificate and key files read and matched) and
//! prints the resolved settings; values that may hold secrets (a
//! PostgreSQL URL) are printed redacted. Exit 0 when the file is valid,
//! 2 when not. `example` prints [`EXAMPLE`], a commented file that
//! `check` accepts.

use std::path::Path;

use crate::cli::ConfigCommand;
use crate::config::{Config, RawConfig};
use crate::server_tls::{self, CertFiles};

/// A commented example config file: the common keys with their defaults
/// (every key: proxy/README.md, "Config file (TOML)").
pub const EXAMPLE: &str = r#"# a2a-compat-proxy config file (TOML). Every key is optional except
# upstream.url; the values shown are the defaults unless marked "example".
# All keys: proxy/README.md, "Config file (TOML)". Check a file with
#   a2a-compat-proxy config check FILE

listen = "127.0.0.1:8080"            # the HTTP listener (JSON-RPC, REST, cards)
# public_url = "https://agents.example.com/a2a"   # example; default: http(s)://<listen>
threads = 2
log_format = "auto"                  # auto (text, colours on a terminal) | text | json

# TLS on the HTTP listener (ALPN h2, http/1.1); both or neither; reloaded on SIGHUP.
# tls_cert_file = "/etc/a2a-proxy/cert.pem"    # example
# tls_key_file = "/etc/a2a-proxy/key.pem"      # example

list_tasks = "per-caller"            # per-caller | off
list_identity_headers = []           # headers besides Authorization that tell callers apart

[upstream]
url = "http://127.0.0.1:9000"        # example; required: the agent behind the proxy
version = "auto"                     # auto (read its card) | 0.3 | 1.0
# grpc_url = "http://127.0.0.1:9001"  # example: the agent's gRPC endpoint
# allowed_hosts = ["agent.internal"]  # example; hosts its card may name; default: those of url and grpc_url
# ca_file = "/etc/a2a-proxy/agent-ca.pem"     # example; https:// agents: CAs trusted besides the public ones
# client_cert_file = "/etc/a2a-proxy/client.pem" # example; mTLS toward the agent, with client_key_file
# client_key_file = "/etc/a2a-proxy/client-key.pem"

[grpc]
# listen = "127.0.0.1:8081"          # example; the gRPC listener is off unless set
# tls_cert_file = "/etc/a2a-proxy/cert.pem"    # example; both or neither
# tls_key_file = "/etc/a2a-proxy/key.pem"
card_url_form = "auto"               # auto | url | host-port

[limits]
max_body_bytes = 4194304
max_connections = 1024
connect_timeout_ms = 5000
read_timeout_ms = 60000
stream_max_duration_secs = 3600
card_default_ttl_secs = 60
header_timeout_ms = 10000            # also bounds a TLS handshake on the listener
idle_timeout_ms = 60000
max_header_bytes = 65536
body_timeout_ms = 60000
answer_timeout_ms = 120000
max_event_bytes = 16777216

[push]
enabled = true
data_dir = "./a2a-proxy-data"        # or postgres_url = "postgres://..." (several instances)
# callback_url = "https://proxy.example.com"   # example; where the agent reaches the proxy (default: the listener)
allow_private_targets = false
allow_hosts = []
max_attempts = 10
backoff_initial_ms = 500
backoff_max_ms = 300000
delivery_timeout_ms = 10000

# Several agents behind this one proxy (proxy/README.md, "Several agents"):
# each [[agents]] entry is a whole agent whose unset keys take the values
# above; it is routed by Host and/or path prefix (Host first, then the
# longest prefix). Without [[agents]] the file is one agent, "default".
# [[agents]]
# name = "a"                         # required: the `agent` metric label
# prefix = "/a"                      # served under /a/ (stripped); its public URL path
# [agents.upstream]
# url = "http://127.0.0.1:9000"
# version = "0.3"
# [[agents]]
# name = "b"
# hosts = ["b.example.com"]          # served at Host b.example.com (any port unless given)
# public_url = "https://b.example.com"   # default: its first host on the listener's port
# list_tasks = "off"
# grpc_listen = "127.0.0.1:8082"     # its own gRPC listener (else grpc.listen, routed by :authority)
# [agents.upstream]
# url = "http://127.0.0.1:9100"
# version = "1.0"
# [agents.limits]
# max_connections = 256
# [agents.push]
# callback_url = "https://b.example.com"   # default: its first host (or the listener) + its prefix
"#;

/// Resolves `file` and reads its TLS files: the config, or the message
/// naming what is wrong.
pub fn check(file: &Path) -> Result<Config, String> {
    let raw = RawConfig::from_file(file).map_err(|e| e.to_string())?;
    let config = Config::resolve(raw).map_err(|e| e.to_string())?;
    let pairs = [
        (&config.tls, ("tls_cert_file", "tls_key_file")),
        (
            &config.grpc_tls,
            ("grpc.tls_cert_file", "grpc.tls_key_file"),
        ),
    ];
    for (pair, keys) in pairs {
        if let Some((cert, key)) = pair {
            server_tls::load(&CertFiles {
                cert: cert.clone(),
                key: key.clone(),
                keys,
            })?;
        }
    }
    Ok(config)
}

/// Runs the subcommand; returns the exit code.
pub fn main(cmd: &ConfigCommand) -> i32 {
    match cmd {
        ConfigCommand::Example => {
            print!("{EXAMPLE}");
            0
        }
        ConfigCommand::Check { file } => match check(file) {
            Ok(config) => {
                println!("{}: valid; resolved settings:", file.display());
                // Several agents (area: agents): where each one is served.
                for c in &config.agents {
                    let hosts: Vec<_> = c.agent.hosts.iter().map(|h| h.host.as_str()).collect();
                    println!(
                        "agent {}: prefix {:?}, hosts {:?} -> {} ({:?}), public URL {}",
                        c.agent.name,
                        c.agent.prefix,
                        hosts,
                        c.upstream.as_string(),
                        c.upstream_version,
                        c.public_url.as_string()
                    );
                }
                println!("{config:#?}");
                0
            }
            Err(e) => {
                eprintln!("a2a-compat-proxy config check: {e}");
                2
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's commented `[[agents]]` block, uncommented, resolves.
    #[test]
    fn the_agents_example_resolves() {
        let at = EXAMPLE.find("# [[agents]]").expect("an agents example");
        let mut text = EXAMPLE[..at].to_string();
        for line in EXAMPLE[at..].lines() {
            text.push_str(line.strip_prefix("# ").unwrap_or(line));
            text.push('\n');
        }
        let raw = RawConfig::from_toml(&text, "example").unwrap();
        let c = Config::resolve(raw).unwrap();
        let names: Vec<_> = c.agents.iter().map(|a| a.agent.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(c.agents[1].public_url.as_string(), "https://b.example.com");
        assert_eq!(
            c.agents[0].public_url.as_string(),
            "http://127.0.0.1:8080/a"
        );
        // Without the block: the one default agent.
        let c = Config::resolve(RawConfig::from_toml(EXAMPLE, "example").unwrap()).unwrap();
        assert!(c.agents.is_empty());
    }
}
