//! Proptest strategies for every wire type of both versions, behind the
//! `strategy` feature so other crates' tests can reuse them.
//!
//! The strategies of [`payload`], [`rpc`] and [`card`] generate the
//! *lossless domain* of each type (values that must round-trip exactly);
//! [`lossy_inputs`] rewrites such values into the inputs of the declared
//! lossy mappings (the *full domain*), and [`wire`] makes whole, valid wire
//! documents of either version and domain, drawn from a seeded generator
//! (what `a2a-compat-proxy gen` writes).

pub mod card;
pub mod lossy_inputs;
pub mod payload;
pub mod rpc;
pub mod wire;
