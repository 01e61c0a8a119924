//! HTTP+JSON (REST) cross-version translation for one request. Pure: the
//! server hooks only move bytes in and out.
//!
//! The chain goes through the JSON-RPC params/results of `translate`:
//! * v1.0 REST bodies are v1.0 ProtoJSON, the same shapes as v1.0 JSON-RPC
//!   params and results;
//! * v0.3 REST bodies are v0.3 ProtoJSON (the `a2a.v1` proto messages),
//!   read and written with the `proto` crate's pbjson serde, converted to and
//!   from the `translate::v03` models with `proto::convert_v03[_rpc]`.
//!
//! Path and query values (task id, config id, `historyLength`) become params
//! members on the way in and path/query values of the upstream's grammar on
//! the way out. The v1.0 tenant is dropped toward a v0.3 agent.

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use translate::method::Method;
use translate::TranslateError;

use crate::error::Failure;
use crate::version::Version;

mod answer;
mod request;

pub use answer::*;
pub use request::*;

/// The request as it goes to the upstream.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamRequest {
    pub method: http::Method,
    /// Relative to the upstream's base path, starting with `/`.
    pub path_and_query: String,
    /// `None`: no body (GET / DELETE).
    pub body: Option<Vec<u8>>,
    /// The same request in the other body form the binding's readers
    /// disagree on (a v0.3 push-config create: MAPPING-FACTS row 114), for
    /// an agent that refuses `body`.
    pub other_form: Option<Vec<u8>>,
}

impl UpstreamRequest {
    /// Sends [`Self::other_form`] instead of the body from now on; false
    /// when there is none (left).
    pub fn switch_form(&mut self) -> bool {
        match self.other_form.take() {
            Some(b) => {
                self.other_form = self.body.replace(b);
                true
            }
            None => false,
        }
    }
}

/// The translation context of one REST call.
#[derive(Debug, Clone, PartialEq)]
pub struct RestTranslation {
    pub client: Version,
    pub upstream: Version,
    pub op: Method,
    /// A v1.0 `historyLength: 0` ("no history") went to a v0.3 agent, which
    /// reads 0 as "unlimited": the answer's task history is removed here.
    pub drop_history: bool,
    /// A v1.0 GetTaskPushNotificationConfig toward a v0.3 agent: the answer
    /// is checked against the asked id (see [`crate::translation::AskedConfig`]).
    pub asked_config: Option<crate::translation::AskedConfig>,
}

fn tr(e: TranslateError) -> Failure {
    Failure::Translate {
        code: i64::from(e.jsonrpc_code()),
        message: e.to_string(),
    }
}

fn invalid_params(message: impl Into<String>) -> Failure {
    Failure::Translate {
        code: -32602,
        message: message.into(),
    }
}

fn typed<T: DeserializeOwned>(what: &'static str, v: Value) -> Result<T, TranslateError> {
    serde_json::from_value(v).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

fn untyped<T: Serialize>(what: &'static str, t: T) -> Result<Value, TranslateError> {
    serde_json::to_value(t).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

/// Parses v0.3 ProtoJSON as the prost message `T`.
fn pb_from<T: DeserializeOwned>(what: &'static str, body: &[u8]) -> Result<T, TranslateError> {
    serde_json::from_slice(body).map_err(|e| TranslateError::invalid(what, e.to_string()))
}

/// Renders a prost message as v0.3 ProtoJSON (timestamps with `Z`).
fn pb_to<T: Serialize>(what: &'static str, t: &T) -> Result<Value, TranslateError> {
    let mut v = untyped(what, t)?;
    zulu(&mut v);
    Ok(v)
}

/// pbjson renders UTC timestamps `+00:00`; the A2A wire uses `Z`.
fn zulu(v: &mut Value) {
    match v {
        Value::String(s)
            if s.len() >= 20
                && s.ends_with("+00:00")
                && chrono::DateTime::parse_from_rfc3339(s).is_ok() =>
        {
            s.truncate(s.len() - 6);
            s.push('Z');
        }
        Value::Array(a) => a.iter_mut().for_each(zulu),
        Value::Object(o) => o.values_mut().for_each(zulu),
        _ => {}
    }
}

/// One query parameter's (raw) value.
fn query_value<'a>(query: Option<&'a str>, key: &str) -> Option<&'a str> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then_some(v)
    })
}

