//! The gRPC direct path (`proxy::grpc::direct`: prost -> model -> typed
//! translation -> prost) gives what the JSON route gives (prost -> model ->
//! JSON-RPC bytes -> `RpcTranslation` -> bytes -> model -> prost), on every
//! fixture of the hot RPCs that prost can carry, and on a few answers that
//! fail to translate: the same prost messages, or the same statuses.

use std::path::{Path, PathBuf};

use proto::{convert_v03 as c03, convert_v03_rpc as r03, convert_v10 as c10};
use proto::{convert_v10_rpc as r10, v03 as p03, v10 as p10};
use proxy::error::Failure;
use proxy::grpc::direct::{self, from_v03, from_v10, Streaming, Unary};
use proxy::grpc::status::{from_failure, from_rpc_error};
use proxy::translation::RpcTranslation;
use proxy::version::Version;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};
use tonic::Status;
use translate::method::Method;
use translate::TranslateError as TE;

const V03: Version = Version::V03;
const V10: Version = Version::V10;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// (file name, version, document) of every fixture in `dir`.
fn docs(dir: &str) -> Vec<(String, Version, Value)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(fixtures().join(dir)) else {
        panic!("fixtures/{dir} missing");
    };
    let mut names: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let v = if name.ends_with("v03.json") {
            V03
        } else if name.ends_with("v10.json") {
            V10
        } else {
            continue;
        };
        let doc: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        out.push((format!("{dir}/{name}"), v, doc));
    }
    out
}

/// A comparable status: code, message and details.
fn st(s: &Status) -> (tonic::Code, String, Vec<u8>) {
    (s.code(), s.message().to_string(), s.details().to_vec())
}

fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    old: Result<T, Status>,
    new: Result<T, Status>,
) -> bool {
    match (old, new) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "{what}: different prost messages");
            true
        }
        (Err(a), Err(b)) => {
            assert_eq!(st(&a), st(&b), "{what}: different statuses");
            false
        }
        (a, b) => panic!("{what}: old {a:?} vs new {b:?}"),
    }
}

fn rpc(client: Version, method: Method, drop_history: bool) -> RpcTranslation {
    RpcTranslation {
        client,
        upstream: client.other(),
        method: method.name(client).unwrap().to_string(),
        id: Some(json!(1)),
        drop_history,
        asked_config: None,
        exact_id: None,
    }
}

fn failure(client: Version, f: &Failure) -> Status {
    from_failure(client, f)
}

/// The JSON route's upstream request (`bridge::prepare` and
/// `upstream::unary`): the caller's model as JSON-RPC bytes, translated,
/// parsed as the upstream's model, converted to prost.
fn old_request<CM: Serialize, UMQ: DeserializeOwned, UQ>(
    client: Version,
    method: Method,
    cm: CM,
    up_to_pb: fn(UMQ) -> Result<UQ, TE>,
) -> (Result<UQ, Status>, bool) {
    let body = serde_json::to_vec(&json!({"jsonrpc":"2.0","id":1,
        "method": method.name(client).unwrap(), "params": serde_json::to_value(cm).unwrap()}))
    .unwrap();
    let mut t = rpc(client, method, false);
    let out = match t.request(&body) {
        Ok(o) => o,
        Err(f) => return (Err(failure(client, &f)), t.drop_history),
    };
    let v: Value = serde_json::from_slice(&out).unwrap();
    let p = match v.get("params") {
        None | Some(Value::Null) => json!({}),
        Some(p) => p.clone(),
    };
    let r = serde_json::from_value::<UMQ>(p)
        .map_err(|e| Failure::Translate {
            code: -32602,
            message: format!("invalid params: {e}"),
        })
        .and_then(|m| {
            up_to_pb(m).map_err(|e| Failure::Translate {
                code: i64::from(e.jsonrpc_code()),
                message: e.to_string(),
            })
        })
        .map_err(|f| failure(client, &f));
    (r, t.drop_history)
}

