//! Where one agent's gRPC calls go (issue #23): `upstream.grpc_url` when
//! the config sets it; else the GRPC interface of the agent's card, when
//! it lists one on a host the operator allows (`upstream.allowed_hosts`,
//! the rule of every interface read from the card: [`crate::card::endpoints`]);
//! else the bridge to the agent's JSON-RPC binding.
//!
//! The card's interface is read when the card is ([`App::endpoints_of`]
//! resolves it once per new copy of the card), so an agent that moves its
//! gRPC interface is followed when its card says so: [`Targets::current`]
//! builds the agent's services anew (a channel to the new URL) when the
//! URL changes, and keeps them while it does not. An interface the card
//! lists on a host that is not allowed is never contacted (the card
//! cache's log line says why); calls then take the bridge, and a client
//! is never told the agent's address.

use std::sync::{Arc, Mutex};

use super::{agent_services, upstream, V03Svc, V10Svc};
use crate::app::App;
use crate::config::HttpUrl;

/// One agent's services of both versions, toward one target.
pub(super) struct Pair {
    pub v03: V03Svc,
    pub v10: V10Svc,
}

impl Pair {
    /// The services toward `endpoint` (`None`: the JSON-RPC bridge).
    fn new(app: Arc<App>, endpoint: Option<&upstream::UpstreamEndpoint>) -> Pair {
        let (v03, v10) = agent_services(app, endpoint);
        Pair { v03, v10 }
    }
}

/// One agent's gRPC target, fixed or read from its card.
pub(super) struct Targets {
    app: Arc<App>,
    /// `upstream.grpc_url`'s services: every call goes there.
    fixed: Option<Arc<Pair>>,
    /// The card's gRPC URL last seen (`None`: none usable, the bridge) and
    /// the services built for it.
    by_card: Mutex<Option<(Option<HttpUrl>, Arc<Pair>)>>,
}

impl Targets {
    /// Must run inside a tokio runtime (a channel's worker is spawned).
    pub(super) fn new(app: Arc<App>, fixed: Option<&upstream::UpstreamEndpoint>) -> Targets {
        let fixed = fixed.map(|e| Arc::new(Pair::new(app.clone(), Some(e))));
        Targets {
            app,
            fixed,
            by_card: Mutex::new(None),
        }
    }

    /// The services a call goes to now.
    pub(super) async fn current(&self) -> Arc<Pair> {
        if let Some(p) = &self.fixed {
            return p.clone();
        }
        let url = card_grpc_url(&self.app).await;
        let Ok(mut slot) = self.by_card.lock() else {
            return Arc::new(Pair::new(self.app.clone(), None));
        };
        if let Some((seen, pair)) = slot.as_ref() {
            if *seen == url {
                return pair.clone();
            }
        }
        let endpoint = url.as_ref().and_then(|u| {
            upstream::endpoint(u, &self.app.config)
                .inspect_err(|e| tracing::warn!(agent = %self.app.config.agent.name, error = %e, "the card's gRPC interface is unusable; calls are bridged to JSON-RPC"))
                .ok()
        });
        match &url {
            Some(u) => {
                tracing::info!(agent = %self.app.config.agent.name, url = %u.as_string(), "gRPC calls go to the card's gRPC interface")
            }
            None if slot.is_some() => {
                tracing::info!(agent = %self.app.config.agent.name, "the card lists no usable gRPC interface now; calls are bridged to JSON-RPC")
            }
            None => {}
        }
        let pair = Arc::new(Pair::new(self.app.clone(), endpoint.as_ref()));
        *slot = Some((url, pair.clone()));
        pair
    }
}

/// The GRPC interface of the agent's card, on an allowed host; `None` when
/// the card lists none (or cannot be had).
async fn card_grpc_url(app: &App) -> Option<HttpUrl> {
    let addr = app.upstream_addr().await.ok()?;
    let card = app.cards.get(addr, true).await.ok()?;
    let ends = app.endpoints_of(&card);
    ends.grpc.as_ref().map(|e| e.url.clone())
}
