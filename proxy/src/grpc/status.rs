//! Errors toward gRPC callers, as the gRPC codec renders them
//! ([`crate::codec::grpc::status`]): named here too, where the gRPC
//! binding's transport (its upstream client, passthrough, the bridge)
//! reports the proxy's own failures.

pub use crate::codec::grpc::status::*;
