//! a2a-compat-proxy: a Pingora reverse proxy between A2A v0.3 and v1.0
//! clients and agents.
//!
//! Modules: [`config`] (raw file vs resolved config), [`route`] (pure request
//! classification), [`error`] (the one rescue function), [`card`] (upstream
//! card cache and URL rewrite), [`metrics`], [`app`] (state and the work behind
//! each hook), [`front`] (the thin `ProxyHttp` adapter), [`sse`] (event framing),
//! [`translation`] (JSON-RPC cross-version bodies), [`cli::serve`] (the
//! `serve` subcommand), [`cli`] and [`cli::translate`] (the `translate` subcommand). [`start`] runs the proxy in-process for tests.

// Test files shared with the integration tests (the push store contract)
// name this crate `proxy`, as the integration tests do.
#[cfg(test)]
extern crate self as proxy;

pub mod admin;
pub mod agents;
pub mod app;
pub mod binding;
pub mod call;
pub mod card;
pub mod cards;
pub mod cli;
pub mod codec;
pub mod config;
pub mod error;
pub mod forward;
pub mod front;
pub mod grpc;
pub mod ids;
pub mod json_strict;
pub mod local;
pub mod logline;
pub mod metrics;
pub mod push;
pub mod reload;
pub mod rest;
pub mod route;
pub mod server_tls;
pub mod sse;
pub mod tasks;
pub mod telemetry;
pub mod tracectx;
pub mod translation;
pub mod upstream;
pub mod version;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use pingora::apps::HttpServerOptions;
use pingora::server::configuration::ServerConf;
use pingora::server::{RunArgs, Server, ShutdownSignal, ShutdownSignalWatch};
use tokio::sync::oneshot;

use crate::app::App;
use crate::config::Config;
use crate::front::Front;

/// The read buffer of each client connection (see [`build_server`]): none.
/// Pingora reads request heads and bodies into buffers of their own; an L4
/// read buffer only adds a copy and, being zero-filled by tokio, 4 KiB of
/// resident memory per open connection.
const DOWNSTREAM_READ_BUFFER: usize = 0;

/// The write buffer of each client connection (see [`build_server`]): an
/// answer's head and a body of up to about this size together leave in one
/// send instead of two (pingora's default, 1,460 bytes, sends the head
/// alone before a body longer than what is left of it). Pingora flushes it
/// at the end of each answer and after each piece of a stream. Every open
/// connection holds it, and a held stream touches its first bytes: at 8 KiB
/// each open stream cost 4.6 KiB more (a page of its own); at 2 KiB about
/// half a KiB more than pingora's default, and small JSON-RPC answers (a
/// Task of 1.7 KB in bench/hop.sh) still fit with their head.
const DOWNSTREAM_WRITE_BUFFER: usize = 2 * 1024;

/// Builds the pingora server for `config` (not yet running), with one
/// [`App`] per agent (its push worker started), in config order.
pub fn build_server(config: Config, grace: Duration) -> std::io::Result<(Server, Vec<Arc<App>>)> {
    build_reloadable(config, grace).map(|(s, apps, _)| (s, apps))
}

/// The agents the HTTP listener serves, swapped by a reload
/// ([`reload::Reloader`]).
pub type Agents = Arc<arc_swap::ArcSwap<front::AgentSet>>;

