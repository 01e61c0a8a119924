use serde_json::{json, Value};
use translate::method::Method;

use super::*;
use crate::route::PathParams;

fn rpc(client: Version, method: Method, id: Value) -> JsonRpcCodec {
    let name = method.name(client).expect("a method of that version");
    JsonRpcCodec::new(client, client.other(), name.to_string(), Some(id))
}

fn parse(b: &[u8]) -> Value {
    serde_json::from_slice(b).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(b)))
}

/// The same failure through each codec: the binding's own shape and status.
#[test]
fn one_failure_in_each_bindings_shape() {
    let not_found = Failure::Translate {
        code: translate::code::ErrorCode::TaskNotFound.code(),
        message: "no such task".into(),
    };
    // JSON-RPC: an envelope with the client's id, A2A errors with 200.
    for client in Version::ALL {
        let r = rpc(client, Method::GetTask, json!(7)).error(&not_found);
        assert_eq!(r.status, 200, "{client:?}");
        let v = parse(&r.body);
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], 7);
        assert_eq!(v["error"]["code"], -32001, "{v}");
    }
    // A v0.3 streaming client gets it as one SSE frame.
    let r = rpc(Version::V03, Method::SubscribeToTask, json!(7)).error(&not_found);
    assert_eq!((r.status, r.content_type), (200, "text/event-stream"));
    let text = String::from_utf8(r.body.to_vec()).unwrap();
    let data = text
        .strip_prefix("data: ")
        .and_then(|d| d.strip_suffix("\n\n"));
    assert_eq!(parse(data.unwrap().as_bytes())["error"]["code"], -32001);
    // HTTP+JSON v1.0: the google.rpc shape with its status.
    let r = RestCodec::new(Version::V10, Version::V03, Method::GetTask).error(&not_found);
    assert_eq!(r.status, 404);
    let v = parse(&r.body);
    assert_eq!(v["error"]["code"], 404, "{v}");
    assert_eq!(v["error"]["status"], "NOT_FOUND");
    assert_eq!(v["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
    // HTTP+JSON v0.3: `{code, message}` with its status.
    let r = RestCodec::new(Version::V03, Version::V10, Method::GetTask).error(&not_found);
    assert_eq!(r.status, 404);
    assert_eq!(
        parse(&r.body),
        json!({"code": -32001, "message": "no such task"})
    );
    // A transport condition keeps its HTTP status on every binding.
    let f = Failure::UpstreamTimeout;
    let statuses = [
        rpc(Version::V10, Method::GetTask, json!(1))
            .error(&f)
            .status,
        RestCodec::new(Version::V10, Version::V03, Method::GetTask)
            .error(&f)
            .status,
        RestCodec::new(Version::V03, Version::V10, Method::GetTask)
            .error(&f)
            .status,
    ];
    assert_eq!(statuses, [504, 504, 504]);
}

/// A JSON-RPC id a JSON number cannot carry travels as a token: every
/// error the codec renders writes it back as the client wrote it.
#[test]
fn jsonrpc_errors_keep_an_exact_id() {
    let raw = "123456789012345678901234567890";
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":{raw},"method":"GetTask","params":{{"id":"t1"}}}}"#);
    let id = parse(body.as_bytes())["id"].clone();
    let mut c = JsonRpcCodec::new(Version::V10, Version::V03, "GetTask".into(), Some(id));
    let req = ClientRequest {
        body: body.as_bytes(),
        params: &PathParams::default(),
        query: None,
    };
    c.encode_request(req).unwrap();
    let r = c.error(&Failure::UpstreamTimeout);
    let text = String::from_utf8(r.body.to_vec()).unwrap();
    assert!(text.contains(&format!(r#""id":{raw}"#)), "{text}");
    assert!(!text.contains("a2a-proxy-id-"), "{text}");
}

/// A JSON-RPC request of `m` in `v` (the fixtures' envelopes).
fn jsonrpc_request(m: Method, v: Version) -> Option<Vec<u8>> {
    let case = match m {
        Method::SendMessage => "send-message",
        Method::SendStreamingMessage => "send-streaming-message",
        Method::GetTask => "get-task",
        Method::ListTasks => {
            let name = m.name(v)?;
            return Some(
                format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{name}","params":{{}}}}"#)
                    .into_bytes(),
            );
        }
        Method::CancelTask => "cancel-task",
        Method::SubscribeToTask => "resubscribe",
        Method::CreatePushConfig => "set-push-config",
        Method::GetPushConfig => "get-push-config",
        Method::ListPushConfigs => "list-push-configs",
        Method::DeletePushConfig => "delete-push-config",
        Method::GetExtendedCard => "get-extended-card",
    };
    let tag = match v {
        Version::V03 => "v03",
        Version::V10 => "v10",
    };
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../fixtures/request/{case}.{tag}.json"));
    Some(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// An HTTP+JSON request body of `m` in `v` (its path names task t1 and
/// config c1).
fn rest_body(m: Method, v: Version) -> &'static [u8] {
    match (m, v) {
        (Method::SendMessage | Method::SendStreamingMessage, Version::V10) => {
            br#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#
        }
        (Method::SendMessage | Method::SendStreamingMessage, Version::V03) => {
            br#"{"message":{"messageId":"m1","role":"ROLE_USER","content":[{"text":"hi"}]}}"#
        }
        (Method::CreatePushConfig, Version::V10) => br#"{"id":"c1","url":"https://h.example/cb"}"#,
        (Method::CreatePushConfig, Version::V03) => {
            br#"{"name":"tasks/t1/pushNotificationConfigs/c1","pushNotificationConfig":{"id":"c1","url":"https://h.example/cb"}}"#
        }
        _ => b"",
    }
}

/// Every operation, in both directions, on both HTTP codecs: a request
/// the agent's version reads, or a clear refusal. The refusals are exactly
/// the operations the other version lacks.
#[test]
fn every_method_encodes_on_both_http_codecs_or_is_refused() {
    let params = PathParams {
        tenant: None,
        task_id: Some("t1".into()),
        config_id: Some("c1".into()),
    };
    let mut refused = Vec::new();
    for m in Method::ALL {
        for client in Version::ALL {
            let up = client.other();
            // JSON-RPC.
            match jsonrpc_request(m, client) {
                None => refused.push(format!("jsonrpc {m:?} {client:?}: no such method")),
                Some(body) => {
                    let mut c = rpc(client, m, json!(1));
                    assert_eq!(c.made_for().op, Some(m));
                    let req = ClientRequest {
                        body: &body,
                        params: &params,
                        query: None,
                    };
                    match c.encode_request(req) {
                        Ok(out) => {
                            let v = parse(&out);
                            assert_eq!(v["method"], m.name(up).unwrap(), "{m:?} {client:?}: {v}");
                            assert!(c.upstream_request().is_none());
                        }
                        Err(Failure::Translate { code: -32004, .. }) => {
                            refused.push(format!("jsonrpc {m:?} {client:?}: unsupported"))
                        }
                        Err(f) => panic!("jsonrpc {m:?} {client:?}: {f:?}"),
                    }
                }
            }
            // HTTP+JSON.
            let mut c = RestCodec::new(client, up, m);
            let req = ClientRequest {
                body: rest_body(m, client),
                params: &params,
                query: None,
            };
            match c.encode_request(req) {
                Ok(body) => {
                    let r = c.upstream_request().expect("a rebuilt request");
                    assert!(r.path_and_query.starts_with('/'), "{m:?} {client:?}");
                    assert_eq!(r.body.as_deref().unwrap_or_default(), &body[..]);
                    if !body.is_empty() {
                        parse(&body);
                    }
                }
                Err(Failure::Translate { code: -32004, .. }) => {
                    refused.push(format!("rest {m:?} {client:?}: unsupported"))
                }
                Err(Failure::Translate { code: -32601, .. }) => {
                    refused.push(format!("rest {m:?} {client:?}: no such method"))
                }
                Err(f) => panic!("rest {m:?} {client:?}: {f:?}"),
            }
        }
    }
    assert_eq!(
        refused,
        [
            "jsonrpc ListTasks V03: no such method",
            "rest ListTasks V03: no such method",
            "jsonrpc ListTasks V10: unsupported",
            "rest ListTasks V10: unsupported",
        ]
    );
}

/// Answers and events: the codec says where the result sits, and a REST
/// error status comes back in the client's terms.
#[test]
fn answers_events_and_statuses() {
    let c = rpc(Version::V10, Method::GetTask, json!(3));
    assert_eq!(c.shape().task_pointer(), "/result/task");
    let d = c.answer((
        200,
        br#"{"jsonrpc":"2.0","id":3,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}}"#,
    ));
    assert_eq!(d.status, None);
    assert_eq!(
        parse(&d.body)["result"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    assert!(c.succeeded(200, &d));
    assert_eq!(c.client_status(404), 404);

    let c = RestCodec::new(Version::V10, Version::V03, Method::CancelTask);
    assert_eq!(c.shape().task_pointer(), "/task");
    assert_eq!(c.client_status(409), 400);
    let d = c.answer((409, br#"{"message":"not cancelable"}"#));
    assert!(!c.succeeded(409, &d));
    assert_eq!(
        parse(&d.body)["error"]["details"][0]["reason"],
        "TASK_NOT_CANCELABLE"
    );
    // A v1.0 400 covers several v0.3 statuses: the body's code names it.
    let c = RestCodec::new(Version::V03, Version::V10, Method::CancelTask);
    let d = c.answer((
        400,
        br#"{"error":{"code":400,"status":"FAILED_PRECONDITION","message":"no","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_CANCELABLE","domain":"a2a-protocol.org"}]}}"#,
    ));
    assert_eq!(
        d.status,
        Some(409),
        "{:?}",
        String::from_utf8_lossy(&d.body)
    );
    let (e, facts) = RestCodec::new(Version::V10, Version::V03, Method::SubscribeToTask).event((
        r#"{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}"#,
        true,
    ));
    assert!(facts.is_none());
    assert_eq!(parse(&e)["statusUpdate"]["taskId"], "t1");
}

#[test]
fn extension_headers_merge_both_spellings() {
    let mut h = http::HeaderMap::new();
    assert_eq!(extensions_for(Version::V10, &h), None);
    h.append("x-a2a-extensions", "urn:a, urn:b".parse().unwrap());
    h.append("a2a-extensions", "urn:c".parse().unwrap());
    h.append("a2a-extensions", "urn:b,urn:d".parse().unwrap());
    assert_eq!(
        extensions_for(Version::V10, &h),
        Some(("A2A-Extensions", "urn:c,urn:b,urn:d,urn:a".to_string()))
    );
    assert_eq!(
        extensions_for(Version::V03, &h).map(|(n, _)| n),
        Some("X-A2A-Extensions")
    );
}

/// A result the proxy writes itself, as one SSE event of each binding.
#[test]
fn results_the_proxy_writes_take_the_bindings_frame() {
    let task = br#"{"task":{"id":"t1"}}"#;
    let e = rpc(Version::V10, Method::SubscribeToTask, json!("s")).result_event(task);
    let text = String::from_utf8(e.to_vec()).unwrap();
    let data = text
        .strip_prefix("data: ")
        .and_then(|d| d.strip_suffix("\n\n"));
    let v = parse(data.expect("one data frame").as_bytes());
    assert_eq!(
        v,
        json!({"jsonrpc": "2.0", "id": "s", "result": {"task": {"id": "t1"}}})
    );
    let e = RestCodec::new(Version::V10, Version::V03, Method::SubscribeToTask).result_event(task);
    assert_eq!(&e[..], &b"data: {\"task\":{\"id\":\"t1\"}}\n\n"[..]);
}
