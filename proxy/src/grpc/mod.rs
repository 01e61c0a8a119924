//! The gRPC binding: one tonic server on its own listener (`grpc.listen` /
//! `--grpc-listen`, off unless set) hosting both A2A services side by side,
//! `a2a.v1.A2AService` (v0.3, [`svc_v03`]) and `lf.a2a.v1.A2AService` (v1.0,
//! [`svc_v10`]), on its own thread and tokio runtime next to Pingora.
//!
//! Every RPC goes to the upstream in the upstream's version ([`bridge`]):
//! over its gRPC binding when `upstream.grpc_url` is set or its card lists
//! a gRPC interface on an allowed host ([`upstream`], [`target`]), else
//! bridged to its JSON-RPC binding; errors become statuses in the
//! caller's dialect ([`status`]). Unknown RPCs get UNIMPLEMENTED and undecodable messages
//! INTERNAL from tonic itself.

mod accept;
pub mod authority;
pub mod bridge;
pub mod direct;
pub mod passthrough;
mod rpc;
pub mod serve;
pub mod status;
pub mod svc_v03;
pub mod svc_v10;
mod target;
pub mod tls;
pub mod upstream;

use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::app::App;
use crate::version::Version;

/// A running gRPC listener; stopped by [`GrpcServer::stop`] or drop.
pub struct GrpcServer {
    pub addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Where a reload puts the agents served next ([`GrpcServer::reloader`]).
    reload: GrpcReload,
}

/// What a reload (crate::reload) needs of one gRPC listener: its agents'
/// swap and its runtime (where their channels live).
#[derive(Clone)]
pub struct GrpcReload {
    pub addr: SocketAddr,
    state: Arc<arc_swap::ArcSwap<authority::GrpcAgents>>,
    handle: tokio::runtime::Handle,
}

impl GrpcReload {
    /// The listener's agents from now on: `apps` (in config order), each
    /// with its services toward its target built anew; calls under way
    /// keep the agent they were routed to.
    pub fn serve(&self, apps: &[Arc<App>]) -> Result<(), String> {
        let agents = with_endpoints(apps).map_err(|e| e.to_string())?;
        let router =
            crate::agents::GrpcRouter::new(apps.iter().map(|a| a.config.agent.clone()).collect());
        let next = {
            let _in = self.handle.enter();
            grpc_agents(agents, router)
        };
        tracing::info!(addr = %self.addr, agents = ?next.names(), "gRPC listener: agents reloaded");
        self.state.store(Arc::new(next));
        Ok(())
    }

    /// The names of the agents served now.
    pub fn names(&self) -> Vec<String> {
        self.state
            .load()
            .names()
            .into_iter()
            .map(String::from)
            .collect()
    }
}

/// Each agent of `apps` with its `upstream.grpc_url` endpoint, if any.
fn with_endpoints(
    apps: &[Arc<App>],
) -> std::io::Result<Vec<(Arc<App>, Option<upstream::UpstreamEndpoint>)>> {
    let mut agents = Vec::with_capacity(apps.len());
    for app in apps {
        let endpoint = match &app.config.upstream_grpc {
            None => None,
            Some(u) => Some(
                upstream::endpoint(u, &app.config)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
            ),
        };
        agents.push((app.clone(), endpoint));
    }
    Ok(agents)
}

/// The agents a listener serves, their targets built (inside the
/// listener's runtime: a channel's worker is spawned).
fn grpc_agents(
    agents: Vec<(Arc<App>, Option<upstream::UpstreamEndpoint>)>,
    router: crate::agents::GrpcRouter,
) -> authority::GrpcAgents {
    let targets = agents
        .into_iter()
        .map(|(app, endpoint)| {
            let name = app.config.agent.name.clone();
            (Arc::new(target::Targets::new(app, endpoint.as_ref())), name)
        })
        .collect();
    authority::GrpcAgents::new(targets, router)
}

