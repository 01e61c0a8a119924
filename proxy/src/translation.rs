//! JSON-RPC cross-version translation for one request: the request body,
//! the response body and each SSE event, via `translate::document`. Pure;
//! the server hooks only move bytes in and out.

use serde_json::Value;
use translate::document::{self, Kind};
use translate::envelope::{Request, Response};
use translate::jsonrpc;
use translate::method::Method;
use translate::transcode::TaskFacts;
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
    /// Set by [`RpcTranslation::request`]: a v1.0 `historyLength: 0` ("no
    /// history") went to a v0.3 agent, which reads 0 as "unlimited", so the
    /// answer's task history is removed here.
    pub drop_history: bool,
    /// Set by [`RpcTranslation::request`] for a v1.0
    /// GetTaskPushNotificationConfig toward a v0.3 agent: its answer is
    /// checked against the asked id ([`AskedConfig`]).
    pub asked_config: Option<AskedConfig>,
    /// Set by [`RpcTranslation::request`] when the client's numeric id is
    /// one a JSON number in memory cannot carry exactly (past 2^64, say):
    /// it travels as a token and is written back as the client wrote it.
    pub exact_id: Option<ExactId>,
}

/// A client's numeric JSON-RPC id kept as written: the agent sees the
/// `token` (a string id of the proxy's) in its place, and every answer
/// the client gets carries `raw` again. serde_json reads an integer of 30
/// digits as an f64, which would answer `1.2345678901234568e29` for
/// `123456789012345678901234567890`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactId {
    token: String,
    raw: String,
}

impl ExactId {
    /// For a request `body` whose id was read as `id`: `Some` (with the
    /// body to send on, the id in it replaced by the token) when `id` is a
    /// number that does not write back as it was written.
    fn of(id: &Value, body: &[u8]) -> Option<(ExactId, Vec<u8>)> {
        let Value::Number(n) = id else { return None };
        if !n.is_f64() {
            // Integers within 64 bits keep their text.
            return None;
        }
        #[derive(serde::Deserialize)]
        struct RawId<'a> {
            #[serde(borrow)]
            id: &'a serde_json::value::RawValue,
        }
        let raw = serde_json::from_slice::<RawId<'_>>(body).ok()?.id.get();
        if raw == n.to_string() {
            return None;
        }
        let start = raw.as_ptr() as usize - body.as_ptr() as usize;
        let token = format!("a2a-proxy-id-{:016x}", rand::random::<u64>());
        let mut out = Vec::with_capacity(body.len() + token.len());
        out.extend_from_slice(&body[..start]);
        out.extend_from_slice(format!("\"{token}\"").as_bytes());
        out.extend_from_slice(&body[start + raw.len()..]);
        Some((
            ExactId {
                token,
                raw: raw.to_string(),
            },
            out,
        ))
    }

    /// The id of a request `body` read as `id`, kept as written when it
    /// does not write back as it was written (the body itself goes on as
    /// it came: a call in the agent's own version); `None` otherwise.
    pub(crate) fn of_request(id: &Value, body: &[u8]) -> Option<ExactId> {
        ExactId::of(id, body).map(|(exact, _)| exact)
    }

    /// The id errors are rendered with: the token, written back by
    /// [`Self::restore`].
    pub(crate) fn token(&self) -> Value {
        Value::String(self.token.clone())
    }

    /// `out` with the token (as a JSON string) written back as the id the
    /// client sent.
    pub(crate) fn restore(&self, out: Vec<u8>) -> Vec<u8> {
        let quoted = format!("\"{}\"", self.token);
        let Some(at) = memchr::memmem::find(&out, quoted.as_bytes()) else {
            return out;
        };
        let mut back = Vec::with_capacity(out.len());
        back.extend_from_slice(&out[..at]);
        back.extend_from_slice(self.raw.as_bytes());
        back.extend_from_slice(&out[at + quoted.len()..]);
        back
    }
}

/// The config a v1.0 GetTaskPushNotificationConfig toward a v0.3 agent
/// asked for. a2a-python 0.3 answers the task's first config whatever id
/// is asked (its JSON-RPC, REST and gRPC handlers alike), so an answer about
/// another config must not reach the client as if it were the one asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedConfig {
    pub task_id: String,
    pub config_id: String,
}

