//! The HTTP+JSON codec: [`RestTranslation`] and the agent's request it
//! built ([`UpstreamRequest`]: method, path, body, the other body form)
//! behind [`Codec`]. HTTP+JSON has statuses: an agent's error status is
//! given in the client's terms, a translated error body names the status it
//! goes out with.

use serde_json::Value;
use translate::method::Method;
use translate::transcode::TaskFacts;

use super::*;
use crate::error::{rescue, ErrorTarget};
use crate::rest::RestTranslation;

/// One HTTP+JSON call rebuilt for the agent (across versions, or in its
/// own when the push layer intercepts it).
#[derive(Debug, Clone, PartialEq)]
pub struct RestCodec {
    pub t: RestTranslation,
    /// The agent's request, once encoded; `None` in a codec kept for an
    /// answer's events only.
    up: Option<UpstreamRequest>,
}

impl RestCodec {
    /// A call of `op`, nothing encoded yet.
    pub fn new(client: Version, upstream: Version, op: Method) -> Self {
        RestCodec {
            t: RestTranslation {
                client,
                upstream,
                op,
                drop_history: false,
                asked_config: None,
            },
            up: None,
        }
    }

    /// The first half of [`Codec::encode_request`]: the call's params
    /// (model JSON) in the agent's version, which the push layer may
    /// rewrite before [`Self::encode_params`] writes them.
    pub fn decode_params(
        client: Version,
        upstream: Version,
        op: Method,
        req: ClientRequest<'_>,
    ) -> Result<(RestCodec, Value), Failure> {
        let (t, p) =
            crate::rest::upstream_params(client, upstream, op, req.params, req.query, req.body)?;
        Ok((RestCodec { t, up: None }, p))
    }

    /// The second half: `params` as the agent's request; its body.
    pub fn encode_params(&mut self, params: Value) -> Result<Option<Vec<u8>>, Failure> {
        let up = crate::rest::upstream_request(&self.t, params)?;
        let body = up.body.clone();
        self.up = Some(up);
        Ok(body)
    }

    /// The same codec without the request it sent (for an answer's events).
    pub(super) fn without_request(&self) -> RestCodec {
        RestCodec {
            t: self.t.clone(),
            up: None,
        }
    }

    fn target(&self) -> ErrorTarget {
        ErrorTarget {
            version: Some(self.t.client),
            binding: Some(Binding::Rest),
            operation: Some(self.t.op),
            jsonrpc_id: None,
        }
    }
}

impl Codec for RestCodec {
    http_codec_types!();

    fn made_for(&self) -> MadeFor {
        MadeFor {
            binding: CodecBinding::Rest,
            op: Some(self.t.op),
            client: self.t.client,
            upstream: self.t.upstream,
        }
    }

    fn encode_request(&mut self, req: ClientRequest<'_>) -> Result<Vec<u8>, Failure> {
        let (c, u) = (self.t.client, self.t.upstream);
        let _t = crate::telemetry::translation("translate request", c, u).entered();
        let (t, op) = (&self.t, self.t.op);
        let (codec, params) = RestCodec::decode_params(t.client, t.upstream, op, req)?;
        *self = codec;
        Ok(self.encode_params(params)?.unwrap_or_default())
    }

    fn answer(&self, (status, body): (u16, &[u8])) -> Decoded {
        let (c, u) = (self.t.client, self.t.upstream);
        let _t = crate::telemetry::translation("translate answer", u, c).entered();
        let (named, out) = self.t.response(status, body);
        // A v1.0 agent's error status covers several v0.3 ones: the
        // translated body's code names the right one.
        let status = named.or_else(|| self.t.status_of_error_body(status, &out));
        Decoded { status, body: out }
    }

    fn event<'d>(&self, e: Self::Event<'d>) -> Self::Item<'d> {
        let (data, _facts) = e;
        (self.t.event(data).into_bytes(), None)
    }

    fn error(&self, f: &Failure) -> ErrorResponse {
        rescue(f, &self.target())
    }
}

impl OverHttp for RestCodec {
    /// A bare REST result: its tasks are read from the answer.
    fn answer_with_facts<'d>(&self, a: (u16, &'d [u8])) -> (Decoded, Option<TaskFacts<'d>>) {
        (self.answer(a), None)
    }

    fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        let (bytes, facts) = self.event((data, facts));
        out.extend_from_slice(&bytes);
        facts
    }

    fn upstream_request(&self) -> Option<&UpstreamRequest> {
        self.up.as_ref()
    }

    fn upstream_request_mut(&mut self) -> Option<&mut UpstreamRequest> {
        self.up.as_mut()
    }

    fn result_event(&self, result: &[u8]) -> bytes::Bytes {
        crate::sse::sse_frame(result, None)
    }

    fn client_status(&self, upstream_status: u16) -> u16 {
        self.t.client_status(upstream_status)
    }

    fn succeeded(&self, upstream_status: u16, d: &Decoded) -> bool {
        (200..300).contains(&upstream_status) && d.status.is_none()
    }

    fn settle_config(
        &self,
        out: Vec<u8>,
        known: &mut dyn FnMut(&str, &str) -> Option<Value>,
    ) -> Decoded {
        let (status, body) = self.t.settle_config(out, known);
        Decoded { status, body }
    }

    fn shape(&self) -> Shape {
        Shape::Bare
    }

    fn method_name(&self) -> &str {
        self.t.op.as_str()
    }
}
