//! The doctor's JSON-RPC and HTTP+JSON checks: GetTask of an unknown task
//! (TaskNotFound in the client version's own error shape) and the
//! `--send` message, each in the client's version.

use serde_json::{json, Value};

use super::{quote, sent_text, unknown_id, Doctor};
use crate::config::HttpUrl;
use crate::version::Version;

impl Doctor {
    pub(super) async fn jsonrpc(
        &self,
        url: &HttpUrl,
        client: Version,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        let path = if url.base_path.is_empty() {
            "/"
        } else {
            &url.base_path
        };
        let body =
            json!({"jsonrpc": "2.0", "id": "a2a-doctor", "method": method, "params": params});
        let a = self
            .call(
                "POST",
                url,
                path,
                &[("a2a-version", client.as_str())],
                Some(body),
            )
            .await?;
        let v = a.json().filter(|v| v.is_object());
        let Some(v) = v.filter(|_| a.status == 200) else {
            return Err(a.said());
        };
        if v["jsonrpc"] != "2.0" || v["id"] != "a2a-doctor" {
            return Err(format!("not the JSON-RPC answer asked for: {}", a.quoted()));
        }
        Ok(v)
    }

    pub(super) async fn jsonrpc_get(
        &self,
        url: &HttpUrl,
        client: Version,
        id: &str,
    ) -> Result<(), String> {
        let method = translate::method::Method::GetTask
            .name(client)
            .unwrap_or("GetTask");
        let v = self.jsonrpc(url, client, method, json!({"id": id})).await?;
        if v.get("result").is_some() {
            return Err("a task nobody made was found".into());
        }
        let e = &v["error"];
        let code = e["code"].as_i64();
        let not_found = translate::code::ErrorCode::TaskNotFound.code();
        if code != Some(not_found) {
            return Err(format!(
                "error {} {}, not TaskNotFound ({not_found})",
                code.map_or("(no code)".to_string(), |c| c.to_string()),
                quote(e["message"].as_str().unwrap_or_default())
            ));
        }
        error_data_shape(client, e.get("data"))
    }

    pub(super) async fn rest_get(
        &self,
        url: &HttpUrl,
        client: Version,
        id: &str,
    ) -> Result<(), String> {
        let prefix = match client {
            Version::V03 => "/v1",
            Version::V10 => "",
        };
        // The doctor's ids are letters, digits and `-`: a path segment as
        // they are.
        let path = format!("{}{prefix}/tasks/{id}", url.base_path);
        let a = self
            .call("GET", url, &path, &[("a2a-version", client.as_str())], None)
            .await?;
        if a.status != 404 {
            return Err(format!("{}, not 404", a.said()));
        }
        let v = a.json().unwrap_or(Value::Null);
        let ok = match client {
            // a2a-python 0.3's `{message}`, or `{code, message}`.
            Version::V03 => {
                v.get("detail").is_none()
                    && (v["message"].is_string()
                        || v["code"].as_i64()
                            == Some(translate::code::ErrorCode::TaskNotFound.code()))
            }
            // google.rpc.Status with its ErrorInfo.
            Version::V10 => {
                v.pointer("/error/status") == Some(&json!("NOT_FOUND"))
                    && v.pointer("/error/details")
                        .and_then(Value::as_array)
                        .is_none_or(|d| {
                            d.iter()
                                .filter(|x| x["reason"].is_string())
                                .all(|x| x["reason"] == "TASK_NOT_FOUND")
                        })
            }
        };
        if ok {
            Ok(())
        } else {
            Err(format!(
                "HTTP 404 without a v{} TaskNotFound body ({}): is the interface served at this URL?",
                client.as_str(),
                a.quoted()
            ))
        }
    }

