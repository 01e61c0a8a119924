//! Issue #22 item 3: v0.3 REST bodies as real peers send them. ProtoJSON
//! accepts a member under its JSON name and its proto field name, and an
//! all-default message is an absent one (MAPPING-FACTS §4.16); a v0.3
//! agent lists push configs as a bare array (spec v0.3 §7.7) or as
//! `{configs}`, answers `/v1/card` in the JSON-schema card shape
//! (a2a-python 0.3, MAPPING-FACTS row 118) or as ProtoJSON, and answers a
//! SendMessage naming an unknown task with 404 `{"message": ...}`.

use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};

use crate::support::*;

fn proxy_for(upstream: &str, version: Version) -> RunningProxy {
    proxy::start(config_for(upstream, version)).unwrap()
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const V10: (&str, &str) = ("A2A-Version", "1.0");

const PUSH_V10: &str = r#"{"taskId":"t1","id":"c1","url":"https://cb.example/x"}"#;

fn j(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

/// A v0.3 REST client (a2a-python 0.3 serialises with proto field names)
/// creating a push config at a v1.0 agent: `config_id`,
/// `push_notification_config` and `authentication: {}` in each body form.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_push_create_with_proto_field_names_and_empty_authentication() {
    let up = FakeUpstream::start(|_| Reply::json(200, PUSH_V10)).await;
    let px = proxy_for(&up.url(), Version::V10);
    let bodies = [
        // The request message, every member under its proto field name.
        r#"{"parent":"tasks/t1","config_id":"c1","config":{"push_notification_config":{"url":"https://cb.example/x","authentication":{}}}}"#,
        // The same with the JSON name outside and the proto name inside.
        r#"{"configId":"c1","config":{"name":"","push_notification_config":{"url":"https://cb.example/x","token":"","authentication":{"schemes":[],"credentials":""}}}}"#,
        // The bare TaskPushNotificationConfig, no name.
        r#"{"push_notification_config":{"id":"c1","url":"https://cb.example/x","authentication":{}}}"#,
    ];
    for (i, body) in bodies.iter().enumerate() {
        let r = post(
            px.addr,
            "/v1/tasks/t1/pushNotificationConfigs",
            &[JSON],
            body.as_bytes(),
        )
        .await;
        assert_eq!(r.status, 200, "{body}: {}", r.text());
        assert_eq!(
            r.json(),
            json!({"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://cb.example/x"}}),
            "{body}"
        );
        let calls = up.calls();
        let got = &calls[i];
        assert_eq!(got.target, "/tasks/t1/pushNotificationConfigs", "{body}");
        let sent: Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(sent, j(PUSH_V10), "{body}");
    }
}

/// A v0.3 REST SendMessage under proto field names (`request`,
/// `accepted_output_modes`, `message_id`, `context_id`) with an all-default
/// `push_notification: {}` reaches a v1.0 agent as a send without a push
/// config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_send_with_proto_field_names_and_empty_push_config() {
    let reply =
        r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}"#;
    let up = FakeUpstream::start(move |_| Reply::json(200, reply)).await;
    let px = proxy_for(&up.url(), Version::V10);
    let body = r#"{"request":{"message_id":"m1","context_id":"c1","role":"ROLE_USER","content":[{"text":"hi"}]},"configuration":{"accepted_output_modes":["text/plain"],"push_notification":{},"blocking":true}}"#;
    let r = post(px.addr, "/v1/message:send", &[JSON], body.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["task"]["id"], "t1", "{}", r.text());
    let calls = up.calls();
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["message"]["messageId"], "m1", "{sent}");
    assert_eq!(sent["message"]["contextId"], "c1", "{sent}");
    let conf = &sent["configuration"];
    assert_eq!(conf["acceptedOutputModes"], json!(["text/plain"]), "{sent}");
    assert!(conf.get("taskPushNotificationConfig").is_none(), "{sent}");
    assert!(conf.get("pushNotificationConfig").is_none(), "{sent}");
}

