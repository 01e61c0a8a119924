//! The JSON route's shape, for every RPC of both services the gRPC codec's
//! direct path does not take (`super::direct`): prost request -> JSON-RPC
//! params in the service's version (`proto` converters) -> the [`Bridge`]
//! (which crosses versions with its JSON-RPC codec) -> the result in that
//! version -> prost reply. `svc_v03` and `svc_v10` only name, per RPC, the
//! method and the two converters.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use tonic::{Request, Response, Status};
use translate::method::Method;
use translate::TranslateError;

use super::bridge::{call_meta, Bridge, CallMeta};
use super::status::from_failure;
use crate::error::Failure;
use crate::version::Version;

/// Request conversion failures are the caller's fault: their JSON-RPC code
/// (mostly InvalidParams) as a status.
pub(super) fn params<P: Serialize>(
    client: Version,
    p: Result<P, TranslateError>,
) -> Result<Value, Status> {
    let p = p.map_err(|e| {
        from_failure(
            client,
            &Failure::Translate {
                code: i64::from(e.jsonrpc_code()),
                message: e.to_string(),
            },
        )
    })?;
    serde_json::to_value(p).map_err(|e| {
        from_failure(
            client,
            &Failure::Internal {
                detail: e.to_string(),
            },
        )
    })
}

pub(super) fn model<M: DeserializeOwned>(v: Value) -> Result<M, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

/// An answer the proxy cannot turn into the reply: the upstream's fault.
pub(super) fn bad(client: Version, detail: String) -> Status {
    from_failure(client, &Failure::BadUpstreamResponse { detail })
}

/// A `result` (in `client`'s version) as the prost reply.
pub(super) fn reply<M: DeserializeOwned, Out>(
    client: Version,
    v: Value,
    to_pb: impl FnOnce(M) -> Result<Out, TranslateError>,
) -> Result<Out, Status> {
    model(v)
        .and_then(|m| to_pb(m).map_err(|e| e.to_string()))
        .map_err(|d| bad(client, d))
}

/// The call's metadata and its params.
pub(super) fn prepare<In, P: Serialize>(
    client: Version,
    req: Request<In>,
    from_pb: impl FnOnce(In) -> Result<P, TranslateError>,
) -> Result<(CallMeta, Value), Status> {
    let meta = call_meta(client, req.metadata())?;
    let p = params(client, from_pb(req.into_inner()))?;
    Ok((meta, p))
}

/// One unary RPC of `client`'s service.
pub(super) async fn unary<In, P: Serialize, M: DeserializeOwned, Out>(
    bridge: &Bridge,
    client: Version,
    method: Method,
    req: Request<In>,
    from_pb: impl FnOnce(In) -> Result<P, TranslateError>,
    to_pb: impl FnOnce(M) -> Result<Out, TranslateError>,
) -> Result<Response<Out>, Status> {
    let (meta, p) = prepare(client, req, from_pb)?;
    let v = bridge.unary(client, method, Some(p), &meta).await?;
    reply(client, v, to_pb).map(Response::new)
}

/// A reply without content (the deletes).
pub(super) fn empty(_: Value) -> Result<proto::pbjson_types::Empty, TranslateError> {
    Ok(proto::pbjson_types::Empty {})
}
