//! End-to-end test support: the real A2A SDK peers (Python venvs), their
//! processes, and JSON comparison helpers.

pub mod json_eq;
pub mod peer;
pub mod sdk;

#[path = "../../proxy/tests/support/ports.rs"]
mod ports;
pub use ports::free_local_addr;
