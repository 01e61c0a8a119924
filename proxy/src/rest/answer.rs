//! A REST answer, error or stream event of the upstream's version as the
//! client's.

use serde_json::{json, Value};
use translate::code::ErrorCode;
use translate::jsonrpc;
use translate::method::Method;
use translate::v03 as m;
use translate::TranslateError;

use proto::convert_v03 as c03;
use proto::convert_v03_rpc as r03;
use proto::v03 as pb;

use crate::error::{rescue, ErrorTarget, Failure};
use crate::route::Binding;
use crate::version::Version;

use super::*;

impl RestTranslation {
    fn target(&self) -> ErrorTarget {
        ErrorTarget {
            version: Some(self.client),
            binding: Some(Binding::Rest),
            operation: Some(self.op),
            jsonrpc_id: None,
        }
    }

    /// An error body in the client's REST shape.
    pub fn error_body(&self, f: &Failure) -> Vec<u8> {
        rescue(f, &self.target()).body.to_vec()
    }

    /// A success answer `out` (client's version, push values restored)
    /// settled against [`Self::asked_config`]: unchanged, replaced by the
    /// config the proxy knows, or a TaskNotFound error body with the status
    /// it must go out with (see [`crate::translation::AskedConfig::settle`]).
    pub fn settle_config(
        &self,
        out: Vec<u8>,
        known: impl FnOnce(&str, &str) -> Option<Value>,
    ) -> (Option<u16>, Vec<u8>) {
        let Some(asked) = &self.asked_config else {
            return (None, out);
        };
        let Ok(v) = serde_json::from_slice::<Value>(&out) else {
            return (None, out);
        };
        match asked.settle(&v, known) {
            Ok(None) => (None, out),
            Ok(Some(r)) => (None, serde_json::to_vec(&r).unwrap_or(out)),
            Err(f) => {
                let r = rescue(&f, &self.target());
                (Some(r.status), r.body.to_vec())
            }
        }
    }

    /// A whole response body (status `status`) in the client's version, and
    /// the status it must go out with when not the agent's: an
    /// untranslatable success answer becomes an InvalidAgentResponse error
    /// with its own status (502), never a success status over an error body.
    pub fn response(&self, status: u16, body: &[u8]) -> (Option<u16>, Vec<u8>) {
        if self.client == self.upstream {
            // Same version: the agent's answer (or error) as it is.
            return (None, body.to_vec());
        }
        if !(200..300).contains(&status) {
            let out = self.error_response(status, body);
            // A v0.3 body that names a different error than the status alone
            // (a2a-python 0.3's SendMessage 404 `{message}`): its status.
            let named = (self.client == Version::V10 && self.upstream == Version::V03)
                .then(|| {
                    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                    self.v03_error_code(status, &v).http_status()
                })
                .filter(|s| *s != self.client_status(status));
            return (named, out);
        }
        let out = match self.upstream {
            Version::V10 => self.result_from_v10(body),
            Version::V03 => self.result_from_v03(body),
        };
        match out {
            Ok(Some(v)) => (None, serde_json::to_vec(&v).unwrap_or_default()),
            Ok(None) => (None, Vec::new()),
            Err(e) => {
                let f = Failure::BadUpstreamResponse {
                    detail: e.to_string(),
                };
                tracing::warn!(failure = f.label(), error = ?f, "untranslatable agent answer");
                let r = rescue(&f, &self.target());
                (Some(r.status), r.body.to_vec())
            }
        }
    }

    /// v1.0 result JSON -> v0.3 ProtoJSON.
    fn result_from_v10(&self, body: &[u8]) -> Result<Option<Value>, TranslateError> {
        let method = self.op;
        if self.op == Method::DeletePushConfig {
            return Ok(Some(json!({})));
        }
        let r: Value = serde_json::from_slice(body)
            .map_err(|e| TranslateError::invalid("response body", e.to_string()))?;
        let r03 = jsonrpc::result_to_v03(method, r)?;
        v03_pb_json(self.op, r03).map(Some)
    }

    /// v0.3 ProtoJSON -> v1.0 result JSON.
    fn result_from_v03(&self, body: &[u8]) -> Result<Option<Value>, TranslateError> {
        let method = self.op;
        if self.op == Method::DeletePushConfig {
            return Ok(Some(json!({})));
        }
        let model = v03_model_json(self.op, body)?;
        let mut out = jsonrpc::result_to_v10(method, model)?;
        if self.drop_history {
            let task = match out.get_mut("task") {
                Some(t) => t,
                None if self.op == Method::GetTask => &mut out,
                None => return Ok(Some(out)),
            };
            if let Some(t) = task.as_object_mut() {
                t.remove("history");
            }
        }
        Ok(Some(out))
    }

