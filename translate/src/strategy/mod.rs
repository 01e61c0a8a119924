//! Proptest strategies for every wire type of both versions, behind the
//! `strategy` feature so other crates' tests can reuse them.
//!
//! Strategies generate the *lossless domain* of each type (values that must
//! round-trip exactly); lossy inputs are covered by fixtures and normal-form
//! properties.

pub mod card;
pub mod lossy_inputs;
pub mod payload;
pub mod rpc;
pub mod wire;
