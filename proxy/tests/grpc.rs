//! The gRPC binding end to end on 127.0.0.1: tonic clients of both versions
//! -> the proxy's gRPC listener -> fake JSON-RPC agents of both versions
//! (recording every request). Asserts the exact upstream JSON-RPC request
//! and the exact gRPC reply / status.

mod support;

use std::sync::Arc;

use proto::v03 as p03;
use proto::v10 as p10;
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use serde_json::{json, Value};
use support::grpc::*;
use support::grpc_agent::GrpcFront;
use support::*;
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tonic::Code;

const CARD_V03: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;
const CARD_V10: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

async fn agent(
    version: Version,
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    let card = match version {
        Version::V03 => CARD_V03,
        Version::V10 => CARD_V10,
    };
    agent_with_card(move |me| card.replace("UP", me), f).await
}

type Px = GrpcFront;

fn proxy(up: &FakeUpstream, version: Version) -> Px {
    GrpcFront::start(config_for(&up.url(), version))
}

/// The only non-card request the agent saw, as (target, a2a-version, body).
fn one_call(up: &FakeUpstream) -> (String, Option<String>, Value) {
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    let c = &calls[0];
    assert_eq!(c.method, "POST");
    assert_eq!(c.header("content-type"), Some("application/json"));
    let mut body: Value = serde_json::from_slice(&c.body).unwrap();
    assert!(body["id"].is_u64(), "{body}");
    body.as_object_mut().unwrap().remove("id");
    (
        c.target.clone(),
        c.header("a2a-version").map(String::from),
        body,
    )
}

/// Answers every JSON-RPC call with `result` (the request id echoed).
fn result_of(result: Value) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let body = json!({"jsonrpc":"2.0","id":req["id"],"result":result});
        Reply::json(200, &body.to_string())
    }
}

fn error_of(error: Value) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let body = json!({"jsonrpc":"2.0","id":req["id"],"error":error});
        Reply::json(200, &body.to_string())
    }
}

fn sse_of(results: Vec<Value>) -> impl Fn(&Recorded) -> Reply + Send + Sync + 'static {
    move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let events = results
            .iter()
            .map(|res| {
                format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","id":req["id"],"result":res})
                )
            })
            .collect();
        Reply::Sse {
            events,
            gate: Arc::new(Semaphore::new(100)),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_send_message_to_v03_agent() {
    let up = agent(
        Version::V03,
        result_of(json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}})),
    )
    .await;
    let px = proxy(&up, Version::V03);
    let mut req = tonic::Request::new(v10_send_request("hi"));
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    let reply = px.v10().await.send_message(req).await.unwrap().into_inner();
    assert_eq!(
        reply,
        p10::SendMessageResponse {
            payload: Some(p10::send_message_response::Payload::Task(v10_task(
                "t1",
                p10::TaskState::Completed
            ))),
        }
    );
    let (target, version, body) = one_call(&up);
    assert_eq!(target, "/rpc");
    assert_eq!(version.as_deref(), Some("0.3"));
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":true}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_send_message_to_v10_agent_gets_a_message() {
    let up = agent(
        Version::V10,
        result_of(
            json!({"message":{"messageId":"r1","role":"ROLE_AGENT","parts":[{"text":"yo"}]}}),
        ),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let reply = px
        .v03()
        .await
        .send_message(v03_send_request("hi"))
        .await
        .unwrap()
        .into_inner();
    let mut want = v03_msg("r1", "yo");
    want.role = p03::Role::Agent as i32;
    assert_eq!(
        reply,
        p03::SendMessageResponse {
            payload: Some(p03::send_message_response::Payload::Msg(want)),
        }
    );
    let (_, version, body) = one_call(&up);
    assert_eq!(version.as_deref(), Some("1.0"));
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}})
    );
}

/// A v0.3 gRPC client deletes config `p1` of task `t1`; it must succeed.
async fn delete_p1(px: &Px) {
    px.v03()
        .await
        .delete_task_push_notification_config(p03::DeleteTaskPushNotificationConfigRequest {
            name: "tasks/t1/pushNotificationConfigs/p1".into(),
        })
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_delete_push_config_to_v10_agent() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let px = proxy(&up, Version::V10);
    delete_p1(&px).await;
    let (_, _, body) = one_call(&up);
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"DeleteTaskPushNotificationConfig","params":{"taskId":"t1","id":"p1"}})
    );
}

