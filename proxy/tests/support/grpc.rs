//! gRPC test builders shared by the suites: messages and tasks of both
//! versions' protos, and `google.rpc.Status` / `ErrorInfo` decoded
//! independently of the proxy.

use std::collections::HashMap;

use prost::Message as _;
use proto::v03 as p03;
use proto::v10 as p10;

/// The type URL of `google.rpc.ErrorInfo` in a status's details.
pub const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";

pub fn v10_msg(id: &str, text: &str) -> p10::Message {
    p10::Message {
        message_id: id.into(),
        role: p10::Role::User as i32,
        parts: vec![p10::Part {
            content: Some(p10::part::Content::Text(text.into())),
            ..Default::default()
        }],
        ..Default::default()
    }
}

pub fn v03_msg(id: &str, text: &str) -> p03::Message {
    p03::Message {
        message_id: id.into(),
        role: p03::Role::User as i32,
        content: vec![p03::Part {
            part: Some(p03::part::Part::Text(text.into())),
            metadata: None,
        }],
        ..Default::default()
    }
}

pub fn v10_task(id: &str, state: p10::TaskState) -> p10::Task {
    p10::Task {
        id: id.into(),
        context_id: "c1".into(),
        status: Some(p10::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub fn v03_task(id: &str, state: p03::TaskState) -> p03::Task {
    p03::Task {
        id: id.into(),
        context_id: "c1".into(),
        status: Some(p03::TaskStatus {
            state: state as i32,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// `google.rpc.Status`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcStatus {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
    #[prost(message, repeated, tag = "3")]
    pub details: Vec<AnyMsg>,
}

/// `google.protobuf.Any`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AnyMsg {
    #[prost(string, tag = "1")]
    pub type_url: String,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
}

/// `google.rpc.ErrorInfo`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ErrorInfo {
    #[prost(string, tag = "1")]
    pub reason: String,
    #[prost(string, tag = "2")]
    pub domain: String,
    #[prost(map = "string, string", tag = "3")]
    pub metadata: HashMap<String, String>,
}

/// The `ErrorInfo` of a status (its first detail), checking the status's
/// code is repeated in its details.
pub fn error_info(s: &tonic::Status) -> ErrorInfo {
    let st = RpcStatus::decode(s.details()).expect("grpc-status-details-bin");
    assert_eq!(st.code, s.code() as i32);
    assert_eq!(st.details[0].type_url, ERROR_INFO);
    ErrorInfo::decode(st.details[0].value.as_slice()).unwrap()
}

/// A v1.0 stream event: task `task` (context c1) is now in `state`.
pub fn v10_status_update(task: &str, state: p10::TaskState) -> p10::StreamResponse {
    p10::StreamResponse {
        payload: Some(p10::stream_response::Payload::StatusUpdate(
            p10::TaskStatusUpdateEvent {
                task_id: task.into(),
                context_id: "c1".into(),
                status: Some(p10::TaskStatus {
                    state: state as i32,
                    ..Default::default()
                }),
                metadata: None,
            },
        )),
    }
}

/// A v0.3 stream event: task `task` (context c1) is now in `state`,
/// `last` marking the final event.
pub fn v03_status_update(task: &str, state: p03::TaskState, last: bool) -> p03::StreamResponse {
    p03::StreamResponse {
        payload: Some(p03::stream_response::Payload::StatusUpdate(
            p03::TaskStatusUpdateEvent {
                task_id: task.into(),
                context_id: "c1".into(),
                status: Some(p03::TaskStatus {
                    state: state as i32,
                    ..Default::default()
                }),
                r#final: last,
                metadata: None,
            },
        )),
    }
}

/// Every message of a gRPC stream and the status it failed with, if any
/// (each message awaited at most 10 s, at most 100 messages).
pub async fn drain<T>(mut s: tonic::Streaming<T>) -> (Vec<T>, Option<tonic::Status>) {
    let mut got = Vec::new();
    for _ in 0..100 {
        match tokio::time::timeout(std::time::Duration::from_secs(10), s.message()).await {
            Err(_) => panic!("stream stalled"),
            Ok(Ok(Some(m))) => got.push(m),
            Ok(Ok(None)) => return (got, None),
            Ok(Err(st)) => return (got, Some(st)),
        }
    }
    panic!("stream too long");
}

/// Push config p1 of task t1 (hook `http://127.0.0.1:1/hook`, token tok)
/// as a v1.0 client writes it.
pub fn v10_push_config() -> p10::TaskPushNotificationConfig {
    p10::TaskPushNotificationConfig {
        id: "p1".into(),
        task_id: "t1".into(),
        url: "http://127.0.0.1:1/hook".into(),
        token: "tok".into(),
        ..Default::default()
    }
}

/// A v1.0 client creates, gets and lists [`v10_push_config`] through
/// `c`, each answer being that config again.
pub async fn v10_push_config_round_trip(
    c: &mut p10::a2a_service_client::A2aServiceClient<tonic::transport::Channel>,
) {
    let want = v10_push_config();
    let got = c
        .create_task_push_notification_config(want.clone())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got, want);
    v10_push_config_read_back(c, &want).await;
}

/// A v1.0 client gets config p1 of task t1 and lists t1's configs
/// through `c`: `want`, and `want` alone.
pub async fn v10_push_config_read_back(
    c: &mut p10::a2a_service_client::A2aServiceClient<tonic::transport::Channel>,
    want: &p10::TaskPushNotificationConfig,
) {
    let got = c
        .get_task_push_notification_config(p10::GetTaskPushNotificationConfigRequest {
            task_id: "t1".into(),
            id: "p1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(&got, want);
    let got = c
        .list_task_push_notification_configs(p10::ListTaskPushNotificationConfigsRequest {
            task_id: "t1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(got.configs, vec![want.clone()]);
}

/// A v1.0 SendMessageRequest of message m1 saying `text`.
pub fn v10_send_request(text: &str) -> p10::SendMessageRequest {
    p10::SendMessageRequest {
        message: Some(v10_msg("m1", text)),
        ..Default::default()
    }
}

/// A v0.3 SendMessageRequest of message m1 saying `text`.
pub fn v03_send_request(text: &str) -> p03::SendMessageRequest {
    p03::SendMessageRequest {
        request: Some(v03_msg("m1", text)),
        ..Default::default()
    }
}

/// A v1.0 GetTaskRequest of task `id`, no history length.
pub fn v10_get_task(id: &str) -> p10::GetTaskRequest {
    p10::GetTaskRequest {
        id: id.into(),
        ..Default::default()
    }
}

/// A v0.3 client's request creating config p1 of task t1 (hook
/// `http://127.0.0.1:1/hook`, no token).
pub fn v03_create_push_config() -> p03::CreateTaskPushNotificationConfigRequest {
    p03::CreateTaskPushNotificationConfigRequest {
        parent: "tasks/t1".into(),
        config_id: "p1".into(),
        config: Some(p03::TaskPushNotificationConfig {
            name: String::new(),
            push_notification_config: Some(p03::PushNotificationConfig {
                url: "http://127.0.0.1:1/hook".into(),
                ..Default::default()
            }),
        }),
    }
}

/// Config p1 of task t1 as a v0.3 client is answered it after
/// [`v03_create_push_config`].
pub fn v03_push_config_p1() -> p03::TaskPushNotificationConfig {
    p03::TaskPushNotificationConfig {
        name: "tasks/t1/pushNotificationConfigs/p1".into(),
        push_notification_config: Some(p03::PushNotificationConfig {
            id: "p1".into(),
            url: "http://127.0.0.1:1/hook".into(),
            ..Default::default()
        }),
    }
}

/// A status of `code` and `message` whose `ErrorInfo` has `reason` in the
/// A2A domain; the `ErrorInfo` is returned for further checks.
pub fn assert_a2a_status(
    s: &tonic::Status,
    code: tonic::Code,
    message: &str,
    reason: &str,
) -> ErrorInfo {
    assert_eq!(s.code(), code, "{s:?}");
    assert_eq!(s.message(), message, "{s:?}");
    let info = error_info(s);
    assert_eq!(info.reason, reason, "{s:?}");
    assert_eq!(info.domain, "a2a-protocol.org", "{s:?}");
    info
}

/// One raw gRPC call over HTTP/2 (h2): the response body bytes and the
/// grpc-status (from the trailers, or the headers of a trailers-only answer).
pub async fn raw_grpc_call(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (Vec<u8>, String) {
    let wait = std::time::Duration::from_secs(10);
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(conn);
    let mut client = client.ready().await.unwrap();
    let mut b = http::Request::post(format!("http://{addr}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers");
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    let (resp, mut send) = client.send_request(b.body(()).unwrap(), false).unwrap();
    send.send_data(bytes::Bytes::copy_from_slice(body), true)
        .unwrap();
    let resp = tokio::time::timeout(wait, resp).await.unwrap().unwrap();
    if let Some(s) = resp.headers().get("grpc-status") {
        return (Vec::new(), s.to_str().unwrap().to_string());
    }
    let mut body = resp.into_body();
    let mut got = Vec::new();
    while let Some(d) = tokio::time::timeout(wait, body.data()).await.unwrap() {
        let d = d.unwrap();
        let _ = body.flow_control().release_capacity(d.len());
        got.extend_from_slice(&d);
    }
    let trailers = tokio::time::timeout(wait, body.trailers())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    (got, trailers["grpc-status"].to_str().unwrap().to_string())
}

/// A tonic channel to the gRPC listener at `g`, connecting and each call
/// bounded by [`super::WAIT`]; its `:authority` is `authority` when given.
pub async fn channel(
    g: std::net::SocketAddr,
    authority: Option<&str>,
) -> tonic::transport::Channel {
    let mut e = tonic::transport::Endpoint::from_shared(format!("http://{g}")).unwrap();
    if let Some(a) = authority {
        e = e.origin(format!("http://{a}").parse().unwrap());
    }
    e.connect_timeout(super::WAIT)
        .timeout(super::WAIT)
        .connect()
        .await
        .unwrap()
}
