//! The upstream client's retry rule (`proxy/src/unary/retry.rs`) on the
//! calls the proxy makes to a gRPC agent (`upstream.grpc_url`): a read
//! whose connection ended after the agent read it is asked once more on a
//! new connection; a send lost the same way is not. The agent is raw
//! HTTP/2 on 127.0.0.1 (the `h2` crate), so it can close the connection
//! between reading a request and answering it.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use prost::Message;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::version::Version;
use support::grpc::*;
use support::grpc_agent::GrpcFront;
use support::WAIT;
use tokio::net::TcpListener;

/// A gRPC agent answering every request with one encoded message (a
/// server stream of one), except the requests whose number (from 1, over
/// all connections) is in `drop`: once such a request is read whole, its
/// connection is closed without an answer.
struct DroppingAgent {
    addr: std::net::SocketAddr,
    version: Version,
    received: Arc<AtomicUsize>,
    paths: Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for DroppingAgent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl DroppingAgent {
    async fn start(drop: &'static [usize], answer: Vec<u8>) -> DroppingAgent {
        DroppingAgent::start_v(Version::V03, drop, answer).await
    }

    /// [`DroppingAgent::start`] behind a proxy told the agent is of
    /// `version` (the agent answers any path).
    async fn start_v(version: Version, drop: &'static [usize], answer: Vec<u8>) -> DroppingAgent {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let paths = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (r, p) = (received.clone(), paths.clone());
        let answer = bytes::Bytes::from(answer);
        let task = tokio::spawn(async move {
            while let Ok((s, _)) = l.accept().await {
                let (r, p, a) = (r.clone(), p.clone(), answer.clone());
                tokio::spawn(serve_h2(s, drop, a, r, p));
            }
        });
        DroppingAgent {
            addr,
            version,
            received,
            paths,
            task,
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn received(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }
}

/// One HTTP/2 connection of [`DroppingAgent`].
async fn serve_h2(
    s: tokio::net::TcpStream,
    drop: &'static [usize],
    answer: bytes::Bytes,
    received: Arc<AtomicUsize>,
    paths: Arc<std::sync::Mutex<Vec<String>>>,
) {
    let Ok(Ok(mut conn)) = tokio::time::timeout(WAIT, h2::server::handshake(s)).await else {
        return;
    };
    let kill = Arc::new(tokio::sync::Notify::new());
    loop {
        let next = tokio::select! {
            n = conn.accept() => n,
            _ = kill.notified() => return,
        };
        let Some(Ok((req, mut respond))) = next else {
            return;
        };
        paths.lock().unwrap().push(req.uri().path().to_string());
        let (received, kill, answer) = (received.clone(), kill.clone(), answer.clone());
        tokio::spawn(async move {
            let mut body = req.into_body();
            while let Ok(Some(Ok(chunk))) = tokio::time::timeout(WAIT, body.data()).await {
                let _ = body.flow_control().release_capacity(chunk.len());
            }
            let n = received.fetch_add(1, Ordering::SeqCst) + 1;
            if drop.contains(&n) {
                // Read, not answered: the whole connection goes.
                kill.notify_one();
                return;
            }
            let head = http::Response::builder()
                .status(200)
                .header("content-type", "application/grpc")
                .body(())
                .unwrap();
            let Ok(mut send) = respond.send_response(head, false) else {
                return;
            };
            let _ = send.send_data(support::grpc_agent::frame(&answer), false);
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            let _ = send.send_trailers(trailers);
        });
    }
}

const V03_CARD: &str = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://127.0.0.1:9/rpc","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;
const V10_CARD: &str = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://127.0.0.1:9/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

async fn proxy_of(agent: &DroppingAgent) -> GrpcFront {
    let card = match agent.version {
        Version::V03 => V03_CARD,
        Version::V10 => V10_CARD,
    };
    GrpcFront::of_grpc_agent(&agent.url(), agent.version, card.to_string(), |c| {
        c.limits.connect_timeout = std::time::Duration::from_millis(500);
    })
    .await
}

fn authorized<T>(m: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(m);
    r.metadata_mut()
        .insert("authorization", "Bearer a".parse().unwrap());
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_tasks_page_asks_a_lost_get_task_once_more() {
    // Request 1: the caller's GetTask (the task is then listed to it);
    // request 2: the page's GetTask of t1, its connection closed after the
    // agent read it; request 3: the same GetTask on a new connection.
    let task = v03_task("t1", p03::TaskState::Working).encode_to_vec();
    let agent = DroppingAgent::start(&[2], task).await;
    let px = proxy_of(&agent).await;
    let mut c = px.v10().await;
    let get = p10::GetTaskRequest {
        id: "t1".into(),
        ..Default::default()
    };
    c.get_task(authorized(get)).await.unwrap();
    let page = c
        .list_tasks(authorized(p10::ListTasksRequest::default()))
        .await
        .unwrap()
        .into_inner();
    let ids: Vec<&str> = page.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["t1"], "{page:?}");
    assert_eq!(agent.received(), 3);
    let paths = agent.paths.lock().unwrap().clone();
    assert!(
        paths.iter().all(|p| p == "/a2a.v1.A2AService/GetTask"),
        "{paths:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_task_toward_a_grpc_agent_lost_after_the_read_is_asked_once_more() {
    // The direct path (a v1.0 GetTask, prost to prost) and the JSON route
    // (a v1.0 GetPushConfig, through the v0.3 service's table).
    let task = v03_task("t1", p03::TaskState::Working).encode_to_vec();
    let agent = DroppingAgent::start(&[1], task).await;
    let px = proxy_of(&agent).await;
    let get = p10::GetTaskRequest {
        id: "t1".into(),
        ..Default::default()
    };
    let got = px.v10().await.get_task(get).await.unwrap().into_inner();
    assert_eq!(got.id, "t1");
    assert_eq!(agent.received(), 2);
    let config = p03::TaskPushNotificationConfig {
        name: "tasks/t1/pushNotificationConfigs/p1".into(),
        push_notification_config: Some(p03::PushNotificationConfig {
            id: "p1".into(),
            url: "https://hooks.example/x".into(),
            ..Default::default()
        }),
    };
    let agent = DroppingAgent::start(&[1], config.encode_to_vec()).await;
    let px = proxy_of(&agent).await;
    let ask = p10::GetTaskPushNotificationConfigRequest {
        task_id: "t1".into(),
        id: "p1".into(),
        ..Default::default()
    };
    let got = px.v10().await.get_task_push_notification_config(ask).await;
    let got = got
        .unwrap_or_else(|s| panic!("{s:?} {:?}", agent.paths.lock().unwrap()))
        .into_inner();
    assert_eq!(got.id, "p1", "{got:?}");
    assert_eq!(agent.received(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_toward_a_grpc_agent_lost_after_the_read_is_not_sent_again_and_its_outcome_is_unknown(
) {
    let task = v03_task("t1", p03::TaskState::Working).encode_to_vec();
    let agent = DroppingAgent::start(&[1], task).await;
    let px = proxy_of(&agent).await;
    let send = p10::SendMessageRequest {
        message: Some(v10_msg("m1", "hi")),
        ..Default::default()
    };
    let s = px.v10().await.send_message(send).await.unwrap_err();
    assert_eq!(agent.received(), 1, "{s:?}");
    // Told that the outcome is unknown, not that the agent is unreachable.
    assert_eq!(s.code(), tonic::Code::Unknown, "{s:?}");
    let info = error_info(&s);
    assert_eq!(
        info.metadata.get("proxyReason").map(String::as_str),
        Some("outcome_unknown"),
        "{info:?}"
    );
}

/// The v1.0 agent's stream of one Task event.
fn v10_task_event() -> Vec<u8> {
    p10::StreamResponse {
        payload: Some(p10::stream_response::Payload::Task(v10_task(
            "t1",
            p10::TaskState::Working,
        ))),
    }
    .encode_to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_toward_a_grpc_agent_lost_before_its_head_is_opened_once_more() {
    // A v0.3 client's subscription to a v1.0 gRPC agent (the direct path):
    // the first connection ends after the agent read the request.
    let agent = DroppingAgent::start_v(Version::V10, &[1], v10_task_event()).await;
    let px = proxy_of(&agent).await;
    let sub = p03::TaskSubscriptionRequest {
        name: "tasks/t1".into(),
    };
    let mut s = px
        .v03()
        .await
        .task_subscription(sub)
        .await
        .unwrap()
        .into_inner();
    let first = tokio::time::timeout(WAIT, s.message())
        .await
        .expect("an event within the bound")
        .unwrap()
        .expect("one event");
    assert!(
        matches!(first.payload, Some(p03::stream_response::Payload::Task(ref t)) if t.id == "t1"),
        "{first:?}"
    );
    assert_eq!(agent.received(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_send_toward_a_grpc_agent_lost_before_its_head_is_not_sent_again() {
    let agent = DroppingAgent::start_v(Version::V10, &[1], v10_task_event()).await;
    let px = proxy_of(&agent).await;
    let send = p03::SendMessageRequest {
        request: Some(v03_msg("m1", "hi")),
        configuration: None,
        metadata: None,
    };
    // The failure is the stream's end (its head already went out).
    let s = match px.v03().await.send_streaming_message(send).await {
        Err(s) => s,
        Ok(r) => tokio::time::timeout(WAIT, r.into_inner().message())
            .await
            .expect("the end within the bound")
            .unwrap_err(),
    };
    assert_eq!(agent.received(), 1, "{s:?}");
    assert_eq!(s.code(), tonic::Code::Unknown, "{s:?}");
    let info = error_info(&s);
    assert_eq!(
        info.metadata.get("proxyReason").map(String::as_str),
        Some("outcome_unknown"),
        "{info:?}"
    );
}
