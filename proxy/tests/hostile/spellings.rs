//! Push configs and JSON-RPC methods under spellings agents read but a
//! byte search or a strict reader would miss (issue #41, items 1, 4, 9):
//! - a push config under every name an agent's parser accepts (proto
//!   field names, snake_case field names, other cases, `\u` escapes) is
//!   intercepted, or refused when no reader of the version takes it for a
//!   config: it never reaches the agent with the subscriber's URL;
//! - with `push.intercept_same_version`, a body the proxy cannot read as
//!   one clear request (a member given twice, a byte order mark, `NaN`,
//!   `1e400`, a batch, a lone surrogate) is refused in the client's version;
//! - without an `A2A-Version`, a body whose method a parser could read
//!   otherwise is refused, never passed on to a v0.3 agent.

use std::sync::Arc;
use std::time::Duration;

use proxy::config::{Config, PushBackend};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};

use crate::support::*;

/// A private address no policy lets in, and the subscriber's token.
const PRIVATE: &str = "http://10.1.2.3/h";
const TOKEN: &str = "client-tok";

fn push_on(upstream: &str, version: Version, dir: &std::path::Path) -> Config {
    let mut config = config_for(upstream, version);
    config.push.enabled = true;
    config.push.backend = PushBackend::Embedded(dir.to_path_buf());
    config
}

/// A fake agent of `version` (JSON-RPC at `/`, REST under `/v1`) that
/// answers every send with task t1 and records what it got.
async fn agent(version: Version) -> (FakeUpstream, Seen) {
    let seen: Seen = Arc::default();
    let s = seen.clone();
    let up = FakeUpstream::start(move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let rest = !r.target.starts_with("/?") && r.target != "/";
        let cfg = match (version, rest) {
            (Version::V03, false) => req.pointer("/params/configuration/pushNotificationConfig"),
            (Version::V10, false) => {
                req.pointer("/params/configuration/taskPushNotificationConfig")
            }
            // v0.3 REST: ProtoJSON of the v0.3 proto.
            (Version::V03, true) => req.pointer("/configuration/pushNotification"),
            (Version::V10, true) => req.pointer("/configuration/taskPushNotificationConfig"),
        };
        if let Some(c) = cfg.filter(|c| c.is_object()) {
            *s.lock().unwrap() = Some(c.clone());
        }
        let task = match (version, rest) {
            (Version::V03, false) => json!({"kind": "task", "id": "t1", "contextId": "c1",
                "status": {"state": "submitted", "timestamp": "2024-03-15T18:30:00Z"}}),
            _ => json!({"task": {"id": "t1", "contextId": "c1",
                "status": {"state": "TASK_STATE_SUBMITTED"}}}),
        };
        if rest {
            return Reply::json(200, &task.to_string());
        }
        Reply::rpc_result(&req["id"], &task)
    })
    .await;
    (up, seen)
}

/// No request the agent got names the private address or the token, in
/// any spelling of them (escapes decoded).
fn agent_never_saw_the_subscriber(agent: &FakeUpstream, what: &str) {
    for r in agent.calls() {
        let raw = String::from_utf8_lossy(&r.body).to_string();
        let decoded = serde_json::from_slice::<Value>(&r.body)
            .map(|v| v.to_string())
            .unwrap_or_default();
        for text in [&raw, &decoded] {
            assert!(
                !text.contains("10.1.2.3") && !text.contains(TOKEN),
                "{what}: the agent got the subscriber's config: {raw}"
            );
        }
    }
}

fn rpc(method: &str, params: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":7,"method":"{method}","params":{params}}}"#)
}

fn v10_send(slot: &str, url: &str) -> String {
    format!(
        r#"{{"message":{{"messageId":"m1","role":"ROLE_USER","parts":[{{"text":"hi"}}]}},"configuration":{{"{slot}":{{"url":"{url}","token":"{TOKEN}"}}}}}}"#
    )
}

/// A v0.3 REST SendMessageRequest (ProtoJSON of the v0.3 proto).
fn v03_rest_send(slot: &str, url: &str) -> String {
    format!(
        r#"{{"message":{{"messageId":"m1","role":"ROLE_USER","content":[{{"text":"hi"}}]}},"configuration":{{"{slot}":{{"url":"{url}","token":"{TOKEN}"}}}}}}"#
    )
}

fn v03_send(slot: &str, url: &str) -> String {
    format!(
        r#"{{"message":{{"kind":"message","messageId":"m1","role":"user","parts":[{{"kind":"text","text":"hi"}}]}},"configuration":{{"{slot}":{{"url":"{url}","token":"{TOKEN}"}}}}}}"#
    )
}

