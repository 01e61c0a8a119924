//! A REST request of one version as the other version's REST request:
//! path, query and body read into params, and written in the upstream's
//! grammar.

use serde_json::{json, Map, Value};
use translate::jsonrpc;
use translate::method::Method;
use translate::v03 as m;
use translate::TranslateError;

use proto::convert_v03_rpc as r03;
use proto::v03 as pb;

use crate::error::Failure;
use crate::route::PathParams;
use crate::version::Version;

use super::*;

/// Translates a REST request of `client` into `upstream`'s REST request.
pub fn request(
    client: Version,
    upstream: Version,
    op: Method,
    params: &PathParams,
    query: Option<&str>,
    body: &[u8],
) -> Result<(RestTranslation, UpstreamRequest), Failure> {
    let (t, p) = upstream_params(client, upstream, op, params, query, body)?;
    let up = upstream_request(&t, p)?;
    Ok((t, up))
}

/// The first half of [`request`]: the call's JSON-RPC params (model JSON)
/// in the upstream's version, before they become its REST request. The
/// push layer rewrites configs in between.
pub fn upstream_params(
    client: Version,
    upstream: Version,
    op: Method,
    params: &PathParams,
    query: Option<&str>,
    body: &[u8],
) -> Result<(RestTranslation, Value), Failure> {
    let mut t = RestTranslation {
        client,
        upstream,
        op,
        drop_history: false,
        asked_config: None,
    };
    let method = op;
    let p = match (client, upstream) {
        (Version::V03, Version::V10) => {
            let mut p03 = v03_params(op, params, query, body)?;
            if op == Method::SendMessage {
                v03_rest_blocking(p03.as_mut());
            }
            jsonrpc::params_to_v10(method, p03).map_err(tr)?
        }
        (Version::V10, Version::V03) => {
            if op == Method::ListTasks {
                return Err(tr(TranslateError::unsupported("ListTasks", Version::V03)));
            }
            let p10 = v10_params(op, params, query, body)?;
            t.drop_history = asks_no_history(op, p10.as_ref());
            if op == Method::GetPushConfig {
                t.asked_config = params.task_id.clone().zip(params.config_id.clone()).map(
                    |(task_id, config_id)| crate::translation::AskedConfig { task_id, config_id },
                );
            }
            jsonrpc::params_to_v03(method, p10).map_err(tr)?
        }
        // Same version (push-config interception): read and rebuilt in it.
        (Version::V03, Version::V03) => v03_params(op, params, query, body)?,
        (Version::V10, Version::V10) => v10_params(op, params, query, body)?,
    };
    Ok((t, p.unwrap_or(Value::Null)))
}

/// The second half of [`request`]: upstream-version params as the
/// upstream's REST request.
pub fn upstream_request(t: &RestTranslation, p: Value) -> Result<UpstreamRequest, Failure> {
    match t.upstream {
        Version::V10 => v10_request(t.op, p),
        Version::V03 => v03_request(t.op, p),
    }
}

/// A v0.3 REST SendMessage states `blocking` even when its body does not:
/// the body is ProtoJSON of the v0.3 proto, where `blocking` is a plain
/// proto3 bool, so an absent one (with or without a `configuration`) is
/// `false`, "the task will be returned immediately" (a2a-python 0.3's REST
/// server reads it so; `configuration: {}` already reads as false). The
/// model's absent `blocking` means "blocking" (the JSON-RPC reading), so
/// the REST reading is written out here before the params cross to v1.0
/// (`returnImmediately: true`). Streaming sends are left alone: the flag
/// has no effect on them.
pub(super) fn v03_rest_blocking(p: Option<&mut Value>) {
    let Some(Value::Object(p)) = p else { return };
    let c = p
        .entry("configuration")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(c) = c {
        c.entry("blocking").or_insert(Value::Bool(false));
    }
}

