//! Pure JSON rewrites of push configs on their way through the proxy.
//!
//! Toward the agent, a subscriber's config (URL, token, authentication) is
//! swapped for the proxy's callback URL and secret ([`take_registration`]).
//! Back toward the client, every config object that names a callback URL is
//! given the subscriber's own values again ([`restore`]), so the client
//! never sees the proxy's URL or secret.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::{Auth, PushConfig};
use crate::version::Version;
use translate::method::Method;

/// What a subscriber registered, read from a config object.
#[derive(Clone, PartialEq, Eq)]
pub struct Registration {
    pub task_id: String,
    pub config_id: String,
    pub url: String,
    pub token: Option<String>,
    pub auth: Option<Auth>,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("task_id", &self.task_id)
            .field("config_id", &self.config_id)
            .finish_non_exhaustive()
    }
}

/// Whether `op` can carry a push config in its request.
pub fn registers(op: Method) -> bool {
    matches!(
        op,
        Method::SendMessage | Method::SendStreamingMessage | Method::CreatePushConfig
    )
}

/// Whether the push layer has anything to do with an `op` request.
pub fn concerns(op: Method) -> bool {
    registers(op) || answers_configs(op) || op == Method::DeletePushConfig
}

/// Whether `op`'s answer can hold push configs.
pub fn answers_configs(op: Method) -> bool {
    matches!(
        op,
        Method::CreatePushConfig | Method::GetPushConfig | Method::ListPushConfigs
    )
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

/// The config object inside `params` of an `op` request in `version`.
fn slot(op: Method, version: Version, params: &mut Value) -> Option<&mut Value> {
    let v = match (op, version) {
        (Method::SendMessage | Method::SendStreamingMessage, Version::V03) => params
            .get_mut("configuration")?
            .get_mut("pushNotificationConfig")?,
        (Method::SendMessage | Method::SendStreamingMessage, Version::V10) => params
            .get_mut("configuration")?
            .get_mut("taskPushNotificationConfig")?,
        (Method::CreatePushConfig, Version::V03) => params.get_mut("pushNotificationConfig")?,
        (Method::CreatePushConfig, Version::V10) => params,
        _ => return None,
    };
    v.is_object().then_some(v)
}

/// The task id a request names (empty for a message starting a new task).
fn task_of(op: Method, params: &Value) -> String {
    let s = match op {
        Method::CreatePushConfig => str_at(params, "taskId"),
        _ => params.get("message").and_then(|m| str_at(m, "taskId")),
    };
    s.unwrap_or_default().to_string()
}

fn auth_of(version: Version, obj: &Value) -> Option<Auth> {
    let a = obj.get("authentication")?;
    let credentials = str_at(a, "credentials").map(str::to_string);
    let scheme = match version {
        Version::V03 => a.get("schemes")?.as_array()?.first()?.as_str()?,
        Version::V10 => str_at(a, "scheme")?,
    };
    Some(Auth {
        scheme: scheme.to_string(),
        credentials,
    })
}

fn auth_value(version: Version, a: &Auth) -> Value {
    let mut m = Map::new();
    match version {
        Version::V03 => m.insert("schemes".into(), json!([a.scheme])),
        Version::V10 => m.insert("scheme".into(), json!(a.scheme)),
    };
    if let Some(c) = &a.credentials {
        m.insert("credentials".into(), json!(c));
    }
    Value::Object(m)
}

/// A config the proxy registered, as the subscriber gave it, in the v1.0
/// shape of a GetTaskPushNotificationConfig answer.
pub fn v10_config(c: &PushConfig) -> Value {
    let mut m = Map::new();
    m.insert("taskId".into(), json!(c.task_id));
    m.insert("id".into(), json!(c.config_id));
    m.insert("url".into(), json!(c.original_url));
    if let Some(t) = &c.token {
        m.insert("token".into(), json!(t));
    }
    if let Some(a) = &c.auth {
        m.insert("authentication".into(), auth_value(Version::V10, a));
    }
    Value::Object(m)
}

/// Reads the subscriber's config from an `op` request's `params` (in
/// `version`, the agent's) and replaces its URL, token and authentication
/// with `callback_url` and `secret`. `None` when the request carries no
/// config; `Err` with a message for the client when the config has no URL.
pub fn take_registration(
    op: Method,
    version: Version,
    params: &mut Value,
    callback_url: &str,
    secret: &str,
) -> Result<Option<Registration>, String> {
    let task_id = task_of(op, params);
    let Some(obj) = slot(op, version, params) else {
        return Ok(None);
    };
    let Some(url) = str_at(obj, "url").map(str::to_string) else {
        return Err("push notification config needs a `url`".into());
    };
    let reg = Registration {
        task_id,
        config_id: str_at(obj, "id").unwrap_or_default().to_string(),
        url,
        token: str_at(obj, "token").map(str::to_string),
        auth: auth_of(version, obj),
    };
    if let Some(m) = obj.as_object_mut() {
        m.insert("url".into(), json!(callback_url));
        m.insert("token".into(), json!(secret));
        m.remove("authentication");
    }
    Ok(Some(reg))
}

/// A callback id named by `url`, if it is one of `base`'s callback URLs.
pub fn callback_id<'a>(base: &str, url: &'a str) -> Option<&'a str> {
    let id = url
        .strip_prefix(base)?
        .strip_prefix(crate::ids::CALLBACK_PREFIX)?;
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(id)
}