/// The JSON route's answer: the upstream's prost answer as its model, as a
/// JSON-RPC response, translated (`response` or, streaming, `event`), its
/// `result` as the caller's model, converted to prost.
fn old_answer<UR, UM: Serialize, CR: DeserializeOwned, CP>(
    client: Version,
    method: Method,
    ur: UR,
    decode: fn(UR) -> Result<UM, TE>,
    encode: fn(CR) -> Result<CP, TE>,
    drop_history: bool,
    stream: bool,
) -> Result<CP, Status> {
    let bad = |detail: String| failure(client, &Failure::BadUpstreamResponse { detail });
    let um = decode(ur).map_err(|e| bad(e.to_string()))?;
    let body = serde_json::to_vec(
        &json!({"jsonrpc":"2.0","id":1,"result": serde_json::to_value(um).unwrap()}),
    )
    .unwrap();
    let t = rpc(client, method, drop_history);
    let out = if stream {
        t.event(std::str::from_utf8(&body).unwrap()).into_bytes()
    } else {
        t.response(&body)
    };
    let mut v: Value = serde_json::from_slice(&out).unwrap();
    if let Some(err) = v.get("error") {
        return Err(from_rpc_error(client, err, None));
    }
    let r = v["result"].take();
    let cr: CR = serde_json::from_value(r).map_err(|e| bad(e.to_string()))?;
    encode(cr).map_err(|e| bad(e.to_string()))
}

/// Compares both routes on one request document; true when it was compared.
fn request_case<CM, PC, UQ, UR, UM, CR, CP, UMQ>(
    what: &str,
    client: Version,
    params: &Value,
    to_pb: fn(CM) -> Result<PC, TE>,
    from_pb: fn(PC) -> Result<CM, TE>,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
    up_to_pb: fn(UMQ) -> Result<UQ, TE>,
) -> bool
where
    CM: Serialize + DeserializeOwned,
    PC: Clone,
    UQ: PartialEq + std::fmt::Debug,
    UMQ: DeserializeOwned,
{
    let Ok(cm) = serde_json::from_value::<CM>(params.clone()) else {
        return false;
    };
    let Ok(pc) = to_pb(cm) else {
        return false;
    };
    // Both routes start from the caller's prost request.
    let (old, dropped) = match from_pb(pc.clone()) {
        Err(e) => (Err(direct::request_failure(client, e)), false),
        Ok(cm) => old_request(client, t.method, cm, up_to_pb),
    };
    let new = from_pb(pc)
        .map_err(|e| direct::request_failure(client, e))
        .and_then(|cm| {
            let no_history = client == V10 && (t.no_history)(&cm);
            assert_eq!(no_history, dropped, "{what}: history decision");
            (t.request)(cm).map_err(|e| direct::request_failure(client, e))
        });
    same(what, old, new);
    true
}

/// Compares both routes on one unary answer (the upstream's model as JSON);
/// true when it was compared.
fn answer_case<CM, UQ, UR, UM, CR, CP>(
    what: &str,
    client: Version,
    result: &Value,
    t: &Unary<CM, UQ, UR, UM, CR, CP>,
    up_to_pb: fn(UM) -> Result<UR, TE>,
) -> bool
where
    UR: Clone,
    UM: Serialize + DeserializeOwned,
    CR: DeserializeOwned,
    CP: PartialEq + std::fmt::Debug,
{
    let Ok(um) = serde_json::from_value::<UM>(result.clone()) else {
        return false;
    };
    let Ok(ur) = up_to_pb(um) else {
        return false;
    };
    let histories: &[bool] =
        if client == V10 && matches!(t.method, Method::GetTask | Method::SendMessage) {
            &[false, true]
        } else {
            &[false]
        };
    for &drop in histories {
        let old = old_answer(
            client,
            t.method,
            ur.clone(),
            t.decode,
            t.encode,
            drop,
            false,
        );
        let new = direct::answer(client, t, ur.clone(), drop).and_then(|cr| {
            (t.encode)(cr).map_err(|e| {
                failure(
                    client,
                    &Failure::BadUpstreamResponse {
                        detail: e.to_string(),
                    },
                )
            })
        });
        same(&format!("{what} (drop history {drop})"), old, new);
    }
    true
}

/// Compares both routes on one stream event; true when it was compared.
fn event_case<CM, UQ, UR, UM, CR, CP>(
    what: &str,
    client: Version,
    result: &Value,
    t: &Streaming<CM, UQ, UR, UM, CR, CP>,
    up_to_pb: fn(UM) -> Result<UR, TE>,
) -> bool
where
    UR: Clone,
    UM: Serialize + DeserializeOwned,
    CR: Serialize + DeserializeOwned,
    CP: PartialEq + std::fmt::Debug,
{
    let Ok(um) = serde_json::from_value::<UM>(result.clone()) else {
        return false;
    };
    let Ok(ur) = up_to_pb(um) else {
        return false;
    };
    let old = old_answer(
        client,
        t.method,
        ur.clone(),
        t.decode,
        t.encode,
        false,
        true,
    );
    let (new, last) = direct::event(client, t, ur.clone(), None);
    if client == V10 {
        // The JSON route's end of a v0.3 stream: `final: true` in the event.
        let json = serde_json::to_value((t.decode)(ur).unwrap()).unwrap();
        assert_eq!(last, json["final"] == Value::Bool(true), "{what}: final");
    }
    same(what, old, new);
    true
}