/// The v0.3 JSON-RPC params (model JSON) of a v0.3 REST request.
pub(super) fn v03_params(
    op: Method,
    params: &PathParams,
    query: Option<&str>,
    body: &[u8],
) -> Result<Option<Value>, Failure> {
    Ok(Some(match op {
        Method::SendMessage | Method::SendStreamingMessage => {
            json_object(body)?;
            let r: pb::SendMessageRequest = pb_from("SendMessageRequest", body).map_err(tr)?;
            untyped("params", r03::send_params_from_pb(r).map_err(tr)?).map_err(tr)?
        }
        Method::GetTask => {
            let mut p = json!({ "id": need(&params.task_id, "task id")? });
            if let Some(n) = history_length(query)? {
                p["historyLength"] = json!(n);
            }
            p
        }
        Method::CancelTask | Method::SubscribeToTask => {
            json!({ "id": need(&params.task_id, "task id")? })
        }
        Method::ListTasks => {
            return Err(Failure::Translate {
                code: -32601,
                message: "v0.3 has no ListTasks operation".into(),
            })
        }
        Method::CreatePushConfig => {
            let task_id = need(&params.task_id, "task id")?;
            let mut o = v03_create_config(json_object(body)?, task_id)?;
            // The TaskPushNotificationConfig; its name may be absent.
            let has_name = o
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty());
            if !has_name {
                let cid = member(&o, "pushNotificationConfig", "push_notification_config")
                    .and_then(|c| c.get("id"))
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .unwrap_or(task_id)
                    .to_string();
                o.insert(
                    "name".into(),
                    json!(r03::push_config_name(task_id, &cid).map_err(tr)?),
                );
            }
            let raw = serde_json::to_vec(&o).unwrap_or_default();
            let c: pb::TaskPushNotificationConfig =
                pb_from("TaskPushNotificationConfig", &raw).map_err(tr)?;
            let mut model = r03::task_push_config_from_pb(c).map_err(tr)?;
            model.task_id = task_id.to_string();
            untyped("params", model).map_err(tr)?
        }
        Method::GetPushConfig | Method::DeletePushConfig => {
            json!({
                "id": need(&params.task_id, "task id")?,
                "pushNotificationConfigId": need(&params.config_id, "config id")?,
            })
        }
        Method::ListPushConfigs => {
            json!({ "id": need(&params.task_id, "task id")? })
        }
        Method::GetExtendedCard => return Ok(None),
    }))
}

/// The TaskPushNotificationConfig of a v0.3 REST push-config create,
/// whichever of its three body forms (MAPPING-FACTS row 114) the client
/// sent: the bare config, `{config}`, or the request message `{parent?,
/// configId?, config}`. `parent` must name the path's task; `configId`
/// fills a config without an id.
pub(super) fn v03_create_config(
    mut o: Map<String, Value>,
    task_id: &str,
) -> Result<Map<String, Value>, Failure> {
    if !o.contains_key("config") {
        return Ok(o);
    }
    if let Some(k) = o
        .keys()
        .find(|k| !matches!(k.as_str(), "config" | "parent" | "configId" | "config_id"))
    {
        return Err(invalid_params(format!(
            "`{k}` next to `config` in a push-config create"
        )));
    }
    let parent = o.get("parent").filter(|v| !v.is_null());
    if let Some(parent) = parent {
        if parent.as_str() != Some(format!("tasks/{task_id}").as_str()) {
            return Err(invalid_params(format!(
                "`parent` {parent} does not name the path's task tasks/{task_id}"
            )));
        }
    }
    let config_id = match member(&o, "configId", "config_id") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()).filter(|s| !s.is_empty()),
        Some(other) => {
            return Err(invalid_params(format!(
                "`configId` {other} is not a string"
            )))
        }
    };
    let Some(Value::Object(mut c)) = o.remove("config") else {
        return Err(invalid_params("`config` is not an object"));
    };
    let inner = if c.contains_key("pushNotificationConfig") {
        "pushNotificationConfig"
    } else {
        "push_notification_config"
    };
    if let (Some(id), Some(Value::Object(pc))) = (config_id, c.get_mut(inner)) {
        let unset = pc
            .get("id")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if unset {
            pc.insert("id".into(), json!(id));
        }
    }
    Ok(c)
}

/// True when v1.0 GetTask / SendMessage params ask for `historyLength: 0`.
pub(super) fn asks_no_history(op: Method, p: Option<&Value>) -> bool {
    let Some(p) = p else { return false };
    let n = match op {
        Method::GetTask => p.get("historyLength"),
        Method::SendMessage => p.pointer("/configuration/historyLength"),
        _ => None,
    };
    n.and_then(Value::as_i64) == Some(0)
}