    /// One SSE `data` value in the client's version.
    pub fn event(&self, data: &str) -> String {
        if self.client == self.upstream {
            return data.to_string();
        }
        if self.is_error_event(data) {
            // An agent's mid-stream error (a2a-python 1.x sends
            // `event: error` with its REST error body): in the client's shape.
            return String::from_utf8_lossy(&self.error_response(500, data.as_bytes()))
                .into_owned();
        }
        let out = match self.upstream {
            Version::V10 => self.result_from_v10(data.as_bytes()),
            Version::V03 => self.result_from_v03(data.as_bytes()),
        };
        match out {
            Ok(Some(v)) => v.to_string(),
            Ok(None) => String::new(),
            Err(e) => String::from_utf8_lossy(&self.error_body(&Failure::BadUpstreamResponse {
                detail: e.to_string(),
            }))
            .into_owned(),
        }
    }

    /// Whether an SSE `data` value is the upstream's REST error body rather
    /// than a stream event: v1.0 `{"error": {...}}`, v0.3 `{"code", "message"}`.
    fn is_error_event(&self, data: &str) -> bool {
        // Most events are not: only those naming the member are parsed here
        // (every event is parsed again to be translated).
        let member = match self.upstream {
            Version::V10 => "\"error\"",
            Version::V03 => "\"code\"",
        };
        if !data.contains(member) {
            return false;
        }
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(data) else {
            return false;
        };
        match self.upstream {
            Version::V10 => o.len() == 1 && o.get("error").is_some_and(Value::is_object),
            Version::V03 => {
                o.get("code").is_some_and(Value::is_i64)
                    && o.get("message").is_some_and(Value::is_string)
            }
        }
    }

    /// An upstream REST error body in the client's REST shape.
    fn error_response(&self, status: u16, body: &[u8]) -> Vec<u8> {
        let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let (code, message) = match self.upstream {
            Version::V10 => {
                let e = &v["error"];
                let reason = e["details"]
                    .as_array()
                    .and_then(|d| d.iter().find_map(|x| x.get("reason")?.as_str()));
                let code = reason
                    .and_then(ErrorCode::from_reason)
                    .unwrap_or_else(|| code_of_status(self.op, status));
                (code, e["message"].as_str().map(str::to_string))
            }
            Version::V03 => {
                let code = self.v03_error_code(status, &v);
                let msg = v["message"]
                    .as_str()
                    .or_else(|| v["error"].as_str())
                    .or_else(|| v["detail"].as_str())
                    .map(str::to_string);
                (code, msg)
            }
        };
        let f = Failure::Translate {
            code: code.code(),
            message: message.unwrap_or_else(|| code.default_message().to_string()),
        };
        // The agent's error, not the proxy's: no `proxyReason`.
        let out = self.error_body(&f);
        let Ok(mut v) = serde_json::from_slice::<Value>(&out) else {
            return out;
        };
        if let Some(info) = v
            .pointer_mut("/error/details/0")
            .and_then(Value::as_object_mut)
        {
            info.remove("metadata");
        }
        serde_json::to_vec(&v).unwrap_or(out)
    }

    /// The A2A error a v0.3 agent's REST error answer (status and body)
    /// stands for: the body's `code` when it has one; a SendMessage 404 with
    /// a `{"message": ...}` body is a2a-python 0.3's error handler answering
    /// TaskNotFound for an unknown `taskId` (a route the agent lacks answers
    /// without one, e.g. `{"detail": "Not Found"}`); else by status.
    fn v03_error_code(&self, status: u16, v: &Value) -> ErrorCode {
        if let Some(code) = v["code"].as_i64().and_then(ErrorCode::from_code) {
            return code;
        }
        let sends = matches!(self.op, Method::SendMessage | Method::SendStreamingMessage);
        if status == 404 && sends && v["message"].is_string() && v.get("detail").is_none() {
            return ErrorCode::TaskNotFound;
        }
        code_of_status(self.op, status)
    }

    /// For a v0.3 client of a v1.0 agent, the v0.3 HTTP status of a
    /// translated error body (`{code, message}`): a v1.0 400 stands for
    /// several v0.3 statuses (409, 415, 422, 501), the code tells which.
    pub fn status_of_error_body(&self, upstream_status: u16, body: &[u8]) -> Option<u16> {
        if (self.client, self.upstream) != (Version::V03, Version::V10)
            || !(400..500).contains(&upstream_status)
        {
            return None;
        }
        let v: Value = serde_json::from_slice(body).ok()?;
        let code = ErrorCode::from_code(v.get("code")?.as_i64()?)?;
        Some(code.v03_rest_status())
    }

