//! The `serve` subcommand: flags, config resolution, logging, run.
//!
//! Precedence: command-line flag > `--config` file (TOML) > built-in default.
//! The file's keys are documented in proxy/README.md ([`CONFIG_DOCS`]).

use std::path::PathBuf;
use std::time::Duration;

use pingora::server::RunArgs;

use crate::config::{Config, ConfigError, LogFormat, RawConfig};

/// Where `serve --help` sends readers for the config file's keys.
pub const CONFIG_DOCS: &str = "\
Every flag has a config-file key; a flag wins over the file, the file over the default.
The keys, defaults and bounds are documented in proxy/README.md, sections
  \"Config file (TOML)\"        every key, with an example file
  \"Limits and timeouts\"       limits.*
  \"TLS on the listener\"       tls_cert_file, tls_key_file (reloaded on SIGHUP)
  \"gRPC\"                      grpc.*
  \"Push notifications (issue #4)\"  push.*
  \"OpenTelemetry export (issue #39; `telemetry/`)\"  telemetry.* (OTLP, off by default)
  \"Reload without a restart (issue #39; `reload.rs`, `admin.rs`)\"  SIGHUP, admin_listen
  \"Operations\"                log_format, --callback-url, config check/example, check-upstream
  \"Several agents\"            [[agents]]: several agents by path prefix and/or Host (the flags
                              then set the top-level defaults of every agent)
`a2a-compat-proxy config example` prints a commented config file;
`a2a-compat-proxy config check FILE` validates one and prints the resolved settings.";

/// Flags of `a2a-compat-proxy serve`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, value_name = "IP:PORT")]
    pub listen: Option<String>,
    /// The agent behind the proxy (http://host:port[/base], or https://: an
    /// agent served over TLS; its CA and the proxy's client certificate are
    /// upstream.ca_file and upstream.client_cert_file in the config file).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// The upstream's A2A version [default: auto = read from its agent card].
    #[arg(long, value_name = "auto|0.3|1.0", value_parser = ["auto", "0.3", "1.0"])]
    pub upstream_version: Option<String>,
    /// The URL clients use to reach the proxy; card interface URLs are
    /// rewritten to it [default: http://<listen>, https:// with --tls-cert].
    #[arg(long, value_name = "URL")]
    pub public_url: Option<String>,
    /// Also serve gRPC (both A2A services) on this address [default: off].
    #[arg(long, value_name = "IP:PORT")]
    pub grpc_listen: Option<String>,
    /// PEM certificate chain: the gRPC listener speaks TLS (with --grpc-tls-key).
    #[arg(long, value_name = "FILE")]
    pub grpc_tls_cert: Option<String>,
    /// PEM private key of --grpc-tls-cert.
    #[arg(long, value_name = "FILE")]
    pub grpc_tls_key: Option<String>,
    /// PEM certificate chain: the HTTP listener speaks TLS, ALPN h2 and
    /// http/1.1 (with --tls-key); reloaded on SIGHUP.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<String>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<String>,
    /// The base URL the agent reaches the proxy's push callback at
    /// (push.callback_url) [default: the listener's own URL].
    #[arg(long, value_name = "URL")]
    pub callback_url: Option<String>,
    /// The agent's gRPC endpoint (http://host:port, or https://): the gRPC listener
    /// then calls it over gRPC instead of bridging to its JSON-RPC binding.
    #[arg(long, value_name = "URL")]
    pub upstream_grpc: Option<String>,
    /// A TOML config file (keys: proxy/README.md, "Config file (TOML)";
    /// `config example` prints one).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log lines as text (colours only on a terminal, with `auto`) or
    /// JSON [default: auto].
    #[arg(long, value_name = "auto|text|json", value_parser = ["auto", "text", "json"])]
    pub log_format: Option<String>,
    /// The same as --log-format json.
    #[arg(long, conflicts_with = "log_format")]
    pub log_json: bool,
    /// Pingora worker threads [default: 2].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Largest request body in bytes [default: 4194304].
    #[arg(long, value_name = "BYTES")]
    pub max_body_bytes: Option<u64>,
    /// Most requests handled at once [default: 1024].
    #[arg(long, value_name = "N")]
    pub max_connections: Option<u64>,
    /// Upstream connect timeout [default: 5000].
    #[arg(long, value_name = "MS")]
    pub connect_timeout_ms: Option<u64>,
    /// Upstream read timeout, also the longest gap between SSE events [default: 60000].
    #[arg(long, value_name = "MS")]
    pub read_timeout_ms: Option<u64>,
    /// Longest life of one SSE stream [default: 3600].
    #[arg(long, value_name = "SECS")]
    pub stream_max_duration_secs: Option<u64>,
    /// Directory of the embedded push store [default: ./a2a-proxy-data].
    #[arg(long, value_name = "DIR")]
    pub push_data_dir: Option<String>,
    /// Do not intercept push-notification configs (webhook bodies then
    /// arrive in the agent's version).
    #[arg(long)]
    pub no_push: bool,
    /// Allow webhooks on loopback, private and link-local addresses.
    #[arg(long)]
    pub allow_private_webhooks: bool,
}

