//! The project's own A2A `.proto` contracts, compiled with prost/tonic.
//!
//! * [`v03`]: A2A v0.3 (proto package `a2a.v1`), with ProtoJSON serde impls
//!   (`serde::Serialize`/`Deserialize` via pbjson) on every message.
//! * [`v10`]: A2A v1.0 (proto package `lf.a2a.v1`).
//!
//! Well-known types (`Struct`, `Value`, `Timestamp`, `Empty`) are
//! [`pbjson_types`] in both modules. Note: pbjson-types renders a
//! `Timestamp` as `...+00:00` rather than ProtoJSON's canonical `...Z`.
//!
//! [`convert_v03`] / [`convert_v10`] convert between these prost messages and
//! the `translate::v03` / `translate::v10` models (payload entities and the
//! agent card), returning `Result<_, TranslateError>` and never panicking;
//! [`convert_v03_rpc`] / [`convert_v10_rpc`] do the same for push-notification
//! configs and the RPC request / response messages (v0.3 resource names
//! parsed and validated);
//! [`wkt`] holds the `Struct`/`Value`/`Timestamp` <-> JSON helpers.

pub use pbjson_types;

pub mod convert_v03;
pub mod convert_v03_rpc;
pub mod convert_v10;
pub mod convert_v10_rpc;
pub mod wkt;

/// A2A v0.3 messages, enums and the `a2a.v1.A2AService` client/server.
#[allow(clippy::all, missing_docs)]
pub mod v03 {
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.rs"));
    include!(concat!(env!("OUT_DIR"), "/a2a.v1.serde.rs"));
}

/// A2A v1.0 messages, enums and the `lf.a2a.v1.A2AService` client/server.
#[allow(clippy::all, missing_docs)]
pub mod v10 {
    include!(concat!(env!("OUT_DIR"), "/lf.a2a.v1.rs"));
}
