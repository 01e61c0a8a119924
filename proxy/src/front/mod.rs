//! The HTTP front: pingora's [`ProxyHttp`](pingora::proxy::ProxyHttp)
//! adapter for the JSON-RPC and HTTP+JSON bindings, the health, metrics and
//! card endpoints and the push callback.
//!
//! Reading order: [`agents`] (the listener's hooks, the only `ProxyHttp`:
//! which agent's service runs a request) → [`service`] (the agent's part of
//! each hook, each saying when pingora runs it) → [`ctx`] (the per-request
//! state: common fields and one [`Kind`]) → [`dispatch`] (routing one
//! request) → [`prelude`] (work before a cross-version call) → [`own_call`] /
//! [`stream`] (the calls the proxy makes itself) → [`events`] (translating
//! answers and streams) → [`local`] (answers given here, bodies read within
//! limits).

mod agents;
mod answer;
pub mod conn;
mod ctx;
mod dispatch;
mod events;
mod local;
mod own_call;
mod prelude;
mod relay;
mod rest_call;
mod service;
mod stream;

use std::sync::Arc;

use crate::app::App;

pub use agents::{AgentSet, Front};
pub use ctx::Ctx;
pub(crate) use ctx::*;
pub(crate) use events::*;
pub(crate) use local::*;
pub(crate) use prelude::*;
pub(crate) use stream::client_left;

/// The proxy service: a thin adapter from pingora's hooks to [`App`].
pub struct ProxyService {
    pub app: Arc<App>,
}