/// a2a-python 0.3 answers a delete `{"id":…,"jsonrpc":"2.0"}`, its null
/// result left out: over the same-version bridge that is success too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_delete_answered_without_result_is_success() {
    let up = agent(Version::V03, |_| {
        Reply::json(200, r#"{"id":1,"jsonrpc":"2.0"}"#)
    })
    .await;
    let px = proxy(&up, Version::V03);
    delete_p1(&px).await;
    let (_, _, body) = one_call(&up);
    assert_eq!(
        body["method"], "tasks/pushNotificationConfig/delete",
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_get_task_to_v10_agent() {
    let up = agent(
        Version::V10,
        result_of(json!({"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}})),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let reply = px
        .v03()
        .await
        .get_task(p03::GetTaskRequest {
            name: "tasks/t1".into(),
            history_length: 2,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply, v03_task("t1", p03::TaskState::Working));
    let (target, version, body) = one_call(&up);
    assert_eq!(target, "/rpc");
    assert_eq!(version.as_deref(), Some("1.0"));
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"GetTask","params":{"id":"t1","historyLength":2}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_v10_cancel_is_bridged() {
    let up = agent(
        Version::V10,
        result_of(json!({"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_CANCELED"}})),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let reply = px
        .v10()
        .await
        .cancel_task(p10::CancelTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply, v10_task("t1", p10::TaskState::Canceled));
    let (_, version, body) = one_call(&up);
    assert_eq!(version.as_deref(), Some("1.0"));
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"CancelTask","params":{"id":"t1"}})
    );
}

/// The metrics of `px` hold `sample` (a stream counted by its outcome) and
/// no open stream.
async fn assert_stream_counted(px: &Px, sample: &str) {
    let text = support::get(px.http.addr, "/metrics", &[]).await.text();
    assert!(text.contains(sample), "{text}");
    assert!(
        text.contains("a2a_proxy_open_streams{agent=\"default\"} 0"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_stream_from_v03_agent_ends_at_final() {
    let up = agent(
        Version::V03,
        sse_of(vec![
            json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}),
            json!({"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}),
        ]),
    )
    .await;
    let px = proxy(&up, Version::V03);
    let stream = px
        .v10()
        .await
        .send_streaming_message(v10_send_request("go"))
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(stream).await;
    assert!(end.is_none(), "{end:?}");
    assert_eq!(
        got,
        vec![
            p10::StreamResponse {
                payload: Some(p10::stream_response::Payload::Task(v10_task(
                    "t1",
                    p10::TaskState::Working
                ))),
            },
            v10_status_update("t1", p10::TaskState::Completed),
        ]
    );
    let (_, _, body) = one_call(&up);
    assert_eq!(body["method"], "message/stream");
    assert_eq!(body["params"]["message"]["messageId"], "m1");
    // The ended stream is counted, and no longer open.
    assert_stream_counted(&px, r#"a2a_proxy_requests_total{agent="default",method="SendStreamingMessage",direction="v10_v03",binding="grpc",outcome="ok"} 1"#).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_subscription_from_v10_agent() {
    let up = agent(
        Version::V10,
        sse_of(vec![
            json!({"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}),
            json!({"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}),
        ]),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let stream = px
        .v03()
        .await
        .task_subscription(p03::TaskSubscriptionRequest {
            name: "tasks/t1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(stream).await;
    assert!(end.is_none(), "{end:?}");
    assert_eq!(
        got,
        vec![
            p03::StreamResponse {
                payload: Some(p03::stream_response::Payload::Task(v03_task(
                    "t1",
                    p03::TaskState::Working
                ))),
            },
            v03_status_update("t1", p03::TaskState::Completed, true),
        ]
    );
    let (_, _, body) = one_call(&up);
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"SubscribeToTask","params":{"id":"t1"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_stream_is_counted_with_its_status() {
    let up = agent(
        Version::V10,
        error_of(json!({"code":-32001,"message":"Task not found"})),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let opened = px
        .v10()
        .await
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t9".into(),
            ..Default::default()
        })
        .await;
    let status = match opened {
        Err(s) => s,
        Ok(r) => {
            let mut stream = r.into_inner();
            timeout(WAIT, stream.message())
                .await
                .unwrap()
                .expect_err("the stream fails")
        }
    };
    assert_eq!(status.code(), Code::NotFound, "{status:?}");
    assert_stream_counted(&px, r#"a2a_proxy_requests_total{agent="default",method="SubscribeToTask",direction="v10_v10",binding="grpc",outcome="grpc_notfound"} 1"#).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_not_found_in_both_dialects() {
    let up = agent(
        Version::V03,
        error_of(json!({"code":-32001,"message":"Task not found","data":{"taskId":"t9"}})),
    )
    .await;
    let px = proxy(&up, Version::V03);
    let s = px
        .v10()
        .await
        .get_task(v10_get_task("t9"))
        .await
        .unwrap_err();
    let info = assert_a2a_status(&s, Code::NotFound, "Task not found", "TASK_NOT_FOUND");
    assert_eq!(info.metadata.get("taskId").map(String::as_str), Some("t9"));

    let s = px
        .v03()
        .await
        .get_task(p03::GetTaskRequest {
            name: "tasks/t9".into(),
            history_length: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::NotFound);
    assert_eq!(s.message(), "TaskNotFoundError: Task not found");
    assert_eq!(error_info(&s).reason, "TASK_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_tasks_toward_v03_lists_tasks_seen_asking_the_agent_for_each() {
    let task = json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}});
    let up = agent(Version::V03, result_of(task)).await;
    let px = proxy(&up, Version::V03);
    let mut c = px.v10().await;
    // Nothing seen yet: an empty list, and the agent is not asked.
    let l = c
        .list_tasks(p10::ListTasksRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert!(l.tasks.is_empty());
    assert!(up.calls().is_empty());
    // A task seen through a translated GetTask is listed.
    c.get_task(v10_get_task("t1")).await.unwrap();
    let l = c
        .list_tasks(p10::ListTasksRequest {
            context_id: "c1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(l.tasks.len(), 1);
    assert_eq!(l.tasks[0].id, "t1");
    assert_eq!(l.total_size, 1);
    // The list asked the agent for the listed task.
    let calls = up.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let refresh: Value = serde_json::from_slice(&calls[1].body).unwrap();
    assert_eq!(refresh["method"], "tasks/get", "{refresh}");
    assert_eq!(refresh["params"]["id"], "t1", "{refresh}");
    // gRPC calls are counted, with their direction.
    let text = support::get(px.http.addr, "/metrics", &[]).await.text();
    assert!(
        text.contains(r#"a2a_proxy_requests_total{agent="default",method="GetTask",direction="v10_v03",binding="grpc",outcome="ok"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_proxy_requests_total{agent="default",method="ListTasks",direction="v10_v03",binding="grpc",outcome="ok"} 2"#),
        "{text}"
    );
    // Bad paging: INVALID_ARGUMENT.
    let s = c
        .list_tasks(p10::ListTasksRequest {
            page_size: Some(1000),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_a2a_version_and_bad_resource_name() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let px = proxy(&up, Version::V10);
    let mut req = tonic::Request::new(v10_get_task("t1"));
    req.metadata_mut()
        .insert("a2a-version", "2.0".parse().unwrap());
    let s = px.v10().await.get_task(req).await.unwrap_err();
    // The proxy's own refusal: UNIMPLEMENTED (v1.0.0 §5.4, the A2A TCK),
    // the reason naming it.
    assert_eq!(s.code(), Code::Unimplemented);
    let info = error_info(&s);
    assert_eq!(info.reason, "VERSION_NOT_SUPPORTED");
    assert_eq!(
        info.metadata.get("requestedVersion").map(String::as_str),
        Some("2.0")
    );

    let s = px
        .v03()
        .await
        .get_task(p03::GetTaskRequest {
            name: "not-a-name".into(),
            history_length: 0,
        })
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::InvalidArgument, "{s:?}");
    assert!(up.calls().is_empty());
}

/// A2A 1.N over gRPC as over JSON-RPC and REST: a 1.1 client of a 1.0
/// agent is refused before the agent is called; 1.0.2 is 1.0; a 1.1 client
/// of an agent configured as 1.1 is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_n_clients_over_grpc() {
    let task = json!({"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_WORKING"}});
    let up = agent(Version::V10, result_of(task)).await;
    let get = |version: &str| {
        let mut req = tonic::Request::new(v10_get_task("t1"));
        req.metadata_mut()
            .insert("a2a-version", version.parse().unwrap());
        req
    };
    let px = proxy(&up, Version::V10);
    let s = px.v10().await.get_task(get("1.1")).await.unwrap_err();
    assert_eq!(s.code(), Code::Unimplemented, "{s:?}");
    assert_eq!(error_info(&s).reason, "VERSION_NOT_SUPPORTED");
    assert!(up.calls().is_empty(), "the agent is not asked");
    let t = px.v10().await.get_task(get("1.0.2")).await.unwrap();
    assert_eq!(t.into_inner().id, "t1");
    drop(px);

    let mut config = config_for(&up.url(), Version::V10);
    config.upstream_protocol = proxy::version::ProtocolVersion::parse("1.1");
    let grpc_addr = support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
    let px = GrpcFront {
        http,
        grpc,
        card: None,
    };
    let t = px.v10().await.get_task(get("1.1")).await.unwrap();
    assert_eq!(t.into_inner().id, "t1");
    // Same minor: the agent is asked in the client's own 1.1.
    let last = up.calls().pop().unwrap();
    assert_eq!(last.header("a2a-version"), Some("1.1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_upstream_is_unavailable() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let dead = format!("http://{}", support::free_local_addr().unwrap());
    let http = proxy::start(config_for(&dead, Version::V10)).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let px = GrpcFront {
        http,
        grpc,
        card: None,
    };
    let s = px
        .v10()
        .await
        .get_task(v10_get_task("t1"))
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unavailable);
    drop(up);
}

/// Sends one raw gRPC request over HTTP/2 (h2) and returns grpc-status.
async fn raw_grpc(addr: std::net::SocketAddr, path: &str, message: &[u8]) -> String {
    let mut frame = vec![0u8];
    frame.extend_from_slice(&(message.len() as u32).to_be_bytes());
    frame.extend_from_slice(message);
    raw_grpc_call(addr, path, &[], &frame).await.1
}

/// The hot unary RPCs are read by hand (`grpc::serve`); requests it does
/// not take as they are get tonic's own statuses, the same as an RPC tonic
/// serves whole (GetTaskPushNotificationConfig) gets for the same bytes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hand_served_rpcs_answer_odd_requests_as_tonic() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let px = proxy(&up, Version::V10);
    let frame = |flag: u8, m: &[u8]| {
        let mut f = vec![flag];
        f.extend_from_slice(&(m.len() as u32).to_be_bytes());
        f.extend_from_slice(m);
        f
    };
    let id = [0x12, 1, b'x'];
    type Case = (&'static str, Vec<(&'static str, &'static str)>, Vec<u8>);
    let cases: Vec<Case> = vec![
        ("compressed flag, no grpc-encoding", vec![], frame(1, &id)),
        ("gzip", vec![("grpc-encoding", "gzip")], frame(1, &id)),
        ("no message", vec![], Vec::new()),
        ("truncated frame", vec![], frame(0, &id)[..6].to_vec()),
        (
            "two messages",
            vec![],
            [frame(0, &id), frame(0, &id)].concat(),
        ),
    ];
    let mut odd = 0;
    for (what, headers, body) in cases {
        let (_, hot) = raw_grpc_call(
            px.grpc.addr,
            "/lf.a2a.v1.A2AService/GetTask",
            &headers,
            &body,
        )
        .await;
        let (_, whole) = raw_grpc_call(
            px.grpc.addr,
            "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig",
            &headers,
            &body,
        )
        .await;
        assert_eq!(hot, whole, "{what}");
        odd += usize::from(hot != "0");
    }
    assert!(odd >= 3, "most of these requests are refused ({odd})");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_protobuf_and_unknown_rpc() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let px = proxy(&up, Version::V10);
    // Field 2 (id) declared as a 100-byte string with 1 byte present.
    let status = raw_grpc(
        px.grpc.addr,
        "/lf.a2a.v1.A2AService/GetTask",
        &[0x12, 100, b'x'],
    )
    .await;
    assert_eq!(status, (Code::Internal as i32).to_string());
    let status = raw_grpc(px.grpc.addr, "/lf.a2a.v1.A2AService/NoSuchRpc", &[]).await;
    assert_eq!(status, (Code::Unimplemented as i32).to_string());
    let status = raw_grpc(px.grpc.addr, "/a2a.v1.A2AService/ListTasks", &[]).await;
    assert_eq!(status, (Code::Unimplemented as i32).to_string());
    assert!(up.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_advertise_the_grpc_listener() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let px = proxy(&up, Version::V10);
    let port = px.grpc.addr.port();
    assert_ne!(port, 0);
    let r = get(
        px.http.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    let card = r.json();
    let grpc: Vec<&Value> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .collect();
    assert_eq!(
        grpc,
        vec![
            &json!({"url": format!("127.0.0.1:{port}"), "protocolBinding":"GRPC","protocolVersion":"1.0"})
        ]
    );
    // The v0.3 card (header-less: the hybrid card's v0.3 members) writes
    // it as a URL, the form of the v0.3 spec and examples.
    let r = get(px.http.addr, "/.well-known/agent-card.json", &[]).await;
    let card = r.json();
    assert!(
        card["additionalInterfaces"]
            .as_array()
            .unwrap()
            .contains(&json!({"url": format!("http://127.0.0.1:{port}"), "transport":"GRPC"})),
        "{card}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_timeout_bounds_the_upstream_call() {
    let up = agent(Version::V10, |_| Reply::Hang).await;
    let px = proxy(&up, Version::V10);
    let mut req = tonic::Request::new(v10_get_task("t1"));
    req.set_timeout(std::time::Duration::from_millis(300));
    let s = timeout(WAIT, px.v10().await.get_task(req))
        .await
        .expect("the deadline ends the call")
        .unwrap_err();
    assert!(
        matches!(s.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{s:?}"
    );
    assert_eq!(up.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_stream_closes_the_upstream_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A raw agent: 404 for the card, one SSE event for the call, then it
    // reports whether the proxy closed the connection (EOF) in time.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (eof_tx, mut eof_rx) = tokio::sync::mpsc::channel::<bool>(1);
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let eof_tx = eof_tx.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let n = sock.read(&mut buf).await.unwrap_or(0);
                if buf[..n].starts_with(b"GET") {
                    let _ = sock
                        .write_all(
                            b"HTTP/1.1 404 X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        )
                        .await;
                    return;
                }
                let ev = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"statusUpdate\":{\"taskId\":\"t1\",\"contextId\":\"c1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n";
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n";
                let chunk = format!("{head}{:x}\r\n{ev}\r\n", ev.len());
                let _ = sock.write_all(chunk.as_bytes()).await;
                let closed = matches!(
                    timeout(WAIT, sock.read(&mut buf)).await,
                    Ok(Ok(0)) | Ok(Err(_))
                );
                let _ = eof_tx.send(closed).await;
            });
        }
    });
    let http = proxy::start(config_for(&format!("http://{addr}"), Version::V10)).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let px = GrpcFront {
        http,
        grpc,
        card: None,
    };
    let mut stream = px
        .v10()
        .await
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first = timeout(WAIT, stream.message()).await.unwrap().unwrap();
    assert!(first.is_some());
    drop(stream);
    let closed = timeout(WAIT, eof_rx.recv()).await.unwrap();
    assert_eq!(
        closed,
        Some(true),
        "the upstream stream outlived the gRPC caller"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_push_configs_to_v03_agent() {
    let cfg03 = json!({"taskId":"t1","pushNotificationConfig":{"id":"p1","url":"http://127.0.0.1:1/hook","token":"tok"}});
    let c = cfg03.clone();
    let up = agent(Version::V03, move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let result = match req["method"].as_str() {
            Some("tasks/pushNotificationConfig/list") => json!([c]),
            _ => c.clone(),
        };
        Reply::json(
            200,
            &json!({"jsonrpc":"2.0","id":req["id"],"result":result}).to_string(),
        )
    })
    .await;
    let px = proxy(&up, Version::V03);
    v10_push_config_round_trip(&mut px.v10().await).await;
    let bodies: Vec<Value> = up
        .calls()
        .iter()
        .map(|c| {
            let mut v: Value = serde_json::from_slice(&c.body).unwrap();
            v.as_object_mut().unwrap().remove("id");
            v
        })
        .collect();
    assert_eq!(
        bodies,
        vec![
            json!({"jsonrpc":"2.0","method":"tasks/pushNotificationConfig/set","params":cfg03}),
            json!({"jsonrpc":"2.0","method":"tasks/pushNotificationConfig/get","params":{"id":"t1","pushNotificationConfigId":"p1"}}),
            json!({"jsonrpc":"2.0","method":"tasks/pushNotificationConfig/list","params":{"id":"t1"}}),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_create_push_config_to_v10_agent() {
    let up = agent(
        Version::V10,
        result_of(json!({"id":"p1","taskId":"t1","url":"http://127.0.0.1:1/hook"})),
    )
    .await;
    let px = proxy(&up, Version::V10);
    let got = px
        .v03()
        .await
        .create_task_push_notification_config(v03_create_push_config())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, v03_push_config_p1());
    let (_, _, body) = one_call(&up);
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"CreateTaskPushNotificationConfig","params":{"id":"p1","taskId":"t1","url":"http://127.0.0.1:1/hook"}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_cards_over_grpc() {
    let up = agent(Version::V03, |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let card: Value = serde_json::from_str(&CARD_V03.replace("UP", "127.0.0.1:9")).unwrap();
        Reply::json(
            200,
            &json!({"jsonrpc":"2.0","id":req["id"],"result":card}).to_string(),
        )
    })
    .await;
    let px = proxy(&up, Version::V03);
    // v1.0 extended card: bridged to agent/getAuthenticatedExtendedCard.
    let card = px
        .v10()
        .await
        .get_extended_agent_card(p10::GetExtendedAgentCardRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(card.name, "fake");
    assert_eq!(card.supported_interfaces[0].protocol_binding, "JSONRPC");
    // Presented as every binding presents cards: the proxy's gRPC
    // interface and the per-caller ListTasks model advertised, as on the
    // JSON-RPC and HTTP+JSON extended card.
    let port = px.grpc.addr.port();
    assert!(
        card.supported_interfaces
            .iter()
            .any(|i| i.protocol_binding == "GRPC" && i.url.ends_with(&format!(":{port}"))),
        "{card:?}"
    );
    let extensions = card.capabilities.as_ref().map(|c| c.extensions.clone());
    assert!(
        extensions
            .unwrap_or_default()
            .iter()
            .any(|e| e.uri.contains("list-tasks")),
        "{card:?}"
    );
    let (_, _, body) = one_call(&up);
    assert_eq!(
        body,
        json!({"jsonrpc":"2.0","method":"agent/getAuthenticatedExtendedCard","params":{}})
    );
    // v0.3 GetAgentCard: the public card the proxy serves, gRPC included.
    let card = px
        .v03()
        .await
        .get_agent_card(p03::GetAgentCardRequest {})
        .await
        .unwrap()
        .into_inner();
    assert_eq!(card.name, "fake");
    let port = px.grpc.addr.port();
    assert!(
        card.additional_interfaces
            .iter()
            .any(|i| i.transport == "GRPC" && i.url == format!("http://127.0.0.1:{port}")),
        "{card:?}"
    );
    assert_eq!(up.calls().len(), 1);
}

/// A v0.3 agent whose card offers an extended card, answering its
/// extended-card call by `f`.
async fn extended_card_agent(
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    agent_with_card(
        |me| {
            CARD_V03.replace("UP", me).replace(
                r#""skills":[]"#,
                r#""skills":[],"supportsAuthenticatedExtendedCard":true"#,
            )
        },
        f,
    )
    .await
}

fn v03_card_request(authorization: Option<&str>) -> tonic::Request<p03::GetAgentCardRequest> {
    let mut req = tonic::Request::new(p03::GetAgentCardRequest {});
    if let Some(a) = authorization {
        req.metadata_mut()
            .insert("authorization", a.parse().unwrap());
    }
    req
}

/// v0.3 `GetAgentCard` follows v1.0 `GetExtendedAgentCard` (issue #37
/// item 1): a caller with credentials gets the agent's extended card,
/// asked with its credentials; without them (or with blank ones) the
/// public card, and the agent is not asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_get_agent_card_is_the_extended_card_for_a_caller_with_credentials() {
    let up = extended_card_agent(|r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let mut card: Value = serde_json::from_str(&CARD_V03.replace("UP", "127.0.0.1:9")).unwrap();
        card["name"] = json!("fake-extended");
        card["skills"] =
            json!([{"id": "secret", "name": "secret", "description": "d", "tags": []}]);
        Reply::json(
            200,
            &json!({"jsonrpc":"2.0","id":req["id"],"result":card}).to_string(),
        )
    })
    .await;
    let px = proxy(&up, Version::V03);
    for anonymous in [None, Some(" ")] {
        let card = px
            .v03()
            .await
            .get_agent_card(v03_card_request(anonymous))
            .await
            .unwrap()
            .into_inner();
        assert_eq!((card.name.as_str(), card.skills.len()), ("fake", 0));
    }
    assert!(up.calls().is_empty(), "{:?}", up.calls());
    let card = px
        .v03()
        .await
        .get_agent_card(v03_card_request(Some("Bearer caller-token")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(card.name, "fake-extended");
    assert_eq!(card.skills[0].id, "secret");
    // Every interface the proxy's: its JSON-RPC URL, its gRPC listener.
    let port = px.grpc.addr.port();
    assert!(card.url.starts_with(&px.http.url()), "{card:?}");
    assert!(
        card.additional_interfaces
            .iter()
            .any(|i| i.transport == "GRPC" && i.url == format!("http://127.0.0.1:{port}")),
        "{card:?}"
    );
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(
        calls[0].header("authorization"),
        Some("Bearer caller-token")
    );
    let body: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(body["method"], "agent/getAuthenticatedExtendedCard");
}

/// The agent decides: its refusal of the caller's credentials is the
/// answer (UNAUTHENTICATED), never the public card nor its body; a card
/// that offers no extended card is the public card whatever the caller
/// presents, and the agent is not asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_get_agent_card_passes_on_the_agents_refusal_and_asks_only_when_offered() {
    let up = extended_card_agent(|_| Reply::json(401, r#"{"detail":"bad token 10.0.0.7"}"#)).await;
    let px = proxy(&up, Version::V03);
    let s = px
        .v03()
        .await
        .get_agent_card(v03_card_request(Some("Bearer wrong")))
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
    assert!(!s.message().contains("10.0.0.7"), "{s:?}");
    assert_eq!(up.calls().len(), 1);

    let plain = agent(Version::V03, result_of(json!(null))).await;
    let px = proxy(&plain, Version::V03);
    let card = px
        .v03()
        .await
        .get_agent_card(v03_card_request(Some("Bearer caller-token")))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(card.name, "fake");
    assert!(plain.calls().is_empty(), "{:?}", plain.calls());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_the_connection_limit_is_unavailable() {
    let up = agent(Version::V10, result_of(json!(null))).await;
    let mut config = config_for(&up.url(), Version::V10);
    config.limits.max_connections = 0;
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let px = GrpcFront {
        http,
        grpc,
        card: None,
    };
    let s = px
        .v10()
        .await
        .get_task(v10_get_task("t1"))
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unavailable);
    assert!(up.calls().is_empty());
}

/// A proxy with push notifications on (embedded store in a fresh temp dir,
/// webhooks on 127.0.0.1 allowed), like tests/push.rs starts it.
fn push_proxy(up: &FakeUpstream, version: Version, dir: &std::path::Path) -> Px {
    let mut config = config_for(&up.url(), version);
    config.push.enabled = true;
    config.push.backend = proxy::config::PushBackend::Embedded(dir.to_path_buf());
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    GrpcFront::start(config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_grpc_push_config_toward_v03_agent_is_intercepted_and_delivered() {
    // The agent keeps the config it was given and answers get/list with it.
    let seen: Arc<std::sync::Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let up = agent(Version::V03, move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let stored = || json!({"taskId":"t1","pushNotificationConfig":s.lock().unwrap().clone()});
        let result = match req["method"].as_str() {
            Some("tasks/pushNotificationConfig/set") => {
                *s.lock().unwrap() = Some(req["params"]["pushNotificationConfig"].clone());
                stored()
            }
            Some("tasks/pushNotificationConfig/get") => stored(),
            Some("tasks/pushNotificationConfig/list") => json!([stored()]),
            Some("tasks/pushNotificationConfig/delete") => Value::Null,
            _ => json!({}),
        };
        Reply::json(
            200,
            &json!({"jsonrpc":"2.0","id":req["id"],"result":result}).to_string(),
        )
    })
    .await;
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let hook_url = format!("{}/hook", hook.url());
    let dir = fresh_dir("grpc-push");
    let px = push_proxy(&up, Version::V03, &dir);
    let mut client = px.v10().await;
    let want = p10::TaskPushNotificationConfig {
        id: "p1".into(),
        task_id: "t1".into(),
        url: hook_url.clone(),
        token: "client-tok".into(),
        authentication: Some(p10::AuthenticationInfo {
            scheme: "Bearer".into(),
            credentials: "client-cred".into(),
        }),
        ..Default::default()
    };
    let got = client
        .create_task_push_notification_config(want.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want);

    // The agent was given the proxy's callback and a secret of its own.
    let given = seen.lock().unwrap().clone().expect("agent got a config");
    let url = given["url"].as_str().unwrap().to_string();
    let prefix = format!("{}/a2a-proxy/push/", px.http.url());
    assert!(url.starts_with(&prefix), "agent was given {url}");
    assert!(given.get("authentication").is_none(), "{given}");
    let secret = given["token"].as_str().unwrap().to_string();
    assert_ne!(secret, "client-tok");
    assert!(secret.len() >= 32);

    // Get / List over gRPC show the subscriber's own values.
    v10_push_config_read_back(&mut client, &want).await;

    // The agent notifies the proxy (v0.3 Task); the webhook gets v1.0.
    let task = json!({"kind":"task","id":"t1","contextId":"c1",
        "status":{"state":"completed","timestamp":"2024-03-15T18:30:00Z"}});
    let path = &url[px.http.url().len()..];
    let r = post(
        px.http.addr,
        path,
        &[
            ("Content-Type", "application/json"),
            ("X-A2A-Notification-Token", &secret),
        ],
        task.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while hook.recorded().is_empty() && std::time::Instant::now() < end {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let got = hook.recorded();
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].target, "/hook");
    assert_eq!(
        got[0].header("x-a2a-notification-token"),
        Some("client-tok")
    );
    assert_eq!(got[0].header("authorization"), Some("Bearer client-cred"));
    let body: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(
        body,
        json!({"task":{"id":"t1","contextId":"c1",
            "status":{"state":"TASK_STATE_COMPLETED","timestamp":"2024-03-15T18:30:00Z"}}})
    );

    // Delete over gRPC: afterwards the callback is unknown.
    client
        .delete_task_push_notification_config(p10::DeleteTaskPushNotificationConfigRequest {
            task_id: "t1".into(),
            id: "p1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let r = post(
            px.http.addr,
            path,
            &[
                ("Content-Type", "application/json"),
                ("X-A2A-Notification-Token", &secret),
            ],
            task.to_string().as_bytes(),
        )
        .await;
        if r.status == 404 || std::time::Instant::now() > end {
            assert_eq!(r.status, 404);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_grpc_stream_with_inline_push_config_toward_v03_agent() {
    let seen: Arc<std::sync::Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let up = agent(Version::V03, move |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        match req["method"].as_str() {
            Some("message/stream") => {
                let mut cfg = req["params"]["configuration"]["pushNotificationConfig"].clone();
                cfg["id"] = json!("p1");
                *s.lock().unwrap() = Some(cfg);
                let task = json!({"jsonrpc":"2.0","id":req["id"],"result":{"kind":"task","id":"t1","contextId":"c1",
                    "status":{"state":"submitted","timestamp":"2024-03-15T18:30:00Z"}}});
                Reply::Sse {
                    events: vec![format!("data: {task}\n\n")],
                    gate: Arc::new(Semaphore::new(100)),
                }
            }
            _ => {
                let result = json!({"taskId":"t1","pushNotificationConfig":s.lock().unwrap().clone()});
                Reply::json(
                    200,
                    &json!({"jsonrpc":"2.0","id":req["id"],"result":result}).to_string(),
                )
            }
        }
    })
    .await;
    let dir = fresh_dir("grpc-push");
    let px = push_proxy(&up, Version::V03, &dir);
    let mut client = px.v10().await;
    let hook = "http://127.0.0.1:9/hook";
    let s = client
        .send_streaming_message(p10::SendMessageRequest {
            message: Some(v10_msg("m1", "hi")),
            configuration: Some(p10::SendMessageConfiguration {
                task_push_notification_config: Some(p10::TaskPushNotificationConfig {
                    url: hook.into(),
                    token: "client-tok".into(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut s = s;
    let mut got = Vec::new();
    while let Some(m) = timeout(WAIT, s.message()).await.unwrap().unwrap() {
        got.push(m);
    }
    assert_eq!(got.len(), 1, "{got:?}");
    let given = seen.lock().unwrap().clone().expect("agent got a config");
    let url = given["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{}/a2a-proxy/push/", px.http.url())),
        "agent was given {url}"
    );
    assert_ne!(given["token"], "client-tok");
    // The stream's Task named the config's task: Get restores the client's
    // values. (Bounded retry: on this branch the push layer records the task
    // id with a background store write; main consults writes in flight.)
    let mut got = p10::TaskPushNotificationConfig::default();
    for _ in 0..100 {
        got = client
            .get_task_push_notification_config(p10::GetTaskPushNotificationConfigRequest {
                task_id: "t1".into(),
                id: "p1".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        if got.url == hook {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!((got.url.as_str(), got.token.as_str()), (hook, "client-tok"));
    let _ = std::fs::remove_dir_all(&dir);
}
