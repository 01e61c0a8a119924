//! The gRPC codec: one call of the gRPC binding across versions, on prost
//! messages and `tonic::Status`es.
//!
//! Made per call ([`GrpcCodec::unary`], [`GrpcCodec::stream`]) from the
//! RPC's table ([`Unary`], [`Streaming`]: plain conversion functions, one
//! table per RPC and pair of versions, in [`from_v10`] and [`from_v03`])
//! for the upstream's version. Through [`Codec`] it gives the request
//! toward the agent (the caller's model -> the agent's prost request,
//! noting a v1.0 `historyLength: 0` the v0.3 agent would read as
//! unlimited), each answer and stream event (the agent's prost message ->
//! its model -> the typed translators of `translate` -> the caller's
//! prost message, history removed when noted), the agent's errors (as the
//! JSON-RPC codec translates them, read back as the caller's status) and
//! the proxy's failures ([`status`]), all in the caller's shape. These
//! tables are the gRPC binding's fast path: no JSON in between, static
//! dispatch, nothing allocated per message beyond the messages;
//! `proxy/tests/grpc_direct.rs` proves them equal to the general path
//! (the caller's JSON-RPC in its version, crossed by [`JsonRpcCodec`],
//! which the gRPC bridge (`grpc/bridge`) takes for the other RPCs and
//! calls).
//!
//! What the call does with the answer in the caller's version (the push
//! layer's restore, the tasks recorded: the call's
//! [`crate::call::Plan`]) is the caller's, handed in as
//! [`AgentMessage::then`] and run between the translation and the
//! encoding.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;
use tonic::transport::Channel;
use tonic::Status;
use translate::method::Method;
use translate::TranslateError;

use super::{Codec, CodecBinding, JsonRpcCodec, MadeFor};
use crate::error::Failure;
use crate::version::Version;

pub mod status;

/// Tables for v1.0 callers of a v0.3 gRPC agent.
pub mod from_v10;

/// Tables for v0.3 callers of a v1.0 gRPC agent.
pub mod from_v03;

use status::{from_failure, from_rpc_error};

type TE = TranslateError;

/// The upstream's server stream, opened.
pub type Opened<UR> = Result<tonic::Response<tonic::Streaming<UR>>, Status>;
/// Opening the upstream's server stream on a channel.
pub type Open<UQ, UR> =
    fn(Channel, tonic::Request<UQ>) -> Pin<Box<dyn Future<Output = Opened<UR>> + Send>>;

/// One unary RPC from a caller of one version to an upstream of the
/// other. `CM`: the caller's request model; `UQ` / `UR`: the upstream's
/// prost request / answer; `UM`: the answer's model; `CR`: the answer's
/// model in the caller's version; `CP`: the caller's prost reply.
pub struct Unary<CM, UQ, UR, UM, CR, CP> {
    pub method: Method,
    /// The upstream's RPC path.
    pub path: &'static str,
    pub request: fn(CM) -> Result<UQ, TE>,
    pub decode: fn(UR) -> Result<UM, TE>,
    pub translate: fn(UM) -> Result<CR, TE>,
    pub encode: fn(CR) -> Result<CP, TE>,
    /// A v1.0 `historyLength: 0` toward a v0.3 agent (which reads 0 as
    /// unlimited): [`Self::strip_history`] is applied to the answer.
    pub no_history: fn(&CM) -> bool,
    pub strip_history: fn(&mut CR),
    /// The request carries an inline push config.
    pub inline_push: fn(&CM) -> bool,
}

/// One server-streaming RPC (types as in [`Unary`], per message).
pub struct Streaming<CM, UQ, UR, UM, CR, CP> {
    pub method: Method,
    pub request: fn(CM) -> Result<UQ, TE>,
    pub open: Open<UQ, UR>,
    pub decode: fn(UR) -> Result<UM, TE>,
    /// A v0.3 upstream's `final: true` status update (the stream ends).
    pub is_final: fn(&UM) -> bool,
    pub translate: fn(UM) -> Result<CR, TE>,
    pub encode: fn(CR) -> Result<CP, TE>,
    pub inline_push: fn(&CM) -> bool,
}

fn never<T>(_: &T) -> bool {
    false
}

fn keep<T>(_: &mut T) {}

