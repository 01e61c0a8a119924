//! Reload without a restart (issue #39 item 2): SIGHUP (and `POST
//! /admin/reload` on the admin listener, crate::admin) reads the config
//! file again, as `config check` would, and when it is valid as a whole
//! the agents it names serve the new requests: added agents start (their
//! push store opened), removed ones stop taking requests, changed ones
//! (upstream, version, limits, routes, TLS files) get a new state that
//! carries over what the agent remembers (push store and worker, ListTasks
//! index, relayed subscriptions, counters: [`App::carried`]). Each
//! listener's agents are swapped at once ([`AgentSet`] on the HTTP
//! listener, [`GrpcReload`] on each gRPC one); a call keeps the agent
//! state it started with, so open connections and streams end on their
//! old settings.
//!
//! A file that fails, or that changes what only a restart can change (the
//! listeners' addresses, TLS files and connection bounds, threads, log
//! format, telemetry; an agent's push settings, ListTasks settings and
//! index and relay bounds, whose state is carried), is refused whole: the
//! old settings stay and the error names the key. `/metrics` counts both
//! (`a2a_proxy_config_reloads_total{result}`).

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;

use crate::app::App;
use crate::config::{Config, ConfigError};
use crate::front::AgentSet;
use crate::grpc::GrpcReload;

/// Reloads applied.
static RELOADED: AtomicU64 = AtomicU64::new(0);
/// Reloads refused (the old settings stayed).
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// How the config is read again (the file, with the flags of the start
/// laid over it).
pub type Load = Box<dyn Fn() -> Result<Config, ConfigError> + Send + Sync>;

/// What a reload changes, and what it changed last.
pub struct Reloader {
    load: Load,
    current: Mutex<Current>,
    front: Arc<ArcSwap<AgentSet>>,
    grpc: Vec<GrpcReload>,
}

struct Current {
    config: Config,
    apps: Vec<Arc<App>>,
}

/// What an applied reload did, by agent name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reloaded {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub kept: Vec<String>,
}

fn refused(key: &str, message: String) -> ConfigError {
    ConfigError {
        key: key.to_string(),
        message,
    }
}

/// The error of a key only a restart changes.
fn restart_only(key: &str, old: impl std::fmt::Debug, new: impl std::fmt::Debug) -> ConfigError {
    refused(
        key,
        format!("{old:?} -> {new:?}: cannot change without a restart"),
    )
}

/// The distinct gRPC listener addresses of `config`, in order.
fn grpc_addrs(config: &Config) -> Vec<SocketAddr> {
    let mut out = Vec::new();
    for c in config.agent_configs() {
        if let Some(a) = c.grpc_listen {
            if !out.contains(&a) {
                out.push(a);
            }
        }
    }
    out
}

/// The key an agent's setting is named by: `agents[N].key` in a file with
/// `[[agents]]`, else the top-level key.
fn agent_key(config: &Config, i: usize, key: &str) -> String {
    if config.agents.is_empty() {
        key.to_string()
    } else {
        format!("agents[{i}].{key}")
    }
}

/// Refuses `new` when it changes what only a restart can.
pub fn check_restartable(old: &Config, new: &Config) -> Result<(), ConfigError> {
    if old.listen != new.listen {
        return Err(restart_only("listen", old.listen, new.listen));
    }
    if old.threads != new.threads {
        return Err(restart_only("threads", old.threads, new.threads));
    }
    if old.tls != new.tls {
        return Err(restart_only("tls_cert_file", &old.tls, &new.tls));
    }
    if old.log_format != new.log_format {
        return Err(restart_only("log_format", old.log_format, new.log_format));
    }
    if old.admin_listen != new.admin_listen {
        return Err(restart_only(
            "admin_listen",
            old.admin_listen,
            new.admin_listen,
        ));
    }
    if old.telemetry != new.telemetry {
        return Err(refused(
            "telemetry",
            "cannot change without a restart".into(),
        ));
    }
    let (o, n) = (&old.limits, &new.limits);
    for (key, same) in [
        (
            "limits.header_timeout_ms",
            o.header_timeout == n.header_timeout,
        ),
        ("limits.idle_timeout_ms", o.idle_timeout == n.idle_timeout),
        (
            "limits.max_header_bytes",
            o.max_header_bytes == n.max_header_bytes,
        ),
    ] {
        if !same {
            return Err(refused(
                key,
                "a bound of the listener's connections: cannot change without a restart".into(),
            ));
        }
    }
    if grpc_addrs(old) != grpc_addrs(new) {
        return Err(restart_only(
            "grpc.listen",
            grpc_addrs(old),
            grpc_addrs(new),
        ));
    }
    if old.grpc_tls != new.grpc_tls {
        return Err(restart_only(
            "grpc.tls_cert_file",
            &old.grpc_tls,
            &new.grpc_tls,
        ));
    }
    // What a kept agent's carried state was made with.
    let olds = old.agent_configs();
    for (i, c) in new.agent_configs().iter().enumerate() {
        let Some(was) = olds.iter().find(|o| o.agent.name == c.agent.name) else {
            continue;
        };
        // A push.instance_id left unset is drawn anew at each read: the
        // one in force is the same setting.
        let mut push = c.push.clone();
        if push
            .instance_id
            .starts_with(&format!("{}-", std::process::id()))
        {
            push.instance_id.clone_from(&was.push.instance_id);
        }
        let checks = [
            ("push", was.push == push),
            ("list_tasks", was.list_tasks == c.list_tasks),
            (
                "limits.list_index_max_tasks",
                was.limits.list_index == c.limits.list_index,
            ),
            (
                "limits.relay_max_subscriptions",
                was.limits.relay == c.limits.relay,
            ),
        ];
        for (key, same) in checks {
            if !same {
                return Err(refused(
                    &agent_key(new, i, key),
                    format!(
                        "agent {:?} keeps its state across a reload, made with this setting: it cannot change without a restart",
                        c.agent.name
                    ),
                ));
            }
        }
        if was.grpc_listen != c.grpc_listen {
            return Err(restart_only(
                &agent_key(new, i, "grpc_listen"),
                was.grpc_listen,
                c.grpc_listen,
            ));
        }
    }
    for (i, c) in new.agent_configs().iter().enumerate() {
        if let Some(u) = &c.upstream_grpc {
            crate::grpc::upstream::endpoint(u, c)
                .map_err(|e| refused(&agent_key(new, i, "upstream.grpc_url"), e))?;
        }
    }
    Ok(())
}

