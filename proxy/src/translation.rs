//! JSON-RPC cross-version translation for one request: the request body,
//! the response body and each SSE event, via `translate::document`. Pure;
//! the server hooks only move bytes in and out.

use serde_json::Value;
use translate::document::{self, Kind};
use translate::TranslateError;

use crate::error::{jsonrpc_envelope, Failure};
use crate::version::Version;

/// The translation context of one JSON-RPC call.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcTranslation {
    pub client: Version,
    pub upstream: Version,
    /// The method as the client named it.
    pub method: String,
    /// The request id, echoed in errors the proxy makes up.
    pub id: Option<Value>,
}

impl RpcTranslation {
    /// The request body in the upstream's version.
    pub fn request(&self, body: &[u8]) -> Result<Vec<u8>, Failure> {
        document::translate(Kind::Request, self.upstream, None, body).map_err(|e| failure_of(&e))
    }

    /// A whole JSON-RPC response body in the client's version; an
    /// untranslatable answer becomes InvalidAgentResponse (-32006).
    pub fn response(&self, body: &[u8]) -> Vec<u8> {
        match document::translate(Kind::Response, self.client, Some(&self.method), body) {
            Ok(out) => out,
            Err(e) => self.error_body(&Failure::BadUpstreamResponse {
                detail: e.to_string(),
            }),
        }
    }

    /// True when a plain JSON answer of the upstream must reach the client as
    /// an event stream: a v0.3 client's streaming call (a2a-python 0.3
    /// clients reject anything but `text/event-stream` there, while v1.0
    /// agents answer streaming errors as plain JSON).
    pub fn json_answer_as_sse(&self) -> bool {
        self.client == Version::V03
            && matches!(self.method.as_str(), "message/stream" | "tasks/resubscribe")
    }

    /// A whole JSON-RPC response body in the client's version, as one SSE
    /// `data:` frame.
    pub fn response_as_sse(&self, body: &[u8]) -> Vec<u8> {
        let json = self.response(body);
        let mut out = Vec::with_capacity(json.len() + 8);
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&json);
        out.extend_from_slice(b"\n\n");
        out
    }

    /// One SSE `data` value (a JSON-RPC response envelope) in the client's version.
    pub fn event(&self, data: &str) -> String {
        match document::translate(
            Kind::Event,
            self.client,
            Some(&self.method),
            data.as_bytes(),
        ) {
            Ok(out) => String::from_utf8_lossy(&out).into_owned(),
            Err(e) => String::from_utf8_lossy(&self.error_body(&Failure::BadUpstreamResponse {
                detail: e.to_string(),
            }))
            .into_owned(),
        }
    }

    /// A JSON-RPC error response in the client's version.
    pub fn error_body(&self, failure: &Failure) -> Vec<u8> {
        jsonrpc_envelope(failure, self.client, self.id.clone())
            .to_string()
            .into_bytes()
    }
}

fn failure_of(e: &TranslateError) -> Failure {
    Failure::Translate {
        code: i64::from(e.jsonrpc_code()),
        message: e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(client: Version, method: &str) -> RpcTranslation {
        RpcTranslation {
            client,
            upstream: client.other(),
            method: method.into(),
            id: Some(json!(1)),
        }
    }

    #[test]
    fn v03_request_becomes_v10() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t1"}}"#;
        let out = t(Version::V03, "tasks/get").request(body).unwrap();
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["method"], "GetTask");
        assert_eq!(v["params"]["id"], "t1");
        assert_eq!(v["id"], 1);
    }

    #[test]
    fn untranslatable_request_keeps_its_code() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#;
        let f = t(Version::V10, "ListTasks").request(body).unwrap_err();
        assert!(
            matches!(f, Failure::Translate { code: -32004, .. }),
            "{f:?}"
        );
    }

    #[test]
    fn v03_stream_calls_get_json_answers_as_one_sse_frame() {
        let rpc = t(Version::V03, "tasks/resubscribe");
        assert!(rpc.json_answer_as_sse());
        assert!(t(Version::V03, "message/stream").json_answer_as_sse());
        assert!(!t(Version::V03, "tasks/get").json_answer_as_sse());
        assert!(!t(Version::V10, "SubscribeToTask").json_answer_as_sse());
        let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32004,"message":"terminal","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"UNSUPPORTED_OPERATION","domain":"a2a-protocol.org"}]}}"#;
        let out = String::from_utf8(rpc.response_as_sse(body)).unwrap();
        let data = out
            .strip_prefix("data: ")
            .and_then(|r| r.strip_suffix("\n\n"))
            .expect("one data frame");
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(v["error"]["code"], -32004);
        assert_eq!(v["id"], 1);
    }

    #[test]
    fn bad_upstream_answer_is_32006_in_client_shape() {
        let out = t(Version::V03, "tasks/get").response(b"not json");
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["error"]["code"], -32006);
        assert_eq!(v["id"], 1);
        assert!(v["error"]["data"].is_object());
    }
}
