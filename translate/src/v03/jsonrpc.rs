//! v0.3 JSON-RPC 2.0 envelopes: the same envelope as v1.0 ([`crate::envelope`]);
//! `error.data` is free-form in v0.3.

pub use crate::envelope::{ErrorObject, Request, Response};