impl ServeArgs {
    /// The file (if any) with the flags laid over it.
    pub fn to_raw(&self) -> Result<RawConfig, ConfigError> {
        let mut raw = match &self.config {
            Some(path) => RawConfig::from_file(path)?,
            None => RawConfig::default(),
        };
        let set = |slot: &mut Option<String>, v: &Option<String>| {
            if v.is_some() {
                slot.clone_from(v);
            }
        };
        set(&mut raw.listen, &self.listen);
        set(&mut raw.upstream.url, &self.upstream);
        set(&mut raw.upstream.version, &self.upstream_version);
        set(&mut raw.public_url, &self.public_url);
        set(&mut raw.grpc.listen, &self.grpc_listen);
        set(&mut raw.grpc.tls_cert_file, &self.grpc_tls_cert);
        set(&mut raw.grpc.tls_key_file, &self.grpc_tls_key);
        set(&mut raw.upstream.grpc_url, &self.upstream_grpc);
        set(&mut raw.tls_cert_file, &self.tls_cert);
        set(&mut raw.tls_key_file, &self.tls_key);
        set(&mut raw.push.callback_url, &self.callback_url);
        let format = match (&self.log_format, self.log_json) {
            (Some(f), _) => Some(f.clone()),
            (None, true) => Some("json".to_string()),
            (None, false) => None,
        };
        if format.is_some() {
            // The flag replaces whatever the file said, `log_json` included.
            raw.log_format = format;
            raw.log_json = None;
        }
        set(&mut raw.push.data_dir, &self.push_data_dir);
        if self.no_push {
            raw.push.enabled = Some(false);
        }
        if self.allow_private_webhooks {
            raw.push.allow_private_targets = Some(true);
        }
        let l = &mut raw.limits;
        l.max_body_bytes = self.max_body_bytes.or(l.max_body_bytes);
        l.max_connections = self.max_connections.or(l.max_connections);
        l.connect_timeout_ms = self.connect_timeout_ms.or(l.connect_timeout_ms);
        l.read_timeout_ms = self.read_timeout_ms.or(l.read_timeout_ms);
        l.stream_max_duration_secs = self.stream_max_duration_secs.or(l.stream_max_duration_secs);
        raw.threads = self.threads.or(raw.threads);
        Ok(raw)
    }

    /// The resolved config.
    pub fn resolve(&self) -> Result<Config, ConfigError> {
        Config::resolve(self.to_raw()?)
    }
}

/// Whether an event is logged at all, whatever `RUST_LOG` says: TRACE
/// events of dependencies are dropped. Their request dumps (pingora's
/// "Request header" among them) print header values, clients'
/// `Authorization` and agents' callback secrets included; no level may
/// show a credential.
fn credential_safe(meta: &tracing::Metadata<'_>) -> bool {
    const OWN: [&str; 3] = ["proxy", "translate", "proto"];
    *meta.level() != tracing::Level::TRACE
        || OWN
            .iter()
            .any(|own| meta.target() == *own || meta.target().starts_with(&format!("{own}::")))
}

fn init_logging(format: LogFormat, otel: Option<crate::telemetry::Layer>) {
    use tracing_subscriber::filter::{filter_fn, EnvFilter, FilterExt, LevelFilter};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let env = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // The hint lets the env filter's level stand for the whole: without
    // one, pingora's `log` records of every level were built and offered
    // to the subscriber on each request, to be dropped there.
    let filter = env.and(filter_fn(credential_safe).with_max_level_hint(LevelFilter::TRACE));
    // Colour codes only on a terminal (not in files, journald, pipes), and
    // never with `text`.
    let ansi = format == LogFormat::Auto && std::io::IsTerminal::is_terminal(&std::io::stderr());
    // A span's close is logged (the call span, `a2a_call` at DEBUG, gives
    // one line per call with its busy and idle time when enabled).
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_ansi(ansi);
    // OpenTelemetry export (crate::telemetry): its own filter.
    let registry = tracing_subscriber::registry().with(otel);
    let _ = if format == LogFormat::Json {
        registry.with(layer.json().with_filter(filter)).try_init()
    } else {
        // Request-derived values escaped: no line of a caller's making.
        let layer = layer.fmt_fields(crate::logline::fields());
        registry.with(layer.with_filter(filter)).try_init()
    };
}

