//! One codec per binding behind one trait: what a call of one binding needs
//! to cross versions, as bytes in and bytes out.
//!
//! A codec is made once per call, by its binding's decoder (the JSON-RPC
//! body read by `front/dispatch.rs`, the HTTP+JSON path, query and body by
//! `front/rest_call.rs`), for one operation and one pair of versions
//! ([`MadeFor`]). From then on the front asks it, and only it, for the
//! binding's shapes: the request toward the agent ([`Codec::encode_request`],
//! [`Codec::upstream_request`]), the agent's answer, each stream event and
//! each error in the client's shape, with the status where the binding has
//! one ([`Codec::answer`], [`Codec::event`], [`Codec::error`],
//! [`Codec::client_status`]). The A2A decisions (push interception, task
//! recording, the first Task of a subscription) stay with the call's
//! [`crate::call::Plan`]; the codec only says where an answer keeps its
//! result ([`Shape`]).
//!
//! The fast paths live inside their codec: JSON-RPC's one-pass transcoder
//! (with the [`TaskFacts`] it reads on the way, [`Codec::event`]), the
//! general typed path behind it. The gRPC binding's direct prost tables are
//! in `grpc/direct/`; its JSON-RPC bridge reads and writes through
//! [`JsonRpcCodec`].
//!
//! [`HttpCodec`] is the closed set the HTTP front holds: an enum, so an
//! event costs one `match`, no allocation and no virtual call.

use serde_json::Value;
use translate::method::Method;
use translate::transcode::TaskFacts;

use crate::error::{ErrorResponse, Failure};
use crate::rest::UpstreamRequest;
use crate::route::{Binding, PathParams};
use crate::version::Version;

mod jsonrpc;
mod rest;

pub use jsonrpc::JsonRpcCodec;
pub use rest::RestCodec;

/// What a codec was made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MadeFor {
    pub binding: CodecBinding,
    pub op: Option<Method>,
    pub client: Version,
    pub upstream: Version,
}

/// The bindings a codec exists for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CodecBinding {
    JsonRpc,
    Rest,
}

/// Where an answer or event of a binding keeps its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A JSON-RPC envelope: the result under `result`.
    Envelope,
    /// The result itself (HTTP+JSON).
    Bare,
}

impl Shape {
    /// The JSON pointer of the Task in one of a stream's events.
    pub fn task_pointer(self) -> &'static str {
        match self {
            Shape::Envelope => "/result/task",
            Shape::Bare => "/task",
        }
    }
}

/// A client's request as a binding's decoder read it: the body, and for
/// HTTP+JSON the path's parameters and the query.
#[derive(Debug, Clone, Copy)]
pub struct ClientRequest<'a> {
    pub body: &'a [u8],
    pub params: &'a PathParams,
    pub query: Option<&'a str>,
}

/// An answer in the client's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    /// The status it must go out with, when not the one the agent's status
    /// maps to ([`Codec::client_status`]); `None` where the binding's
    /// status does not change (JSON-RPC).
    pub status: Option<u16>,
    pub body: Vec<u8>,
}

/// One binding's translation of one call, both ways. Pure: no IO, no
/// HTTP head; what the binding's head needs it says in plain values.
pub trait Codec {
    /// The operation, binding and versions it was made for.
    fn made_for(&self) -> MadeFor;

    /// The request toward the agent, in its version (bytes of its
    /// binding); notes what the answer needs (history dropped, the id
    /// kept as written, the asked push config).
    fn encode_request(&mut self, req: ClientRequest<'_>) -> Result<Vec<u8>, Failure>;

    /// The agent request's method, path (under the agent's base path) and
    /// body when the binding rebuilds them (HTTP+JSON); `None`: the
    /// client's method and path, the body [`Self::encode_request`] gave.
    fn upstream_request(&self) -> Option<&UpstreamRequest> {
        None
    }

    /// [`Self::upstream_request`], to change (another body form, another
    /// interface of the agent).
    fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        None
    }

    /// A whole answer of the agent (its status and body) in the client's
    /// shape; an untranslatable one becomes InvalidAgentResponse.
    fn answer(&self, status: u16, body: &[u8]) -> Decoded;

    /// Whether a plain JSON answer must reach the client as an event
    /// stream of one `data:` frame (v0.3 JSON-RPC streaming clients).
    fn answer_as_sse(&self) -> bool {
        false
    }

    /// One SSE `data` value of the agent in the client's shape, with, when
    /// `facts` is asked for and the fast path read them, what the event
    /// says about its task.
    fn event<'d>(&self, data: &'d str, facts: bool) -> (Vec<u8>, Option<TaskFacts<'d>>);

    /// [`Self::event`] written at the end of `out` (what it holds is
    /// kept), for a stream rendered into one buffer; the facts as there.
    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        let (bytes, facts) = self.event(data, facts);
        out.extend_from_slice(&bytes);
        facts
    }

    /// A failure in the client's shape: status and body.
    fn error(&self, f: &Failure) -> ErrorResponse;

    /// A result the proxy writes itself (a v1.0 subscription's first Task,
    /// an event relayed from another caller's stream; client's version) as
    /// one SSE event of the binding: a JSON-RPC envelope with the client's
    /// id as written, or the result itself.
    fn result_event(&self, result: &[u8]) -> bytes::Bytes;

    /// The client's status for an agent's error status.
    fn client_status(&self, upstream_status: u16) -> u16 {
        upstream_status
    }

    /// Whether an answer the agent gave with `upstream_status`, decoded as
    /// `d`, is a success (its push configs may settle, its tasks count).
    fn succeeded(&self, upstream_status: u16, d: &Decoded) -> bool;

    /// Whether a decoded success answer still carries an error (a JSON-RPC
    /// error envelope comes with 200).
    fn answer_is_error(&self, _out: &[u8]) -> bool {
        false
    }

    /// A success answer (client's version, push values restored) settled
    /// against the push config asked for (see
    /// [`crate::translation::AskedConfig::settle`]).
    fn settle_config(
        &self,
        out: Vec<u8>,
        known: &mut dyn FnMut(&str, &str) -> Option<Value>,
    ) -> Decoded;

    /// Where its answers and events keep their result.
    fn shape(&self) -> Shape;

    /// The method name the answer is recorded under (ListTasks index,
    /// relayed subscriptions).
    fn method_name(&self) -> &str;
}

