//! Exact-bytes tests of the JSON-RPC layer through `translate::document`:
//! id preservation, method renaming, unknown methods, ListTasks, errors.

use translate::document::{translate, Kind};
use translate::Version::{V03, V10};

fn s(b: Vec<u8>) -> String {
    String::from_utf8(b).unwrap()
}

fn req(to: translate::Version, input: &str) -> Result<String, translate::TranslateError> {
    translate(Kind::Request, to, None, input.as_bytes()).map(s)
}

#[test]
fn ids_are_preserved_exactly() {
    for id in [
        "0",
        "\"0\"",
        "null",
        "\"abc\"",
        "-7",
        "12345678901234567890",
        "1.5",
    ] {
        let input =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tasks/get","params":{{"id":"t1"}}}}"#);
        let want =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask","params":{{"id":"t1"}}}}"#);
        assert_eq!(req(V10, &input).unwrap(), want);
        assert_eq!(req(V03, &want).unwrap(), input);
    }
}

#[test]
fn absent_id_stays_absent() {
    let input = r#"{"jsonrpc":"2.0","method":"tasks/cancel","params":{"id":"t1"}}"#;
    assert_eq!(
        req(V10, input).unwrap(),
        r#"{"jsonrpc":"2.0","method":"CancelTask","params":{"id":"t1"}}"#
    );
}

#[test]
fn response_ids_are_preserved_exactly() {
    for id in ["0", "\"0\"", "null", "\"x-1\""] {
        let v03 = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#);
        let out = translate(
            Kind::Response,
            V10,
            Some("tasks/pushNotificationConfig/delete"),
            v03.as_bytes(),
        )
        .map(s)
        .unwrap();
        assert_eq!(out, v03);
        let err =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"boom"}}}}"#);
        let out = translate(Kind::Response, V03, Some("GetTask"), err.as_bytes())
            .map(s)
            .unwrap();
        assert_eq!(out, err);
    }
}

#[test]
fn unknown_and_wrong_version_methods_are_method_not_found() {
    for (to, m) in [
        (V10, "tasks/list"),
        (V10, "SendMessage"),
        (V03, "message/send"),
        (V03, "nope"),
        (V10, ""),
    ] {
        let input = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":{{}}}}"#);
        let e = req(to, &input).unwrap_err();
        assert_eq!(e.jsonrpc_code(), -32601, "{m}: {e}");
    }
}

#[test]
fn list_tasks_to_v03_is_unsupported() {
    let e = req(
        V03,
        r#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#,
    )
    .unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32004);
    assert!(e.to_string().contains("ListTasks"), "{e}");
}

#[test]
fn bad_envelopes_are_invalid_request() {
    let e = req(
        V10,
        r#"{"jsonrpc":"1.0","id":1,"method":"tasks/get","params":{"id":"t"}}"#,
    )
    .unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32600);
    let e = req(V10, r#"{"jsonrpc":"2.0","id":1}"#).unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32600);
    let e = req(V10, r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get"}"#).unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32602);
    let e = req(V10, r#"{"jsonrpc":"2.0","#).unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32700);
}

#[test]
fn error_data_to_error_info_and_back() {
    let v03 = r#"{"jsonrpc":"2.0","id":"r1","error":{"code":-32001,"message":"Task not found","data":{"taskId":"t9","attempt":2}}}"#;
    let v10 = r#"{"jsonrpc":"2.0","id":"r1","error":{"code":-32001,"message":"Task not found","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_NOT_FOUND","domain":"a2a-protocol.org","metadata":{"taskId":"t9","attempt":"2"}},{"@type":"type.googleapis.com/google.protobuf.Value","value":{"taskId":"t9","attempt":2}}]}}"#;
    let out = translate(Kind::Response, V10, Some("tasks/get"), v03.as_bytes()).map(s);
    assert_eq!(out.unwrap(), v10);
    let back = translate(Kind::Response, V03, Some("GetTask"), v10.as_bytes()).map(s);
    assert_eq!(back.unwrap(), v03);
}

#[test]
fn error_without_data_gets_bare_error_info() {
    let v03 = r#"{"code":-32007,"message":"Authenticated Extended Card is not configured"}"#;
    let v10 = r#"{"code":-32007,"message":"Authenticated Extended Card is not configured","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"EXTENDED_AGENT_CARD_NOT_CONFIGURED","domain":"a2a-protocol.org"}]}"#;
    assert_eq!(
        s(translate(Kind::Error, V10, None, v03.as_bytes()).unwrap()),
        v10
    );
    assert_eq!(
        s(translate(Kind::Error, V03, None, v10.as_bytes()).unwrap()),
        v03
    );
}

#[test]
fn send_message_request_exact() {
    let v03 = r#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":3,"blocking":false}}}"#;
    let out = s(translate(Kind::Request, V10, None, v03.as_bytes()).unwrap());
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":3,"returnImmediately":true}}}"#
    );
    assert_eq!(
        s(translate(Kind::Request, V03, None, out.as_bytes()).unwrap()),
        v03
    );
}

#[test]
fn send_message_result_is_wrapped() {
    let v03 = r#"{"jsonrpc":"2.0","id":2,"result":{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"text","text":"ok"}]}}"#;
    let out = s(translate(Kind::Response, V10, Some("message/send"), v03.as_bytes()).unwrap());
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":2,"result":{"message":{"messageId":"m2","role":"ROLE_AGENT","parts":[{"text":"ok"}]}}}"#
    );
    assert_eq!(
        s(translate(Kind::Response, V03, Some("SendMessage"), out.as_bytes()).unwrap()),
        v03
    );
}