/// A v0.3 REST agent's push-config list as the v0.3 spec writes it (a bare
/// array), as the proto writes it (`{configs}`), and with proto field
/// names: a v1.0 client gets `{configs}` each time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_agent_push_list_as_bare_array_or_configs() {
    let item = r#"{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://cb.example/x","authentication":{}}}"#;
    let snake = r#"{"name":"tasks/t1/pushNotificationConfigs/c1","push_notification_config":{"id":"c1","url":"https://cb.example/x"}}"#;
    let answers = [
        format!("[{item}]"),
        format!("  [{snake}]"),
        format!(r#"{{"configs":[{item}]}}"#),
        format!(r#"{{"configs":[{snake}],"next_page_token":""}}"#),
    ];
    for answer in answers {
        let a = answer.clone();
        let up = FakeUpstream::start(move |_| Reply::json(200, &a)).await;
        let px = proxy_for(&up.url(), Version::V03);
        let r = get(px.addr, "/tasks/t1/pushNotificationConfigs", &[V10]).await;
        assert_eq!(r.status, 200, "{answer}: {}", r.text());
        assert_eq!(r.json(), json!({"configs":[j(PUSH_V10)]}), "{answer}");
        assert_eq!(up.calls()[0].target, "/v1/tasks/t1/pushNotificationConfigs");
    }
    // An empty bare array is an empty list.
    let up = FakeUpstream::start(|_| Reply::json(200, "[]")).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = get(px.addr, "/tasks/t1/pushNotificationConfigs", &[V10]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.json()["configs"].as_array().is_none_or(Vec::is_empty),
        "{}",
        r.text()
    );
}

/// a2a-python 0.3 answers `/v1/card` with the JSON-schema card (security
/// schemes tagged by `type`, requirements as `{name: scopes}` maps); a2a-js
/// with ProtoJSON. A v1.0 client of either gets the v1.0 extended card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_agent_extended_card_in_json_schema_shape_or_protojson() {
    let schema = r#"{"protocolVersion":"0.3.0","name":"fake","description":"d","url":"http://agent.example/rest","preferredTransport":"HTTP+JSON","version":"1.0.0","capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"}},"security":[{"key":[]}],"supportsAuthenticatedExtendedCard":true,"skills":[{"id":"s1","name":"s","description":"sd","tags":["t"]}]}"#;
    let protojson = r#"{"protocol_version":"0.3.0","name":"fake","description":"d","url":"http://agent.example/rest","preferred_transport":"HTTP+JSON","version":"1.0.0","capabilities":{"streaming":true},"default_input_modes":["text/plain"],"default_output_modes":["text/plain"],"security_schemes":{"key":{"api_key_security_scheme":{"location":"header","name":"X-Key"}}},"security":[{"schemes":{"key":{"list":[]}}}],"skills":[{"id":"s1","name":"s","description":"sd","tags":["t"]}]}"#;
    for card in [schema, protojson] {
        let up = FakeUpstream::start(move |_| Reply::json(200, card)).await;
        let px = proxy_for(&up.url(), Version::V03);
        let r = get(px.addr, "/extendedAgentCard", &[V10]).await;
        assert_eq!(r.status, 200, "{card}: {}", r.text());
        let v = r.json();
        assert_eq!(v["name"], "fake", "{v}");
        assert_eq!(v["skills"][0]["id"], "s1", "{v}");
        assert_eq!(
            v["securitySchemes"]["key"]["apiKeySecurityScheme"]["name"], "X-Key",
            "{v}"
        );
        assert!(
            v["securityRequirements"][0]["schemes"]["key"].is_object(),
            "{v}"
        );
        assert!(
            v["supportedInterfaces"]
                .as_array()
                .is_some_and(|i| !i.is_empty()),
            "{v}"
        );
        assert_eq!(up.calls()[0].target, "/v1/card");
    }
}

/// a2a-python 0.3's REST error handler answers a SendMessage naming an
/// unknown task with 404 `{"message": "Task not found"}`: TaskNotFound for
/// a v1.0 client (404, TASK_NOT_FOUND), while a framework's 404 without an
/// A2A body (a route the agent lacks) stays UnsupportedOperation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a2a_python_03_send_404_message_is_task_not_found() {
    let body = br#"{"message":{"messageId":"m1","taskId":"nope","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let up = FakeUpstream::start(|_| Reply::json(404, r#"{"message":"Task not found"}"#)).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = post(px.addr, "/message:send", &[V10, JSON], body).await;
    assert_eq!(r.status, 404, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["status"], "NOT_FOUND", "{v}");
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND", "{v}");
    assert_eq!(up.calls()[0].target, "/v1/message:send");
    // The streaming send: the same error before any event.
    let r = post(px.addr, "/message:stream", &[V10, JSON], body).await;
    assert_eq!(r.status, 404, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND", "{v}");

    let up = FakeUpstream::start(|_| Reply::json(404, r#"{"detail":"Not Found"}"#)).await;
    let px = proxy_for(&up.url(), Version::V03);
    let r = post(px.addr, "/message:send", &[V10, JSON], body).await;
    let v = r.json();
    assert_eq!(
        v["error"]["details"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{v}"
    );
}