/// [`build_server`], and where a reload puts the HTTP listener's agents.
pub fn build_reloadable(
    config: Config,
    grace: Duration,
) -> std::io::Result<(Server, Vec<Arc<App>>, Agents)> {
    let conf = ServerConf {
        threads: config.threads,
        grace_period_seconds: Some(grace.as_secs()),
        graceful_shutdown_timeout_seconds: Some(grace.as_secs().max(1)),
        ..ServerConf::default()
    };
    // TLS on the listener: the files are read now, so a bad one stops the
    // start with the key named.
    let tls = match &config.tls {
        None => None,
        Some((cert, key)) => {
            let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
            let cert = server_tls::ReloadingCert::load(server_tls::CertFiles {
                cert: cert.clone(),
                key: key.clone(),
                keys: ("tls_cert_file", "tls_key_file"),
            })
            .map_err(invalid)?;
            Some(server_tls::acceptor(cert, &[b"h2", b"http/1.1"]).map_err(invalid)?)
        }
    };
    let mut server = Server::new_with_opt_and_conf(None, conf);
    server.bootstrap();
    let listen = config.listen;
    // Several agents (area: agents): one App each; the listener-level
    // settings below are the top-level ones (the same in every agent's).
    let mut apps: Vec<Arc<App>> = Vec::new();
    for one in config.agent_configs() {
        let mut app = App::new(one);
        if let Err(e) = app.start_push() {
            for a in &apps {
                a.stop_push();
            }
            let name = &app.config.agent.name;
            return Err(std::io::Error::new(e.kind(), format!("agent {name}: {e}")));
        }
        apps.push(Arc::new(app));
    }
    let front = Front::new(&apps);
    let agents = front.agents();
    let mut proxy = pingora::proxy::http_proxy(&server.configuration, front);
    let mut options = HttpServerOptions::default();
    options.h2c = true;
    // An HTTP/2 connection with no open stream is closed like an idle
    // HTTP/1.1 one.
    options.h2_idle_timeout = Some(config.limits.idle_timeout);
    proxy.server_options = Some(options);
    // HTTP/2 request heads: the same cap as HTTP/1.1 ones (pingora's own
    // bounds otherwise: 100 concurrent streams, malformed-stream budget).
    let mut h2 = pingora::protocols::http::v2::server::default_h2_options();
    h2.max_header_list_size(config.limits.max_header_bytes as u32);
    proxy.h2_options = Some(h2);
    // Every connection's request heads are bounded in time and size, and
    // HTTP/1.1 requests are answered in order when pipelined (crate::front::conn).
    let listener = front::conn::Listener {
        proxy: Arc::new(proxy),
        limits: front::conn::ConnLimits::of(&config.limits),
        tls,
    };
    let mut svc =
        pingora::services::listening::Service::new("a2a-compat-proxy HTTP".to_string(), listener);
    // Client connections: no read buffer instead of pingora's 64 KiB
    // (plain TCP reads headers and bodies into their own buffers; the big
    // one is for TLS records), so each open stream holds less memory.
    let buffers = pingora::listeners::L4BufferSettings::default()
        .read(DOWNSTREAM_READ_BUFFER)
        .write(DOWNSTREAM_WRITE_BUFFER);
    svc.add_listener(
        pingora::listeners::ListenerConfig::tcp(listen.to_string()).l4_buffer(buffers),
    );
    server.add_service(svc);
    Ok((server, apps, agents))
}

/// Shuts the server down when the channel fires (or its sender is dropped).
struct ChannelShutdown(tokio::sync::Mutex<Option<oneshot::Receiver<()>>>);

#[async_trait]
impl ShutdownSignalWatch for ChannelShutdown {
    async fn recv(&self) -> ShutdownSignal {
        if let Some(rx) = self.0.lock().await.take() {
            let _ = rx.await;
        }
        ShutdownSignal::FastShutdown
    }
}

/// A proxy running on its own thread; stopped by [`RunningProxy::stop`] or drop.
pub struct RunningProxy {
    pub addr: SocketAddr,
    /// The first agent's state (the one agent of a file without `[[agents]]`).
    pub app: Arc<App>,
    /// Every agent's state, in config order.
    pub apps: Vec<Arc<App>>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl RunningProxy {
    /// `http://addr` (`https://addr` with TLS on the listener).
    pub fn url(&self) -> String {
        let scheme = if self.app.config.tls.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// Stops the server and waits for its thread.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        for app in &self.apps {
            app.stop_push();
        }
    }

    /// The state of the agent named `name`.
    pub fn agent(&self, name: &str) -> Option<&Arc<App>> {
        self.apps.iter().find(|a| a.config.agent.name == name)
    }
}

impl Drop for RunningProxy {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Runs the proxy for `config` on a std thread and waits (at most 10 s)
/// until it accepts connections.
pub fn start(config: Config) -> std::io::Result<RunningProxy> {
    let addr = config.listen;
    // Taken by another socket: pingora would retry its bind while the wait
    // below connected to that other socket.
    drop(TcpListener::bind(addr)?);
    let (server, apps) = build_server(config, Duration::ZERO)?;
    let app = apps[0].clone();
    let (tx, rx) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name(format!("a2a-proxy-{}", addr.port()))
        .spawn(move || {
            server.run(RunArgs {
                shutdown_signal: Box::new(ChannelShutdown(tokio::sync::Mutex::new(Some(rx)))),
            });
        })?;
    let mut running = RunningProxy {
        addr,
        app,
        apps,
        shutdown: Some(tx),
        thread: Some(thread),
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return Ok(running);
        }
        if Instant::now() > deadline {
            running.stop();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("proxy did not start listening on {addr}"),
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
