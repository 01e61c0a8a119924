//! Pure translators between the A2A (Agent2Agent) protocol's v0.3 and v1.0
//! wire formats: every A2A wire object of one version into the other's, with
//! no IO, no async and no panics. Every input either translates or yields a
//! [`TranslateError`] that carries its JSON-RPC code.
//!
//! # Translating a document
//!
//! [`document::translate`] takes the bytes of one document of a [`document::Kind`]
//! (a task, a message, an agent card, a JSON-RPC request, response or stream
//! event, a push-notification body or config, ...) and writes the other
//! version's bytes. A round trip:
//!
//! ```
//! use translate::document::{translate, Kind};
//! use translate::Version;
//!
//! let v03 = br#"{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"working","timestamp":"2025-04-02T16:59:25.331Z"},"metadata":{"priority":"high"}}"#;
//! let v10 = translate(Kind::Task, Version::V10, None, v03)?;
//! assert_eq!(
//!     std::str::from_utf8(&v10)?,
//!     r#"{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_WORKING","timestamp":"2025-04-02T16:59:25.331Z"},"metadata":{"priority":"high"}}"#
//! );
//! let back = translate(Kind::Task, Version::V03, None, &v10)?;
//! assert_eq!(back, v03);
//!
//! // A JSON-RPC request names its method; the method is renamed too.
//! let request = br#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#;
//! let v10 = translate(Kind::Request, Version::V10, None, request)?;
//! assert_eq!(
//!     std::str::from_utf8(&v10)?,
//!     r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#
//! );
//!
//! // Errors carry their JSON-RPC code.
//! let err = translate(Kind::Task, Version::V10, None, br#"{"kind":"task"}"#).unwrap_err();
//! assert_eq!(err.jsonrpc_code(), -32602);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A response or a stream event needs the method it answers (either
//! version's name): `translate(Kind::Response, Version::V10, Some("tasks/get"), bytes)`.
//!
//! Every entry point that takes bytes tries the streaming transcoder first
//! ([`transcode`]: names, enums and part shapes rewritten as the input is
//! copied, no document tree), then the typed path (the wire types of
//! [`v03`] and [`v10`] and the translator modules), whose output the
//! transcoder matches byte for byte; [`document::translate_typed`] is the
//! typed path alone.
//!
//! # Typed translation
//!
//! `v03` holds the v0.3 wire types (shaped by the official v0.3 JSON schema:
//! `kind` discriminators, kebab-case enums); `v10` holds the v1.0 wire types
//! (ProtoJSON of the v1.0 proto). Each translator module (`part`, `message`,
//! `task`, `artifact`, `event`, `agent_card`, `push_config`, `params`,
//! `jsonrpc`, `push_body`, `code`) exposes `to_v10` and `to_v03`, taking the
//! value by ownership:
//!
//! ```
//! let t: translate::v03::task::Task = serde_json::from_str(
//!     r#"{"kind":"task","id":"t-1","contextId":"c-1","status":{"state":"input-required"}}"#,
//! )?;
//! let t = translate::task::to_v10(t)?;
//! assert_eq!(t.status.state, translate::v10::task::TaskState::InputRequired);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What does not round-trip
//!
//! Some mappings lose or normalise information (a v1.0 `tenant` has no v0.3
//! form, several v0.3 OAuth flows become one, ...). Each is a row of its
//! module's `LOSSY` table, gathered by [`lossy::all`] (the project's
//! `docs/mapping.md` is generated from them), with the JSON paths where it
//! shows ([`lossy::covering`]). Everything else round-trips exactly.
//!
//! # Features
//!
//! - `strategy` (off by default): proptest strategies for every wire type
//!   of both versions (module `strategy`), the *lossless domain* where
//!   `to_v03(to_v10(x)) == x` holds exactly, the *full domain* with the
//!   inputs of the lossy mappings, and whole valid wire documents drawn
//!   deterministically from a seed (`strategy::wire::Generator`, what
//!   `a2a-compat-proxy gen` writes). For property tests of other crates'
//!   converters:
//!
//! ```
//! # #[cfg(feature = "strategy")]
//! # {
//! use translate::strategy::wire::{Doc, Domain, Generator};
//! use translate::Version;
//!
//! let mut g = Generator::new(Doc::Task, Version::V03, Domain::Lossless, None, 7, 4096)?;
//! for _ in 0..10 {
//!     let doc = g.next_document()?;
//!     let v10 = translate::document::translate(Doc::Task.kind(), Version::V10, None, &doc)?;
//!     let back = translate::document::translate(Doc::Task.kind(), Version::V03, None, &v10)?;
//!     let same: serde_json::Value = serde_json::from_slice(&back)?;
//!     assert_eq!(same, serde_json::from_slice::<serde_json::Value>(&doc)?);
//! }
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]

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
#[cfg_attr(docsrs, doc(cfg(feature = "strategy")))]
pub mod strategy;

pub use error::TranslateError;
pub use version::Version;
