//! One codec per binding behind one trait ([`Codec`]): what one call of a
//! binding needs to cross versions, in that binding's own values.
//!
//! Three implementations, each made once per call for one operation and
//! one pair of versions ([`MadeFor`]):
//!
//! * [`JsonRpcCodec`], made by the JSON-RPC decoder (`front/dispatch.rs`),
//!   and by the gRPC bridge for the gRPC RPCs it sends as JSON-RPC
//!   (`grpc/bridge`);
//! * [`RestCodec`], made by the HTTP+JSON decoder (`front/rest_call.rs`:
//!   path, query and body);
//! * [`GrpcCodec`], made by the gRPC binding's direct path
//!   (`grpc/direct`) from the RPC's table ([`grpc::Unary`],
//!   [`grpc::Streaming`]).
//!
//! From then on the binding asks it, and only it, for the binding's shapes:
//! the request toward the agent ([`Codec::encode_request`]), the agent's
//! answer, each stream event and each error in the client's shape
//! ([`Codec::answer`], [`Codec::event`], [`Codec::error`]). The associated
//! types say what those are per binding: bytes for the HTTP bindings
//! (their answers with the agent's HTTP status, their events SSE `data`),
//! prost messages and `tonic::Status` for gRPC. What only the HTTP front
//! asks (the rebuilt HTTP+JSON request, the client's status, the push
//! config settled in an answer, where a result sits) is [`OverHttp`].
//!
//! The A2A decisions (push interception, task recording, the first Task
//! of a subscription) stay with the call's [`crate::call::Plan`] and the
//! binding's call path; the codec only notes what the request asked that
//! its answer must honour (history dropped, the id as written, the asked
//! push config), says where an answer keeps its result ([`Shape`]), and,
//! for gRPC, runs the call's step on an answer in the client's version
//! before encoding it ([`grpc::AgentMessage`]).
//!
//! The fast paths live inside their codec, each proven equal to the
//! general path by its equivalence tests: JSON-RPC's one-pass transcoder
//! (with the [`TaskFacts`] it reads on the way) before the general typed
//! path; the gRPC codec's direct prost tables (no JSON in between), equal
//! to the caller's JSON-RPC crossed by [`JsonRpcCodec`]
//! (`proxy/tests/grpc_direct.rs`); the hot unary gRPC RPCs' hand-served
//! frames (`grpc/serve.rs`) are the transport around the same codec.
//!
//! [`HttpCodec`] is the closed set the HTTP front holds: an enum, so an
//! event costs one `match`, no allocation and no virtual call. The gRPC
//! codec is generic over its table's types: static dispatch, nothing
//! allocated per message beyond the messages.

use serde_json::Value;
use translate::method::Method;
use translate::transcode::TaskFacts;

use crate::error::{ErrorResponse, Failure};
use crate::rest::UpstreamRequest;
use crate::route::{Binding, PathParams};
use crate::version::Version;

/// The associated types of the HTTP bindings' codecs: bytes in, bytes
/// out (the client's request as its decoder read it, the agent's status
/// and body, an SSE `data` value and whether its task facts are asked).
macro_rules! http_codec_types {
    () => {
        type Request<'a> = $crate::codec::ClientRequest<'a>;
        type Outgoing = Vec<u8>;
        type Answer<'a> = (u16, &'a [u8]);
        type Reply = $crate::codec::Decoded;
        type Event<'a> = (&'a str, bool);
        type Item<'a> = (Vec<u8>, Option<translate::transcode::TaskFacts<'a>>);
        type Error = $crate::error::ErrorResponse;
    };
}

pub mod grpc;
mod jsonrpc;
mod rest;

pub use grpc::GrpcCodec;
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
    Grpc,
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
    /// maps to ([`OverHttp::client_status`]); `None` where the binding's
    /// status does not change (JSON-RPC).
    pub status: Option<u16>,
    pub body: Vec<u8>,
}

/// One binding's translation of one call, both ways: the one trait of
/// every binding's codec. Pure: no IO, no HTTP head, no A2A decision; what
/// the binding needs it says in its own values (the associated types).
pub trait Codec {
    /// The client's request as the binding's decoder read it.
    type Request<'a>
    where
        Self: 'a;
    /// The request toward the agent, in the agent's version.
    type Outgoing;
    /// An answer of the agent, as the binding's transport read it.
    type Answer<'a>
    where
        Self: 'a;
    /// An answer in the client's shape (an error it carries included).
    type Reply;
    /// One stream event of the agent.
    type Event<'a>
    where
        Self: 'a;
    /// One stream event in the client's shape.
    type Item<'a>
    where
        Self: 'a;
    /// A failure in the client's shape.
    type Error;