/// Raises the soft limit of open files to the hard limit (a proxy holds
/// two descriptors per proxied call; distributions start processes with
/// 1024, or 256 in some shells) and logs the value in force.
fn raise_open_files_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            tracing::warn!("cannot read the open files limit");
            return;
        }
        let before = lim.rlim_cur;
        if lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                tracing::warn!(limit = before, "cannot raise the open files limit");
                return;
            }
        }
        tracing::info!(from = before, to = lim.rlim_cur, "open files limit");
    }
}

/// Fails at once, naming the address, when `addr` cannot be listened on
/// (pingora would retry the bind forever).
fn check_listen(what: &str, addr: std::net::SocketAddr) -> Result<(), String> {
    match std::net::TcpListener::bind(addr) {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("cannot listen on {addr} ({what}): {e}")),
    }
}

/// Fails at once, naming the address, when a listener of `config` (the
/// HTTP one, each gRPC one) cannot be listened on.
fn check_listeners(config: &crate::config::Config) -> Result<(), String> {
    let mut listeners = vec![("HTTP", Some(config.listen))];
    for c in config.agent_configs() {
        // The shared gRPC listener is named by several agents: once.
        if !listeners.contains(&("gRPC", c.grpc_listen)) {
            listeners.push(("gRPC", c.grpc_listen));
        }
    }
    for (what, addr) in listeners {
        addr.map_or(Ok(()), |a| check_listen(what, a))?;
    }
    Ok(())
}

/// The log lines of a start: the listener and upstream, then each agent.
fn log_start(config: &crate::config::Config) {
    tracing::info!(
        listen = %config.listen,
        tls = config.tls.is_some(),
        upstream = %config.upstream.as_string(),
        upstream_version = ?config.upstream_version,
        public_url = %config.public_url.as_string(),
        "starting"
    );
    for c in config.agents.iter() {
        tracing::info!(
            agent = %c.agent.name,
            prefix = %c.agent.prefix,
            hosts = ?c.agent.hosts.iter().map(|h| h.host.as_str()).collect::<Vec<_>>(),
            upstream = %c.upstream.as_string(),
            upstream_version = ?c.upstream_version,
            public_url = %c.public_url.as_string(),
            grpc_listen = ?c.grpc_listen,
            "agent"
        );
    }
}