/// What [`restore`] saw.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Restored {
    /// (callback id, config id as the agent answered it) of each config.
    pub seen: Vec<(String, String)>,
    /// Callback URLs with no known config (left as they were).
    pub unknown: usize,
}

/// Gives every config object in `v` (an answer in the client's `version`)
/// whose URL is a callback URL of `base` its subscriber's URL, token and
/// authentication back, from `known` (by callback id).
pub fn restore(
    v: &mut Value,
    version: Version,
    base: &str,
    known: &HashMap<String, PushConfig>,
) -> Restored {
    let mut r = Restored::default();
    walk(v, version, base, known, &mut r, 0);
    r
}

fn walk(
    v: &mut Value,
    version: Version,
    base: &str,
    known: &HashMap<String, PushConfig>,
    r: &mut Restored,
    depth: usize,
) {
    if depth > 16 {
        return;
    }
    match v {
        Value::Array(a) => {
            for x in a {
                walk(x, version, base, known, r, depth + 1);
            }
        }
        Value::Object(m) => {
            let id = m
                .get("url")
                .and_then(Value::as_str)
                .and_then(|u| callback_id(base, u))
                .map(str::to_string);
            if let Some(id) = id {
                match known.get(&id) {
                    Some(c) => {
                        m.insert("url".into(), json!(c.original_url));
                        match &c.token {
                            Some(t) => m.insert("token".into(), json!(t)),
                            None => m.remove("token"),
                        };
                        match &c.auth {
                            Some(a) => m.insert("authentication".into(), auth_value(version, a)),
                            None => m.remove("authentication"),
                        };
                        let cid = m.get("id").and_then(Value::as_str).unwrap_or_default();
                        r.seen.push((id, cid.to_string()));
                    }
                    None => {
                        // Never show the agent's copy of the secret.
                        m.remove("token");
                        r.unknown += 1;
                    }
                }
                return;
            }
            for (_, x) in m.iter_mut() {
                walk(x, version, base, known, r, depth + 1);
            }
        }
        _ => {}
    }
}

/// The task an answer (in `version`) is about: a Task's id, a message's or
/// event's task id.
pub fn task_of_answer(version: Version, result: &Value) -> Option<String> {
    let obj = match version {
        Version::V10 => ["task", "message", "statusUpdate", "artifactUpdate"]
            .iter()
            .find_map(|k| result.get(*k))
            .unwrap_or(result),
        // A REST (ProtoJSON) answer wraps its Task or Message.
        Version::V03 => ["task", "msg"]
            .iter()
            .find_map(|k| result.get(*k).filter(|v| v.is_object()))
            .unwrap_or(result),
    };
    let is_task = match version {
        Version::V10 => result.get("task").is_some(),
        Version::V03 => str_at(obj, "kind") == Some("task") || result.get("task").is_some(),
    };
    let id = if is_task {
        str_at(obj, "id")
    } else {
        str_at(obj, "taskId")
    };
    id.filter(|s| !s.is_empty()).map(str::to_string)
}

/// Members of a push body that wrap its event (v1.0 `StreamResponse`, with
/// the proto field names too; v0.3 ProtoJSON's Task and Message; a
/// JSON-RPC `result`, which a lenient subscriber might read).
const WRAPPERS: &[&str] = &[
    "result",
    "task",
    "message",
    "msg",
    "statusUpdate",
    "status_update",
    "artifactUpdate",
    "artifact_update",
];

/// A push body naming more than one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeveralTasks;

/// The task a push body (any version, any shape the callback takes: a bare
/// v0.3 Task, Message or event, kind-tagged or not; a v1.0
/// `StreamResponse`) is about, read from every place that names one: a
/// Task's id, an event's or message's task id, its status message's and
/// history messages' task ids. `None` when nothing names a task.
pub fn task_named(body: &Value) -> Result<Option<String>, SeveralTasks> {
    let mut ids: Vec<&str> = Vec::new();
    wrapped_ids(body, false, 0, &mut ids);
    let mut named = ids.into_iter().filter(|s| !s.is_empty());
    let first = named.next();
    match first {
        Some(f) if named.any(|x| x != f) => Err(SeveralTasks),
        _ => Ok(first.map(str::to_string)),
    }
}

