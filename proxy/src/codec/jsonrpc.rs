//! The JSON-RPC codec: [`RpcTranslation`] (the request body, the one-pass
//! transcoder and the typed path behind it, the client's id kept as
//! written) behind [`Codec`]. JSON-RPC has no status of its own: answers
//! and errors keep the agent's, A2A errors travel in 200 envelopes.

use serde_json::Value;
use translate::method::Method;
use translate::transcode::TaskFacts;

use super::*;
use crate::error::{rescue, ErrorTarget};
use crate::translation::RpcTranslation;

/// One JSON-RPC call across versions.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcCodec {
    pub rpc: RpcTranslation,
}

impl JsonRpcCodec {
    /// A call of `method` (as the client named it) with request `id`.
    pub fn new(client: Version, upstream: Version, method: String, id: Option<Value>) -> Self {
        JsonRpcCodec {
            rpc: RpcTranslation {
                client,
                upstream,
                method,
                id,
                drop_history: false,
                asked_config: None,
                exact_id: None,
            },
        }
    }
}

impl From<RpcTranslation> for JsonRpcCodec {
    fn from(rpc: RpcTranslation) -> Self {
        JsonRpcCodec { rpc }
    }
}

impl Codec for JsonRpcCodec {
    http_codec_types!();

    fn made_for(&self) -> MadeFor {
        MadeFor {
            binding: CodecBinding::JsonRpc,
            op: Method::from_name(&self.rpc.method).map(|(m, _)| m),
            client: self.rpc.client,
            upstream: self.rpc.upstream,
        }
    }

    fn encode_request(&mut self, req: ClientRequest<'_>) -> Result<Vec<u8>, Failure> {
        let (c, u) = (self.rpc.client, self.rpc.upstream);
        let _t = crate::telemetry::translation("translate request", c, u).entered();
        self.rpc.request(req.body)
    }

    fn answer(&self, (_status, body): (u16, &[u8])) -> Decoded {
        let (c, u) = (self.rpc.client, self.rpc.upstream);
        let _t = crate::telemetry::translation("translate answer", u, c).entered();
        Decoded {
            status: None,
            body: self.rpc.response(body),
        }
    }

    fn event<'d>(&self, e: Self::Event<'d>) -> Self::Item<'d> {
        let (data, facts) = e;
        self.rpc.event_bytes(data, facts)
    }

    fn error(&self, f: &Failure) -> ErrorResponse {
        let target = ErrorTarget {
            version: Some(self.rpc.client),
            binding: Some(Binding::JsonRpc),
            operation: self.made_for().op,
            jsonrpc_id: self.rpc.id.clone(),
        };
        let mut r = rescue(f, &target);
        if self.rpc.exact_id.is_some() {
            // The id as the client wrote it (the rendering above has the
            // token the agent saw in its place).
            let body = self.rpc.restore_id(r.body.to_vec());
            r.body = bytes::Bytes::from(body);
        }
        r
    }
}

impl OverHttp for JsonRpcCodec {
    fn answer_as_sse(&self) -> bool {
        self.rpc.json_answer_as_sse()
    }

    fn answer_with_facts<'d>(
        &self,
        (_status, body): (u16, &'d [u8]),
    ) -> (Decoded, Option<TaskFacts<'d>>) {
        let (c, u) = (self.rpc.client, self.rpc.upstream);
        let _t = crate::telemetry::translation("translate answer", u, c).entered();
        let (body, facts) = self.rpc.response_with_facts(body, true);
        (Decoded { status: None, body }, facts)
    }

    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        self.rpc.event_into(data, facts, out)
    }

    fn result_event(&self, result: &[u8]) -> bytes::Bytes {
        let id = self.rpc.id.clone().unwrap_or_default();
        let frame = crate::sse::sse_frame(result, Some(&id));
        match &self.rpc.exact_id {
            Some(_) => bytes::Bytes::from(self.rpc.restore_id(frame.to_vec())),
            None => frame,
        }
    }

    fn succeeded(&self, upstream_status: u16, _d: &Decoded) -> bool {
        // An A2A error comes with 200 too: see `answer_is_error`.
        upstream_status == 200
    }

    fn answer_is_error(&self, out: &[u8]) -> bool {
        serde_json::from_slice::<Value>(out).map_or(true, |v| v.get("error").is_some())
    }

    fn settle_config(
        &self,
        out: Vec<u8>,
        known: &mut dyn FnMut(&str, &str) -> Option<Value>,
    ) -> Decoded {
        Decoded {
            status: None,
            body: self.rpc.settle_config(out, known),
        }
    }

    fn shape(&self) -> Shape {
        Shape::Envelope
    }

    fn method_name(&self) -> &str {
        &self.rpc.method
    }
}