fn history_length(query: Option<&str>) -> Result<Option<i64>, Failure> {
    let raw = query_value(query, "historyLength").or_else(|| query_value(query, "history_length"));
    match raw {
        None | Some("") => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| invalid_params(format!("historyLength {s:?} is not an integer"))),
    }
}

/// A body that must be a JSON object (an empty body reads as `{}`).
fn json_object(body: &[u8]) -> Result<Map<String, Value>, Failure> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(Failure::Translate {
            code: -32600,
            message: "the request body must be a JSON object".into(),
        }),
        Err(e) => Err(Failure::Translate {
            code: -32700,
            message: format!("invalid JSON: {e}"),
        }),
    }
}

fn need<'a>(v: &'a Option<String>, what: &str) -> Result<&'a str, Failure> {
    v.as_deref()
        .ok_or_else(|| invalid_params(format!("{what} is missing from the path")))
}

/// Percent-encodes a path segment (ids are opaque).
pub fn path_segment(s: &str) -> String {
    seg(s)
}

fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A ProtoJSON member under its JSON name or its proto field name (parsers
/// accept both, MAPPING-FACTS §4.16); an explicit `null` is absent.
fn member<'a>(o: &'a Map<String, Value>, json: &str, proto: &str) -> Option<&'a Value> {
    o.get(json)
        .filter(|v| !v.is_null())
        .or_else(|| o.get(proto).filter(|v| !v.is_null()))
}

