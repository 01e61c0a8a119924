//! gRPC upstreams (`upstream.grpc_url`) end to end on 127.0.0.1: tonic
//! clients of both versions -> the proxy's gRPC listener -> fake gRPC agents
//! of both versions (`support::grpc_agent`: raw, recording, scripted), so
//! the tests assert the exact protobuf the agent received and the exact
//! reply or status the client got.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::Config;
use proxy::version::Version;
use support::grpc::*;
use support::grpc_agent::*;
use tonic::{Code, Status};

// ---------------------------------------------------------------- proxy

type Px = GrpcFront;

/// A proxy whose upstream is `grpc_url` (of `version`); its HTTP upstream
/// serves only the agent card.
async fn proxy_to(grpc_url: &str, version: Version) -> Px {
    proxy_tuned(grpc_url, version, |_| {}).await
}

async fn proxy_tuned(grpc_url: &str, version: Version, tune: impl FnOnce(&mut Config)) -> Px {
    let card = match version {
        Version::V03 => {
            r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://127.0.0.1:9/rpc","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#
        }
        Version::V10 => {
            r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://127.0.0.1:9/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#
        }
    };
    GrpcFront::of_grpc_agent(grpc_url, version, card.to_string(), tune).await
}

async fn proxy(agent: &GrpcAgent, version: Version) -> Px {
    proxy_to(&agent.url(), version).await
}

// ---------------------------------------------------------------- messages

fn status_with_info(code: Code, message: &str, reason: &str) -> Status {
    let info = ErrorInfo {
        reason: reason.into(),
        domain: "a2a-protocol.org".into(),
        metadata: HashMap::from([("taskId".to_string(), "t9".to_string())]),
    };
    let st = RpcStatus {
        code: code as i32,
        message: message.into(),
        details: vec![AnyMsg {
            type_url: ERROR_INFO.into(),
            value: info.encode_to_vec(),
        }],
    };
    Status::with_details(code, message, Bytes::from(st.encode_to_vec()))
}