    pub(super) async fn jsonrpc_send(
        &self,
        url: &HttpUrl,
        client: Version,
        skill: &str,
    ) -> Result<String, String> {
        let (method, message) = match client {
            Version::V03 => (
                "message/send",
                json!({"kind": "message", "role": "user", "messageId": unknown_id(),
                       "parts": [{"kind": "text", "text": sent_text(skill)}]}),
            ),
            Version::V10 => (
                "SendMessage",
                json!({"role": "ROLE_USER", "messageId": unknown_id(),
                       "parts": [{"text": sent_text(skill)}]}),
            ),
        };
        let v = self
            .jsonrpc(url, client, method, json!({"message": message}))
            .await?;
        if let Some(e) = v.get("error") {
            return Err(format!(
                "error {} {}",
                e["code"],
                quote(e["message"].as_str().unwrap_or_default())
            ));
        }
        answered(client, &v["result"])
    }

    pub(super) async fn rest_send(
        &self,
        url: &HttpUrl,
        client: Version,
        skill: &str,
    ) -> Result<String, String> {
        let (path, body) = match client {
            Version::V03 => (
                format!("{}/v1/message:send", url.base_path),
                json!({"message": {"messageId": unknown_id(), "role": "ROLE_USER",
                                   "content": [{"text": sent_text(skill)}]},
                       "configuration": {"blocking": true}}),
            ),
            Version::V10 => (
                format!("{}/message:send", url.base_path),
                json!({"message": {"messageId": unknown_id(), "role": "ROLE_USER",
                                   "parts": [{"text": sent_text(skill)}]}}),
            ),
        };
        let a = self
            .call(
                "POST",
                url,
                &path,
                &[("a2a-version", client.as_str())],
                Some(body),
            )
            .await?;
        let v = a
            .json()
            .filter(|_| a.status == 200)
            .ok_or_else(|| a.said())?;
        // Both versions' REST answers: `task` or `message` (v0.3 ProtoJSON
        // `msg` too).
        let kind = ["task", "message", "msg"]
            .into_iter()
            .find(|k| v.get(*k).is_some());
        match kind {
            Some("task") => Ok(format!("a task, {}", state_of(&v["task"]))),
            Some(_) => Ok("a message".into()),
            None => Err(format!("neither a task nor a message: {}", a.quoted())),
        }
    }
}

/// A SendMessage `result` in `client`'s shape: what it was.
fn answered(client: Version, r: &Value) -> Result<String, String> {
    let task = match client {
        Version::V03 => match r["kind"].as_str() {
            Some("task") => Some(r),
            Some("message") => None,
            _ => {
                return Err(format!(
                    "not a v0.3 Task or Message: {}",
                    quote(&r.to_string())
                ))
            }
        },
        Version::V10 => match (r.get("task"), r.get("message")) {
            (Some(t), _) => Some(t),
            (None, Some(_)) => None,
            _ => {
                return Err(format!(
                    "not a v1.0 task or message: {}",
                    quote(&r.to_string())
                ))
            }
        },
    };
    Ok(match task {
        Some(t) => format!("a task, {}", state_of(t)),
        None => "a message".into(),
    })
}

fn state_of(task: &Value) -> String {
    task.pointer("/status/state")
        .and_then(Value::as_str)
        .map_or("no state".to_string(), |s| format!("state {s}"))
}

/// A JSON-RPC error's `data` in `client`'s shape: v1.0 a list of details
/// (an ErrorInfo saying TASK_NOT_FOUND when it has one), v0.3 not that.
pub(super) fn error_data_shape(client: Version, data: Option<&Value>) -> Result<(), String> {
    let Some(data) = data.filter(|d| !d.is_null()) else {
        return Ok(());
    };
    let info = |d: &Value| {
        d.as_array().and_then(|a| {
            a.iter()
                .find(|x| x["@type"] == crate::grpc::status::ERROR_INFO_TYPE)
                .cloned()
        })
    };
    match client {
        Version::V10 => match (data.as_array(), info(data)) {
            (None, _) => Err(format!(
                "a v1.0 error whose data is not a list of details: {}",
                quote(&data.to_string())
            )),
            (Some(_), Some(i)) if i["reason"] != "TASK_NOT_FOUND" => Err(format!(
                "TaskNotFound with ErrorInfo reason {}",
                i["reason"]
            )),
            _ => Ok(()),
        },
        Version::V03 => match info(data) {
            Some(_) => Err("a v0.3 client got a v1.0 error (ErrorInfo details in data)".into()),
            None => Ok(()),
        },
    }
}
