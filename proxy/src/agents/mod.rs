//! Several agents behind one proxy (issue #23): each agent's route (its
//! name, path prefix and hosts, [`AgentRoute`]), the [`Router`] that picks
//! the agent of a request by `Host` and path prefix, and the [`GrpcRouter`]
//! that picks the agent of a gRPC call by `:authority` on a gRPC listener
//! serving several agents ([`route`]). Plain data and matching, importing
//! no other folder: the `[[agents]]` table is resolved into one whole
//! [`Config`](crate::config::Config) per agent by `config/agents.rs`,
//! which builds these routes and checks them with the [`Router`].
//!
//! Each agent runs as a full [`crate::app::App`] of its own (card cache,
//! ListTasks scope, push store, limits, metrics); the listener-level
//! settings (`listen`, `threads`, TLS, log format, the `[limits]` of
//! request heads and idle connections) stay the top-level ones. The HTTP
//! front asks the router once per request (`front::Front`).

pub mod dots;
mod route;

pub(crate) use route::on_prefix;
pub use route::{AgentRoute, GrpcRouter, HostPattern, Router};

/// The name of the one agent of a file without `[[agents]]`.
pub const DEFAULT_AGENT: &str = "default";

/// Paths the proxy answers itself on every host; no prefix may take them.
pub const GLOBAL_PATHS: [&str; 3] = ["/health", "/ready", "/metrics"];

/// The longest host, path or authority an answer about routing repeats
/// (a 404 or gRPC `NOT_FOUND`) or a call span records.
const ECHO_MAX: usize = 200;

/// `s` cut to [`ECHO_MAX`] bytes (on a character boundary).
pub(crate) fn echo(s: &str) -> &str {
    if s.len() <= ECHO_MAX {
        return s;
    }
    let mut end = ECHO_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}