    /// The client's HTTP status for an upstream error status: a v0.3 status
    /// names its error well enough to give the v1.0 status (409, 415, 422,
    /// 501 → 400); a v1.0 400 covers many errors, so toward v0.3 (and for 5xx)
    /// the status stays.
    pub fn client_status(&self, status: u16) -> u16 {
        match (self.upstream, status) {
            _ if self.client == self.upstream => status,
            (Version::V03, 400..=499 | 501) => code_of_status(self.op, status).http_status(),
            _ => status,
        }
    }
}

/// The A2A code an HTTP error status of an `op` call stands for, when the
/// body says nothing. A 404 is a missing task only where the path names
/// one; elsewhere the agent has no such route.
pub(super) fn code_of_status(op: Method, status: u16) -> ErrorCode {
    let names_task = !matches!(
        op,
        Method::SendMessage
            | Method::SendStreamingMessage
            | Method::ListTasks
            | Method::GetExtendedCard
    );
    match status {
        400 => ErrorCode::InvalidParams,
        404 if names_task => ErrorCode::TaskNotFound,
        404 => ErrorCode::UnsupportedOperation,
        405 | 501 => ErrorCode::UnsupportedOperation,
        409 => ErrorCode::TaskNotCancelable,
        415 => ErrorCode::ContentTypeNotSupported,
        422 => ErrorCode::InvalidParams,
        _ => ErrorCode::Internal,
    }
}

/// v0.3 model JSON (a JSON-RPC result) -> v0.3 ProtoJSON (the body v0.3's
/// REST binding answers `op` with).
pub fn v03_pb_json(op: Method, r: Value) -> Result<Value, TranslateError> {
    match op {
        Method::SendMessage => {
            let e: m::event::StreamEvent = typed("Task or Message", r)?;
            pb_to("SendMessageResponse", &r03::send_response_to_pb(e)?)
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            let e: m::event::StreamEvent = typed("stream event", r)?;
            pb_to("StreamResponse", &c03::stream_to_pb(e)?)
        }
        Method::GetTask | Method::CancelTask => {
            let t: m::task::Task = typed("Task", r)?;
            pb_to("Task", &c03::task_to_pb(t)?)
        }
        Method::CreatePushConfig | Method::GetPushConfig => {
            let c: m::push_config::TaskPushNotificationConfig =
                typed("TaskPushNotificationConfig", r)?;
            pb_to(
                "TaskPushNotificationConfig",
                &r03::task_push_config_to_pb(c)?,
            )
        }
        Method::ListPushConfigs => {
            let c = v03_push_config_list(r)?;
            pb_to(
                "ListTaskPushNotificationConfigResponse",
                &r03::list_push_configs_response_to_pb(c)?,
            )
        }
        Method::GetExtendedCard => v03_rest_card(r),
        Method::DeletePushConfig => Ok(json!({})),
        Method::ListTasks => Err(TranslateError::unsupported("ListTasks", Version::V03)),
    }
}

/// The card a v0.3 REST client gets on `/v1/card` from a v1.0 agent: the
/// JSON-schema card (the v0.3 model, as a2a-python 0.3's REST server
/// answers and its client reads with `AgentCard.model_validate`), each
/// security scheme also carrying its ProtoJSON member
/// (`httpAuthSecurityScheme`, ...), which a2a-js 0.3's REST client
/// (`AgentCard.fromJSON`, then `FromProto.securityScheme`, which throws
/// without it) and a2a-sdk 1.x's v0.3 REST client (`ParseDict`, unknown
/// members ignored) read; each reader ignores the other form's members.
/// `security` stays in the JSON-schema form: its ProtoJSON form
/// (`{schemes: ...}`) fails a2a-python 0.3's client, and no one value is
/// both (proxy/README.md, "The v0.3 REST card").
pub fn v03_rest_card(r: Value) -> Result<Value, TranslateError> {
    let _: m::agent_card::AgentCard = typed("AgentCard", r.clone())?;
    let mut out = r;
    crate::card::v03_scheme_forms(&mut out);
    Ok(out)
}

/// A task status whose message is all-default (`"update": {}`) has none:
/// an all-default message is an absent one in ProtoJSON (MAPPING-FACTS
/// §4.16); read as a message it lacks the required id and role.
pub(super) fn no_empty_update(status: &mut Option<pb::TaskStatus>) {
    if let Some(s) = status {
        if s.update
            .as_ref()
            .is_some_and(|m| *m == pb::Message::default())
        {
            s.update = None;
        }
    }
}

