//! The kinds of endpoint a request can address: vocabulary shared by
//! routing (`route.rs`) and the one rescue (`error.rs`), which imports
//! nothing else of the crate.

/// What kind of endpoint a request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A POST that is not a REST path: the JSON-RPC endpoint.
    JsonRpc,
    /// An HTTP+JSON (REST) operation.
    Rest,
    /// `GET /health`, answered locally.
    Health,
    /// `GET /ready`, answered locally (upstream card reachable).
    Ready,
    /// `GET /metrics`, answered locally.
    Metrics,
    /// The public agent card; `legacy_path` for `/.well-known/agent.json`.
    AgentCard { legacy_path: bool },
    /// Anything else: forwarded unchanged, no A2A meaning attached.
    Other,
}