impl Reloader {
    /// The reloader of a proxy started with `config`, serving `apps` on
    /// the HTTP listener whose agents are `front` and the gRPC listeners
    /// `grpc`; `load` reads the config again.
    pub fn new(
        load: Load,
        config: Config,
        apps: Vec<Arc<App>>,
        front: Arc<ArcSwap<AgentSet>>,
        grpc: Vec<GrpcReload>,
    ) -> Reloader {
        Reloader {
            load,
            current: Mutex::new(Current { config, apps }),
            front,
            grpc,
        }
    }

    /// The agents served now, in config order.
    pub fn apps(&self) -> Vec<Arc<App>> {
        self.current
            .lock()
            .map(|c| c.apps.clone())
            .unwrap_or_default()
    }

    /// Reads the config again and applies it, or refuses it whole (logged
    /// with its key; counted either way).
    pub fn reload(&self) -> Result<Reloaded, ConfigError> {
        let done = self.apply();
        match &done {
            Ok(r) => {
                RELOADED.fetch_add(1, Ordering::Relaxed);
                tracing::info!(added = ?r.added, removed = ?r.removed, kept = ?r.kept, "config reloaded");
            }
            Err(e) => {
                REFUSED.fetch_add(1, Ordering::Relaxed);
                tracing::error!(key = %e.key, error = %e, "config reload refused; the settings in force stay");
            }
        }
        done
    }

    fn apply(&self) -> Result<Reloaded, ConfigError> {
        let new = (self.load)()?;
        // One reload at a time.
        let mut cur = self
            .current
            .lock()
            .map_err(|_| refused("reload", "an earlier reload panicked".into()))?;
        check_restartable(&cur.config, &new)?;
        let configs = new.agent_configs();
        let old_of = |name: &str| {
            cur.apps
                .iter()
                .find(|a| a.config.agent.name == name)
                .cloned()
        };
        // Added agents first: opening a push store is what can still fail.
        let mut added: Vec<(usize, Arc<App>)> = Vec::new();
        for (i, c) in configs.iter().enumerate() {
            if old_of(&c.agent.name).is_some() {
                continue;
            }
            let mut app = App::new(c.clone());
            if let Err(e) = app.start_push() {
                for (_, a) in &added {
                    a.stop_push();
                }
                return Err(refused(
                    &agent_key(&new, i, "push"),
                    format!("agent {:?}: {e}", c.agent.name),
                ));
            }
            added.push((i, Arc::new(app)));
        }
        let mut report = Reloaded::default();
        let mut apps = Vec::with_capacity(configs.len());
        for (i, c) in configs.into_iter().enumerate() {
            let app = match added.iter().find(|(j, _)| *j == i) {
                Some((_, a)) => {
                    report.added.push(c.agent.name.clone());
                    a.clone()
                }
                None => {
                    let old = old_of(&c.agent.name).expect("kept agent");
                    report.kept.push(c.agent.name.clone());
                    let next = Arc::new(App::carried(&old, c));
                    retire(old, false);
                    next
                }
            };
            apps.push(app);
        }
        for g in &self.grpc {
            let on: Vec<Arc<App>> = apps
                .iter()
                .filter(|a| a.config.grpc_listen == Some(g.addr))
                .cloned()
                .collect();
            g.serve(&on).map_err(|e| refused("grpc.listen", e))?;
        }
        self.front.store(Arc::new(AgentSet::new(&apps)));
        for old in cur.apps.iter() {
            if !apps
                .iter()
                .any(|a| a.config.agent.name == old.config.agent.name)
            {
                report.removed.push(old.config.agent.name.clone());
                retire(old.clone(), true);
            }
        }
        cur.config = new;
        cur.apps = apps;
        Ok(report)
    }
}