impl GrpcServer {
    /// Binds `addr` now (errors are reported here) and serves `app` alone
    /// on a new thread.
    pub fn start(app: Arc<App>, addr: SocketAddr) -> std::io::Result<GrpcServer> {
        let mut route = app.config.agent.clone();
        route.grpc_default = true;
        let router = crate::agents::GrpcRouter::new(vec![route]);
        let unrouted = app.metrics.unrouted();
        GrpcServer::start_group(vec![app], addr, router, unrouted)
    }

    /// Several agents (area: agents): one listener per distinct
    /// `grpc_listen` of `apps` (in config order), each serving the agents
    /// that name it, routed by `:authority` ([`authority`]). On an error
    /// the listeners started are stopped and the error names the agents.
    /// Calls of no agent count with the proxy's requests of no agent (kept
    /// by the first agent's metrics, [`crate::metrics::Metrics::unrouted`]).
    pub fn start_all(apps: &[Arc<App>]) -> std::io::Result<Vec<GrpcServer>> {
        let unrouted = match apps.first() {
            Some(a) => a.metrics.unrouted(),
            None => return Ok(Vec::new()),
        };
        let mut groups: Vec<(SocketAddr, Vec<Arc<App>>)> = Vec::new();
        for app in apps {
            let Some(addr) = app.config.grpc_listen else {
                continue;
            };
            match groups.iter_mut().find(|(a, _)| *a == addr) {
                Some((_, g)) => g.push(app.clone()),
                None => groups.push((addr, vec![app.clone()])),
            }
        }
        let mut started = Vec::with_capacity(groups.len());
        for (addr, group) in groups {
            let names: Vec<String> = group.iter().map(|a| a.config.agent.name.clone()).collect();
            let router = crate::agents::GrpcRouter::new(
                group.iter().map(|a| a.config.agent.clone()).collect(),
            );
            match GrpcServer::start_group(group, addr, router, unrouted.clone()) {
                Ok(g) => started.push(g),
                Err(e) => {
                    for mut g in started {
                        g.stop();
                    }
                    let agents = names.join(", ");
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("the gRPC listener {addr} (agents {agents}): {e}"),
                    ));
                }
            }
        }
        Ok(started)
    }

    /// Binds `addr` now (errors are reported here) and serves `apps` on a
    /// new thread, each call going to the agent `router` picks. The
    /// listener's own settings (TLS, threads, request-head and idle
    /// bounds) are those of its first agent (the top-level ones unless
    /// that agent's entry sets its own `[agents.limits]`).
    fn start_group(
        apps: Vec<Arc<App>>,
        addr: SocketAddr,
        router: crate::agents::GrpcRouter,
        unrouted: Arc<crate::metrics::Metrics>,
    ) -> std::io::Result<GrpcServer> {
        let first = apps
            .first()
            .cloned()
            .ok_or_else(|| std::io::Error::other("a gRPC listener with no agent"))?;
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let (tx, rx) = oneshot::channel::<()>();
        let agents = with_endpoints(&apps)?;
        let tls = match &first.config.grpc_tls {
            None => None,
            Some((cert, key)) => Some(
                tls::acceptor(cert, key)
                    .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?,
            ),
        };
        // Built last: a runtime must not be dropped (on an error above) in
        // a caller's async context.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(first.config.threads.clamp(1, 4))
            .thread_name("a2a-grpc")
            .enable_all()
            .build()?;
        let listener = Listener {
            limits: first.config.limits.clone(),
            tls,
            std_listener,
            addr,
            unrouted,
        };
        let state = {
            let _in = rt.enter();
            Arc::new(arc_swap::ArcSwap::from_pointee(grpc_agents(agents, router)))
        };
        let reload = GrpcReload {
            addr,
            state: state.clone(),
            handle: rt.handle().clone(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("a2a-grpc-{}", addr.port()))
            .spawn(move || {
                rt.block_on(serve(state, listener, rx));
                rt.shutdown_background();
            })?;
        Ok(GrpcServer {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
            reload,
        })
    }

    /// What a reload needs of this listener.
    pub fn reloader(&self) -> GrpcReload {
        self.reload.clone()
    }

    /// Stops accepting, ends the server and waits for its thread.
    pub fn stop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for GrpcServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a gRPC listener serves its agents on.
struct Listener {
    /// The listener's own bounds (request heads, idle connections).
    limits: crate::config::Limits,
    tls: Option<tokio_rustls::TlsAcceptor>,
    std_listener: std::net::TcpListener,
    addr: SocketAddr,
    /// Where calls of no agent are counted.
    unrouted: Arc<crate::metrics::Metrics>,
}

/// One agent's services of both versions (bridged, direct or passed
/// through), each behind [`passthrough::Dispatch`].
fn agent_services(
    app: Arc<App>,
    endpoint: Option<&upstream::UpstreamEndpoint>,
) -> (V03Svc, V10Svc) {
    let max = app.config.limits.max_body_bytes;
    let read = app.config.limits.read_timeout;
    let grpc = endpoint.map(|e| upstream::GrpcUpstream::new(e, max, read));
    let pass = grpc.as_ref().map(|g| passthrough::Passthrough {
        channel: g.channel.clone(),
        app: app.clone(),
    });
    let bridge = Arc::new(bridge::Bridge::new(app, grpc));
    let v03 = passthrough::Dispatch::new(
        proto::v03::a2a_service_server::A2aServiceServer::new(svc_v03::V03Service {
            bridge: bridge.clone(),
        }),
        Version::V03,
        pass.clone(),
    )
    .with_direct(bridge.clone());
    let v10 = passthrough::Dispatch::new(
        proto::v10::a2a_service_server::A2aServiceServer::new(svc_v10::V10Service {
            bridge: bridge.clone(),
        }),
        Version::V10,
        pass,
    )
    .with_direct(bridge);
    (v03, v10)
}

type V03Svc =
    passthrough::Dispatch<proto::v03::a2a_service_server::A2aServiceServer<svc_v03::V03Service>>;
type V10Svc =
    passthrough::Dispatch<proto::v10::a2a_service_server::A2aServiceServer<svc_v10::V10Service>>;

/// The listener's life: every agent's services, each call routed to its
/// agent by `router`, served until `rx` fires.
async fn serve(
    state: Arc<arc_swap::ArcSwap<authority::GrpcAgents>>,
    listener: Listener,
    rx: oneshot::Receiver<()>,
) {
    let Listener {
        limits,
        tls,
        std_listener,
        addr,
        unrouted,
    } = listener;
    let listener = match tokio::net::TcpListener::from_std(std_listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "gRPC listener unusable");
            return;
        }
    };
    let mode = if tls.is_some() { "TLS" } else { "h2c" };
    let names: Vec<String> = state.load().names().into_iter().map(String::from).collect();
    tracing::info!(%addr, mode, agents = ?names, "gRPC listening (a2a.v1 and lf.a2a.v1 A2AService)");
    let v03 = authority::ByAuthority::new(state.clone(), unrouted.clone(), |p| p.v03.clone());
    let v10 = authority::ByAuthority::new(state, unrouted, |p| p.v10.clone());
    // Dead or vanished peers: HTTP/2 PINGs every idle timeout, the
    // connection closed when one goes unanswered for 20 s.
    let idle = limits.idle_timeout;
    let router = tonic::transport::Server::builder()
        .tcp_nodelay(true)
        .http2_keepalive_interval(Some(idle))
        .http2_keepalive_timeout(Some(Duration::from_secs(20)))
        .http2_max_header_list_size(limits.max_header_bytes as u32)
        .add_service(v03)
        .add_service(v10);
    let served = run(router, listener, tls, &limits, rx).await;
    if let Err(e) = served {
        tracing::error!(error = %e, "gRPC server stopped");
    }
}

