//! Pure translators between the A2A v0.3 and v1.0 wire formats.
//!
//! `v03` holds the v0.3 JSON-RPC wire types (shaped by the official v0.3 JSON
//! schema: `kind` discriminators, kebab-case enums); `v10` holds the v1.0 wire
//! types (ProtoJSON of the v1.0 proto). Each translator module (`part`,
//! `message`, ...) exposes `to_v10` and `to_v03`, taking the value by ownership
//! and returning `Result<_, TranslateError>`.
//!
//! No IO, no async, no panics: every input either translates or yields a
//! [`TranslateError`] that carries its JSON-RPC code.

pub mod envelope;
pub mod error;
pub mod json;
pub mod lossy;
pub mod timestamp;
pub mod version;

pub mod v03;
pub mod v10;

pub mod agent_card;
pub mod artifact;
pub mod code;
pub mod document;
pub mod event;
pub mod jsonrpc;
pub mod message;
pub mod method;
pub mod onepass;
pub mod params;
pub mod part;
pub mod push_body;
pub mod push_config;
pub mod task;
pub mod transcode;

#[cfg(feature = "strategy")]
pub mod strategy;

pub use error::TranslateError;
pub use version::Version;