/// Requests of each version for the hot methods: fixtures/request, and
/// every message fixture as a SendMessage.
fn requests() -> Vec<(String, Version, Method, Value)> {
    let mut out = Vec::new();
    for (name, v, doc) in docs("request") {
        let Some((m, mv)) = doc["method"].as_str().and_then(Method::from_name) else {
            continue;
        };
        if mv == v {
            out.push((name, v, m, doc["params"].clone()));
        }
    }
    for (name, v, doc) in docs("message") {
        for m in [Method::SendMessage, Method::SendStreamingMessage] {
            out.push((name.clone(), v, m, json!({ "message": doc.clone() })));
        }
        let cfg = match v {
            V03 => {
                json!({"message": doc.clone(), "configuration": {"historyLength": 0, "blocking": false, "acceptedOutputModes": ["text/plain"]}})
            }
            V10 => {
                json!({"message": doc.clone(), "configuration": {"historyLength": 0, "returnImmediately": true}})
            }
        };
        out.push((
            format!("{name} + configuration"),
            v,
            Method::SendMessage,
            cfg,
        ));
    }
    out
}

/// Results of each version for the hot methods: fixtures/response and
/// fixtures/event, and the payload fixtures in the shape of each result.
fn answers() -> Vec<(String, Version, Method, Value)> {
    let mut out = Vec::new();
    for dir in ["response", "event"] {
        for (name, v, doc) in docs(dir) {
            let file = name.rsplit('/').next().unwrap_or_default();
            let prefix = file.split('.').next().unwrap_or_default();
            let Some((m, _)) = Method::from_name(prefix) else {
                continue;
            };
            if let Some(r) = doc.get("result") {
                out.push((name, v, m, r.clone()));
            }
        }
    }
    let wrap = |v: Version, key: &str, doc: &Value| match v {
        V03 => doc.clone(),
        V10 => json!({ key: doc.clone() }),
    };
    for (name, v, doc) in docs("task") {
        out.push((name.clone(), v, Method::GetTask, doc.clone()));
        out.push((name.clone(), v, Method::CancelTask, doc.clone()));
        out.push((name.clone(), v, Method::SendMessage, wrap(v, "task", &doc)));
        out.push((
            name.clone(),
            v,
            Method::SubscribeToTask,
            wrap(v, "task", &doc),
        ));
    }
    for (name, v, doc) in docs("message") {
        out.push((
            name.clone(),
            v,
            Method::SendMessage,
            wrap(v, "message", &doc),
        ));
        let e = wrap(v, "message", &doc);
        out.push((name.clone(), v, Method::SendStreamingMessage, e));
    }
    for (name, v, doc) in docs("status-update") {
        let e = wrap(v, "statusUpdate", &doc);
        out.push((name, v, Method::SendStreamingMessage, e));
    }
    for (name, v, doc) in docs("artifact-update") {
        let e = wrap(v, "artifactUpdate", &doc);
        out.push((name, v, Method::SubscribeToTask, e));
    }
    for (name, v, doc) in docs("stream-response") {
        out.push((name, v, Method::SendStreamingMessage, doc));
    }
    out
}

/// The request half of streaming table `t` as a [`Unary`], for
/// [`request_case`] (which reads only the request side; the answer side is
/// never called).
fn request_half<CM, UQ, UR, UM, CR, CP>(
    t: &Streaming<CM, UQ, UR, UM, CR, CP>,
) -> Unary<CM, UQ, (), (), (), ()> {
    Unary {
        method: t.method,
        path: "",
        request: t.request,
        decode: Ok,
        translate: Ok,
        encode: Ok,
        no_history: |_| false,
        strip_history: |_| {},
        inline_push: t.inline_push,
    }
}