/// When `old` was `removed`: once the calls still holding it have ended
/// (at most its longest stream and a minute more), its push worker and
/// store stopped (notifications it accepted stay in the store, delivered
/// once the agent is served again). A carried state's push layer lives on
/// in the new one: nothing to do.
fn retire(old: Arc<App>, removed: bool) {
    // A kept agent's new state carries its push store on: nothing to stop.
    if !removed {
        return;
    }
    let limit = old.config.limits.stream_max_duration + Duration::from_secs(60);
    let name = old.config.agent.name.clone();
    let spawned = std::thread::Builder::new()
        .name("a2a-retire".into())
        .spawn(move || {
            let end = Instant::now() + limit;
            while Arc::strong_count(&old) > 1 && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(200));
            }
            old.stop_push();
        });
    if let Err(e) = spawned {
        tracing::warn!(agent = %name, error = %e, "the agent's previous state is not cleaned up");
    }
}

/// The reload counters, Prometheus text (the proxy's own, `agent=""`).
pub fn render(out: &mut String) {
    use std::fmt::Write as _;
    out.push_str("# HELP a2a_proxy_config_reloads_total Config reloads (SIGHUP, POST /admin/reload), applied or refused.\n");
    out.push_str("# TYPE a2a_proxy_config_reloads_total counter\n");
    let _ = writeln!(
        out,
        "a2a_proxy_config_reloads_total{{result=\"ok\"}} {}",
        RELOADED.load(Ordering::Relaxed)
    );
    let _ = writeln!(
        out,
        "a2a_proxy_config_reloads_total{{result=\"refused\"}} {}",
        REFUSED.load(Ordering::Relaxed)
    );
}

/// On each SIGHUP, for the rest of the process, on a thread of its own:
/// the TLS certificates of the listeners reloaded (`tls`), then the
/// config (`reloader`). Replaces SIGHUP's default action (ending the
/// process).
pub fn watch_sighup(reloader: Option<Arc<Reloader>>, tls: bool) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut hup = rt.block_on(async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
    })?;
    std::thread::Builder::new()
        .name("a2a-sighup".into())
        .spawn(move || {
            rt.block_on(async move {
                while hup.recv().await.is_some() {
                    if tls {
                        tracing::info!("SIGHUP: reloading TLS certificates");
                        crate::server_tls::reload_all();
                    }
                    if let Some(r) = &reloader {
                        tracing::info!("SIGHUP: reloading the config file");
                        let r = r.clone();
                        let _ = tokio::task::spawn_blocking(move || r.reload()).await;
                    }
                }
            })
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RawConfig;

    fn config(text: &str) -> Config {
        Config::resolve(RawConfig::from_toml(text, "t.toml").unwrap()).unwrap()
    }

    const BASE: &str = "listen = \"127.0.0.1:1\"\n[push]\nenabled = false\n[grpc]\nlisten = \"127.0.0.1:2\"\n[[agents]]\nname = \"a\"\n[agents.upstream]\nurl = \"http://127.0.0.1:9\"\n";

    #[test]
    fn what_only_a_restart_changes_is_refused_by_key() {
        let old = config(BASE);
        let same = config(&format!("{BASE}[[agents]]\nname = \"b\"\nprefix = \"/b\"\n[agents.upstream]\nurl = \"http://127.0.0.1:8\"\n"));
        assert!(check_restartable(&old, &same).is_ok());
        let changed_upstream = config(&BASE.replace("127.0.0.1:9", "127.0.0.1:7"));
        assert!(check_restartable(&old, &changed_upstream).is_ok());
        for (text, key) in [
            (BASE.replace("127.0.0.1:1", "127.0.0.1:3"), "listen"),
            (format!("threads = 4\n{BASE}"), "threads"),
            (BASE.replace("127.0.0.1:2", "127.0.0.1:4"), "grpc.listen"),
            (
                BASE.replace(
                    "[push]\nenabled = false\n",
                    "[push]\nenabled = false\n[limits]\nidle_timeout_ms = 1000\n",
                ),
                "limits.idle_timeout_ms",
            ),
            (
                format!("{BASE}[agents.push]\nintercept_same_version = true\n"),
                "agents[0].push",
            ),
            (
                format!("{BASE}[telemetry]\notlp_endpoint = \"http://127.0.0.1:4317\"\n"),
                "telemetry",
            ),
        ] {
            let new = config(&text);
            assert_eq!(
                check_restartable(&old, &new).unwrap_err().key,
                key,
                "{text}"
            );
        }
    }
}