/// The v1.0 JSON-RPC params of a v1.0 REST request.
pub(super) fn v10_params(
    op: Method,
    params: &PathParams,
    query: Option<&str>,
    body: &[u8],
) -> Result<Option<Value>, Failure> {
    let tenant = |o: &mut Map<String, Value>| {
        if let Some(t) = &params.tenant {
            o.insert("tenant".into(), json!(t));
        }
    };
    Ok(Some(match op {
        Method::SendMessage | Method::SendStreamingMessage => {
            let mut o = json_object(body)?;
            tenant(&mut o);
            Value::Object(o)
        }
        Method::GetTask => {
            let mut p = json!({ "id": need(&params.task_id, "task id")? });
            if let Some(n) = history_length(query)? {
                p["historyLength"] = json!(n);
            }
            p
        }
        Method::CancelTask => {
            let mut o = json_object(body)?;
            o.insert("id".into(), json!(need(&params.task_id, "task id")?));
            Value::Object(o)
        }
        Method::SubscribeToTask => json!({ "id": need(&params.task_id, "task id")? }),
        Method::CreatePushConfig => {
            let mut o = json_object(body)?;
            o.insert("taskId".into(), json!(need(&params.task_id, "task id")?));
            Value::Object(o)
        }
        Method::GetPushConfig | Method::DeletePushConfig => {
            json!({
                "taskId": need(&params.task_id, "task id")?,
                "id": need(&params.config_id, "config id")?,
            })
        }
        Method::ListPushConfigs => {
            json!({ "taskId": need(&params.task_id, "task id")? })
        }
        Method::ListTasks => {
            return Err(tr(TranslateError::unsupported("ListTasks", Version::V03)))
        }
        Method::GetExtendedCard => return Ok(None),
    }))
}

pub(super) fn body_of(v: &Value) -> Option<Vec<u8>> {
    Some(serde_json::to_vec(v).unwrap_or_default())
}

pub(super) fn missing_member(what: &str) -> Failure {
    invalid_params(format!("{what} is missing"))
}

/// Member `key` of `p` as a path segment; missing: invalid params.
fn segment(p: &Value, key: &str) -> Result<String, Failure> {
    seg(str_of(p, key).ok_or_else(|| missing_member(key))?)
}

/// A request with one body form.
fn one_form(method: http::Method, path: String, body: Option<Vec<u8>>) -> UpstreamRequest {
    UpstreamRequest {
        method,
        path_and_query: path,
        body,
        other_form: None,
    }
}

/// The v1.0 REST request for v1.0 JSON-RPC params.
pub(super) fn v10_request(op: Method, p: Value) -> Result<UpstreamRequest, Failure> {
    use http::Method as H;
    let id = || segment(&p, "id");
    let task_id = || segment(&p, "taskId");
    let (method, path, body) = match op {
        Method::SendMessage => (H::POST, "/message:send".to_string(), body_of(&p)),
        Method::SendStreamingMessage => (H::POST, "/message:stream".to_string(), body_of(&p)),
        Method::GetTask => {
            let mut path = format!("/tasks/{}", id()?);
            if let Some(n) = p.get("historyLength").and_then(Value::as_i64) {
                path.push_str(&format!("?historyLength={n}"));
            }
            (H::GET, path, None)
        }
        Method::CancelTask => (H::POST, format!("/tasks/{}:cancel", id()?), body_of(&p)),
        Method::SubscribeToTask => (H::GET, format!("/tasks/{}:subscribe", id()?), None),
        Method::CreatePushConfig => (
            H::POST,
            format!("/tasks/{}/pushNotificationConfigs", task_id()?),
            body_of(&p),
        ),
        Method::GetPushConfig => (
            H::GET,
            format!("/tasks/{}/pushNotificationConfigs/{}", task_id()?, id()?),
            None,
        ),
        Method::DeletePushConfig => (
            H::DELETE,
            format!("/tasks/{}/pushNotificationConfigs/{}", task_id()?, id()?),
            None,
        ),
        Method::ListPushConfigs => (
            H::GET,
            format!("/tasks/{}/pushNotificationConfigs", task_id()?),
            None,
        ),
        Method::ListTasks => (H::GET, "/tasks".to_string(), None),
        Method::GetExtendedCard => (H::GET, "/extendedAgentCard".to_string(), None),
    };
    Ok(one_form(method, path, body))
}