#[test]
fn direct_requests_equal_the_json_route() {
    let mut compared = [0usize; 2];
    for (name, v, m, params) in requests() {
        let what = format!("{name} as {m:?} from {v}");
        let done = match (v, m) {
            (V10, Method::SendMessage) => request_case(
                &what,
                v,
                &params,
                r10::send_request_to_pb,
                r10::send_request_from_pb,
                &from_v10::SEND_MESSAGE,
                r03::send_params_to_pb,
            ),
            (V10, Method::SendStreamingMessage) => request_case(
                &what,
                v,
                &params,
                r10::send_request_to_pb,
                r10::send_request_from_pb,
                &request_half(&from_v10::SEND_STREAMING),
                r03::send_params_to_pb,
            ),
            (V10, Method::GetTask) => request_case(
                &what,
                v,
                &params,
                r10::get_task_to_pb,
                r10::get_task_from_pb,
                &from_v10::GET_TASK,
                r03::get_task_to_pb,
            ),
            (V10, Method::CancelTask) => request_case(
                &what,
                v,
                &params,
                r10::cancel_task_to_pb,
                r10::cancel_task_from_pb,
                &from_v10::CANCEL_TASK,
                r03::cancel_task_to_pb,
            ),
            (V10, Method::SubscribeToTask) => request_case(
                &what,
                v,
                &params,
                r10::subscribe_to_pb,
                r10::subscribe_from_pb,
                &request_half(&from_v10::SUBSCRIBE),
                r03::task_subscription_to_pb,
            ),
            (V03, Method::SendMessage) => request_case(
                &what,
                v,
                &params,
                r03::send_params_to_pb,
                r03::send_params_from_pb,
                &from_v03::SEND_MESSAGE,
                r10::send_request_to_pb,
            ),
            (V03, Method::SendStreamingMessage) => request_case(
                &what,
                v,
                &params,
                r03::send_params_to_pb,
                r03::send_params_from_pb,
                &request_half(&from_v03::SEND_STREAMING),
                r10::send_request_to_pb,
            ),
            (V03, Method::GetTask) => request_case(
                &what,
                v,
                &params,
                r03::get_task_to_pb,
                r03::get_task_from_pb,
                &from_v03::GET_TASK,
                r10::get_task_to_pb,
            ),
            (V03, Method::CancelTask) => request_case(
                &what,
                v,
                &params,
                r03::cancel_task_to_pb,
                r03::cancel_task_from_pb,
                &from_v03::CANCEL_TASK,
                r10::cancel_task_to_pb,
            ),
            (V03, Method::SubscribeToTask) => request_case(
                &what,
                v,
                &params,
                r03::task_subscription_to_pb,
                r03::task_subscription_from_pb,
                &request_half(&from_v03::SUBSCRIBE),
                r10::subscribe_to_pb,
            ),
            _ => false,
        };
        compared[usize::from(v == V10)] += usize::from(done);
    }
    // Not vacuous: many documents of each version went through both routes.
    eprintln!("requests compared (from v0.3, from v1.0): {compared:?}");
    assert!(compared[0] >= 20 && compared[1] >= 20, "{compared:?}");
}

#[test]
fn direct_answers_equal_the_json_route() {
    let mut compared = [0usize; 2];
    for (name, up, m, result) in answers() {
        // `up`: the upstream's version; the caller is of the other.
        let client = up.other();
        let what = format!("{name} as {m:?} to a {client} caller");
        let done = match (up, m) {
            (V03, Method::SendMessage) => answer_case(
                &what,
                client,
                &result,
                &from_v10::SEND_MESSAGE,
                c03::send_response_to_pb,
            ),
            (V03, Method::GetTask) => {
                answer_case(&what, client, &result, &from_v10::GET_TASK, c03::task_to_pb)
            }
            (V03, Method::CancelTask) => answer_case(
                &what,
                client,
                &result,
                &from_v10::CANCEL_TASK,
                c03::task_to_pb,
            ),
            (V03, Method::SendStreamingMessage) => event_case(
                &what,
                client,
                &result,
                &from_v10::SEND_STREAMING,
                c03::stream_to_pb,
            ),
            (V03, Method::SubscribeToTask) => event_case(
                &what,
                client,
                &result,
                &from_v10::SUBSCRIBE,
                c03::stream_to_pb,
            ),
            (V10, Method::SendMessage) => answer_case(
                &what,
                client,
                &result,
                &from_v03::SEND_MESSAGE,
                r10::send_response_to_pb,
            ),
            (V10, Method::GetTask) => {
                answer_case(&what, client, &result, &from_v03::GET_TASK, c10::task_to_pb)
            }
            (V10, Method::CancelTask) => answer_case(
                &what,
                client,
                &result,
                &from_v03::CANCEL_TASK,
                c10::task_to_pb,
            ),
            (V10, Method::SendStreamingMessage) => event_case(
                &what,
                client,
                &result,
                &from_v03::SEND_STREAMING,
                c10::stream_to_pb,
            ),
            (V10, Method::SubscribeToTask) => event_case(
                &what,
                client,
                &result,
                &from_v03::SUBSCRIBE,
                c10::stream_to_pb,
            ),
            _ => false,
        };
        compared[usize::from(up == V10)] += usize::from(done);
    }
    eprintln!("answers compared (from v0.3, from v1.0 agents): {compared:?}");
    assert!(compared[0] >= 40 && compared[1] >= 40, "{compared:?}");
}