/// An error the agent answered with, as the gRPC binding's transport read
/// it (`grpc/upstream`).
#[derive(Debug)]
pub enum AgentError {
    /// No answer: a transport condition, the proxy's failure.
    Failed(Failure),
    /// The agent refused the caller's credentials: the caller gets the
    /// same status in either version.
    Refused(Status),
    /// An A2A error: the agent's status as a JSON-RPC error response in
    /// its version.
    Answered(Vec<u8>),
}

/// A step the call takes on an answer in the caller's version, before it
/// is encoded (see the module's documentation).
pub type Then<'a, CR> = &'a mut (dyn FnMut(CR) -> Result<CR, Status> + Send);

/// One message of the agent (an answer, or a stream event) for the codec.
pub struct AgentMessage<'a, UR, CR> {
    pub got: Result<UR, AgentError>,
    pub then: Option<Then<'a, CR>>,
}

impl<UR, CR> AgentMessage<'_, UR, CR> {
    /// A message with no step of the call's own.
    pub fn plain(got: Result<UR, AgentError>) -> Self {
        AgentMessage { got, then: None }
    }
}

/// One gRPC call across versions (the types as in [`Unary`]).
pub struct GrpcCodec<CM, UQ, UR, UM, CR, CP> {
    method: Method,
    client: Version,
    upstream: Version,
    request: fn(CM) -> Result<UQ, TE>,
    asks_no_history: fn(&CM) -> bool,
    decode: fn(UR) -> Result<UM, TE>,
    is_final: fn(&UM) -> bool,
    translate: fn(UM) -> Result<CR, TE>,
    strip_history: fn(&mut CR),
    encode: fn(CR) -> Result<CP, TE>,
    /// Noted by [`Codec::encode_request`]: the answer loses its history.
    no_history: bool,
}

impl<CM, UQ, UR, UM, CR, CP> GrpcCodec<CM, UQ, UR, UM, CR, CP> {
    /// The codec of a unary call of `client` toward an `upstream` agent.
    pub fn unary(t: &Unary<CM, UQ, UR, UM, CR, CP>, client: Version, upstream: Version) -> Self {
        GrpcCodec {
            method: t.method,
            client,
            upstream,
            request: t.request,
            asks_no_history: t.no_history,
            decode: t.decode,
            is_final: never,
            translate: t.translate,
            strip_history: t.strip_history,
            encode: t.encode,
            no_history: false,
        }
    }

    /// The codec of a server-streaming call.
    pub fn stream(
        t: &Streaming<CM, UQ, UR, UM, CR, CP>,
        client: Version,
        upstream: Version,
    ) -> Self {
        GrpcCodec {
            method: t.method,
            client,
            upstream,
            request: t.request,
            asks_no_history: never,
            decode: t.decode,
            is_final: t.is_final,
            translate: t.translate,
            strip_history: keep,
            encode: t.encode,
            no_history: false,
        }
    }

    /// The codec as [`Codec::encode_request`] leaves it when the request
    /// asked for no history (`no_history`), for an answer to such a
    /// request decoded on its own.
    pub fn noting_no_history(mut self, no_history: bool) -> Self {
        self.no_history = no_history;
        self
    }

    /// The agent's message as the caller's model, history removed when
    /// noted, and whether it is a v0.3 stream's last; failures in the
    /// caller's shape.
    pub fn decode(&self, got: Result<UR, AgentError>) -> (Result<CR, Status>, bool) {
        let ur = match got {
            Ok(ur) => ur,
            Err(e) => return (Err(self.agent_error(e)), false),
        };
        let um = match (self.decode)(ur) {
            Ok(m) => m,
            Err(e) => return (Err(self.bad(e)), false),
        };
        let last = (self.is_final)(&um);
        let cr = (self.translate)(um).map(|mut cr| {
            if self.no_history {
                (self.strip_history)(&mut cr);
            }
            cr
        });
        (cr.map_err(|e| self.untranslatable(e)), last)
    }

    /// The caller's model as its prost message.
    pub fn encode(&self, cr: CR) -> Result<CP, Status> {
        (self.encode)(cr).map_err(|e| self.bad(e))
    }

    /// An agent's answer its own version's model does not take, or a
    /// model the caller's prost message does not take.
    fn bad(&self, e: TE) -> Status {
        let detail = e.to_string();
        from_failure(self.client, &Failure::BadUpstreamResponse { detail })
    }