impl AskedConfig {
    /// From v1.0 GetTaskPushNotificationConfig params (`taskId`, `id`);
    /// `None` when either is missing (the translator rejects those).
    pub fn of_v10_params(params: &Value) -> Option<AskedConfig> {
        let s = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_string);
        Some(AskedConfig {
            task_id: s("taskId")?,
            config_id: s("id")?,
        })
    }

    /// Settles a v1.0 TaskPushNotificationConfig `result` against the asked
    /// id. An answer naming no id, or the asked one, stands (`None`).
    /// Another config's answer is replaced by `known(task, config)` (what the
    /// proxy recorded when it registered that config with the agent), else
    /// it becomes TaskNotFound, what a v1.0 server answers for an unknown
    /// config id.
    pub fn settle(
        &self,
        result: &Value,
        known: impl FnOnce(&str, &str) -> Option<Value>,
    ) -> Result<Option<Value>, Failure> {
        let answered = result.get("id").and_then(Value::as_str).unwrap_or_default();
        if answered.is_empty() || answered == self.config_id {
            return Ok(None);
        }
        tracing::info!(
            task_id = %self.task_id,
            asked = %self.config_id,
            answered = %answered,
            "agent answered another push config than the one asked"
        );
        match known(&self.task_id, &self.config_id) {
            Some(v) => Ok(Some(v)),
            None => Err(Failure::Translate {
                code: -32001,
                message: format!(
                    "task {:?} has no push notification config {:?}",
                    self.task_id, self.config_id
                ),
            }),
        }
    }
}

