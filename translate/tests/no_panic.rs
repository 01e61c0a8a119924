//! Invariant 1: `document::translate` never panics. Arbitrary JSON (and
//! arbitrary bytes) is fed to every `Kind`, in both directions, with every
//! method name of both versions and with none; each call must return `Ok`
//! or `Err`.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use translate::document::{translate, translate_typed, Kind};
use translate::method::Method;
use translate::Version;

/// Member names the translators look at, so that generated objects reach
/// past the first layer of parsing.
const KEYS: &[&str] = &[
    "kind",
    "text",
    "file",
    "data",
    "bytes",
    "uri",
    "name",
    "mimeType",
    "raw",
    "url",
    "filename",
    "mediaType",
    "metadata",
    "messageId",
    "role",
    "parts",
    "contextId",
    "taskId",
    "id",
    "status",
    "state",
    "timestamp",
    "message",
    "artifact",
    "artifacts",
    "artifactId",
    "history",
    "final",
    "append",
    "lastChunk",
    "task",
    "statusUpdate",
    "artifactUpdate",
    "jsonrpc",
    "method",
    "params",
    "result",
    "error",
    "code",
    "configuration",
    "blocking",
    "historyLength",
    "returnImmediately",
    "pushNotificationConfig",
    "taskPushNotificationConfig",
    "authentication",
    "schemes",
    "scheme",
    "credentials",
    "token",
    "tenant",
    "pushNotificationConfigId",
    "configs",
    "nextPageToken",
    "@type",
    "value",
    "reason",
    "acceptedOutputModes",
    "capabilities",
    "supportedInterfaces",
    "securitySchemes",
    "skills",
    "x-extra",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,8}".prop_map(Value::String),
        proptest::sample::select(vec![
            "2.0",
            "text",
            "file",
            "data",
            "message",
            "task",
            "status-update",
            "artifact-update",
            "user",
            "agent",
            "ROLE_USER",
            "completed",
            "TASK_STATE_COMPLETED",
            "working",
            "aGVsbG8=",
            "2024-03-15T18:30:00Z",
            "Bearer",
            "SendMessage",
            "message/send",
            "type.googleapis.com/google.protobuf.Value",
        ])
        .prop_map(|s| Value::String(s.to_string())),
    ]
}

/// Arbitrary JSON, biased towards objects with meaningful member names.
fn arb_json() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 8, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(Value::Array),
            btree_map(proptest::sample::select(KEYS), inner.clone(), 0..6).prop_map(|m| {
                Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
            btree_map("[a-zA-Z]{0,5}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An input document: bare JSON, or JSON inside a request / response envelope.
fn document() -> impl Strategy<Value = Vec<u8>> {
    let names: Vec<&'static str> = Method::ALL
        .iter()
        .flat_map(|m| Version::ALL.iter().filter_map(move |v| m.name(*v)))
        .chain(["", "tasks/list", "nope"])
        .collect();
    prop_oneof![
        3 => arb_json().prop_map(|v| serde_json::to_vec(&v).unwrap_or_default()),
        2 => (arb_json(), proptest::sample::select(names), arb_json()).prop_map(|(id, m, p)| {
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"method":m,"params":p}))
                .unwrap_or_default()
        }),
        2 => (arb_json(), arb_json()).prop_map(|(id, r)| {
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"result":r})).unwrap_or_default()
        }),
        1 => (arb_json(), any::<i64>(), arb_json()).prop_map(|(id, c, d)| {
            serde_json::to_vec(&json!({"jsonrpc":"2.0","id":id,"error":{"code":c,"message":"m","data":d}}))
                .unwrap_or_default()
        }),
        1 => vec(any::<u8>(), 0..64),
    ]
}

fn method_names() -> Vec<Option<&'static str>> {
    let mut out = vec![None, Some("nope")];
    for m in Method::ALL {
        for v in Version::ALL {
            if let Some(n) = m.name(v) {
                out.push(Some(n));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn translate_never_panics(input in document()) {
        let methods = method_names();
        for kind in Kind::ALL {
            for to in Version::ALL {
                for m in &methods {
                    let _ = translate(kind, to, *m, &input);
                    let _ = translate_typed(kind, to, *m, &input);
                }
            }
        }
    }

    #[test]
    fn outputs_are_json(input in arb_json()) {
        let bytes = serde_json::to_vec(&input).unwrap_or_default();
        for kind in Kind::ALL {
            for to in Version::ALL {
                if let Ok(out) = translate(kind, to, Some("SendMessage"), &bytes) {
                    prop_assert!(serde_json::from_slice::<Value>(&out).is_ok());
                }
            }
        }
    }
}