    /// An answer that does not translate to the caller's version: rendered
    /// as the general path renders it (an InvalidAgentResponse error
    /// envelope in the caller's version), read back as a status.
    fn untranslatable(&self, e: TE) -> Status {
        let f = Failure::BadUpstreamResponse {
            detail: e.to_string(),
        };
        let body = crate::error::jsonrpc_envelope(&f, self.client, Some(Value::from(1)));
        match body.get("error") {
            Some(err) => from_rpc_error(self.client, err, None),
            None => from_failure(self.client, &f),
        }
    }

    /// The agent's error as the caller's status: a transport condition is
    /// the proxy's failure, a refusal stays as it is, an A2A error is
    /// translated as the JSON-RPC codec translates it.
    pub fn agent_error(&self, e: AgentError) -> Status {
        let (client, upstream) = (self.client, self.upstream);
        let body = match e {
            AgentError::Failed(f) => return from_failure(client, &f),
            AgentError::Refused(s) => return s,
            AgentError::Answered(body) => body,
        };
        let out = if client == upstream {
            body
        } else {
            let name = self.method.name(client).unwrap_or_default().to_string();
            let codec = JsonRpcCodec::new(client, upstream, name, Some(Value::from(1)));
            codec.answer((200, &body)).body
        };
        // Read back as the JSON route reads a JSON-RPC answer.
        let bad = |detail: String| Failure::BadUpstreamResponse { detail };
        let f = match serde_json::from_slice::<Value>(&out) {
            Err(e) => bad(format!("not a JSON-RPC response: {e}")),
            Ok(v) => match (v.get("error"), v.get("result")) {
                (Some(err), _) => return from_rpc_error(client, err, None),
                (None, Some(_)) => Failure::Internal {
                    detail: "an upstream error read back as a result".into(),
                },
                (None, None) => bad("JSON-RPC response without result or error".into()),
            },
        };
        from_failure(client, &f)
    }

    /// [`GrpcCodec::decode`], the call's step, [`GrpcCodec::encode`].
    fn message(&self, m: AgentMessage<'_, UR, CR>) -> (Result<CP, Status>, bool) {
        let (cr, last) = self.decode(m.got);
        let cr = match m.then {
            Some(then) => cr.and_then(then),
            None => cr,
        };
        (cr.and_then(|cr| self.encode(cr)), last)
    }
}

impl<CM, UQ, UR, UM, CR, CP> Codec for GrpcCodec<CM, UQ, UR, UM, CR, CP> {
    /// The caller's request as the gRPC binding's decoder read it (its
    /// prost message, then its model).
    type Request<'a>
        = CM
    where
        Self: 'a;
    /// The agent's prost request.
    type Outgoing = UQ;
    type Answer<'a>
        = AgentMessage<'a, UR, CR>
    where
        Self: 'a;
    /// The caller's prost reply, or its status.
    type Reply = Result<CP, Status>;
    type Event<'a>
        = AgentMessage<'a, UR, CR>
    where
        Self: 'a;
    /// The caller's prost message (or the status that ends its stream),
    /// and whether it is the stream's last (a v0.3 `final: true`).
    type Item<'a>
        = (Result<CP, Status>, bool)
    where
        Self: 'a;
    type Error = Status;

    fn made_for(&self) -> MadeFor {
        MadeFor {
            binding: CodecBinding::Grpc,
            op: Some(self.method),
            client: self.client,
            upstream: self.upstream,
        }
    }

    fn encode_request(&mut self, cm: CM) -> Result<UQ, Failure> {
        let (c, u) = (self.client, self.upstream);
        let _t = crate::telemetry::translation("translate request", c, u).entered();
        self.no_history = self.client == Version::V10 && (self.asks_no_history)(&cm);
        (self.request)(cm).map_err(|e| Failure::Translate {
            code: i64::from(e.jsonrpc_code()),
            message: e.to_string(),
        })
    }

    fn answer(&self, m: AgentMessage<'_, UR, CR>) -> Result<CP, Status> {
        let (c, u) = (self.client, self.upstream);
        let _t = crate::telemetry::translation("translate answer", u, c).entered();
        self.message(m).0
    }

    fn event<'d>(&self, m: Self::Event<'d>) -> Self::Item<'d>
    where
        Self: 'd,
    {
        self.message(m)
    }

    fn error(&self, f: &Failure) -> Status {
        from_failure(self.client, f)
    }
}

#[cfg(test)]
mod tests;