#[test]
fn push_config_list_result() {
    let v03 = r#"[{"taskId":"t1","pushNotificationConfig":{"id":"c1","url":"https://cb/1"}}]"#;
    let v10 = r#"{"configs":[{"id":"c1","taskId":"t1","url":"https://cb/1"}]}"#;
    let m = Some("ListTaskPushNotificationConfigs");
    assert_eq!(
        s(translate(Kind::Response, V10, m, v03.as_bytes()).unwrap()),
        v10
    );
    assert_eq!(
        s(translate(Kind::Response, V03, m, v10.as_bytes()).unwrap()),
        v03
    );
}

#[test]
fn stream_event_envelope() {
    let v10 = r#"{"jsonrpc":"2.0","id":0,"result":{"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}}"#;
    let out = s(translate(
        Kind::Event,
        V03,
        Some("SendStreamingMessage"),
        v10.as_bytes(),
    )
    .unwrap());
    assert_eq!(
        out,
        r#"{"jsonrpc":"2.0","id":0,"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}}"#
    );
    let back = s(translate(Kind::Event, V10, Some("message/stream"), out.as_bytes()).unwrap());
    assert_eq!(back, v10);
}

#[test]
fn response_needs_method() {
    let e = translate(
        Kind::Response,
        V10,
        None,
        br#"{"jsonrpc":"2.0","id":1,"result":null}"#,
    )
    .unwrap_err();
    assert_eq!(e.jsonrpc_code(), -32602);
}

/// a2a-python 0.3 answers a push-config delete without its `null` result:
/// taken as that result. Any other method so answered stays invalid.
#[test]
fn a_delete_answered_without_a_result_succeeded() {
    let bare: translate::v03::jsonrpc::Response =
        serde_json::from_str(r#"{"id":"d1","jsonrpc":"2.0"}"#).unwrap();
    let v10 =
        translate::jsonrpc::response_to_v10(bare.clone(), "tasks/pushNotificationConfig/delete")
            .unwrap();
    let v = serde_json::to_value(&v10).unwrap();
    assert_eq!(v["id"], "d1", "{v}");
    assert!(v.get("error").is_none(), "{v}");
    assert!(v.as_object().unwrap().contains_key("result"), "{v}");
    assert!(translate::jsonrpc::response_to_v10(bare, "tasks/get").is_err());
}

/// Numbers cross exactly, on the transcoder's path and on the typed path
/// (an escape in a string sends the document there): the a2a-python SDK
/// writes every `google.protobuf.Struct` number as a double
/// (`8729470021900460.0`), which a parser that is one unit in the last
/// place off turned into `8729470021900461.0`.
#[test]
fn numbers_cross_exactly() {
    let numbers = r#"{"a":8729470021900460.0,"b":-1818499682706560.8,"c":0.1,"d":1e300,"e":123456789012345678}"#;
    for text in ["x", "\\u00e9"] {
        let v10 = format!(
            r#"{{"id":"t","status":{{"state":"TASK_STATE_WORKING"}},"metadata":{numbers},"artifacts":[{{"artifactId":"a","parts":[{{"text":"{text}"}}]}}]}}"#
        );
        let out = translate(Kind::Task, V03, None, v10.as_bytes()).expect("to v0.3");
        let out: serde_json::Value = serde_json::from_slice(&out).expect("json");
        let want: serde_json::Value = serde_json::from_str(numbers).expect("json");
        assert_eq!(out["metadata"], want, "{text}");
        let back = translate(
            Kind::Task,
            V10,
            None,
            &serde_json::to_vec(&out).expect("json"),
        )
        .expect("to v1.0");
        let back: serde_json::Value = serde_json::from_slice(&back).expect("json");
        assert_eq!(back["metadata"], want, "{text}");
    }
}