fn str_of<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::route::PathParams;
    use serde_json::json;

    fn p(task: Option<&str>, cfg: Option<&str>) -> PathParams {
        PathParams {
            tenant: None,
            task_id: task.map(str::to_string),
            config_id: cfg.map(str::to_string),
        }
    }

    fn body(u: &UpstreamRequest) -> Value {
        serde_json::from_slice(u.body.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn v03_send_becomes_v10_send() {
        let b = br#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}"#;
        let (_, up) = request(
            Version::V03,
            Version::V10,
            Method::SendMessage,
            &p(None, None),
            None,
            b,
        )
        .unwrap();
        assert_eq!(up.method, http::Method::POST);
        assert_eq!(up.path_and_query, "/message:send");
        let v = body(&up);
        assert_eq!(v["message"]["messageId"], "m1");
        assert_eq!(v["message"]["role"], "ROLE_USER");
        assert_eq!(v["message"]["parts"][0]["text"], "hi");
    }

    #[test]
    fn v10_send_becomes_v03_send() {
        let b = br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
        let (_, up) = request(
            Version::V10,
            Version::V03,
            Method::SendMessage,
            &p(None, None),
            None,
            b,
        )
        .unwrap();
        assert_eq!(up.path_and_query, "/v1/message:send");
        let v = body(&up);
        assert_eq!(v["message"]["messageId"], "m1");
        assert_eq!(v["message"]["content"][0]["text"], "hi");
    }

    #[test]
    fn paths_and_queries() {
        let cases = [
            (
                Method::GetTask,
                p(Some("t 1"), None),
                Some("historyLength=3"),
                "GET",
                "/v1/tasks/t%201?historyLength=3",
                "/tasks/t%201?historyLength=3",
            ),
            (
                Method::CancelTask,
                p(Some("t1"), None),
                None,
                "POST",
                "/v1/tasks/t1:cancel",
                "/tasks/t1:cancel",
            ),
            (
                Method::SubscribeToTask,
                p(Some("t1"), None),
                None,
                "GET",
                "/v1/tasks/t1:subscribe",
                "/tasks/t1:subscribe",
            ),
            (
                Method::GetPushConfig,
                p(Some("t1"), Some("c1")),
                None,
                "GET",
                "/v1/tasks/t1/pushNotificationConfigs/c1",
                "/tasks/t1/pushNotificationConfigs/c1",
            ),
            (
                Method::DeletePushConfig,
                p(Some("t1"), Some("c1")),
                None,
                "DELETE",
                "/v1/tasks/t1/pushNotificationConfigs/c1",
                "/tasks/t1/pushNotificationConfigs/c1",
            ),
            (
                Method::ListPushConfigs,
                p(Some("t1"), None),
                None,
                "GET",
                "/v1/tasks/t1/pushNotificationConfigs",
                "/tasks/t1/pushNotificationConfigs",
            ),
            (
                Method::GetExtendedCard,
                p(None, None),
                None,
                "GET",
                "/v1/card",
                "/extendedAgentCard",
            ),
        ];
        for (op, pp, q, verb, v03_path, v10_path) in cases {
            let (_, up) = request(Version::V10, Version::V03, op, &pp, q, b"").unwrap();
            assert_eq!(
                (up.method.as_str(), up.path_and_query.as_str()),
                (verb, v03_path),
                "{op:?}"
            );
            let (_, up) = request(Version::V03, Version::V10, op, &pp, q, b"").unwrap();
            assert_eq!(
                (up.method.as_str(), up.path_and_query.as_str()),
                (verb, v10_path),
                "{op:?}"
            );
        }
    }

    #[test]
    fn cancel_toward_v03_names_the_task() {
        let (_, up) = request(
            Version::V10,
            Version::V03,
            Method::CancelTask,
            &p(Some("t1"), None),
            None,
            b"",
        )
        .unwrap();
        assert_eq!(body(&up), json!({"name": "tasks/t1"}));
    }

    #[test]
    fn push_create_both_ways() {
        let b = br#"{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h/cb"}}"#;
        let (_, up) = request(
            Version::V03,
            Version::V10,
            Method::CreatePushConfig,
            &p(Some("t1"), None),
            None,
            b,
        )
        .unwrap();
        assert_eq!(up.path_and_query, "/tasks/t1/pushNotificationConfigs");
        let v = body(&up);
        assert_eq!(v["taskId"], "t1");
        assert_eq!(v["id"], "c1");
        assert_eq!(v["url"], "https://h/cb");

        let b = br#"{"id":"c1","url":"https://h/cb"}"#;
        let (_, up) = request(
            Version::V10,
            Version::V03,
            Method::CreatePushConfig,
            &p(Some("t1"), None),
            None,
            b,
        )
        .unwrap();
        assert_eq!(up.path_and_query, "/v1/tasks/t1/pushNotificationConfigs");
        // The request message first, the bare config as the other form.
        let v = body(&up);
        assert_eq!(v["parent"], "tasks/t1");
        assert_eq!(v["configId"], "c1");
        assert_eq!(v["config"]["name"], "tasks/t1/pushNotificationConfigs/c1");
        assert_eq!(v["config"]["pushNotificationConfig"]["url"], "https://h/cb");
        let mut up = up;
        assert!(up.switch_form());
        assert_eq!(body(&up), v["config"]);
        assert!(up.switch_form(), "back to the first form");
        assert_eq!(body(&up), v);
    }

    #[test]
    fn task_responses_both_ways() {
        let t = RestTranslation {
            client: Version::V03,
            upstream: Version::V10,
            op: Method::GetTask,
            drop_history: false,
            asked_config: None,
        };
        let out = t.response(200, br#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-01T00:00:00Z"}}"#).1;
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], "t1");
        assert_eq!(v["contextId"], "c1");
        assert_eq!(v["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(v["status"]["timestamp"], "2025-01-01T00:00:00Z");

        let t = RestTranslation {
            client: Version::V10,
            upstream: Version::V03,
            op: Method::GetTask,
            drop_history: false,
            asked_config: None,
        };
        let out = t
            .response(
                200,
                br#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}"#,
            )
            .1;
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], "t1");
        assert_eq!(v["status"]["state"], "TASK_STATE_WORKING");
    }

    #[test]
    fn events_both_ways() {
        let t = RestTranslation {
            client: Version::V10,
            upstream: Version::V03,
            op: Method::SendStreamingMessage,
            drop_history: false,
            asked_config: None,
        };
        let out = t.event(r#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"final":false}}"#);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["statusUpdate"]["taskId"], "t1");
        assert_eq!(v["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");

        let t = RestTranslation {
            client: Version::V03,
            upstream: Version::V10,
            op: Method::SubscribeToTask,
            drop_history: false,
            asked_config: None,
        };
        let out = t.event(r#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}"#);
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["statusUpdate"]["taskId"], "t1");
    }

    #[test]
    fn errors_both_ways() {
        let t = RestTranslation {
            client: Version::V03,
            upstream: Version::V10,
            op: Method::GetTask,
            drop_history: false,
            asked_config: None,
        };
        let out = t.response(404, br#"{"error":{"code":404,"status":"NOT_FOUND","message":"no such task","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#).1;
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v, json!({"code": -32001, "message": "no such task"}));

        let t = RestTranslation {
            client: Version::V10,
            upstream: Version::V03,
            op: Method::GetTask,
            drop_history: false,
            asked_config: None,
        };
        let out = t
            .response(404, br#"{"code":-32001,"message":"no such task"}"#)
            .1;
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["error"]["code"], 404);
        assert_eq!(v["error"]["status"], "NOT_FOUND");
        assert_eq!(v["error"]["message"], "no such task");
        assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    }

    #[test]
    fn v10_history_length_zero_drops_a_v03_agents_history() {
        let answer = br#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"history":[{"messageId":"m","role":"ROLE_USER","content":[{"text":"hi"}]}]}"#;
        let (t, up) = request(
            Version::V10,
            Version::V03,
            Method::GetTask,
            &p(Some("t1"), None),
            Some("historyLength=0"),
            b"",
        )
        .unwrap();
        assert!(t.drop_history);
        assert_eq!(up.path_and_query, "/v1/tasks/t1");
        let v: Value = serde_json::from_slice(&t.response(200, answer).1).unwrap();
        assert_eq!(v["id"], "t1");
        assert!(v.get("history").is_none(), "{v}");

        let (t, _) = request(
            Version::V10,
            Version::V03,
            Method::GetTask,
            &p(Some("t1"), None),
            Some("historyLength=1"),
            b"",
        )
        .unwrap();
        assert!(!t.drop_history);
        let v: Value = serde_json::from_slice(&t.response(200, answer).1).unwrap();
        assert_eq!(v["history"][0]["parts"][0]["text"], "hi", "{v}");

        let b = br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"historyLength":0}}"#;
        let (t, _) = request(
            Version::V10,
            Version::V03,
            Method::SendMessage,
            &p(None, None),
            None,
            b,
        )
        .unwrap();
        let send = format!(r#"{{"task":{}}}"#, std::str::from_utf8(answer).unwrap());
        let v: Value = serde_json::from_slice(&t.response(200, send.as_bytes()).1).unwrap();
        assert_eq!(v["task"]["id"], "t1");
        assert!(v["task"].get("history").is_none(), "{v}");
    }

    #[test]
    fn bare_v03_error_reads_by_status() {
        let t = RestTranslation {
            client: Version::V10,
            upstream: Version::V03,
            op: Method::CancelTask,
            drop_history: false,
            asked_config: None,
        };
        let v: Value =
            serde_json::from_slice(&t.response(409, br#"{"message":"not cancelable"}"#).1).unwrap();
        assert_eq!(v["error"]["message"], "not cancelable");
        assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE");
        assert_eq!(t.client_status(409), 400);
        assert_eq!(t.client_status(404), 404);
        assert_eq!(t.client_status(501), 400);
        assert_eq!(t.client_status(503), 503);
    }

    #[test]
    fn bad_input() {
        let f = request(
            Version::V03,
            Version::V10,
            Method::SendMessage,
            &p(None, None),
            None,
            b"{not json",
        )
        .unwrap_err();
        assert!(
            matches!(f, Failure::Translate { code: -32700, .. }),
            "{f:?}"
        );
        let f = request(
            Version::V10,
            Version::V03,
            Method::ListTasks,
            &p(None, None),
            None,
            b"",
        )
        .unwrap_err();
        assert!(
            matches!(f, Failure::Translate { code: -32004, .. }),
            "{f:?}"
        );
        let f = request(
            Version::V10,
            Version::V03,
            Method::GetTask,
            &p(Some("t"), None),
            Some("historyLength=x"),
            b"",
        )
        .unwrap_err();
        assert!(
            matches!(f, Failure::Translate { code: -32602, .. }),
            "{f:?}"
        );
        let t = RestTranslation {
            client: Version::V10,
            upstream: Version::V03,
            op: Method::GetTask,
            drop_history: false,
            asked_config: None,
        };
        let v: Value = serde_json::from_slice(&t.response(200, b"nope").1).unwrap();
        assert_eq!(v["error"]["details"][0]["reason"], "INVALID_AGENT_RESPONSE");
    }

    /// The v0.3 REST fixtures (`fixtures/rest-v03/`, see its README): every
    /// v0.3 REST body the proxy reads, under JSON and proto field names and
    /// with all-default messages, against the v1.0 body it becomes.
    #[test]
    fn v03_rest_fixtures() {
        const OPS: [Method; 11] = [
            Method::SendMessage,
            Method::SendStreamingMessage,
            Method::GetTask,
            Method::ListTasks,
            Method::CancelTask,
            Method::SubscribeToTask,
            Method::CreatePushConfig,
            Method::GetPushConfig,
            Method::ListPushConfigs,
            Method::DeletePushConfig,
            Method::GetExtendedCard,
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rest-v03");
        let mut checked = 0;
        let mut problems = Vec::new();
        for side in ["request", "response"] {
            let mut names: Vec<_> = std::fs::read_dir(root.join(side))
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".v03.json"))
                .collect();
            names.sort();
            for name in names {
                let case = name.trim_end_matches(".v03.json");
                let op_name = case.split('.').next().unwrap_or_default();
                let op = OPS
                    .into_iter()
                    .find(|o| o.as_str() == op_name)
                    .unwrap_or_else(|| panic!("{side}/{name}: no operation {op_name}"));
                let input = std::fs::read(root.join(side).join(&name)).unwrap();
                let want: Value = serde_json::from_slice(
                    &std::fs::read(root.join(side).join(format!("{case}.v10.json")))
                        .unwrap_or_else(|e| panic!("{side}/{case}.v10.json: {e}")),
                )
                .unwrap();
                let got: Value = if side == "request" {
                    match request(
                        Version::V03,
                        Version::V10,
                        op,
                        &p(Some("t1"), Some("c1")),
                        None,
                        &input,
                    ) {
                        Ok((_, up)) => up
                            .body
                            .as_deref()
                            .map_or(Value::Null, |b| serde_json::from_slice(b).unwrap()),
                        Err(f) => json!({ "failure": format!("{f:?}") }),
                    }
                } else {
                    let t = RestTranslation {
                        client: Version::V10,
                        upstream: Version::V03,
                        op,
                        drop_history: false,
                        asked_config: None,
                    };
                    let text = String::from_utf8(input).unwrap();
                    if op.is_streaming() {
                        serde_json::from_str(&t.event(&text)).unwrap()
                    } else {
                        let (status, out) = t.response(200, text.as_bytes());
                        let v: Value = serde_json::from_slice(&out).unwrap();
                        if status.is_some() {
                            json!({ "status": status, "answer": v })
                        } else {
                            v
                        }
                    }
                };
                if got != want {
                    problems.push(format!("{side}/{case}:\n  want {want}\n  got  {got}"));
                }
                checked += 1;
            }
        }
        // What the proxy writes: a v1.0 agent's answer to a v0.3 REST client.
        let mut names: Vec<_> = std::fs::read_dir(root.join("response"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".from-v10.json"))
            .collect();
        names.sort();
        for name in names {
            let case = name.trim_end_matches(".from-v10.json");
            let op_name = case.split('.').next().unwrap_or_default();
            let op = OPS
                .into_iter()
                .find(|o| o.as_str() == op_name)
                .unwrap_or_else(|| panic!("response/{name}: no operation {op_name}"));
            let input = std::fs::read(root.join("response").join(&name)).unwrap();
            let want: Value = serde_json::from_slice(
                &std::fs::read(root.join("response").join(format!("{case}.to-v03.json")))
                    .unwrap_or_else(|e| panic!("response/{case}.to-v03.json: {e}")),
            )
            .unwrap();
            let t = RestTranslation {
                client: Version::V03,
                upstream: Version::V10,
                op,
                drop_history: false,
                asked_config: None,
            };
            let (status, out) = t.response(200, &input);
            let got: Value = serde_json::from_slice(&out).unwrap();
            let got = match status {
                Some(s) => json!({ "status": s, "answer": got }),
                None => got,
            };
            if got != want {
                problems.push(format!("response/{case}:\n  want {want}\n  got  {got}"));
            }
            checked += 1;
        }
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        assert!(checked >= 20, "only {checked} v0.3 REST fixtures");
    }
}