/// Runs the proxy until SIGINT (fast) or SIGTERM (graceful, 5 s). Returns
/// the process exit code: 0 after shutdown, 2 for a bad configuration.
pub fn main(args: &ServeArgs) -> i32 {
    let config = match args.resolve() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("a2a-compat-proxy serve: {e}");
            return 2;
        }
    };
    // OpenTelemetry export (area: telemetry), before the logging that
    // carries its layer.
    let mut telemetry = None;
    let mut otel = None;
    if let Some(t) = &config.telemetry {
        match crate::telemetry::Telemetry::start(t) {
            Ok((running, layer)) => {
                telemetry = Some(running);
                otel = Some(layer);
            }
            Err(e) => {
                eprintln!("a2a-compat-proxy serve: {e}");
                return 2;
            }
        }
    }
    init_logging(config.log_format, otel);
    if let Some(t) = &config.telemetry {
        tracing::info!(endpoint = %t.endpoint.as_string(), protocol = ?t.protocol, "telemetry: spans and metrics exported over OTLP");
    }
    if let Err(e) = check_listeners(&config) {
        eprintln!("a2a-compat-proxy serve: {e}");
        return 2;
    }
    raise_open_files_limit();
    let tls = config.tls.is_some() || config.grpc_tls.is_some();
    log_start(&config);
    let started_with = config.clone();
    let admin_listen = config.admin_listen;
    let (server, apps, agents) = match crate::build_reloadable(config, Duration::from_secs(5)) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("a2a-compat-proxy serve: cannot start: {e}");
            return 2;
        }
    };
    // Several agents (area: agents): the gRPC listeners, the shared one
    // (top-level grpc.listen, routed by :authority) and any agent's own.
    let mut grpc = match crate::grpc::GrpcServer::start_all(&apps) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("a2a-compat-proxy serve: cannot start {e}");
            for app in &apps {
                app.stop_push();
            }
            return 2;
        }
    };
    // Reload without a restart (area: reload): SIGHUP reads the config
    // file again (and reloads the TLS certificates).
    let reloader = args.config.as_ref().map(|_| {
        let again = args.clone();
        std::sync::Arc::new(crate::reload::Reloader::new(
            Box::new(move || again.resolve()),
            started_with,
            apps.clone(),
            agents,
            grpc.iter().map(|g| g.reloader()).collect(),
        ))
    });
    if tls || reloader.is_some() {
        let what = match (tls, reloader.is_some()) {
            (true, true) => "the TLS certificates and the config file",
            (true, false) => "the TLS certificates",
            _ => "the config file",
        };
        match crate::reload::watch_sighup(reloader.clone(), tls) {
            Ok(()) => tracing::info!("SIGHUP reloads {what}"),
            Err(e) => tracing::warn!(error = %e, "SIGHUP not watched: nothing is reloaded"),
        }
    }
    // The admin listener (`admin_listen`): POST /admin/reload.
    let mut admin = None;
    if let (Some(addr), Some(r)) = (admin_listen, &reloader) {
        match crate::admin::AdminServer::start(addr, r.clone()) {
            Ok(a) => admin = Some(a),
            Err(e) => {
                eprintln!("a2a-compat-proxy serve: cannot listen on {addr} (admin): {e}");
                for g in grpc.iter_mut() {
                    g.stop();
                }
                for app in &apps {
                    app.stop_push();
                }
                return 2;
            }
        }
    }
    server.run(RunArgs::default());
    drop(admin);
    // The agents served last (a reload may have changed them).
    let apps = reloader.map(|r| r.apps()).unwrap_or(apps);
    for g in grpc.iter_mut() {
        g.stop();
    }
    for app in &apps {
        app.stop_push();
    }
    if let Some(mut t) = telemetry {
        t.stop();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    #[test]
    fn flags_override_file() {
        let dir = std::env::temp_dir().join(format!("a2a-serve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "listen = \"127.0.0.1:1\"\n[upstream]\nurl = \"http://127.0.0.1:2\"\nversion = \"0.3\"\n[limits]\nmax_body_bytes = 10\n",
        )
        .unwrap();
        let cli = Cli::parse_from([
            "x",
            "--config",
            file.to_str().unwrap(),
            "--listen",
            "127.0.0.1:3",
            "--max-body-bytes",
            "20",
            "--upstream-grpc",
            "http://127.0.0.1:4",
        ]);
        let c = cli.serve.resolve().unwrap();
        assert_eq!(c.listen.port(), 3);
        assert_eq!(c.upstream.port, 2);
        assert_eq!(c.limits.max_body_bytes, 20);
        assert_eq!(c.upstream_grpc.as_ref().map(|u| u.port), Some(4));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn ops_flags_override_the_file() {
        let dir = std::env::temp_dir().join(format!("a2a-serve-ops-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "log_json = true\n[upstream]\nurl = \"http://127.0.0.1:2\"\n[push]\ncallback_url = \"http://a:1\"\n",
        )
        .unwrap();
        let f = file.to_str().unwrap();
        let c = Cli::parse_from(["x", "--config", f])
            .serve
            .resolve()
            .unwrap();
        assert_eq!(c.log_format, LogFormat::Json);
        assert_eq!(c.push.callback_url.as_string(), "http://a:1");
        let cli = Cli::parse_from([
            "x",
            "--config",
            f,
            "--log-format",
            "text",
            "--callback-url",
            "https://proxy.example.com/cb",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
        ]);
        let c = cli.serve.resolve().unwrap();
        assert_eq!(c.log_format, LogFormat::Text);
        assert_eq!(
            c.push.callback_url.as_string(),
            "https://proxy.example.com/cb"
        );
        assert_eq!(c.tls, Some(("c.pem".into(), "k.pem".into())));
        assert!(Cli::try_parse_from(["x", "--log-json", "--log-format", "text"]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_config_exits_2() {
        let args = ServeArgs {
            upstream: Some("ftp://x".into()),
            ..ServeArgs::default()
        };
        assert_eq!(main(&args), 2);
        assert!(Cli::try_parse_from(["x", "--upstream-version", "2.0"]).is_err());
    }
}