    /// The operation, binding and versions it was made for.
    fn made_for(&self) -> MadeFor;

    /// The request toward the agent, in its version; notes what the
    /// answer needs (history dropped, the id kept as written, the asked
    /// push config).
    fn encode_request(&mut self, req: Self::Request<'_>) -> Result<Self::Outgoing, Failure>;

    /// A whole answer of the agent in the client's shape; an
    /// untranslatable one becomes InvalidAgentResponse.
    fn answer(&self, a: Self::Answer<'_>) -> Self::Reply;

    /// One stream event of the agent in the client's shape.
    fn event<'d>(&self, e: Self::Event<'d>) -> Self::Item<'d>
    where
        Self: 'd;

    /// A failure in the client's shape.
    fn error(&self, f: &Failure) -> Self::Error;
}

/// The codec of an HTTP binding (JSON-RPC, HTTP+JSON), whose [`Codec`]
/// types are bytes ([`ClientRequest`] -> body; `(status, body)` ->
/// [`Decoded`]; `(SSE data, facts asked)` -> bytes and the [`TaskFacts`]
/// read; [`ErrorResponse`]), and what the HTTP front also asks of it.
pub trait OverHttp: Codec {
    /// The agent request's method, path (under the agent's base path) and
    /// body when the binding rebuilds them (HTTP+JSON); `None`: the
    /// client's method and path, the body [`Codec::encode_request`] gave.
    fn upstream_request(&self) -> Option<&UpstreamRequest> {
        None
    }

    /// [`Self::upstream_request`], to change (another body form, another
    /// interface of the agent).
    fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        None
    }

    /// Whether a plain JSON answer must reach the client as an event
    /// stream of one `data:` frame (v0.3 JSON-RPC streaming clients).
    fn answer_as_sse(&self) -> bool {
        false
    }

    /// [`Codec::answer`] with what it says about its task when the fast
    /// path learnt it while translating (`None`: read the answer for it).
    fn answer_with_facts<'d>(&self, a: (u16, &'d [u8])) -> (Decoded, Option<TaskFacts<'d>>);

    /// [`Codec::event`] of one SSE `data` value (with, when `facts` is
    /// asked for and the fast path read them, what the event says about
    /// its task) written at the end of `out` (what it holds is kept), for
    /// a stream rendered into one buffer.
    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>>;

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
    http_codec_types!();

    fn made_for(&self) -> MadeFor {
        each!(self, c => c.made_for())
    }
    fn encode_request(&mut self, req: ClientRequest<'_>) -> Result<Vec<u8>, Failure> {
        each!(self, c => c.encode_request(req))
    }
    fn answer(&self, a: (u16, &[u8])) -> Decoded {
        each!(self, c => c.answer(a))
    }
    fn event<'d>(&self, e: Self::Event<'d>) -> Self::Item<'d> {
        each!(self, c => c.event(e))
    }
    fn error(&self, f: &Failure) -> ErrorResponse {
        each!(self, c => c.error(f))
    }
}

impl OverHttp for HttpCodec {
    fn upstream_request(&self) -> Option<&UpstreamRequest> {
        each!(self, c => c.upstream_request())
    }
    fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        each!(self, c => c.upstream_request_mut())
    }
    fn answer_as_sse(&self) -> bool {
        each!(self, c => c.answer_as_sse())
    }
    fn answer_with_facts<'d>(&self, a: (u16, &'d [u8])) -> (Decoded, Option<TaskFacts<'d>>) {
        each!(self, c => c.answer_with_facts(a))
    }
    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        each!(self, c => c.event_into(data, facts, out))
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

/// The extension header's two spellings (v1.0 `A2A-Extensions`, v0.3
/// `X-A2A-Extensions`), parsed once.
pub const EXTENSIONS_V10: http::HeaderName = http::HeaderName::from_static("a2a-extensions");
pub const EXTENSIONS_V03: http::HeaderName = http::HeaderName::from_static("x-a2a-extensions");

/// The extension header in `to`'s spelling (EDGE-CASES 30: v1.0
/// `A2A-Extensions`, v0.3 `X-A2A-Extensions`, matched case-insensitively):
/// every value of either spelling, repeated headers included, merged into
/// one comma-separated value, each URI once (as the gRPC binding reads its
/// metadata, `grpc/bridge/meta.rs`). `None` when neither is present. The
/// same for both HTTP bindings, both ways (toward the agent in its
/// spelling, back in the client's).
pub fn extensions_for(to: Version, headers: &http::HeaderMap) -> Option<(&'static str, String)> {
    let mut merged = String::new();
    for name in [&EXTENSIONS_V10, &EXTENSIONS_V03] {
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