/// The codecs of the HTTP front: one `match` per call, no box.
#[derive(Debug, Clone)]
pub enum HttpCodec {
    JsonRpc(JsonRpcCodec),
    Rest(RestCodec),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            HttpCodec::JsonRpc($c) => $e,
            HttpCodec::Rest($c) => $e,
        }
    };
}

impl HttpCodec {
    /// The same codec for an answer's events: without the request it sent.
    pub fn for_answer(&self) -> HttpCodec {
        match self {
            HttpCodec::JsonRpc(c) => HttpCodec::JsonRpc(c.clone()),
            HttpCodec::Rest(c) => HttpCodec::Rest(c.without_request()),
        }
    }

    /// The JSON-RPC translation, when it is one.
    pub fn rpc(&self) -> Option<&crate::translation::RpcTranslation> {
        match self {
            HttpCodec::JsonRpc(c) => Some(&c.rpc),
            HttpCodec::Rest(_) => None,
        }
    }

    /// The HTTP+JSON translation, when it is one.
    pub fn rest(&self) -> Option<&crate::rest::RestTranslation> {
        match self {
            HttpCodec::JsonRpc(_) => None,
            HttpCodec::Rest(c) => Some(&c.t),
        }
    }
}

impl Codec for HttpCodec {
    fn made_for(&self) -> MadeFor {
        each!(self, c => c.made_for())
    }
    fn encode_request(&mut self, req: ClientRequest<'_>) -> Result<Vec<u8>, Failure> {
        each!(self, c => c.encode_request(req))
    }
    fn upstream_request(&self) -> Option<&UpstreamRequest> {
        each!(self, c => c.upstream_request())
    }
    fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        each!(self, c => c.upstream_request_mut())
    }
    fn answer(&self, status: u16, body: &[u8]) -> Decoded {
        each!(self, c => c.answer(status, body))
    }
    fn answer_as_sse(&self) -> bool {
        each!(self, c => c.answer_as_sse())
    }
    fn event<'d>(&self, data: &'d str, facts: bool) -> (Vec<u8>, Option<TaskFacts<'d>>) {
        each!(self, c => c.event(data, facts))
    }
    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        each!(self, c => c.event_into(data, facts, out))
    }
    fn error(&self, f: &Failure) -> ErrorResponse {
        each!(self, c => c.error(f))
    }
    fn result_event(&self, result: &[u8]) -> bytes::Bytes {
        each!(self, c => c.result_event(result))
    }
    fn client_status(&self, upstream_status: u16) -> u16 {
        each!(self, c => c.client_status(upstream_status))
    }
    fn succeeded(&self, upstream_status: u16, d: &Decoded) -> bool {
        each!(self, c => c.succeeded(upstream_status, d))
    }
    fn answer_is_error(&self, out: &[u8]) -> bool {
        each!(self, c => c.answer_is_error(out))
    }
    fn settle_config(
        &self,
        out: Vec<u8>,
        known: &mut dyn FnMut(&str, &str) -> Option<Value>,
    ) -> Decoded {
        each!(self, c => c.settle_config(out, known))
    }
    fn shape(&self) -> Shape {
        each!(self, c => c.shape())
    }
    fn method_name(&self) -> &str {
        each!(self, c => c.method_name())
    }
}

/// The extension header in `to`'s spelling (EDGE-CASES 30: v1.0
/// `A2A-Extensions`, v0.3 `X-A2A-Extensions`, matched case-insensitively):
/// every value of either spelling, repeated headers included, merged into
/// one comma-separated value, each URI once (as the gRPC binding reads its
/// metadata, `grpc/bridge/meta.rs`). `None` when neither is present. The
/// same for both HTTP bindings, both ways (toward the agent in its
/// spelling, back in the client's).
pub fn extensions_for(to: Version, headers: &http::HeaderMap) -> Option<(&'static str, String)> {
    let mut merged = String::new();
    for name in ["a2a-extensions", "x-a2a-extensions"] {
        for v in headers.get_all(name) {
            let Ok(v) = v.to_str() else { continue };
            for uri in v.split(',').map(str::trim).filter(|u| !u.is_empty()) {
                if merged.split(',').any(|seen| seen == uri) {
                    continue;
                }
                if !merged.is_empty() {
                    merged.push(',');
                }
                merged.push_str(uri);
            }
        }
    }
    if merged.is_empty() {
        return None;
    }
    let name = match to {
        Version::V10 => "A2A-Extensions",
        Version::V03 => "X-A2A-Extensions",
    };
    Some((name, merged))
}

#[cfg(test)]
mod tests;