impl RpcTranslation {
    /// The request body in the upstream's version (also notes whether the
    /// answer must lose its history, see `drop_history`).
    pub fn request(&mut self, body: &[u8]) -> Result<Vec<u8>, Failure> {
        let exact = self.id.as_ref().and_then(|id| ExactId::of(id, body));
        let body = match exact {
            Some((exact, swapped)) => {
                self.id = Some(Value::String(exact.token.clone()));
                self.exact_id = Some(exact);
                std::borrow::Cow::Owned(swapped)
            }
            None => std::borrow::Cow::Borrowed(body),
        };
        let body: &[u8] = &body;
        self.drop_history = self.client == Version::V10
            && self.upstream == Version::V03
            && matches!(self.method.as_str(), "GetTask" | "SendMessage")
            && asks_no_history(body);
        if self.client == Version::V10
            && self.upstream == Version::V03
            && self.method == "GetTaskPushNotificationConfig"
        {
            self.asked_config = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| AskedConfig::of_v10_params(&v["params"]));
        }
        if let Some(out) = self.fast_request(body) {
            return Ok(out);
        }
        document::translate_typed(Kind::Request, self.upstream, None, body)
            .map_err(|e| failure_of(&e))
    }

    /// The common case in one typed pass: `translate::onepass` for the hot
    /// methods (no `Value` at all), else bytes -> envelope -> bytes (no
    /// intermediate `Value` of the whole document). `None` on any problem:
    /// the caller then takes `document::translate`, whose errors are exact.
    fn fast_request(&self, body: &[u8]) -> Option<Vec<u8>> {
        if let Some(out) = translate::onepass::request(self.upstream, &self.method, body) {
            return Some(out);
        }
        let r: Request = serde_json::from_slice(body).ok()?;
        let out = match self.upstream {
            Version::V10 => jsonrpc::request_to_v10(r).ok()?,
            Version::V03 => jsonrpc::request_to_v03(r).ok()?,
        };
        Some(translate::json::render(&out))
    }

    /// [`Self::fast_request`] for a response or stream event to the client
    /// that the streaming transcoder did not take ([`Self::transcoded`] is
    /// tried first by every caller): the typed fast paths, then the typed
    /// envelope.
    fn fast_response(&self, body: &[u8]) -> Option<Vec<u8>> {
        let (m, _) = Method::from_name(&self.method)?;
        if let Some(out) = translate::onepass::typed_response(self.client, m, body) {
            return Some(out);
        }
        let r: Response = serde_json::from_slice(body).ok()?;
        let out = match self.client {
            Version::V10 => jsonrpc::response_to_v10_for(r, m).ok()?,
            Version::V03 => jsonrpc::response_to_v03_for(r, m).ok()?,
        };
        Some(translate::json::render(&out))
    }

    /// A whole JSON-RPC response body in the client's version; an
    /// untranslatable answer becomes InvalidAgentResponse (-32006).
    pub fn response(&self, body: &[u8]) -> Vec<u8> {
        self.response_with_facts(body, false).0
    }

    /// [`Self::response`], and (`facts`: asked, for a v1.0 client) what
    /// the v1.0 answer says about its task when the transcoder learnt it
    /// while writing the answer (`None`: read the answer for it).
    pub fn response_with_facts<'d>(
        &self,
        body: &'d [u8],
        facts: bool,
    ) -> (Vec<u8>, Option<TaskFacts<'d>>) {
        let transcoded = std::str::from_utf8(body)
            .ok()
            .and_then(|text| self.transcoded(text, facts));
        let (out, facts) = match transcoded {
            Some((out, f)) => (self.history_as_asked(out), f),
            None => (self.response_with_token(body), None),
        };
        (self.id_restored(out), facts)
    }

    /// `out` with the request id as the client wrote it, when the agent
    /// was sent a token in its place ([`ExactId`]).
    fn id_restored(&self, out: Vec<u8>) -> Vec<u8> {
        match &self.exact_id {
            Some(exact) => exact.restore(out),
            None => out,
        }
    }

    /// A translated answer without its task's history when the client
    /// asked for none.
    fn history_as_asked(&self, out: Vec<u8>) -> Vec<u8> {
        if self.drop_history {
            without_history(out)
        } else {
            out
        }
    }

    fn response_with_token(&self, body: &[u8]) -> Vec<u8> {
        let fast = self.fast_response(body).ok_or(());
        match fast.or_else(|()| {
            document::translate_typed(Kind::Response, self.client, Some(&self.method), body)
        }) {
            Ok(out) => self.history_as_asked(out),
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
    /// `data:` frame (only the unit tests frame a whole answer this way).
    #[cfg(test)]
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
        let out = self.event_bytes(data, false).0;
        // Our own output is UTF-8 (lossy only as a safety net).
        String::from_utf8(out)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// [`Self::event`] as bytes (UTF-8: translated from UTF-8 by the
    /// proxy's own writers), with, when `facts` is asked for and the
    /// streaming transcoder wrote a v1.0 event, what the event says about
    /// its task ([`TaskFacts`]); `None`: read the event's bytes for it.
    pub fn event_bytes<'d>(&self, data: &'d str, facts: bool) -> (Vec<u8>, Option<TaskFacts<'d>>) {
        let (out, learnt) = match self.transcoded(data, facts) {
            Some(done) => done,
            None => (self.event_with_token(data), None),
        };
        (self.id_restored(out), learnt)
    }

    /// [`Self::event_bytes`] written at the end of `out` (what it holds is
    /// kept): the transcoder writes there directly, without a buffer of its
    /// own; the other paths' bytes are appended.
    pub fn event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<TaskFacts<'d>> {
        let start = out.len();
        let learnt = match self.transcoded_event_into(data, facts, out) {
            Some(learnt) => learnt,
            None => {
                out.extend_from_slice(&self.event_with_token(data));
                None
            }
        };
        if let Some(exact) = &self.exact_id {
            let written = out.split_off(start);
            out.extend_from_slice(&exact.restore(written));
        }
        learnt
    }

    /// [`Self::transcoded`] written at the end of `out`; `None` (and
    /// `out` as it was) when the transcoder does not take it.
    fn transcoded_event_into<'d>(
        &self,
        data: &'d str,
        facts: bool,
        out: &mut Vec<u8>,
    ) -> Option<Option<TaskFacts<'d>>> {
        let (m, _) = Method::from_name(&self.method)?;
        if facts && self.client == Version::V10 {
            return translate::transcode::response_to_v10_with_facts_into(m, data, out).map(Some);
        }
        translate::transcode::response_str_into(self.client, m, data, out)?;
        Some(None)
    }

    /// The streaming transcoder's translation of an answer or event, if it
    /// takes it, with (`facts`: asked, for a v1.0 client) what it learnt of
    /// its task.
    fn transcoded<'d>(
        &self,
        data: &'d str,
        facts: bool,
    ) -> Option<(Vec<u8>, Option<TaskFacts<'d>>)> {
        let (m, _) = Method::from_name(&self.method)?;
        if facts && self.client == Version::V10 {
            let (out, f) = translate::transcode::response_to_v10_with_facts(m, data)?;
            return Some((out, Some(f)));
        }
        Some((
            translate::transcode::response_str(self.client, m, data)?,
            None,
        ))
    }

    fn event_with_token(&self, data: &str) -> Vec<u8> {
        let fast = self.fast_response(data.as_bytes()).ok_or(());
        match fast.or_else(|()| {
            document::translate_typed(
                Kind::Event,
                self.client,
                Some(&self.method),
                data.as_bytes(),
            )
        }) {
            Ok(out) => out,
            Err(e) => self.error_body(&Failure::BadUpstreamResponse {
                detail: e.to_string(),
            }),
        }
    }

    /// A response (a JSON-RPC envelope in the client's version, push values
    /// already restored) settled against [`Self::asked_config`]: see
    /// [`AskedConfig::settle`]. Unchanged for every other call.
    pub fn settle_config(
        &self,
        out: Vec<u8>,
        known: impl FnOnce(&str, &str) -> Option<Value>,
    ) -> Vec<u8> {
        let Some(asked) = &self.asked_config else {
            return out;
        };
        let Ok(mut v) = serde_json::from_slice::<Value>(&out) else {
            return out;
        };
        let Some(result) = v.get("result") else {
            return out;
        };
        match asked.settle(result, known) {
            Ok(None) => out,
            Ok(Some(r)) => {
                v["result"] = r;
                serde_json::to_vec(&v).unwrap_or(out)
            }
            Err(f) => self.error_body(&f),
        }
    }

    /// `out` (written for the client) with the id the client wrote when
    /// it travelled as a token (see [`ExactId`]); unchanged otherwise.
    pub fn restore_id(&self, out: Vec<u8>) -> Vec<u8> {
        match &self.exact_id {
            Some(exact) => exact.restore(out),
            None => out,
        }
    }

    /// A JSON-RPC error response in the client's version.
    pub fn error_body(&self, failure: &Failure) -> Vec<u8> {
        let out = jsonrpc_envelope(failure, self.client, self.id.clone())
            .to_string()
            .into_bytes();
        match &self.exact_id {
            Some(exact) => exact.restore(out),
            None => out,
        }
    }
}