/// A v0.3 push-config list in every shape v0.3 agents answer it: a bare
/// array (the v0.3 spec, §7.7) or the proto's
/// `ListTaskPushNotificationConfigResponse` (`{configs, nextPageToken}`,
/// a2a-js and a2a-sdk 1.x's v0.3 REST), each item ProtoJSON (`{name,
/// pushNotificationConfig}`) or the JSON-schema config (`{taskId,
/// pushNotificationConfig}`: the JSON-RPC result's items, which a REST
/// agent following §7.7 answers too; an item with a `name` is ProtoJSON).
/// Members of neither are skipped (a JSON-schema item's extras kept, as
/// on JSON-RPC), never refused: it is the agent's answer.
pub(crate) fn v03_push_config_list(
    v: Value,
) -> Result<Vec<m::push_config::TaskPushNotificationConfig>, TranslateError> {
    const W: &str = "TaskPushNotificationConfig list";
    let items = match v {
        Value::Array(a) => a,
        Value::Object(mut o) => match o.remove("configs").filter(|c| !c.is_null()) {
            Some(Value::Array(a)) => a,
            // An all-default response: no configs.
            None => Vec::new(),
            Some(_) => return Err(TranslateError::invalid(W, "configs is not a list")),
        },
        Value::Null => Vec::new(),
        _ => return Err(TranslateError::invalid(W, "neither a list nor an object")),
    };
    items
        .into_iter()
        .map(|item| {
            // ProtoJSON names its config by `name`; the JSON-schema one
            // has `taskId` instead.
            let has = |k: &str| item.get(k).is_some_and(|t| !t.is_null());
            let json_schema = has("taskId") && !has("name");
            if json_schema {
                typed("TaskPushNotificationConfig", item)
            } else {
                let c: pb::TaskPushNotificationConfig =
                    pb_answer_value("TaskPushNotificationConfig", item)?;
                r03::task_push_config_from_pb(c)
            }
        })
        .collect()
}

/// v0.3 ProtoJSON -> v0.3 model JSON (a JSON-RPC result).
pub(super) fn v03_model_json(op: Method, body: &[u8]) -> Result<Value, TranslateError> {
    const W: &str = "result";
    match op {
        Method::SendMessage => {
            let mut r: pb::SendMessageResponse = pb_answer("SendMessageResponse", body)?;
            if let Some(pb::send_message_response::Payload::Task(t)) = &mut r.payload {
                no_empty_update(&mut t.status);
            }
            untyped(W, r03::send_response_from_pb(r)?)
        }
        Method::SendStreamingMessage | Method::SubscribeToTask => {
            let mut r: pb::StreamResponse = pb_answer("StreamResponse", body)?;
            match &mut r.payload {
                Some(pb::stream_response::Payload::Task(t)) => no_empty_update(&mut t.status),
                Some(pb::stream_response::Payload::StatusUpdate(e)) => {
                    no_empty_update(&mut e.status)
                }
                _ => {}
            }
            untyped(W, c03::stream_from_pb(r)?)
        }
        Method::GetTask | Method::CancelTask => {
            let mut r: pb::Task = pb_answer("Task", body)?;
            no_empty_update(&mut r.status);
            untyped(W, c03::task_from_pb(r)?)
        }
        Method::CreatePushConfig | Method::GetPushConfig => {
            let r: pb::TaskPushNotificationConfig = pb_answer("TaskPushNotificationConfig", body)?;
            untyped(W, r03::task_push_config_from_pb(r)?)
        }
        Method::ListPushConfigs => {
            let v: Value = serde_json::from_slice(body).map_err(|e| {
                TranslateError::invalid("TaskPushNotificationConfig list", e.to_string())
            })?;
            untyped(W, v03_push_config_list(v)?)
        }
        Method::GetExtendedCard => {
            // ProtoJSON of the v0.3 proto (a2a-js), or the JSON-schema card
            // a2a-python 0.3 answers with (MAPPING-FACTS row 118), or
            // ProtoJSON with members of the agent's own (skipped), in that
            // order: a JSON-schema card read leniently as ProtoJSON would
            // lose its security schemes.
            match pb_from::<pb::AgentCard>("AgentCard", body).and_then(c03::agent_card_from_pb) {
                Ok(c) => untyped(W, c),
                Err(pb_err) => {
                    let v: Value = serde_json::from_slice(body)
                        .map_err(|e| TranslateError::invalid("AgentCard", e.to_string()))?;
                    match typed::<m::agent_card::AgentCard>("AgentCard", v.clone()) {
                        Ok(c) => untyped(W, c),
                        Err(_) => pb_answer_value::<pb::AgentCard>("AgentCard", v)
                            .and_then(c03::agent_card_from_pb)
                            .map_err(|_| pb_err)
                            .and_then(|c| untyped(W, c)),
                    }
                }
            }
        }
        Method::DeletePushConfig => Ok(Value::Null),
        Method::ListTasks => Err(TranslateError::unsupported("ListTasks", Version::V03)),
    }
}