/// Inputs prost carries but the translators refuse: both routes give the
/// same status.
#[test]
fn failed_translations_give_the_json_routes_statuses() {
    // A negative v1.0 historyLength (the v0.3 model refuses it).
    let pc = p10::GetTaskRequest {
        id: "t1".into(),
        history_length: Some(-1),
        ..Default::default()
    };
    let (old, _) = old_request(
        V10,
        Method::GetTask,
        r10::get_task_from_pb(pc.clone()).unwrap(),
        r03::get_task_to_pb,
    );
    let new = r10::get_task_from_pb(pc)
        .and_then(from_v10::GET_TASK.request)
        .map_err(|e| direct::request_failure(V10, e));
    assert!(!same("negative historyLength", old, new));

    // Answers whose translation fails, each a prost message of the upstream.
    let v10_task = |state: i32| p10::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(p10::TaskStatus {
            state,
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut failed = 0;
    for state in [0, 99, -3] {
        let ur = v10_task(state);
        let t = &from_v03::GET_TASK;
        let old = old_answer(V03, t.method, ur.clone(), t.decode, t.encode, false, false);
        let new = direct::answer(V03, t, ur, false).and_then(|cr| {
            (t.encode)(cr).map_err(|e| {
                failure(
                    V03,
                    &Failure::BadUpstreamResponse {
                        detail: e.to_string(),
                    },
                )
            })
        });
        failed += usize::from(!same(&format!("v1.0 task state {state}"), old, new));
        let ev = p10::StreamResponse {
            payload: Some(p10::stream_response::Payload::Task(v10_task(state))),
        };
        let t = &from_v03::SEND_STREAMING;
        let old = old_answer(V03, t.method, ev.clone(), t.decode, t.encode, false, true);
        let (new, _) = direct::event(V03, t, ev, None);
        failed += usize::from(!same(&format!("v1.0 task event state {state}"), old, new));
    }
    // A v0.3 SendMessage answer with no payload, and a v1.0 one.
    let t = &from_v10::SEND_MESSAGE;
    let ur = p03::SendMessageResponse { payload: None };
    let old = old_answer(V10, t.method, ur.clone(), t.decode, t.encode, false, false);
    let new = direct::answer(V10, t, ur, false).and_then(|cr| {
        (t.encode)(cr).map_err(|e| {
            failure(
                V10,
                &Failure::BadUpstreamResponse {
                    detail: e.to_string(),
                },
            )
        })
    });
    failed += usize::from(!same("empty v0.3 SendMessage answer", old, new));
    // A v0.3 task whose history holds a file part with no content.
    let v03_task = p03::Task {
        id: "t1".into(),
        context_id: "c1".into(),
        status: Some(p03::TaskStatus {
            state: p03::TaskState::Completed as i32,
            ..Default::default()
        }),
        history: vec![p03::Message {
            message_id: "m1".into(),
            role: p03::Role::Agent as i32,
            content: vec![p03::Part {
                part: Some(p03::part::Part::File(p03::FilePart::default())),
                metadata: None,
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let t = &from_v10::GET_TASK;
    let old = old_answer(
        V10,
        t.method,
        v03_task.clone(),
        t.decode,
        t.encode,
        false,
        false,
    );
    let new = direct::answer(V10, t, v03_task.clone(), false).and_then(|cr| {
        (t.encode)(cr).map_err(|e| {
            failure(
                V10,
                &Failure::BadUpstreamResponse {
                    detail: e.to_string(),
                },
            )
        })
    });
    failed += usize::from(!same("v0.3 file part without content", old, new));
    let ev = p03::StreamResponse {
        payload: Some(p03::stream_response::Payload::Task(v03_task)),
    };
    let t = &from_v10::SEND_STREAMING;
    let old = old_answer(V10, t.method, ev.clone(), t.decode, t.encode, false, true);
    let (new, _) = direct::event(V10, t, ev, None);
    failed += usize::from(!same("v0.3 file part without content (event)", old, new));
    assert!(
        failed >= 3,
        "the cases above must include failures ({failed})"
    );
}