/// The v0.3 REST request for v0.3 JSON-RPC params (model JSON).
pub(super) fn v03_request(op: Method, p: Value) -> Result<UpstreamRequest, Failure> {
    use http::Method as H;
    let id = || segment(&p, "id");
    let cid = || segment(&p, "pushNotificationConfigId");
    let (method, path, body) = match op {
        Method::SendMessage | Method::SendStreamingMessage => {
            let path = if op == Method::SendMessage {
                "/v1/message:send"
            } else {
                "/v1/message:stream"
            };
            (H::POST, path.to_string(), v03_send_body(p.clone())?)
        }
        Method::GetTask => {
            let mut path = format!("/v1/tasks/{}", id()?);
            // Proto 0 is "no limit": a v1.0 0 is served by `drop_history`.
            let n = p.get("historyLength").and_then(Value::as_i64);
            if let Some(n) = n.filter(|n| *n != 0) {
                path.push_str(&format!("?historyLength={n}"));
            }
            (H::GET, path, None)
        }
        Method::CancelTask => {
            let raw = str_of(&p, "id").unwrap_or_default();
            let name = r03::task_name(raw).map_err(tr)?;
            (
                H::POST,
                format!("/v1/tasks/{}:cancel", id()?),
                body_of(&json!({ "name": name })),
            )
        }
        Method::SubscribeToTask => (H::GET, format!("/v1/tasks/{}:subscribe", id()?), None),
        Method::CreatePushConfig => return v03_push_create(p),
        Method::GetPushConfig => {
            // Without a config id the task id names the config (a2a-python 0.3).
            let c = cid().or_else(|_| id())?;
            (
                H::GET,
                format!("/v1/tasks/{}/pushNotificationConfigs/{c}", id()?),
                None,
            )
        }
        Method::DeletePushConfig => (
            H::DELETE,
            format!("/v1/tasks/{}/pushNotificationConfigs/{}", id()?, cid()?),
            None,
        ),
        Method::ListPushConfigs => (
            H::GET,
            format!("/v1/tasks/{}/pushNotificationConfigs", id()?),
            None,
        ),
        Method::ListTasks => {
            return Err(tr(TranslateError::unsupported("ListTasks", Version::V03)))
        }
        Method::GetExtendedCard => (H::GET, "/v1/card".to_string(), None),
    };
    Ok(one_form(method, path, body))
}

/// The v0.3 REST body of a send (`MessageSendParams` as the proto's
/// `SendMessageRequest` JSON).
fn v03_send_body(p: Value) -> Result<Option<Vec<u8>>, Failure> {
    let params: m::params::MessageSendParams = typed("MessageSendParams", p).map_err(tr)?;
    let req = r03::send_params_to_pb(params).map_err(tr)?;
    let v = pb_to("SendMessageRequest", &req).map_err(tr)?;
    Ok(body_of(&v))
}

/// The v0.3 REST push config create: the request message (a2a-python 0.3
/// reads only this) first; the bare config (the proto's `body: "config"`,
/// a2a-js) as the other form.
fn v03_push_create(p: Value) -> Result<UpstreamRequest, Failure> {
    let c: m::push_config::TaskPushNotificationConfig =
        typed("TaskPushNotificationConfig", p).map_err(tr)?;
    let task = seg(&c.task_id)?;
    let parent = format!("tasks/{}", c.task_id);
    let config_id = c.push_notification_config.id.clone();
    let pbc = r03::task_push_config_to_pb(c).map_err(tr)?;
    let v = pb_to("TaskPushNotificationConfig", &pbc).map_err(tr)?;
    let mut wrapped = json!({ "parent": parent, "config": v });
    if let Some(id) = config_id.filter(|id| !id.is_empty()) {
        wrapped["configId"] = json!(id);
    }
    Ok(UpstreamRequest {
        method: http::Method::POST,
        path_and_query: format!("/v1/tasks/{task}/pushNotificationConfigs"),
        body: body_of(&wrapped),
        other_form: body_of(&v),
    })
}

/// Puts the translated method, path and body headers on the upstream request.
/// (The extension header is the front's, for every binding alike.)
pub fn set_upstream_head(
    upstream_base: &str,
    up: &UpstreamRequest,
    req: &mut pingora::http::RequestHeader,
) -> pingora::Result<()> {
    use pingora::{Error, ErrorType};
    req.set_method(up.method.clone());
    let uri: http::Uri = format!("{upstream_base}{}", up.path_and_query)
        .parse()
        .map_err(|_| Error::explain(ErrorType::InternalError, "building the upstream path"))?;
    req.set_uri(uri);
    req.remove_header(&http::header::TRANSFER_ENCODING);
    match &up.body {
        Some(b) => {
            req.insert_header(http::header::CONTENT_LENGTH, b.len())?;
            req.insert_header(http::header::CONTENT_TYPE, "application/json")?;
        }
        None => {
            req.remove_header(&http::header::CONTENT_LENGTH);
            req.remove_header(&http::header::CONTENT_TYPE);
        }
    }
    Ok(())
}
