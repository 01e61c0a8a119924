//! v1.0 JSON-RPC 2.0 envelopes: the same envelope as v0.3 ([`crate::envelope`]);
//! `error.data` is, by the spec, an array of ProtoJSON `Any` objects
//! (`google.rpc.ErrorInfo` first), kept as untyped JSON so that non-conforming
//! peers can still be read.

pub use crate::envelope::{ErrorObject, Request, Response};

/// `@type` of a `google.rpc.ErrorInfo` detail.
pub const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";
/// `@type` of a `google.protobuf.Value` detail.
pub const VALUE_TYPE: &str = "type.googleapis.com/google.protobuf.Value";
/// `ErrorInfo.domain` of A2A errors.
pub const ERROR_DOMAIN: &str = "a2a-protocol.org";