/// Serves `router` on `listener` (TLS, or h2c with each connection
/// admitted once its preface is in) until `rx` fires.
async fn run(
    router: tonic::transport::server::Router,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: &crate::config::Limits,
    rx: oneshot::Receiver<()>,
) -> Result<(), tonic::transport::Error> {
    let stop = async {
        let _ = rx.await;
    };
    match tls {
        Some(acceptor) => {
            router
                .serve_with_incoming_shutdown(tls::incoming(listener, acceptor), stop)
                .await
        }
        None => {
            // Connections are admitted once their preface is in, within
            // the header timeout (a silent one is closed); TCP_NODELAY is
            // set on each (else Nagle holds the frames a passed-through
            // answer writes one by one).
            let head = limits.header_timeout;
            let incoming = accept::admitted(listener, head, accept::h2c_preface);
            router.serve_with_incoming_shutdown(incoming, stop).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cards::{advertise, GrpcInterface};
    use crate::config::{Config, RawConfig};
    use serde_json::json;

    #[test]
    fn config_keys() {
        let raw = RawConfig::from_toml(
            "[upstream]\nurl = \"http://127.0.0.1:9\"\ngrpc_url = \"http://127.0.0.1:10\"\n[grpc]\nlisten = \"127.0.0.1:8081\"\n",
            "t",
        )
        .unwrap();
        let c = Config::resolve(raw).unwrap();
        assert_eq!(c.grpc_listen, Some("127.0.0.1:8081".parse().unwrap()));
        assert_eq!(c.upstream_grpc.map(|u| u.port), Some(10));
        let raw = RawConfig::from_toml(
            "[upstream]\nurl = \"http://127.0.0.1:9\"\n[grpc]\nlisten = \"nope\"\n",
            "t",
        )
        .unwrap();
        assert_eq!(Config::resolve(raw).unwrap_err().key, "grpc.listen");
        let c = Config::new("127.0.0.1:1".parse().unwrap(), "http://127.0.0.1:9").unwrap();
        assert_eq!(c.grpc_listen, None);
    }

    #[test]
    fn grpc_url_forms() {
        use crate::config::GrpcUrlForm as F;
        let g = |tls, form| GrpcInterface {
            host_port: "px:2".into(),
            tls,
            form,
        };
        let (v03, v10) = (Version::V03, Version::V10);
        // auto: the agent's form where it wrote one, else the version's.
        assert_eq!(g(false, F::Auto).url_for(v03, None), "http://px:2");
        assert_eq!(g(true, F::Auto).url_for(v03, None), "https://px:2");
        assert_eq!(g(false, F::Auto).url_for(v10, None), "px:2");
        assert_eq!(g(false, F::Auto).url_for(v03, Some("up:1")), "px:2");
        assert_eq!(
            g(true, F::Auto).url_for(v10, Some("http://up:1")),
            "https://px:2"
        );
        // The overrides.
        assert_eq!(g(false, F::Url).url_for(v10, Some("up:1")), "http://px:2");
        assert_eq!(
            g(true, F::HostPort).url_for(v03, Some("https://up:1")),
            "px:2"
        );
        // No listener: the agent's gRPC entries go, a gRPC main interface too.
        let mut v03_card = json!({"url":"http://up:1","preferredTransport":"GRPC","additionalInterfaces":[{"url":"http://up:1","transport":"GRPC"},{"url":"http://a/rpc","transport":"JSONRPC"}]});
        advertise(&mut v03_card, v03, None);
        assert_eq!(
            v03_card,
            json!({"url":"http://a/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://a/rpc","transport":"JSONRPC"}]})
        );
    }

    #[test]
    fn advertise_replaces_grpc_entries() {
        let mut v10 = json!({"supportedInterfaces":[{"url":"http://a/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"up:1","protocolBinding":"GRPC","protocolVersion":"1.0"}]});
        let g = GrpcInterface {
            host_port: "px:2".into(),
            tls: false,
            form: crate::config::GrpcUrlForm::HostPort,
        };
        advertise(&mut v10, Version::V10, Some(&g));
        assert_eq!(
            v10["supportedInterfaces"],
            json!([{"url":"http://a/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"px:2","protocolBinding":"GRPC","protocolVersion":"1.0"}])
        );
        let mut v03 = json!({"url":"http://a/rpc"});
        advertise(&mut v03, Version::V03, Some(&g));
        assert_eq!(
            v03["additionalInterfaces"],
            json!([{"url":"http://a/rpc","transport":"JSONRPC"},{"url":"px:2","transport":"GRPC"}])
        );
    }
}