/// Every spelling a v1.0 client may give a push config in, as raw params
/// (`\u` escapes as written): each is intercepted or refused.
fn v10_spellings(url: &str) -> Vec<(&'static str, String, String)> {
    let send = |slot| rpc("SendMessage", &v10_send(slot, url));
    vec![
        ("json name", "/".into(), send("taskPushNotificationConfig")),
        (
            "proto name",
            "/".into(),
            send("task_push_notification_config"),
        ),
        (
            "upper camel",
            "/".into(),
            send("TaskPushNotificationConfig"),
        ),
        (
            "escaped",
            "/".into(),
            send("t\\u0061skPushNotificationConfig"),
        ),
        ("v0.3 json name", "/".into(), send("pushNotificationConfig")),
        (
            "v0.3 field name",
            "/".into(),
            send("push_notification_config"),
        ),
        ("v0.3 proto name", "/".into(), send("push_notification")),
        ("shouted", "/".into(), send("PUSH_NOTIFICATION_CONFIG")),
        (
            "long s",
            "/".into(),
            send("task_pu\u{017f}h_notification_config"),
        ),
        (
            "container case",
            "/".into(),
            rpc(
                "SendMessage",
                &v10_send("taskPushNotificationConfig", url)
                    .replace("configuration", "Configuration"),
            ),
        ),
        (
            "streaming proto name",
            "/".into(),
            rpc(
                "SendStreamingMessage",
                &v10_send("task_push_notification_config", url),
            ),
        ),
        (
            "create, URL in capitals",
            "/".into(),
            rpc(
                "CreateTaskPushNotificationConfig",
                &format!(r#"{{"task_id":"t1","id":"c1","URL":"{url}","token":"{TOKEN}"}}"#),
            ),
        ),
        (
            "create, a v0.3 config inside",
            "/".into(),
            rpc(
                "CreateTaskPushNotificationConfig",
                &format!(
                    r#"{{"taskId":"t1","url":"https://example.com/","pushNotificationConfig":{{"url":"{url}","token":"{TOKEN}"}}}}"#
                ),
            ),
        ),
        (
            "REST proto name",
            "/message:send".into(),
            v10_send("task_push_notification_config", url),
        ),
        (
            "REST escaped",
            "/message:send".into(),
            v10_send("taskPushNotification\\u0043onfig", url),
        ),
        (
            "REST create, proto names",
            "/tasks/t1/pushNotificationConfigs".into(),
            format!(r#"{{"task_id":"t1","Url":"{url}","token":"{TOKEN}"}}"#),
        ),
    ]
}

fn refused(what: &str, target: &str, r: &Response) {
    if target == "/" {
        let v = r.json();
        let code = v["error"]["code"].as_i64().unwrap_or(0);
        assert!(
            [-32602, -32600, -32700].contains(&code),
            "{what}: not refused: {v}"
        );
        assert!(v.get("result").is_none(), "{what}: {v}");
    } else {
        // v1.0 REST: 400; v0.3 REST renders invalid params as 422.
        assert!([400, 422].contains(&r.status), "{what}: {}", r.text());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_push_configs_under_every_spelling_never_reach_a_v03_agent_raw() {
    let (agent, seen) = agent(Version::V03).await;
    let dir = fresh_dir("hostile-spellings-v10");
    let px = proxy::start(push_on(&agent.url(), Version::V03, &dir)).unwrap();
    // A private webhook: whatever the spelling, refused before the agent.
    for (what, target, body) in v10_spellings(PRIVATE) {
        let r = post(px.addr, &target, JSON_V10, body.as_bytes()).await;
        refused(what, &target, &r);
        agent_never_saw_the_subscriber(&agent, what);
    }
    assert!(agent.calls().is_empty(), "the agent was called");
    drop(px);

    // A webhook the policy lets in: the spellings that name a v1.0 config
    // are intercepted (the agent gets the proxy's callback and secret), the
    // others refused; the agent never gets the subscriber's URL or token.
    let mut config = push_on(&agent.url(), Version::V03, &dir);
    config.push.allow_hosts = vec!["10.1.2.3".into()];
    let px = proxy::start(config).unwrap();
    let callback = format!("http://{}/a2a-proxy/push/", px.addr);
    for (what, target, body) in v10_spellings(PRIVATE)
        .into_iter()
        .filter(|(w, t, _)| t != "/tasks/t1/pushNotificationConfigs" && !w.starts_with("create"))
    {
        *seen.lock().unwrap() = None;
        let r = post(px.addr, &target, JSON_V10, body.as_bytes()).await;
        let intercepts = matches!(
            what,
            "json name"
                | "proto name"
                | "upper camel"
                | "escaped"
                | "long s"
                | "container case"
                | "REST proto name"
                | "REST escaped"
        );
        if intercepts {
            assert_eq!(r.status, 200, "{what}: {}", r.text());
            if what != "streaming proto name" {
                let cfg = seen.lock().unwrap().clone();
                let cfg = cfg.unwrap_or_else(|| panic!("{what}: the agent got no push config"));
                let url = cfg["url"].as_str().unwrap_or_default();
                assert!(url.starts_with(&callback), "{what}: {cfg}");
            }
        } else if what != "streaming proto name" {
            refused(what, &target, &r);
        }
        agent_never_saw_the_subscriber(&agent, what);
    }
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The attack as found: a v1.0 client names its config by the v0.3 field
/// name, which a2a-sdk 0.3's pydantic model reads; the real agent would
/// post its v0.3 Task, with the raw token, straight to the subscriber.
/// Refused now; the proto name of v1.0 is intercepted and the webhook gets
/// v1.0 bodies through the proxy only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_v03_agent_never_learns_a_v10_subscribers_webhook() {
    let agent = tokio::task::spawn_blocking(|| sdk_agent("v03", &["--push"]))
        .await
        .unwrap();
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let dir = fresh_dir("hostile-spellings-sdk");
    let mut config = push_on(
        &format!("http://127.0.0.1:{}", agent.port),
        Version::V03,
        &dir,
    );
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    let px = proxy::start(config).unwrap();
    let hook_url = format!("{}/h", hook.url());
    let body = rpc(
        "SendMessage",
        &v10_send("push_notification_config", &hook_url).replace("m1", "m-field-name"),
    );
    let r = post(px.addr, "/", JSON_V10, body.as_bytes()).await.json();
    assert_eq!(r["error"]["code"], -32602, "{r}");

    let body = rpc(
        "SendMessage",
        &v10_send("task_push_notification_config", &hook_url).replace("m1", "m-proto-name"),
    );
    let r = post(px.addr, "/", JSON_V10, body.as_bytes()).await.json();
    assert_eq!(
        r["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{r}"
    );
    let got = recorded_until(&hook, |b| {
        b["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    })
    .await;
    assert!(!got.is_empty(), "no notification reached the webhook");
    // Every body the webhook got is v1.0, posted by the proxy.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for rec in hook.calls() {
        let v: Value = serde_json::from_slice(&rec.body).unwrap_or(Value::Null);
        assert!(
            v.get("kind").is_none(),
            "a v0.3 body reached a v1.0 webhook: {v}"
        );
        assert!(
            v["task"].is_object()
                || v["statusUpdate"].is_object()
                || v["artifactUpdate"].is_object(),
            "{v}"
        );
    }
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bodies a same-version client may send that some parser reads as a push
/// config: each (raw) is intercepted under the spec's name or refused.
fn same_version_bodies(v: Version) -> Vec<(&'static str, &'static str, Vec<u8>)> {
    let (method, send, rest_send, slot, proto, other, rest_path, rest_slot) = match v {
        Version::V03 => (
            "message/send",
            v03_send as fn(&str, &str) -> String,
            v03_rest_send as fn(&str, &str) -> String,
            "pushNotificationConfig",
            "push_notification_config",
            "task_push_notification_config",
            "/v1/message:send",
            "p\\u0075shNotification",
        ),
        Version::V10 => (
            "SendMessage",
            v10_send as fn(&str, &str) -> String,
            v10_send as fn(&str, &str) -> String,
            "taskPushNotificationConfig",
            "task_push_notification_config",
            "push_notification_config",
            "/message:send",
            "taskP\\u0075shNotificationConfig",
        ),
    };
    let plain = rpc(method, &send(slot, PRIVATE));
    let mut out: Vec<(&'static str, &'static str, Vec<u8>)> = vec![
        (
            "proto field name",
            "/",
            rpc(method, &send(proto, PRIVATE)).into_bytes(),
        ),
        (
            "the other version's proto name",
            "/",
            rpc(method, &send(other, PRIVATE)).into_bytes(),
        ),
        (
            "escaped member name",
            "/",
            rpc(method, &send(&slot.replacen('u', "\\u0075", 1), PRIVATE)).into_bytes(),
        ),
        (
            "REST escaped member name",
            rest_path,
            rest_send(rest_slot, PRIVATE).into_bytes(),
        ),
        (
            "method twice",
            "/",
            plain
                .replacen("\"method\"", "\"method\":\"tasks/get\",\"method\"", 1)
                .into_bytes(),
        ),
        (
            "id twice",
            "/",
            plain
                .replacen("\"id\":7", "\"id\":7,\"id\":8", 1)
                .into_bytes(),
        ),
        (
            "byte order mark",
            "/",
            [b"\xef\xbb\xbf".as_slice(), plain.as_bytes()].concat(),
        ),
        (
            "NaN",
            "/",
            plain
                .replacen("\"url\"", "\"n\":NaN,\"url\"", 1)
                .into_bytes(),
        ),
        (
            "1e400",
            "/",
            plain
                .replacen("\"url\"", "\"n\":1e400,\"url\"", 1)
                .into_bytes(),
        ),
        ("batch", "/", format!("[{plain}]").into_bytes()),
        (
            "lone surrogate",
            "/",
            plain
                .replacen("\"url\"", "\"n\":\"\\ud800\",\"url\"", 1)
                .into_bytes(),
        ),
        (
            "a config member twice",
            "/",
            plain
                .replacen("\"url\"", "\"url\":\"https://example.com/\",\"url\"", 1)
                .into_bytes(),
        ),
        (
            "a config member in two cases",
            "/",
            plain
                .replacen("\"url\"", "\"url\":\"https://example.com/\",\"URL\"", 1)
                .into_bytes(),
        ),
    ];
    if v == Version::V03 {
        out.push((
            "REST proto field name",
            rest_path,
            rest_send("push_notification", PRIVATE).into_bytes(),
        ));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_bodies_the_proxy_cannot_read_as_one_request_are_refused() {
    for v in [Version::V03, Version::V10] {
        let (agent, _) = agent(v).await;
        let dir = fresh_dir("hostile-spellings-same");
        let mut config = push_on(&agent.url(), v, &dir);
        config.push.intercept_same_version = true;
        let px = proxy::start(config).unwrap();
        let headers = match v {
            Version::V03 => JSON_V03,
            Version::V10 => JSON_V10,
        };
        for (what, target, body) in same_version_bodies(v) {
            let r = post(px.addr, target, headers, &body).await;
            let what = format!("{v} {what}");
            refused(&what, target, &r);
            if target != "/" {
                // REST errors in the client's own shape.
                let e = r.json();
                match v {
                    Version::V10 => assert!(e["error"]["status"].is_string(), "{what}: {e}"),
                    Version::V03 => assert!(e["code"].is_i64(), "{what}: {e}"),
                }
            }
            agent_never_saw_the_subscriber(&agent, &what);
        }
        assert!(agent.calls().is_empty(), "{v}: the agent was called");
        drop(px);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// No `A2A-Version`: a v0.3 call, unless the method says otherwise. A body
/// whose method a parser reads otherwise is refused, as a v0.3 error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headerless_bodies_with_an_unclear_method_are_refused() {
    let (agent, _) = agent(Version::V03).await;
    let dir = fresh_dir("hostile-spellings-headerless");
    let px: RunningProxy = proxy::start(push_on(&agent.url(), Version::V03, &dir)).unwrap();
    let send = rpc("message/send", &v03_send("pushNotificationConfig", PRIVATE));
    let bodies: Vec<(&str, Vec<u8>, i64)> = vec![
        (
            "method twice",
            send.replacen("\"method\"", "\"method\":\"SendMessage\",\"method\"", 1)
                .replacen("\"message/send\"", "\"SendMessage\"", 1)
                .into_bytes(),
            -32600,
        ),
        (
            "method in two cases",
            send.replacen("\"method\"", "\"Method\":\"SendMessage\",\"method\"", 1)
                .into_bytes(),
            -32600,
        ),
        (
            "byte order mark",
            [
                b"\xef\xbb\xbf".as_slice(),
                send.replace("message/send", "SendMessage").as_bytes(),
            ]
            .concat(),
            -32700,
        ),
        (
            "batch",
            format!("[{}]", send.replace("message/send", "SendMessage")).into_bytes(),
            -32600,
        ),
    ];
    let json_only: &[(&str, &str)] = &[("Content-Type", "application/json")];
    for (what, body, code) in bodies {
        let r = post(px.addr, "/", json_only, &body).await;
        let v = r.json();
        assert_eq!(v["error"]["code"], code, "{what}: {v}");
        assert_eq!(v["jsonrpc"], "2.0", "{what}: {v}");
    }
    assert!(agent.calls().is_empty(), "the agent was called");
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