// ---------------------------------------------------------------- v1.0 client -> v0.3 gRPC agent

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_send_message_to_v03_grpc_agent() {
    let task = v03_task("t1", p03::TaskState::Completed);
    let agent = GrpcAgent::start(
        Version::V03,
        always(p03::SendMessageResponse {
            payload: Some(p03::send_message_response::Payload::Task(task)),
        }),
    )
    .await;
    let px = proxy(&agent, Version::V03).await;
    let mut req = tonic::Request::new(v10_send_request("hi"));
    req.set_timeout(Duration::from_secs(30));
    req.metadata_mut()
        .insert("a2a-extensions", "urn:x".parse().unwrap());
    let got = px.v10().await.send_message(req).await.unwrap().into_inner();
    assert_eq!(
        got,
        p10::SendMessageResponse {
            payload: Some(p10::send_message_response::Payload::Task(v10_task(
                "t1",
                p10::TaskState::Completed
            ))),
        }
    );
    let call = agent.one_call();
    assert_eq!(call.path, "/a2a.v1.A2AService/SendMessage");
    assert_eq!(call.header("content-type"), Some("application/grpc"));
    assert_eq!(call.header("a2a-version"), Some("0.3"));
    assert_eq!(call.header("x-a2a-extensions"), Some("urn:x"));
    assert!(call.header("grpc-timeout").is_some(), "{call:?}");
    let sent: p03::SendMessageRequest = call.decode();
    assert_eq!(sent.request, Some(v03_msg("m1", "hi")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_stream_from_v03_grpc_agent_message_by_message() {
    let working = v03_status_update("t1", p03::TaskState::Working, false);
    let done = v03_status_update("t1", p03::TaskState::Completed, true);
    let msgs = vec![working.encode_to_vec(), done.encode_to_vec()];
    let agent = GrpcAgent::start(Version::V03, move |_, _| {
        Answer::Stream(msgs.clone(), Status::new(Code::Ok, ""))
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let s = px
        .v10()
        .await
        .send_streaming_message(v10_send_request("hi"))
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(s).await;
    assert!(end.is_none(), "{end:?}");
    let states: Vec<i32> = got
        .iter()
        .map(|m| match &m.payload {
            Some(p10::stream_response::Payload::StatusUpdate(e)) => {
                e.status.as_ref().unwrap().state
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        states,
        vec![
            p10::TaskState::Working as i32,
            p10::TaskState::Completed as i32
        ]
    );
    let call = agent.one_call();
    assert_eq!(call.path, "/a2a.v1.A2AService/SendStreamingMessage");
    let sent: p03::SendMessageRequest = call.decode();
    assert_eq!(sent.request, Some(v03_msg("m1", "hi")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_task_rpcs_to_v03_grpc_agent() {
    // t1 is finished (canceled); t2 is still working and its subscription
    // sends one status update, then ends.
    let done = v03_task("t1", p03::TaskState::Cancelled).encode_to_vec();
    let working = v03_task("t2", p03::TaskState::Working).encode_to_vec();
    let update = v03_status_update("t2", p03::TaskState::Completed, true).encode_to_vec();
    let agent = GrpcAgent::start(Version::V03, move |path, body| {
        if path.ends_with("/TaskSubscription") {
            return Answer::Stream(vec![update.clone()], Status::new(Code::Ok, ""));
        }
        let name = if path.ends_with("/GetTask") {
            p03::GetTaskRequest::decode(body).unwrap().name
        } else {
            p03::CancelTaskRequest::decode(body).unwrap().name
        };
        Answer::Msg(if name == "tasks/t2" {
            working.clone()
        } else {
            done.clone()
        })
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let mut c = px.v10().await;
    let want = v10_task("t1", p10::TaskState::Canceled);
    let got = c
        .get_task(p10::GetTaskRequest {
            id: "t1".into(),
            history_length: Some(2),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want);
    let got = c
        .cancel_task(p10::CancelTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want);
    // A v1.0 subscription starts with the task (v0.3's TaskSubscription
    // does not send it): the proxy asks the agent for it first.
    let st = c
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t2".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(st).await;
    assert!(end.is_none(), "{end:?}");
    let states: Vec<i32> = got
        .iter()
        .map(|r| match &r.payload {
            Some(p10::stream_response::Payload::Task(t)) => {
                assert_eq!(t.id, "t2");
                t.status.as_ref().unwrap().state
            }
            Some(p10::stream_response::Payload::StatusUpdate(u)) => {
                assert_eq!(u.task_id, "t2");
                u.status.as_ref().unwrap().state
            }
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        states,
        [
            p10::TaskState::Working as i32,
            p10::TaskState::Completed as i32
        ]
    );
    assert!(matches!(
        got[0].payload,
        Some(p10::stream_response::Payload::Task(_))
    ));
    // A finished task has nothing to subscribe to.
    let err = c
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(error_info(&err).reason, "UNSUPPORTED_OPERATION", "{err:?}");
    let calls = agent.calls();
    let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/a2a.v1.A2AService/GetTask",
            "/a2a.v1.A2AService/CancelTask",
            "/a2a.v1.A2AService/GetTask",
            "/a2a.v1.A2AService/TaskSubscription",
            "/a2a.v1.A2AService/GetTask",
        ]
    );
    assert_eq!(
        calls[0].decode::<p03::GetTaskRequest>(),
        p03::GetTaskRequest {
            name: "tasks/t1".into(),
            history_length: 2
        }
    );
    assert_eq!(
        calls[1].decode::<p03::CancelTaskRequest>(),
        p03::CancelTaskRequest {
            name: "tasks/t1".into()
        }
    );
    assert_eq!(calls[2].decode::<p03::GetTaskRequest>().name, "tasks/t2");
    assert_eq!(
        calls[3].decode::<p03::TaskSubscriptionRequest>(),
        p03::TaskSubscriptionRequest {
            name: "tasks/t2".into()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_push_config_rpcs_to_v03_grpc_agent() {
    let cfg = p03::TaskPushNotificationConfig {
        name: "tasks/t1/pushNotificationConfigs/p1".into(),
        push_notification_config: Some(p03::PushNotificationConfig {
            id: "p1".into(),
            url: "http://127.0.0.1:1/hook".into(),
            token: "tok".into(),
            authentication: None,
        }),
    };
    let one = cfg.encode_to_vec();
    let list = p03::ListTaskPushNotificationConfigResponse {
        configs: vec![cfg.clone()],
        next_page_token: String::new(),
    }
    .encode_to_vec();
    let agent = GrpcAgent::start(Version::V03, move |path, _| {
        if path.ends_with("/ListTaskPushNotificationConfig") {
            Answer::Msg(list.clone())
        } else if path.ends_with("/DeleteTaskPushNotificationConfig") {
            Answer::Msg(Vec::new())
        } else {
            Answer::Msg(one.clone())
        }
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let mut c = px.v10().await;
    v10_push_config_round_trip(&mut c).await;
    c.delete_task_push_notification_config(p10::DeleteTaskPushNotificationConfigRequest {
        task_id: "t1".into(),
        id: "p1".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    let calls = agent.calls();
    let paths: Vec<&str> = calls.iter().map(|c| c.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "/a2a.v1.A2AService/CreateTaskPushNotificationConfig",
            "/a2a.v1.A2AService/GetTaskPushNotificationConfig",
            "/a2a.v1.A2AService/ListTaskPushNotificationConfig",
            "/a2a.v1.A2AService/DeleteTaskPushNotificationConfig"
        ]
    );
    let created: p03::CreateTaskPushNotificationConfigRequest = calls[0].decode();
    assert_eq!(created.parent, "tasks/t1");
    assert_eq!(
        created.config.and_then(|c| c.push_notification_config),
        cfg.push_notification_config
    );
    assert_eq!(
        calls[1].decode::<p03::GetTaskPushNotificationConfigRequest>(),
        p03::GetTaskPushNotificationConfigRequest {
            name: "tasks/t1/pushNotificationConfigs/p1".into()
        }
    );
    assert_eq!(
        calls[2]
            .decode::<p03::ListTaskPushNotificationConfigRequest>()
            .parent,
        "tasks/t1"
    );
    assert_eq!(
        calls[3].decode::<p03::DeleteTaskPushNotificationConfigRequest>(),
        p03::DeleteTaskPushNotificationConfigRequest {
            name: "tasks/t1/pushNotificationConfigs/p1".into()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_extended_card_from_v03_grpc_agent_card() {
    let card = p03::AgentCard {
        protocol_version: "0.3.0".into(),
        name: "grpc-fake".into(),
        description: "d".into(),
        url: "127.0.0.1:9".into(),
        preferred_transport: "GRPC".into(),
        version: "1".into(),
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        capabilities: Some(p03::AgentCapabilities::default()),
        ..Default::default()
    };
    let agent = GrpcAgent::start(Version::V03, always(card)).await;
    let px = proxy(&agent, Version::V03).await;
    let got = px
        .v10()
        .await
        .get_extended_agent_card(p10::GetExtendedAgentCardRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.name, "grpc-fake");
    assert_eq!(agent.one_call().path, "/a2a.v1.A2AService/GetAgentCard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_grpc_agent_errors_reach_v10_clients_with_error_info() {
    let agent = GrpcAgent::start(Version::V03, |_, _| {
        Answer::Fail(Status::new(Code::NotFound, "TaskNotFoundError: no task t9"))
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let s = px
        .v10()
        .await
        .get_task(v10_get_task("t9"))
        .await
        .unwrap_err();
    assert_a2a_status(&s, Code::NotFound, "no task t9", "TASK_NOT_FOUND");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_list_tasks_toward_v03_grpc_agent_is_local() {
    let task = v03_task("t1", p03::TaskState::Working);
    let agent = GrpcAgent::start(Version::V03, always(task)).await;
    let px = proxy(&agent, Version::V03).await;
    let mut c = px.v10().await;
    let with_auth = |auth: Option<&str>, r: p10::ListTasksRequest| {
        let mut req = tonic::Request::new(r);
        if let Some(a) = auth {
            req.metadata_mut()
                .insert("authorization", a.parse().unwrap());
        }
        req
    };
    let got = c
        .list_tasks(with_auth(
            Some("Bearer a"),
            p10::ListTasksRequest::default(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(got.tasks.is_empty(), "{got:?}");
    assert!(agent.calls().is_empty());
    // Caller a sees t1; its list asks the agent's GetTask with a's
    // credentials. Nobody else sees it, and the agent is not asked.
    let mut get = tonic::Request::new(v10_get_task("t1"));
    get.metadata_mut()
        .insert("authorization", "Bearer a".parse().unwrap());
    c.get_task(get).await.unwrap();
    let got = c
        .list_tasks(with_auth(
            Some("Bearer a"),
            p10::ListTasksRequest::default(),
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.tasks.len(), 1, "{got:?}");
    assert_eq!(got.tasks[0].id, "t1");
    let calls = agent.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1].path, "/a2a.v1.A2AService/GetTask");
    assert_eq!(
        calls[1].headers.get("authorization").map(|v| v.as_bytes()),
        Some(&b"Bearer a"[..])
    );
    for auth in [None, Some("Bearer b")] {
        let got = c
            .list_tasks(with_auth(auth, p10::ListTasksRequest::default()))
            .await
            .unwrap()
            .into_inner();
        assert!(got.tasks.is_empty(), "{got:?}");
    }
    assert_eq!(agent.calls().len(), 2);
}

// ---------------------------------------------------------------- v0.3 client -> v1.0 gRPC agent

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_send_message_to_v10_grpc_agent() {
    let agent = GrpcAgent::start(
        Version::V10,
        always(p10::SendMessageResponse {
            payload: Some(p10::send_message_response::Payload::Message(p10::Message {
                role: p10::Role::Agent as i32,
                ..v10_msg("r1", "hello")
            })),
        }),
    )
    .await;
    let px = proxy(&agent, Version::V10).await;
    let got = px
        .v03()
        .await
        .send_message(v03_send_request("hi"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        got,
        p03::SendMessageResponse {
            payload: Some(p03::send_message_response::Payload::Msg(p03::Message {
                role: p03::Role::Agent as i32,
                ..v03_msg("r1", "hello")
            })),
        }
    );
    let call = agent.one_call();
    assert_eq!(call.path, "/lf.a2a.v1.A2AService/SendMessage");
    assert_eq!(call.header("a2a-version"), Some("1.0"));
    let sent: p10::SendMessageRequest = call.decode();
    assert_eq!(sent.message, Some(v10_msg("m1", "hi")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_subscription_from_v10_grpc_agent_ends_with_its_status() {
    let ev = v10_status_update("t1", p10::TaskState::Working).encode_to_vec();
    // One event, then the agent fails the stream with an A2A error.
    let agent = GrpcAgent::start(Version::V10, move |_, _| {
        Answer::Stream(
            vec![ev.clone()],
            status_with_info(
                Code::FailedPrecondition,
                "cannot go on",
                "UNSUPPORTED_OPERATION",
            ),
        )
    })
    .await;
    let px = proxy(&agent, Version::V10).await;
    let s = px
        .v03()
        .await
        .task_subscription(p03::TaskSubscriptionRequest {
            name: "tasks/t1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(s).await;
    assert_eq!(got.len(), 1, "{got:?}");
    match &got[0].payload {
        Some(p03::stream_response::Payload::StatusUpdate(e)) => {
            assert_eq!(e.task_id, "t1");
            assert_eq!(
                e.status.as_ref().unwrap().state,
                p03::TaskState::Working as i32
            );
        }
        other => panic!("{other:?}"),
    }
    let end = end.expect("the stream ends with the agent's error");
    assert_eq!(end.code(), Code::Unimplemented);
    assert_eq!(end.message(), "UnsupportedOperationError: cannot go on");
    assert_eq!(error_info(&end).reason, "UNSUPPORTED_OPERATION");
    let call = agent.one_call();
    assert_eq!(call.path, "/lf.a2a.v1.A2AService/SubscribeToTask");
    assert_eq!(
        call.decode::<p10::SubscribeToTaskRequest>(),
        p10::SubscribeToTaskRequest {
            id: "t1".into(),
            ..Default::default()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_task_and_push_rpcs_to_v10_grpc_agent() {
    let task = v10_task("t1", p10::TaskState::Working).encode_to_vec();
    let cfg = p10::TaskPushNotificationConfig {
        id: "p1".into(),
        task_id: "t1".into(),
        url: "http://127.0.0.1:1/hook".into(),
        ..Default::default()
    };
    let one = cfg.encode_to_vec();
    let list = p10::ListTaskPushNotificationConfigsResponse {
        configs: vec![cfg],
        next_page_token: String::new(),
    }
    .encode_to_vec();
    let agent = GrpcAgent::start(Version::V10, move |path, _| {
        let m = path.rsplit('/').next().unwrap_or_default();
        Answer::Msg(match m {
            "GetTask" | "CancelTask" => task.clone(),
            "ListTaskPushNotificationConfigs" => list.clone(),
            "DeleteTaskPushNotificationConfig" => Vec::new(),
            _ => one.clone(),
        })
    })
    .await;
    let px = proxy(&agent, Version::V10).await;
    let mut c = px.v03().await;
    let want_task = v03_task("t1", p03::TaskState::Working);
    let got = c
        .get_task(p03::GetTaskRequest {
            name: "tasks/t1".into(),
            history_length: 0,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want_task);
    let got = c
        .cancel_task(p03::CancelTaskRequest {
            name: "tasks/t1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want_task);
    let want_cfg = v03_push_config_p1();
    let got = c
        .create_task_push_notification_config(v03_create_push_config())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want_cfg);
    let got = c
        .get_task_push_notification_config(p03::GetTaskPushNotificationConfigRequest {
            name: "tasks/t1/pushNotificationConfigs/p1".into(),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want_cfg);
    let got = c
        .list_task_push_notification_config(p03::ListTaskPushNotificationConfigRequest {
            parent: "tasks/t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.configs, vec![want_cfg]);
    c.delete_task_push_notification_config(p03::DeleteTaskPushNotificationConfigRequest {
        name: "tasks/t1/pushNotificationConfigs/p1".into(),
    })
    .await
    .unwrap();
    let calls = agent.calls();
    let paths: Vec<&str> = calls
        .iter()
        .map(|c| c.path.strip_prefix("/lf.a2a.v1.A2AService/").unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "GetTask",
            "CancelTask",
            "CreateTaskPushNotificationConfig",
            "GetTaskPushNotificationConfig",
            "ListTaskPushNotificationConfigs",
            "DeleteTaskPushNotificationConfig"
        ]
    );
    assert_eq!(calls[0].decode::<p10::GetTaskRequest>(), v10_get_task("t1"));
    assert_eq!(
        calls[2].decode::<p10::TaskPushNotificationConfig>(),
        p10::TaskPushNotificationConfig {
            id: "p1".into(),
            task_id: "t1".into(),
            url: "http://127.0.0.1:1/hook".into(),
            ..Default::default()
        }
    );
    assert_eq!(
        calls[5].decode::<p10::DeleteTaskPushNotificationConfigRequest>(),
        p10::DeleteTaskPushNotificationConfigRequest {
            task_id: "t1".into(),
            id: "p1".into(),
            ..Default::default()
        }
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_grpc_agent_error_info_reaches_v03_clients() {
    let agent = GrpcAgent::start(Version::V10, |_, _| {
        Answer::Fail(status_with_info(
            Code::FailedPrecondition,
            "already done",
            "TASK_NOT_CANCELABLE",
        ))
    })
    .await;
    let px = proxy(&agent, Version::V10).await;
    let s = px
        .v03()
        .await
        .cancel_task(p03::CancelTaskRequest {
            name: "tasks/t9".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unimplemented);
    assert_eq!(s.message(), "TaskNotCancelableError: already done");
    assert_eq!(error_info(&s).reason, "TASK_NOT_CANCELABLE");
}

// ---------------------------------------------------------------- transport

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_grpc_upstream_is_unavailable() {
    let dead = support::free_local_addr().unwrap();
    let px = proxy_to(&format!("http://{dead}"), Version::V03).await;
    let s = px
        .v10()
        .await
        .get_task(v10_get_task("t1"))
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unavailable, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_reaches_the_grpc_agent_and_bounds_the_call() {
    let agent = GrpcAgent::start(Version::V03, |_, _| Answer::Hang).await;
    let px = proxy(&agent, Version::V03).await;
    let mut req = tonic::Request::new(v10_get_task("t1"));
    req.set_timeout(Duration::from_millis(300));
    let s = tokio::time::timeout(Duration::from_secs(10), px.v10().await.get_task(req))
        .await
        .expect("the deadline ends the call")
        .unwrap_err();
    // The proxy's own deadline and tonic's server-side one race.
    assert!(
        matches!(s.code(), Code::DeadlineExceeded | Code::Cancelled),
        "{s:?}"
    );
    let call = agent.one_call();
    let t = call.header("grpc-timeout").expect("deadline propagated");
    let (n, unit) = t.split_at(t.len() - 1);
    let n: u64 = n.parse().unwrap();
    let d = match unit {
        "n" => Duration::from_nanos(n),
        "u" => Duration::from_micros(n),
        "m" => Duration::from_millis(n),
        "S" => Duration::from_secs(n),
        other => panic!("unit {other}"),
    };
    assert!(d > Duration::ZERO && d <= Duration::from_millis(300), "{t}");
    // The ended call does not linger upstream.
    assert!(
        agent.wait_closed().await,
        "the upstream call outlived the deadline"
    );
}

/// An agent of `version` that sends headers and then nothing, behind a
/// proxy whose read timeout is 300 ms.
async fn hanging_agent_behind_a_short_read_timeout(version: Version) -> (GrpcAgent, Px) {
    let agent = GrpcAgent::start(version, |_, _| Answer::Hang).await;
    let url = format!("http://{}", agent.addr);
    let px = proxy_tuned(&url, version, |c| {
        c.limits.read_timeout = Duration::from_millis(300);
    })
    .await;
    (agent, px)
}

/// A GetTask without a client deadline ends with DEADLINE_EXCEEDED (the
/// proxy's read timeout), well within 10 s.
async fn get_task_times_out(
    c: &mut p10::a2a_service_client::A2aServiceClient<tonic::transport::Channel>,
) {
    let get = c.get_task(v10_get_task("t1"));
    let s = tokio::time::timeout(Duration::from_secs(10), get)
        .await
        .expect("the read timeout ends the call")
        .unwrap_err();
    assert_eq!(s.code(), Code::DeadlineExceeded, "{s:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_timeout_bounds_a_grpc_call_without_a_deadline() {
    // No grpc-timeout from the client: the proxy's own read timeout ends
    // the call (on the direct route and on the JSON route, which the
    // subscribe's first GetTask takes).
    let (agent, px) = hanging_agent_behind_a_short_read_timeout(Version::V03).await;
    let mut c = px.v10().await;
    get_task_times_out(&mut c).await;
    let sub = c.subscribe_to_task(p10::SubscribeToTaskRequest {
        id: "t1".into(),
        ..Default::default()
    });
    let r = tokio::time::timeout(Duration::from_secs(10), sub)
        .await
        .expect("the read timeout ends the first GetTask");
    // The GetTask timed out, so the subscription was opened (and its
    // first event is bounded by the same timeout).
    if let Ok(st) = r {
        let (got, end) = drain(st.into_inner()).await;
        assert!(got.is_empty(), "{got:?}");
        assert_eq!(end.map(|e| e.code()), Some(Code::DeadlineExceeded));
    }
    let paths: Vec<String> = agent.calls().into_iter().map(|c| c.path).collect();
    assert_eq!(
        paths,
        [
            "/a2a.v1.A2AService/GetTask",
            "/a2a.v1.A2AService/GetTask",
            "/a2a.v1.A2AService/TaskSubscription"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_stream_cancels_the_grpc_upstream_call() {
    // The task is there (the proxy asks for it before subscribing); the
    // subscription then hangs.
    let working = v03_task("t1", p03::TaskState::Working).encode_to_vec();
    let agent = GrpcAgent::start(Version::V03, move |path, _| {
        if path.ends_with("/GetTask") {
            Answer::Msg(working.clone())
        } else {
            Answer::Hang
        }
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let s = px
        .v10()
        .await
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Wait (bounded) until the agent has the subscription, then go away.
    for _ in 0..500 {
        if agent.calls().len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let paths: Vec<String> = agent.calls().into_iter().map(|c| c.path).collect();
    assert_eq!(
        paths,
        [
            "/a2a.v1.A2AService/GetTask",
            "/a2a.v1.A2AService/TaskSubscription"
        ]
    );
    assert!(!agent.closed());
    drop(s);
    assert!(
        agent.wait_closed().await,
        "the upstream call outlived the gRPC caller"
    );
}

// ---------------------------------------------------------------- same-version passthrough

/// `m` with an extra field 99 (varint 1) no schema knows.
fn with_unknown_field(m: impl Message) -> Vec<u8> {
    let mut b = m.encode_to_vec();
    b.extend_from_slice(&[0x98, 0x06, 0x01]);
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_v10_unary_is_passed_through_byte_for_byte() {
    let reply = with_unknown_field(p10::SendMessageResponse {
        payload: Some(p10::send_message_response::Payload::Task(v10_task(
            "t1",
            p10::TaskState::Working,
        ))),
    });
    let r = reply.clone();
    let agent = GrpcAgent::start(Version::V10, move |_, _| Answer::Msg(r.clone())).await;
    let px = proxy(&agent, Version::V10).await;
    let sent = frame(&with_unknown_field(v10_send_request("hi")));
    let (got, status) = raw_grpc_call(
        px.grpc.addr,
        "/lf.a2a.v1.A2AService/SendMessage",
        &[("a2a-version", "1.0"), ("x-custom", "kept")],
        &sent,
    )
    .await;
    assert_eq!(status, "0");
    assert_eq!(got, frame(&reply).to_vec(), "the reply was re-encoded");
    let call = agent.one_call();
    assert_eq!(call.path, "/lf.a2a.v1.A2AService/SendMessage");
    assert_eq!(call.body, sent.to_vec(), "the request was re-encoded");
    assert_eq!(call.header("a2a-version"), Some("1.0"));
    assert_eq!(call.header("x-custom"), Some("kept"));

    // An RPC the proxy's schema does not have goes to the agent as well.
    let (got, status) =
        raw_grpc_call(px.grpc.addr, "/lf.a2a.v1.A2AService/NewRpc", &[], &sent).await;
    assert_eq!((got, status), (frame(&reply).to_vec(), "0".to_string()));
    assert_eq!(agent.calls().len(), 2);
    assert_eq!(agent.calls()[1].path, "/lf.a2a.v1.A2AService/NewRpc");

    // Counted like any other gRPC call.
    let m = support::get(px.http.addr, "/metrics", &[]).await.text();
    assert!(
        m.contains(
            "a2a_proxy_requests_total{agent=\"default\",method=\"SendMessage\",direction=\"v10_v10\",binding=\"grpc\",outcome=\"ok\"} 1"
        ),
        "{m}"
    );
}

/// The proxy decides versions on the passthrough path too (issue #37
/// item 4, the A2A TCK's `test_version_not_supported_returns_unimplemented`):
/// an `a2a-version` the service does not serve is refused before the
/// agent is called (v1.0: UNIMPLEMENTED), one it serves goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_passthrough_refuses_an_unsupported_a2a_version() {
    let reply = p10::SendMessageResponse {
        payload: Some(p10::send_message_response::Payload::Task(v10_task(
            "t1",
            p10::TaskState::Working,
        ))),
    }
    .encode_to_vec();
    let agent = GrpcAgent::start(Version::V10, move |_, _| Answer::Msg(reply.clone())).await;
    let px = proxy(&agent, Version::V10).await;
    let sent = frame(&v10_send_request("hi").encode_to_vec());
    for bad in ["99.0", "0.3", "not-a-version"] {
        let (_, status) = raw_grpc_call(
            px.grpc.addr,
            "/lf.a2a.v1.A2AService/SendMessage",
            &[("a2a-version", bad)],
            &sent,
        )
        .await;
        assert_eq!(status, (Code::Unimplemented as i32).to_string(), "{bad}");
    }
    assert!(agent.calls().is_empty(), "the agent is not asked");
    let (_, status) = raw_grpc_call(
        px.grpc.addr,
        "/lf.a2a.v1.A2AService/SendMessage",
        &[("a2a-version", "1.0")],
        &sent,
    )
    .await;
    assert_eq!(status, "0");
    assert_eq!(agent.calls().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_v03_stream_and_status_are_passed_through() {
    let ev = with_unknown_field(p03::StreamResponse {
        payload: Some(p03::stream_response::Payload::Task(v03_task(
            "t1",
            p03::TaskState::Working,
        ))),
    });
    // A status the decoding path would re-map (code and message).
    let end = status_with_info(Code::DataLoss, "agent-specific", "CUSTOM_REASON");
    let details = end.details().to_vec();
    let e = ev.clone();
    let agent = GrpcAgent::start(Version::V03, move |_, _| {
        Answer::Stream(
            vec![e.clone(), e.clone()],
            status_with_info(Code::DataLoss, "agent-specific", "CUSTOM_REASON"),
        )
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let req = p03::TaskSubscriptionRequest {
        name: "tasks/t1".into(),
    };
    let s = px
        .v03()
        .await
        .task_subscription(req.clone())
        .await
        .unwrap()
        .into_inner();
    let (got, status) = drain(s).await;
    let want = p03::StreamResponse::decode(ev.as_slice()).unwrap();
    assert_eq!(got, vec![want.clone(), want]);
    let status = status.expect("the agent's status");
    assert_eq!(status.code(), Code::DataLoss);
    assert_eq!(status.message(), "agent-specific");
    assert_eq!(status.details(), details.as_slice());
    let call = agent.one_call();
    assert_eq!(call.path, "/a2a.v1.A2AService/TaskSubscription");
    assert_eq!(call.body, frame(&req.encode_to_vec()).to_vec());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_version_card_rpc_is_the_proxys_own() {
    let agent = GrpcAgent::start(Version::V03, |_, _| Answer::Fail(Status::internal("no"))).await;
    let px = proxy(&agent, Version::V03).await;
    let card = px
        .v03()
        .await
        .get_agent_card(p03::GetAgentCardRequest {})
        .await
        .unwrap()
        .into_inner();
    let port = px.grpc.addr.port();
    assert!(
        card.additional_interfaces
            .iter()
            .any(|i| i.transport == "GRPC" && i.url == format!("http://127.0.0.1:{port}")),
        "{card:?}"
    );
    assert!(agent.calls().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_stream_from_v10_grpc_agent() {
    let ev = |state| v10_status_update("t1", state).encode_to_vec();
    let msgs = vec![ev(p10::TaskState::Working), ev(p10::TaskState::Completed)];
    let agent = GrpcAgent::start(Version::V10, move |_, _| {
        Answer::Stream(msgs.clone(), Status::new(Code::Ok, ""))
    })
    .await;
    let px = proxy(&agent, Version::V10).await;
    let s = px
        .v03()
        .await
        .send_streaming_message(v03_send_request("hi"))
        .await
        .unwrap()
        .into_inner();
    let (got, end) = drain(s).await;
    assert!(end.is_none(), "{end:?}");
    let seen: Vec<(i32, bool)> = got
        .iter()
        .map(|m| match &m.payload {
            Some(p03::stream_response::Payload::StatusUpdate(e)) => {
                (e.status.as_ref().unwrap().state, e.r#final)
            }
            other => panic!("{other:?}"),
        })
        .collect();
    // v0.3 marks the terminal update final (v1.0 has no flag).
    assert_eq!(
        seen,
        vec![
            (p03::TaskState::Working as i32, false),
            (p03::TaskState::Completed as i32, true)
        ]
    );
    let call = agent.one_call();
    assert_eq!(call.path, "/lf.a2a.v1.A2AService/SendStreamingMessage");
    assert_eq!(
        call.decode::<p10::SendMessageRequest>().message,
        Some(v10_msg("m1", "hi"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_config_toward_a_v03_grpc_agent_is_intercepted() {
    // The agent answers Create with the config it was given.
    let agent = GrpcAgent::start(Version::V03, |path, msg| {
        assert!(
            path.ends_with("/CreateTaskPushNotificationConfig"),
            "{path}"
        );
        let req = p03::CreateTaskPushNotificationConfigRequest::decode(msg).unwrap();
        let mut cfg = req.config.unwrap_or_default();
        cfg.name = format!("{}/pushNotificationConfigs/p1", req.parent);
        if let Some(c) = cfg.push_notification_config.as_mut() {
            c.id = "p1".into();
        }
        Answer::Msg(cfg.encode_to_vec())
    })
    .await;
    let dir = support::fresh_dir("grpc-up-push");
    let d = dir.clone();
    let px = proxy_tuned(&format!("http://{}", agent.addr), Version::V03, move |c| {
        c.push.enabled = true;
        c.push.backend = proxy::config::PushBackend::Embedded(d);
        c.push.allow_hosts = vec!["127.0.0.1".into()];
    })
    .await;
    let want = p10::TaskPushNotificationConfig {
        id: "p1".into(),
        task_id: "t1".into(),
        url: "http://127.0.0.1:9/hook".into(),
        token: "client-tok".into(),
        ..Default::default()
    };
    let got = px
        .v10()
        .await
        .create_task_push_notification_config(want.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want);
    let sent: p03::CreateTaskPushNotificationConfigRequest = agent.one_call().decode();
    let given = sent
        .config
        .and_then(|c| c.push_notification_config)
        .expect("a config");
    let prefix = format!("{}/a2a-proxy/push/", px.http.url());
    assert!(
        given.url.starts_with(&prefix),
        "agent was given {}",
        given.url
    );
    assert_ne!(given.token, "client-tok");
    assert!(given.token.len() >= 32);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_timeout_bounds_a_passed_through_unary_call() {
    // Same version: passed through raw. The agent sends its headers and
    // then nothing; no client deadline. The proxy ends the answer with
    // DEADLINE_EXCEEDED at its read timeout and lets go of the agent.
    let (agent, px) = hanging_agent_behind_a_short_read_timeout(Version::V10).await;
    get_task_times_out(&mut px.v10().await).await;
    assert_eq!(agent.one_call().path, "/lf.a2a.v1.A2AService/GetTask");
    assert!(
        agent.wait_closed().await,
        "the upstream call outlived the read timeout"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_passthrough_stream_cancels_the_upstream_call() {
    let agent = GrpcAgent::start(Version::V10, |_, _| Answer::Hang).await;
    let px = proxy(&agent, Version::V10).await;
    let s = px
        .v10()
        .await
        .subscribe_to_task(p10::SubscribeToTaskRequest {
            id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    for _ in 0..500 {
        if !agent.calls().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(agent.calls().len(), 1);
    assert!(!agent.closed());
    drop(s);
    assert!(
        agent.wait_closed().await,
        "the passed-through call outlived the gRPC caller"
    );
}

// ---------------------------------------------------------------- extensions

/// Both spellings of the extension metadata, one repeated, some URIs twice.
fn with_both_extension_spellings<T>(mut req: tonic::Request<T>) -> tonic::Request<T> {
    let md = req.metadata_mut();
    md.append("a2a-extensions", "urn:a, urn:b".parse().unwrap());
    md.append("x-a2a-extensions", "urn:a".parse().unwrap());
    md.append("a2a-extensions", "urn:c,urn:b".parse().unwrap());
    md.append("x-a2a-extensions", "urn:d".parse().unwrap());
    req
}

/// The agent got the extensions once, in its own spelling (`name`), every
/// URI of both of the client's spellings merged, each once.
fn merged_extensions_reached(call: &Call, name: &str, other: &str) {
    let got: Vec<_> = call.headers.get_all(name).iter().collect();
    assert_eq!(got, ["urn:a,urn:b,urn:c,urn:d"], "{call:?}");
    assert!(call.headers.get(other).is_none(), "{call:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_of_both_spellings_reach_the_grpc_agent_merged_on_the_direct_path() {
    // A v1.0 client's send and stream toward a v0.3 agent.
    let task = v03_task("t1", p03::TaskState::Completed);
    let agent = GrpcAgent::start(Version::V03, move |path, _| {
        if path.ends_with("/SendMessage") {
            let m = p03::SendMessageResponse {
                payload: Some(p03::send_message_response::Payload::Task(task.clone())),
            };
            Answer::Msg(m.encode_to_vec())
        } else {
            Answer::Stream(vec![], Status::new(Code::Ok, ""))
        }
    })
    .await;
    let px = proxy(&agent, Version::V03).await;
    let ask = || with_both_extension_spellings(tonic::Request::new(v10_send_request("hi")));
    px.v10().await.send_message(ask()).await.unwrap();
    let s = px.v10().await.send_streaming_message(ask()).await.unwrap();
    drain(s.into_inner()).await;
    let calls = agent.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for call in &calls {
        merged_extensions_reached(call, "x-a2a-extensions", "a2a-extensions");
    }
    // A v0.3 client's send toward a v1.0 agent.
    let agent = GrpcAgent::start(
        Version::V10,
        always(p10::SendMessageResponse {
            payload: Some(p10::send_message_response::Payload::Message(v10_msg(
                "r1", "hello",
            ))),
        }),
    )
    .await;
    let px = proxy(&agent, Version::V10).await;
    let req = with_both_extension_spellings(tonic::Request::new(v03_send_request("hi")));
    px.v03().await.send_message(req).await.unwrap();
    merged_extensions_reached(&agent.one_call(), "a2a-extensions", "x-a2a-extensions");
}
