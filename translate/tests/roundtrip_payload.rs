//! Payload entities (parts, messages, tasks, artifacts, events): same-version
//! serde round trips, cross-version round trips on the lossless domain,
//! normal-form properties of the lossy cases, and exact-JSON unit tests.

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use translate::strategy::payload::*;
use translate::{artifact, event, message, part, task, v03, v10};

fn reparse<T: Serialize + DeserializeOwned>(x: &T) -> T {
    let bytes = serde_json::to_vec(x).expect("render");
    serde_json::from_slice(&bytes).expect("parse rendered value")
}

fn from_json<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("valid input")
}

fn to_json<T: Serialize>(x: &T) -> Value {
    serde_json::to_value(x).expect("render")
}

/// Declares one property per (strategy, assertion) pair.
macro_rules! props {
    ($($name:ident: $strategy:expr => |$x:ident| $body:expr;)*) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(1000))]
            $(
                #[test]
                fn $name($x in $strategy) {
                    $body;
                }
            )*
        }
    };
}

props! {
    serde_v03_part: v03_part() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_message: v03_message() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_task_status: v03_task_status() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_task: v03_task() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_artifact: v03_artifact() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_status_update: v03_status_update() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_artifact_update: v03_artifact_update() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v03_stream_event: v03_stream_event() => |x| prop_assert_eq!(reparse(&x), x);

    serde_v10_part: v10_part() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_message: v10_message() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_task_status: v10_task_status() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_task: v10_task() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_artifact: v10_artifact() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_status_update: v10_status_update() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_artifact_update: v10_artifact_update() => |x| prop_assert_eq!(reparse(&x), x);
    serde_v10_stream_response: v10_stream_response() => |x| prop_assert_eq!(reparse(&x), x);

    cross_v03_part: v03_part() =>
        |x| prop_assert_eq!(part::to_v03(part::to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_message: v03_message() =>
        |x| prop_assert_eq!(message::to_v03(message::to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_task_status: v03_task_status() =>
        |x| prop_assert_eq!(task::status_to_v03(task::status_to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_task: v03_task() =>
        |x| prop_assert_eq!(task::to_v03(task::to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_artifact: v03_artifact() =>
        |x| prop_assert_eq!(artifact::to_v03(artifact::to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_status_update: v03_status_update() => |x| prop_assert_eq!(
        event::status_update_to_v03(event::status_update_to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_artifact_update: v03_artifact_update() => |x| prop_assert_eq!(
        event::artifact_update_to_v03(event::artifact_update_to_v10(x.clone()).unwrap()).unwrap(), x);
    cross_v03_stream_event: v03_stream_event() =>
        |x| prop_assert_eq!(event::stream_to_v03(event::stream_to_v10(x.clone()).unwrap()).unwrap(), x);

    cross_v10_part: v10_part() =>
        |y| prop_assert_eq!(part::to_v10(part::to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_message: v10_message() =>
        |y| prop_assert_eq!(message::to_v10(message::to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_task_status: v10_task_status() =>
        |y| prop_assert_eq!(task::status_to_v10(task::status_to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_task: v10_task() =>
        |y| prop_assert_eq!(task::to_v10(task::to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_artifact: v10_artifact() =>
        |y| prop_assert_eq!(artifact::to_v10(artifact::to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_status_update: v10_status_update() => |y| prop_assert_eq!(
        event::status_update_to_v10(event::status_update_to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_artifact_update: v10_artifact_update() => |y| prop_assert_eq!(
        event::artifact_update_to_v10(event::artifact_update_to_v03(y.clone()).unwrap()).unwrap(), y);
    cross_v10_stream_response: v10_stream_response() =>
        |y| prop_assert_eq!(event::stream_to_v10(event::stream_to_v03(y.clone()).unwrap()).unwrap(), y);

    // Rendered translations parse back as the target version's type.
    rendered_v10_is_valid: v03_stream_event() => |x| {
        let y = event::stream_to_v10(x).unwrap();
        prop_assert_eq!(reparse(&y), y);
    };
    rendered_v03_is_valid: v10_stream_response() => |y| {
        let x = event::stream_to_v03(y).unwrap();
        prop_assert_eq!(reparse(&x), x);
    };
}

// ------------------------------------------------------------ normal forms

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Whatever `final` a v0.3 event carries, the round trip recomputes it
    /// from the state (terminal states only).
    #[test]
    fn final_is_recomputed(x in v03_status_update(), claimed in any::<bool>()) {
        let mut input = x.clone();
        input.is_final = claimed;
        let back = event::status_update_to_v03(event::status_update_to_v10(input).unwrap()).unwrap();
        prop_assert_eq!(back.is_final, x.status.state.is_terminal());
        prop_assert_eq!(back, x);
    }

    /// Naive and offset timestamps become the UTC `Z` form.
    #[test]
    fn timestamps_are_normalised(t in timestamp(), hours in -12i32..=12) {
        let naive = t.trim_end_matches('Z').to_string();
        let plus_zero = format!("{naive}+00:00");
        let utc = chrono::DateTime::parse_from_rfc3339(&t).unwrap();
        let offset = chrono::FixedOffset::east_opt(hours * 3600).unwrap();
        let shifted = utc.with_timezone(&offset).to_rfc3339();
        for raw in [naive, plus_zero, shifted, t.clone()] {
            let s = v03::task::TaskStatus {
                state: v03::task::TaskState::Working,
                message: None,
                timestamp: Some(raw.clone()),
                extra: Default::default(),
            };
            let v = task::status_to_v10(s).unwrap();
            prop_assert_eq!(v.timestamp.as_deref(), Some(t.as_str()), "from {}", raw);
        }
    }

    /// `ROLE_UNSPECIFIED` becomes agent, i.e. `ROLE_AGENT` coming back.
    #[test]
    fn unspecified_role_becomes_agent(y in v10_message()) {
        let mut input = y.clone();
        input.role = v10::message::Role::Unspecified;
        let x = message::to_v03(input).unwrap();
        prop_assert_eq!(x.role, v03::message::Role::Agent);
        let mut want = y;
        want.role = v10::message::Role::Agent;
        prop_assert_eq!(message::to_v10(x).unwrap(), want);
    }

    /// Unrecognized v1.0 states become `unknown` / `TASK_STATE_UNSPECIFIED`.
    #[test]
    fn unrecognized_state_becomes_unknown(name in "X_[A-Z_]{0,18}", n in 9i64..1000) {
        for raw in [json!(name), json!(n)] {
            let s: v10::task::TaskStatus = from_json(json!({ "state": raw }));
            let x = task::status_to_v03(s).unwrap();
            prop_assert_eq!(x.state, v03::task::TaskState::Unknown);
            let back = task::status_to_v10(x).unwrap();
            prop_assert_eq!(back.state, v10::task::TaskState::Unspecified);
        }
    }

    /// `filename` / `mediaType` on v1.0 text and data parts are dropped.
    #[test]
    fn non_file_part_attributes_are_dropped(
        y in v10_part(), filename in proptest::option::of("[a-z]{1,5}"), media in proptest::option::of("[a-z]{1,5}")
    ) {
        let is_file = matches!(
            y.content,
            v10::part::PartContent::Raw(_) | v10::part::PartContent::Url(_)
        );
        let mut input = y.clone();
        if !is_file {
            input.filename = filename;
            input.media_type = media;
        }
        prop_assert_eq!(part::to_v10(part::to_v03(input).unwrap()).unwrap(), y);
    }

    /// URL-safe and unpadded base64 is accepted; output is standard.
    #[test]
    fn base64_spellings_are_accepted(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
        use base64::Engine as _;
        for enc in [STANDARD.encode(&bytes), STANDARD_NO_PAD.encode(&bytes),
                    URL_SAFE.encode(&bytes), URL_SAFE_NO_PAD.encode(&bytes)] {
            let p: v03::part::Part = from_json(json!({"kind": "file", "file": {"bytes": enc}}));
            let y = part::to_v10(p).unwrap();
            prop_assert_eq!(&y.content, &v10::part::PartContent::Raw(bytes.clone()));
            let back = to_json(&part::to_v03(y).unwrap());
            prop_assert_eq!(back, json!({"kind": "file", "file": {"bytes": STANDARD.encode(&bytes)}}));
        }
    }

    /// A v1.0 empty `contextId` on a task comes back absent.
    #[test]
    fn empty_task_context_id_becomes_absent(y in v10_task()) {
        let mut input = y.clone();
        input.context_id = Some(String::new());
        let mut want = y;
        want.context_id = None;
        prop_assert_eq!(task::to_v10(task::to_v03(input).unwrap()).unwrap(), want);
    }

    /// Arbitrary JSON never panics the parsers or the translators.
    #[test]
    fn arbitrary_json_never_panics(v in json_value()) {
        if let Ok(x) = serde_json::from_value::<v03::event::StreamEvent>(v.clone()) {
            let _ = event::stream_to_v10(x);
        }
        if let Ok(y) = serde_json::from_value::<v10::event::StreamResponse>(v.clone()) {
            let _ = event::stream_to_v03(y);
        }
        if let Ok(x) = serde_json::from_value::<v03::part::Part>(v.clone()) {
            let _ = part::to_v10(x);
        }
        if let Ok(y) = serde_json::from_value::<v10::part::Part>(v) {
            let _ = part::to_v03(y);
        }
    }
}

// ------------------------------------------------------------ exact JSON

#[test]
fn data_part_compat_wraps_and_unwraps() {
    let y: v10::part::Part = from_json(json!({"data": [1, "a"], "metadata": {"k": 1}}));
    let x = part::to_v03(y.clone()).unwrap();
    assert_eq!(
        serde_json::to_string(&x).unwrap(),
        r#"{"kind":"data","data":{"value":[1,"a"]},"metadata":{"k":1,"data_part_compat":true}}"#
    );
    assert_eq!(part::to_v10(x).unwrap(), y);

    let null: v10::part::Part = from_json(json!({"data": null}));
    let x = part::to_v03(null.clone()).unwrap();
    assert_eq!(
        serde_json::to_string(&x).unwrap(),
        r#"{"kind":"data","data":{"value":null},"metadata":{"data_part_compat":true}}"#
    );
    let back = part::to_v10(x).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), r#"{"data":null}"#);
    assert_eq!(back, null);

    // The flag must be exactly `true`; otherwise the object stays an object.
    let x: v03::part::Part = from_json(
        json!({"kind": "data", "data": {"value": 1}, "metadata": {"data_part_compat": "true"}}),
    );
    assert_eq!(
        to_json(&part::to_v10(x).unwrap()),
        json!({"data": {"value": 1}, "metadata": {"data_part_compat": "true"}})
    );
}

#[test]
fn base64_url_safe_input_renders_standard() {
    let x: v03::part::Part =
        serde_json::from_str(r#"{"kind":"file","file":{"bytes":"-_8","name":"a.bin","mimeType":"application/octet-stream"}}"#)
            .unwrap();
    let y = part::to_v10(x).unwrap();
    assert_eq!(
        serde_json::to_string(&y).unwrap(),
        r#"{"raw":"+/8=","filename":"a.bin","mediaType":"application/octet-stream"}"#
    );
    let y: v10::part::Part = serde_json::from_str(r#"{"raw":"-_8"}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&part::to_v03(y).unwrap()).unwrap(),
        r#"{"kind":"file","file":{"bytes":"+/8="}}"#
    );
    let bad: v03::part::Part = from_json(json!({"kind": "file", "file": {"bytes": "!!"}}));
    let err = part::to_v10(bad).unwrap_err();
    assert_eq!(err.jsonrpc_code(), -32602);
    assert!(serde_json::from_str::<v10::part::Part>(r#"{"raw":"!!"}"#).is_err());
}

#[test]
fn missing_kind_is_inferred() {
    let p: v03::part::Part = serde_json::from_str(r#"{"text":"hi"}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&p).unwrap(),
        r#"{"kind":"text","text":"hi"}"#
    );
    let p: v03::part::Part = serde_json::from_str(r#"{"data":{}}"#).unwrap();
    assert!(matches!(p, v03::part::Part::Data(_)));
    let p: v03::part::Part = serde_json::from_str(r#"{"file":{"uri":"u"}}"#).unwrap();
    assert!(matches!(p, v03::part::Part::File(_)));

    let cases = [
        (
            json!({"messageId": "m", "role": "user", "parts": []}),
            "message",
        ),
        (
            json!({"id": "t", "contextId": "c", "status": {"state": "working"}}),
            "task",
        ),
        (
            json!({"taskId": "t", "contextId": "c", "status": {"state": "completed"}, "final": true}),
            "status-update",
        ),
        (
            json!({"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": []}}),
            "artifact-update",
        ),
    ];
    for (input, kind) in cases {
        let e: v03::event::StreamEvent = from_json(input);
        assert_eq!(to_json(&e)["kind"], json!(kind));
    }
    let m: v03::message::Message =
        serde_json::from_str(r#"{"messageId":"m","role":"agent","parts":[]}"#).unwrap();
    assert_eq!(
        serde_json::to_string(&m).unwrap(),
        r#"{"kind":"message","messageId":"m","role":"agent","parts":[]}"#
    );
}

#[test]
fn wrong_kind_is_rejected() {
    let bad_parts = [
        r#"{"kind":"txt","text":"hi"}"#,
        r#"{"kind":"file","text":"hi"}"#,
        r#"{"kind":1,"text":"hi"}"#,
        r#"{"kind":null,"text":"hi"}"#,
        r#"{"metadata":{}}"#,
        r#"[]"#,
    ];
    for bad in bad_parts {
        assert!(
            serde_json::from_str::<v03::part::Part>(bad).is_err(),
            "{bad}"
        );
    }
    let bad_events = [
        r#"{"kind":"task","messageId":"m","role":"user","parts":[]}"#,
        r#"{"kind":"statusUpdate","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}"#,
        r#"{"kind":"message"}"#,
        r#"{}"#,
    ];
    for bad in bad_events {
        assert!(
            serde_json::from_str::<v03::event::StreamEvent>(bad).is_err(),
            "{bad}"
        );
    }
    assert!(serde_json::from_str::<v03::message::Message>(
        r#"{"kind":"task","messageId":"m","role":"user","parts":[]}"#
    )
    .is_err());
    assert!(serde_json::from_str::<v03::task::TaskStatus>(r#"{"state":"cancelled"}"#).is_err());
}

#[test]
fn file_with_neither_or_both_is_rejected() {
    for file in [json!({"name": "x"}), json!({"bytes": "AA==", "uri": "u"})] {
        let p: v03::part::Part = from_json(json!({"kind": "file", "file": file}));
        let err = part::to_v10(p).unwrap_err();
        assert_eq!(err.jsonrpc_code(), -32602, "{err}");
        assert!(err.to_string().contains("file part"), "{err}");
    }
    for bad in [r#"{}"#, r#"{"text":"a","url":"u"}"#, r#"{"metadata":{}}"#] {
        assert!(
            serde_json::from_str::<v10::part::Part>(bad).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn liberal_inputs_are_accepted_strict_ones_rejected() {
    let r: v10::event::StreamResponse = from_json(json!({
        "status_update": {"task_id": "t", "context_id": "c", "status": {"state": "TASK_STATE_CANCELLED"}}
    }));
    let x = event::stream_to_v03(r).unwrap();
    assert_eq!(
        to_json(&x),
        json!({"kind": "status-update", "taskId": "t", "contextId": "c",
               "status": {"state": "canceled"}, "final": true})
    );
    let m: v10::message::Message = from_json(
        json!({"message_id": "m", "role": 1, "reference_task_ids": ["t"], "parts": [{"text": "a", "media_type": "text/plain"}]}),
    );
    assert_eq!(
        to_json(&message::to_v03(m).unwrap()),
        json!({"kind": "message", "messageId": "m", "role": "user", "referenceTaskIds": ["t"],
               "parts": [{"kind": "text", "text": "a"}]})
    );
    let s: v10::task::TaskStatus = from_json(json!({"state": 6}));
    assert_eq!(s.state, v10::task::TaskState::InputRequired);
    let s: v10::task::TaskStatus = from_json(json!({"state": "TASK_STATE_PAUSED"}));
    assert_eq!(to_json(&s), json!({"state": "TASK_STATE_PAUSED"}));
    assert_eq!(
        to_json(&task::status_to_v03(s).unwrap()),
        json!({"state": "unknown"})
    );
    for role in [json!("ROLE_BOT"), json!(7), json!(-1)] {
        let m: v10::message::Message = from_json(json!({"messageId": "m", "role": role}));
        assert_eq!(m.role, v10::message::Role::Unspecified);
        assert_eq!(message::to_v03(m).unwrap().role, v03::message::Role::Agent);
    }
    let e: v03::event::TaskStatusUpdateEvent = from_json(
        json!({"kind": "status-update", "taskId": "t", "contextId": "c", "status": {"state": "working"}}),
    );
    assert!(!e.is_final);
    assert_eq!(to_json(&e)["final"], json!(false));
    let err = serde_json::from_str::<v03::part::Part>(r#"{"kind":"data","data":[1]}"#).unwrap_err();
    assert!(err.to_string().contains("data part"), "{err}");
    let err = serde_json::from_str::<v03::message::Message>(
        r#"{"messageId":"m","role":"system","parts":[]}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("role"), "{err}");
}

#[test]
fn interrupted_states_are_not_final() {
    for (state, fin) in [
        ("TASK_STATE_INPUT_REQUIRED", false),
        ("TASK_STATE_AUTH_REQUIRED", false),
        ("TASK_STATE_WORKING", false),
        ("TASK_STATE_COMPLETED", true),
        ("TASK_STATE_FAILED", true),
        ("TASK_STATE_REJECTED", true),
    ] {
        let e: v10::event::TaskStatusUpdateEvent =
            from_json(json!({"taskId": "t", "contextId": "c", "status": {"state": state}}));
        assert_eq!(
            event::status_update_to_v03(e).unwrap().is_final,
            fin,
            "{state}"
        );
    }
}

#[test]
fn task_without_context_id_and_stream_wrappers() {
    let y: v10::event::StreamResponse =
        from_json(json!({"task": {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}}));
    let x = event::stream_to_v03(y.clone()).unwrap();
    assert_eq!(
        serde_json::to_string(&x).unwrap(),
        r#"{"kind":"task","id":"t","contextId":"","status":{"state":"submitted"}}"#
    );
    let back = event::stream_to_v10(x).unwrap();
    assert_eq!(
        serde_json::to_string(&back).unwrap(),
        r#"{"task":{"id":"t","status":{"state":"TASK_STATE_SUBMITTED"}}}"#
    );
    assert_eq!(back, y);
}

#[test]
fn colliding_unknown_members_are_dropped() {
    let y: v10::part::Part = from_json(json!({"text": "hi", "kind": "data", "x-keep": 1}));
    assert_eq!(
        serde_json::to_string(&part::to_v03(y).unwrap()).unwrap(),
        r#"{"kind":"text","text":"hi","x-keep":1}"#
    );
    let x: v03::part::Part =
        from_json(json!({"kind": "text", "text": "hi", "raw": "AA==", "media_type": "a"}));
    assert_eq!(
        serde_json::to_string(&part::to_v10(x).unwrap()).unwrap(),
        r#"{"text":"hi"}"#
    );
}

#[test]
fn bad_timestamp_is_rejected() {
    let s: v03::task::TaskStatus = from_json(json!({"state": "working", "timestamp": "yesterday"}));
    assert_eq!(task::status_to_v10(s).unwrap_err().jsonrpc_code(), -32602);
}

fn nested(depth: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

#[test]
fn deep_nesting_is_an_error_or_fine_never_a_crash() {
    for depth in [10, 100, 120, 126, 127, 200, 5000] {
        let d = nested(depth);
        let v03_doc = format!(
            r#"{{"kind":"task","id":"t","contextId":"c","status":{{"state":"working","message":{{"messageId":"m","role":"agent","parts":[{{"kind":"data","data":{d},"metadata":{d}}}]}}}},"x-e":{d}}}"#
        );
        if let Ok(x) = serde_json::from_str::<v03::event::StreamEvent>(&v03_doc) {
            let y = event::stream_to_v10(x).unwrap();
            let _ = serde_json::to_vec(&y).unwrap();
        }
        let v10_doc = format!(
            r#"{{"task":{{"id":"t","status":{{"state":"TASK_STATE_WORKING","message":{{"messageId":"m","role":"ROLE_AGENT","parts":[{{"data":{d},"metadata":{d}}}]}}}},"x-e":{d}}}}}"#
        );
        if let Ok(y) = serde_json::from_str::<v10::event::StreamResponse>(&v10_doc) {
            let x = event::stream_to_v03(y).unwrap();
            let _ = serde_json::to_vec(&x).unwrap();
        }
    }
}

#[test]
fn proto_json_nulls_mean_defaults() {
    let m: v10::message::Message =
        from_json(json!({"messageId": "m", "role": null, "parts": null, "contextId": null}));
    assert_eq!(m.role, v10::message::Role::Unspecified);
    assert!(m.parts.is_empty());
    let e: v10::event::TaskStatusUpdateEvent =
        from_json(json!({"taskId": "t", "contextId": null, "status": {"state": null}}));
    assert_eq!(e.context_id, "");
    assert_eq!(e.status.state, v10::task::TaskState::Unspecified);
}