/// True when a v1.0 GetTask / SendMessage request asks for `historyLength: 0`.
fn asks_no_history(body: &[u8]) -> bool {
    // Most requests never name it: skip the parse.
    static ISTORY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"istory"));
    let named = ISTORY.find_iter(body).any(|at| {
        let rest = &body[at + b"istory".len()..];
        rest.starts_with(b"Length") || rest.starts_with(b"_length")
    });
    if !named {
        return false;
    }
    let Ok(v) = serde_json::from_slice::<Value>(body) else {
        return false;
    };
    let p = &v["params"];
    let holder = if p.get("configuration").is_some() {
        &p["configuration"]
    } else {
        p
    };
    ["historyLength", "history_length"]
        .iter()
        .any(|k| holder.get(*k).and_then(Value::as_i64) == Some(0))
}

/// A v1.0 response body without the task history (`result.history` of
/// GetTask, `result.task.history` of SendMessage).
fn without_history(out: Vec<u8>) -> Vec<u8> {
    let Ok(mut v) = serde_json::from_slice::<Value>(&out) else {
        return out;
    };
    let Some(result) = v.get_mut("result") else {
        return out;
    };
    let task = if result.get("task").is_some() {
        &mut result["task"]
    } else {
        result
    };
    match task.as_object_mut().and_then(|t| t.remove("history")) {
        Some(_) => serde_json::to_vec(&v).unwrap_or(out),
        None => out,
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
            drop_history: false,
            asked_config: None,
            exact_id: None,
        }
    }

    #[test]
    fn an_id_past_64_bits_comes_back_as_written() {
        let raw = "123456789012345678901234567890";
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"GetTask","params":{{"id":"t1"}}}}"#);
        let mut rpc = t(Version::V10, "GetTask");
        rpc.id = serde_json::from_str::<Value>(&body)
            .unwrap()
            .get("id")
            .cloned();
        let up: Value = serde_json::from_slice(&rpc.request(body.as_bytes()).unwrap()).unwrap();
        let token = up["id"]
            .as_str()
            .expect("a string id toward the agent")
            .to_string();
        assert!(token.starts_with("a2a-proxy-id-"), "{up}");
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":"{token}","result":{{"kind":"task","id":"t1","contextId":"c1","status":{{"state":"working"}}}}}}"#
        );
        let out = String::from_utf8(rpc.response(answer.as_bytes())).unwrap();
        assert!(out.contains(&format!(r#""id":{raw}"#)), "{out}");
        assert!(!out.contains("a2a-proxy-id-"), "{out}");
        let err = String::from_utf8(rpc.error_body(&Failure::UpstreamTimeout)).unwrap();
        assert!(err.contains(&format!(r#""id":{raw}"#)), "{err}");
        // Ids that keep their text are left alone.
        for id in ["7", "-3", "18446744073709551615", "1.5"] {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"t1"}}}}"#
            );
            let mut rpc = t(Version::V10, "GetTask");
            rpc.id = serde_json::from_str::<Value>(&body)
                .unwrap()
                .get("id")
                .cloned();
            let up: Value = serde_json::from_slice(&rpc.request(body.as_bytes()).unwrap()).unwrap();
            assert!(up["id"].is_number(), "{id}: {up}");
            assert!(rpc.exact_id.is_none(), "{id}");
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
    fn v10_history_length_zero_drops_a_v03_agents_history() {
        let mut rpc = t(Version::V10, "GetTask");
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1","historyLength":0}}"#;
        rpc.request(body).unwrap();
        assert!(rpc.drop_history);
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c","status":{"state":"completed"},"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}]}}"#;
        let v: Value = serde_json::from_slice(&rpc.response(answer)).unwrap();
        assert_eq!(v["result"]["id"], "t1");
        assert!(v["result"].get("history").is_none(), "{v}");

        let mut rpc = t(Version::V10, "SendMessage");
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0}}}"#;
        rpc.request(body).unwrap();
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c","status":{"state":"completed"},"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}]}}"#;
        let v: Value = serde_json::from_slice(&rpc.response(answer)).unwrap();
        assert!(v["result"]["task"].get("history").is_none(), "{v}");

        // The snake_case spelling a real peer may send counts the same.
        let mut rpc = t(Version::V10, "GetTask");
        rpc.request(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1","history_length":0}}"#).unwrap();
        assert!(rpc.drop_history);

        // Absent or positive: the history stays.
        let mut rpc = t(Version::V10, "GetTask");
        rpc.request(br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1","historyLength":1}}"#).unwrap();
        assert!(!rpc.drop_history);
        let v: Value = serde_json::from_slice(&rpc.response(answer)).unwrap();
        assert!(v["result"]["history"].is_array(), "{v}");
    }

    #[test]
    fn v10_get_push_config_answer_about_another_config_is_settled() {
        // a2a-python 0.3 answers the task's first config (c1) whatever id.
        let ask = br#"{"jsonrpc":"2.0","id":1,"method":"GetTaskPushNotificationConfig","params":{"taskId":"t1","id":"c2"}}"#;
        let c1 = br#"{"jsonrpc":"2.0","id":1,"result":{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"http://127.0.0.1:9/one"}}}"#;
        let mut rpc = t(Version::V10, "GetTaskPushNotificationConfig");
        rpc.request(ask).unwrap();
        assert_eq!(
            rpc.asked_config,
            Some(AskedConfig {
                task_id: "t1".into(),
                config_id: "c2".into()
            })
        );
        let out = rpc.response(c1);
        // Nothing known about c2: TaskNotFound, not c1 passed off as c2.
        let v: Value =
            serde_json::from_slice(&rpc.settle_config(out.clone(), |_, _| None)).unwrap();
        assert_eq!(v["error"]["code"], -32001, "{v}");
        assert_eq!(v["id"], 1);
        // Known (registered through this proxy): that config.
        let v: Value = serde_json::from_slice(&rpc.settle_config(out, |t, c| {
            (t == "t1" && c == "c2")
                .then(|| json!({"taskId":"t1","id":"c2","url":"http://127.0.0.1:9/two"}))
        }))
        .unwrap();
        assert_eq!(v["result"]["id"], "c2", "{v}");
        assert_eq!(v["result"]["url"], "http://127.0.0.1:9/two");
        // The asked config answered: unchanged.
        let mut rpc = t(Version::V10, "GetTaskPushNotificationConfig");
        rpc.request(ask).unwrap();
        let out = rpc.response(br#"{"jsonrpc":"2.0","id":1,"result":{"taskId":"t1","pushNotificationConfig":{"id":"c2","url":"http://127.0.0.1:9/two"}}}"#);
        assert_eq!(rpc.settle_config(out.clone(), |_, _| None), out);
        // Other methods and directions are never settled.
        let mut rpc = t(Version::V03, "tasks/pushNotificationConfig/get");
        rpc.request(br#"{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"t1","pushNotificationConfigId":"c2"}}"#).unwrap();
        assert_eq!(rpc.asked_config, None);
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
