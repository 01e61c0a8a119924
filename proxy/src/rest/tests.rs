//! Unit tests of `crate::rest`.

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

/// The translation of `op`'s answers from `upstream` to `client`, as
/// asked (no history dropped, no config asked).
fn translation(client: Version, upstream: Version, op: Method) -> RestTranslation {
    RestTranslation {
        client,
        upstream,
        op,
        drop_history: false,
        asked_config: None,
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
    let t = translation(Version::V03, Version::V10, Method::GetTask);
    let out = t.response(200, br#"{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-01T00:00:00Z"}}"#).1;
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["id"], "t1");
    assert_eq!(v["contextId"], "c1");
    assert_eq!(v["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(v["status"]["timestamp"], "2025-01-01T00:00:00Z");

    let t = translation(Version::V10, Version::V03, Method::GetTask);
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
    let t = translation(Version::V10, Version::V03, Method::SendStreamingMessage);
    let out = t.event(r#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"},"final":false}}"#);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["statusUpdate"]["taskId"], "t1");
    assert_eq!(v["statusUpdate"]["status"]["state"], "TASK_STATE_WORKING");

    let t = translation(Version::V03, Version::V10, Method::SubscribeToTask);
    let out = t.event(r#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}"#);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["statusUpdate"]["taskId"], "t1");
}

#[test]
fn errors_both_ways() {
    let t = translation(Version::V03, Version::V10, Method::GetTask);
    let out = t.response(404, br#"{"error":{"code":404,"status":"NOT_FOUND","message":"no such task","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org"}]}}"#).1;
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v, json!({"code": -32001, "message": "no such task"}));

    let t = translation(Version::V10, Version::V03, Method::GetTask);
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
    let t = translation(Version::V10, Version::V03, Method::CancelTask);
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
    // The code a request is refused with.
    let code = |client, up, op, task: Option<&str>, query: Option<&str>, body: &[u8]| match request(
        client,
        up,
        op,
        &p(task, None),
        query,
        body,
    )
    .err()
    {
        Some(Failure::Translate { code, .. }) => code,
        other => panic!("{op:?}: {other:?}"),
    };
    let (v03, v10) = (Version::V03, Version::V10);
    let send = Method::SendMessage;
    assert_eq!(code(v03, v10, send, None, None, b"{not json"), -32700);
    assert_eq!(code(v10, v03, Method::ListTasks, None, None, b""), -32004);
    let history = Some("historyLength=x");
    assert_eq!(
        code(v10, v03, Method::GetTask, Some("t"), history, b""),
        -32602
    );
    let t = translation(Version::V10, Version::V03, Method::GetTask);
    let v: Value = serde_json::from_slice(&t.response(200, b"nope").1).unwrap();
    assert_eq!(v["error"]["details"][0]["reason"], "INVALID_AGENT_RESPONSE");
}

/// A v0.3 client's request is read strictly: a member its message lacks
/// is refused (the push layer decides on what the proxy reads, and an
/// unknown member would otherwise cross unseen), while the same member in
/// a v0.3 agent's answer is skipped (`rest::lenient`).
#[test]
fn unknown_members_refused_in_requests_skipped_in_answers() {
    let (v03, v10) = (Version::V03, Version::V10);
    let config = br#"{"name":"tasks/t/pushNotificationConfigs/c","taskId":"t",
        "pushNotificationConfig":{"url":"https://h.example/x"}}"#;
    let create = Method::CreatePushConfig;
    assert!(request(v03, v10, create, &p(Some("t"), None), None, config).is_err());
    let send = br#"{"request":{"messageId":"m","role":"ROLE_USER","content":[{"text":"x"}]},
        "pushNotificationUrl":"https://h.example/x"}"#;
    assert!(request(v03, v10, Method::SendMessage, &p(None, None), None, send).is_err());
    let t = translation(v10, v03, Method::GetPushConfig);
    let (status, out) = t.response(200, config);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        (status, v["url"].as_str()),
        (None, Some("https://h.example/x"))
    );
}

/// The v0.3 REST fixtures (`fixtures/rest-v03/`, see its README): every
/// v0.3 REST body the proxy reads, under JSON and proto field names and
/// with all-default messages, against the v1.0 body it becomes.
#[test]
fn v03_rest_fixtures() {
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
            let op = Method::ALL
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
                let t = translation(Version::V10, Version::V03, op);
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
        let op = Method::ALL
            .into_iter()
            .find(|o| o.as_str() == op_name)
            .unwrap_or_else(|| panic!("response/{name}: no operation {op_name}"));
        let input = std::fs::read(root.join("response").join(&name)).unwrap();
        let want: Value = serde_json::from_slice(
            &std::fs::read(root.join("response").join(format!("{case}.to-v03.json")))
                .unwrap_or_else(|e| panic!("response/{case}.to-v03.json: {e}")),
        )
        .unwrap();
        let t = translation(Version::V03, Version::V10, op);
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