/// The ids `v` names, and those of the objects it wraps (two levels: a
/// `result` holding a `StreamResponse`).
fn wrapped_ids<'a>(v: &'a Value, as_task: bool, depth: usize, out: &mut Vec<&'a str>) {
    ids_of(v, as_task, out);
    if depth < 2 {
        for w in WRAPPERS {
            if let Some(inner) = v.get(*w) {
                wrapped_ids(inner, *w == "task", depth + 1, out);
            }
        }
    }
}

fn ids_of<'a>(v: &'a Value, as_task: bool, out: &mut Vec<&'a str>) {
    let Some(m) = v.as_object() else {
        return;
    };
    let task_ids = |o: &'a Value, out: &mut Vec<&'a str>| {
        for k in ["taskId", "task_id"] {
            if let Some(s) = o.get(k).and_then(Value::as_str) {
                out.push(s);
            }
        }
    };
    // A v0.3 object without `kind` is a Task when it has an id and a
    // status (as the v0.3 reader infers it).
    let kind = m.get("kind").and_then(Value::as_str);
    let is_task = as_task
        || kind == Some("task")
        || (kind.is_none()
            && m.contains_key("id")
            && m.contains_key("status")
            && !m.contains_key("messageId")
            && !m.contains_key("artifact"));
    if is_task {
        if let Some(s) = m.get("id").and_then(Value::as_str) {
            out.push(s);
        }
    }
    task_ids(v, out);
    if let Some(msg) = m.get("status").and_then(|s| s.get("message")) {
        task_ids(msg, out);
    }
    for msg in m
        .get("history")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        task_ids(msg, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "http://127.0.0.1:8080";

    fn stored(cb: &str) -> PushConfig {
        PushConfig {
            callback_id: cb.into(),
            task_id: "t1".into(),
            config_id: "c1".into(),
            original_url: "https://client.example/hook".into(),
            token: Some("client-token".into()),
            auth: Some(Auth {
                scheme: "Bearer".into(),
                credentials: Some("cred".into()),
            }),
            subscriber_version: Version::V10,
            upstream_version: Version::V03,
            callback_secret: "s3cret".into(),
            created: 0,
            seed: None,
        }
    }

    #[test]
    fn registration_swapped_in_each_shape() {
        let cb = format!("{BASE}/a2a-proxy/push/abc");
        // v0.3 inline in message/send.
        let mut p = json!({"message": {"taskId": "t1", "parts": []},
            "configuration": {"pushNotificationConfig": {"url": "https://c/h", "token": "tok",
                "authentication": {"schemes": ["Bearer"], "credentials": "x"}}}});
        let r = take_registration(Method::SendMessage, Version::V03, &mut p, &cb, "sec")
            .unwrap()
            .unwrap();
        assert_eq!((r.task_id.as_str(), r.url.as_str()), ("t1", "https://c/h"));
        assert_eq!(r.token.as_deref(), Some("tok"));
        assert_eq!(r.auth.as_ref().unwrap().scheme, "Bearer");
        assert_eq!(
            p["configuration"]["pushNotificationConfig"],
            json!({"url": cb, "token": "sec"})
        );
        // v1.0 Create: the params are the config.
        let mut p = json!({"taskId": "t2", "id": "c9", "url": "http://h/",
            "authentication": {"scheme": "Basic"}});
        let r = take_registration(Method::CreatePushConfig, Version::V10, &mut p, &cb, "sec")
            .unwrap()
            .unwrap();
        assert_eq!((r.task_id.as_str(), r.config_id.as_str()), ("t2", "c9"));
        assert_eq!(r.auth.unwrap().credentials, None);
        assert_eq!(
            p,
            json!({"taskId": "t2", "id": "c9", "url": cb, "token": "sec"})
        );
        // No config, and a config without url.
        let mut p = json!({"message": {}});
        assert_eq!(
            take_registration(Method::SendMessage, Version::V10, &mut p, &cb, "s"),
            Ok(None)
        );
        let mut p = json!({"taskId": "t", "pushNotificationConfig": {"token": "x"}});
        assert!(
            take_registration(Method::CreatePushConfig, Version::V03, &mut p, &cb, "s").is_err()
        );
    }

    #[test]
    fn restore_gives_back_the_subscribers_values() {
        let known: HashMap<_, _> = [("abc".to_string(), stored("abc"))].into();
        let mut v = json!({"configs": [
            {"taskId": "t1", "id": "c1", "url": format!("{BASE}/a2a-proxy/push/abc"), "token": "s3cret"},
            {"taskId": "t1", "id": "c2", "url": format!("{BASE}/a2a-proxy/push/zzz"), "token": "other"},
            {"taskId": "t1", "id": "c3", "url": "https://direct.example/"}
        ]});
        let r = restore(&mut v, Version::V10, BASE, &known);
        assert_eq!(r.seen, vec![("abc".to_string(), "c1".to_string())]);
        assert_eq!(r.unknown, 1);
        assert_eq!(
            v["configs"][0],
            json!({"taskId": "t1", "id": "c1", "url": "https://client.example/hook",
                "token": "client-token", "authentication": {"scheme": "Bearer", "credentials": "cred"}})
        );
        assert!(v["configs"][1].get("token").is_none());
        assert_eq!(v["configs"][2]["url"], "https://direct.example/");
        // v0.3 shape: authentication has schemes.
        let mut v = json!({"taskId": "t1", "pushNotificationConfig":
            {"id": "c1", "url": format!("{BASE}/a2a-proxy/push/abc")}});
        restore(&mut v, Version::V03, BASE, &known);
        assert_eq!(
            v["pushNotificationConfig"]["authentication"],
            json!({"schemes": ["Bearer"], "credentials": "cred"})
        );
        assert_eq!(
            callback_id(BASE, "http://127.0.0.1:8080/a2a-proxy/push/../x"),
            None
        );
    }

    #[test]
    fn tasks_named_by_push_bodies() {
        let one = |v: Value| task_named(&v).map(|t| t.unwrap_or_default());
        let several = |v: Value| task_named(&v) == Err(SeveralTasks);
        // v0.3: Task (tagged or not), events, message.
        assert_eq!(
            one(json!({"kind": "task", "id": "t1", "status": {}})),
            Ok("t1".into())
        );
        assert_eq!(one(json!({"id": "t1", "status": {}})), Ok("t1".into()));
        let up = json!({"kind": "status-update", "taskId": "t2", "status": {}});
        assert_eq!(one(up), Ok("t2".into()));
        let art = json!({"taskId": "t3", "artifact": {"artifactId": "a", "id": "x"}});
        assert_eq!(one(art), Ok("t3".into()));
        let msg = json!({"kind": "message", "messageId": "m", "taskId": "t4"});
        assert_eq!(one(msg), Ok("t4".into()));
        // v1.0: each StreamResponse member, proto names too.
        assert_eq!(one(json!({"task": {"id": "t5"}})), Ok("t5".into()));
        let up = json!({"status_update": {"task_id": "t6", "status": {}}});
        assert_eq!(one(up), Ok("t6".into()));
        assert_eq!(
            one(json!({"artifactUpdate": {"taskId": "t7"}})),
            Ok("t7".into())
        );
        assert_eq!(
            one(json!({"message": {"messageId": "m"}})),
            Ok(String::new())
        );
        // Two tasks in one body: in the members, or in inner messages.
        assert!(several(
            json!({"task": {"id": "a"}, "statusUpdate": {"taskId": "b"}})
        ));
        assert!(several(json!({"kind": "task", "id": "a", "status": {},
            "history": [{"messageId": "m", "taskId": "b"}]})));
        assert!(several(json!({"statusUpdate": {"taskId": "a",
            "status": {"message": {"messageId": "m", "taskId": "b"}}}})));
        assert!(several(
            json!({"kind": "message", "taskId": "a", "task_id": "b"})
        ));
        // A JSON-RPC envelope is looked into too.
        let env = json!({"jsonrpc": "2.0", "result": {"kind": "task", "id": "t8", "status": {}}});
        assert_eq!(one(env), Ok("t8".into()));
        let env = json!({"result": {"task": {"id": "t8"}}});
        assert_eq!(one(env), Ok("t8".into()));
        // The same task named twice is one task.
        let same = json!({"task": {"id": "a", "history": [{"taskId": "a"}]}});
        assert_eq!(one(same), Ok("a".into()));
    }

    #[test]
    fn task_of_answers() {
        let t = json!({"kind": "task", "id": "t1"});
        assert_eq!(task_of_answer(Version::V03, &t).as_deref(), Some("t1"));
        let m = json!({"message": {"taskId": "t2"}});
        assert_eq!(task_of_answer(Version::V10, &m).as_deref(), Some("t2"));
        let t = json!({"task": {"id": "t3"}});
        assert_eq!(task_of_answer(Version::V10, &t).as_deref(), Some("t3"));
        assert_eq!(
            task_of_answer(Version::V03, &json!({"kind": "message"})),
            None
        );
        // v0.3 REST (ProtoJSON) answers wrap the Task or Message.
        let t = json!({"task": {"id": "t4", "contextId": "c"}});
        assert_eq!(task_of_answer(Version::V03, &t).as_deref(), Some("t4"));
        let m = json!({"msg": {"messageId": "m", "taskId": "t5"}});
        assert_eq!(task_of_answer(Version::V03, &m).as_deref(), Some("t5"));
    }
}
