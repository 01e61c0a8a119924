//! The upstream client's retry rule (`proxy/src/upstream/retry.rs`) on the
//! calls the proxy makes to a gRPC agent (`upstream.grpc_url`): a read
//! whose connection ended after the agent read it is asked once more on a
//! new connection; a send lost the same way is not; any call whose stream
//! the agent refused unprocessed (RST_STREAM REFUSED_STREAM, or a GOAWAY
//! below its stream) is sent once more. The agent is raw HTTP/2 on
//! 127.0.0.1 (the `h2` crate), so it can close the connection or reset
//! the stream between reading a request and answering it.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use prost::Message;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::version::Version;
use support::grpc::*;
use support::grpc_agent::GrpcFront;
use support::{AbortOnDrop, WAIT};
use tokio::net::TcpListener;

/// What [`FlakyAgent`] does with a request it has read whole, instead of
/// answering it.
#[derive(Clone, Copy)]
enum Fate {
    /// Its whole connection is closed without an answer.
    Drop,
    /// Its stream is reset with this code, no answer's head sent.
    Reset(h2::Reason),
}

/// The agent did not process the request (RFC 9113 §8.7).
const REFUSED: Fate = Fate::Reset(h2::Reason::REFUSED_STREAM);

/// A gRPC agent answering every request with one encoded message (a
/// server stream of one), except the requests whose number (from 1, over
/// all connections) is in `fates`: each meets its [`Fate`]. With
/// `go_away_first`, its first connection answers the first request's
/// head with a GOAWAY naming no stream as processed (that request counts
/// as received) and serves nothing.
struct FlakyAgent {
    addr: std::net::SocketAddr,
    version: Version,
    received: Arc<AtomicUsize>,
    paths: Arc<std::sync::Mutex<Vec<String>>>,
    _task: AbortOnDrop,
}

impl FlakyAgent {
    async fn start(fates: &'static [(usize, Fate)], answer: Vec<u8>) -> FlakyAgent {
        FlakyAgent::start_v(Version::V03, fates, answer).await
    }

    /// [`FlakyAgent::start`] behind a proxy told the agent is of
    /// `version` (the agent answers any path).
    async fn start_v(
        version: Version,
        fates: &'static [(usize, Fate)],
        answer: Vec<u8>,
    ) -> FlakyAgent {
        FlakyAgent::launch(version, fates, false, answer).await
    }

    async fn launch(
        version: Version,
        fates: &'static [(usize, Fate)],
        go_away_first: bool,
        answer: Vec<u8>,
    ) -> FlakyAgent {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let received = Arc::new(AtomicUsize::new(0));
        let paths = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (r, p) = (received.clone(), paths.clone());
        let answer = bytes::Bytes::from(answer);
        let task = tokio::spawn(async move {
            let mut go_away = go_away_first;
            while let Ok((s, _)) = l.accept().await {
                let (r, p, a) = (r.clone(), p.clone(), answer.clone());
                if std::mem::take(&mut go_away) {
                    tokio::spawn(go_away_at_first_request(s, r));
                } else {
                    tokio::spawn(serve_h2(s, fates, a, r, p));
                }
            }
        });
        FlakyAgent {
            addr,
            version,
            received,
            paths,
            _task: AbortOnDrop(task),
        }
    }

    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn received(&self) -> usize {
        self.received.load(Ordering::SeqCst)
    }
}

/// One HTTP/2 connection of [`FlakyAgent`].
async fn serve_h2(
    s: tokio::net::TcpStream,
    fates: &'static [(usize, Fate)],
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
            match fates.iter().find(|(at, _)| *at == n).map(|(_, f)| *f) {
                // Read, not answered: the whole connection goes.
                Some(Fate::Drop) => return kill.notify_one(),
                Some(Fate::Reset(code)) => return respond.send_reset(code),
                None => {}
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

/// A connection of [`FlakyAgent`] in raw HTTP/2 frames: the client's
/// preface read, empty SETTINGS sent (the client's acknowledged), and at
/// the first request's HEADERS frame a GOAWAY with last stream id 0 (no
/// stream processed, RFC 9113 §6.8); then read until the client closes.
async fn go_away_at_first_request(mut s: tokio::net::TcpStream, received: Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const SETTINGS: u8 = 4;
    const HEADERS: u8 = 1;
    const GOAWAY: u8 = 7;
    let frame = |kind: u8, flags: u8, payload: &[u8]| {
        let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
        f.extend_from_slice(&[kind, flags, 0, 0, 0, 0]);
        f.extend_from_slice(payload);
        f
    };
    let read = async {
        let mut preface = [0u8; 24];
        s.read_exact(&mut preface).await?;
        s.write_all(&frame(SETTINGS, 0, &[])).await?;
        loop {
            let mut head = [0u8; 9];
            s.read_exact(&mut head).await?;
            let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
            let mut payload = vec![0u8; len];
            s.read_exact(&mut payload).await?;
            match head[3] {
                SETTINGS if head[4] & 1 == 0 => s.write_all(&frame(SETTINGS, 1, &[])).await?,
                HEADERS => break,
                _ => {}
            }
        }
        received.fetch_add(1, Ordering::SeqCst);
        // Last stream id 0, NO_ERROR.
        s.write_all(&frame(GOAWAY, 0, &[0; 8])).await?;
        let mut rest = [0u8; 1024];
        while s.read(&mut rest).await? > 0 {}
        Ok::<(), std::io::Error>(())
    };
    let _ = tokio::time::timeout(WAIT, read).await;
}

const V03_CARD: &str = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://127.0.0.1:9/rpc","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;
const V10_CARD: &str = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://127.0.0.1:9/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

async fn proxy_of(agent: &FlakyAgent) -> GrpcFront {
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
    let agent = FlakyAgent::start(&[(2, Fate::Drop)], task).await;
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
    let agent = FlakyAgent::start(&[(1, Fate::Drop)], task).await;
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
    let agent = FlakyAgent::start(&[(1, Fate::Drop)], config.encode_to_vec()).await;
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

/// A v0.3 agent's SendMessage answer: task t1.
fn v03_sent_task() -> Vec<u8> {
    p03::SendMessageResponse {
        payload: Some(p03::send_message_response::Payload::Task(v03_task(
            "t1",
            p03::TaskState::Working,
        ))),
    }
    .encode_to_vec()
}

/// A v1.0 client's SendMessage through a proxy toward `agent`.
async fn send_to(agent: &FlakyAgent) -> Result<p10::SendMessageResponse, tonic::Status> {
    let px = proxy_of(agent).await;
    let send = p10::SendMessageRequest {
        message: Some(v10_msg("m1", "hi")),
        ..Default::default()
    };
    let r = px.v10().await.send_message(send).await;
    r.map(|r| r.into_inner())
}

/// [`send_to`] a v0.3 agent whose requests meet `fates`.
async fn send_toward(
    fates: &'static [(usize, Fate)],
) -> (FlakyAgent, Result<p10::SendMessageResponse, tonic::Status>) {
    let agent = FlakyAgent::start(fates, v03_sent_task()).await;
    let r = send_to(&agent).await;
    (agent, r)
}

/// The agent's answer (task t1) came back.
fn assert_sent_t1(r: Result<p10::SendMessageResponse, tonic::Status>) {
    let got = r.unwrap_or_else(|s| panic!("{s:?}"));
    assert!(
        matches!(got.payload, Some(p10::send_message_response::Payload::Task(ref t)) if t.id == "t1"),
        "{got:?}"
    );
}

/// Told that the outcome is unknown, not that the agent is unreachable.
fn assert_outcome_unknown(s: &tonic::Status) {
    assert_eq!(s.code(), tonic::Code::Unknown, "{s:?}");
    let info = error_info(s);
    assert_eq!(
        info.metadata.get("proxyReason").map(String::as_str),
        Some("outcome_unknown"),
        "{info:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_toward_a_grpc_agent_lost_after_the_read_is_not_sent_again_and_its_outcome_is_unknown(
) {
    let (agent, r) = send_toward(&[(1, Fate::Drop)]).await;
    let s = r.unwrap_err();
    assert_eq!(agent.received(), 1, "{s:?}");
    assert_outcome_unknown(&s);
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

/// The first event of a v0.3 client's stream is task t1.
async fn assert_first_event_t1(
    r: Result<tonic::Response<tonic::Streaming<p03::StreamResponse>>, tonic::Status>,
) {
    let mut s = r.unwrap_or_else(|s| panic!("{s:?}")).into_inner();
    let first = tokio::time::timeout(WAIT, s.message())
        .await
        .expect("an event within the bound")
        .unwrap_or_else(|s| panic!("{s:?}"))
        .expect("one event");
    assert!(
        matches!(first.payload, Some(p03::stream_response::Payload::Task(ref t)) if t.id == "t1"),
        "{first:?}"
    );
}

/// A v0.3 client's SendStreamingMessage.
fn v03_streaming_send() -> p03::SendMessageRequest {
    p03::SendMessageRequest {
        request: Some(v03_msg("m1", "hi")),
        configuration: None,
        metadata: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribe_toward_a_grpc_agent_lost_before_its_head_is_opened_once_more() {
    // A v0.3 client's subscription to a v1.0 gRPC agent (the direct path):
    // the first connection ends after the agent read the request.
    let agent = FlakyAgent::start_v(Version::V10, &[(1, Fate::Drop)], v10_task_event()).await;
    let px = proxy_of(&agent).await;
    let sub = p03::TaskSubscriptionRequest {
        name: "tasks/t1".into(),
    };
    assert_first_event_t1(px.v03().await.task_subscription(sub).await).await;
    assert_eq!(agent.received(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_send_toward_a_grpc_agent_lost_before_its_head_is_not_sent_again() {
    let agent = FlakyAgent::start_v(Version::V10, &[(1, Fate::Drop)], v10_task_event()).await;
    let px = proxy_of(&agent).await;
    let send = v03_streaming_send();
    // The failure is the stream's end (its head already went out).
    let s = match px.v03().await.send_streaming_message(send).await {
        Err(s) => s,
        Ok(r) => tokio::time::timeout(WAIT, r.into_inner().message())
            .await
            .expect("the end within the bound")
            .unwrap_err(),
    };
    assert_eq!(agent.received(), 1, "{s:?}");
    assert_outcome_unknown(&s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_whose_stream_the_agent_refused_is_sent_again_and_another_reset_is_in_doubt() {
    // REFUSED_STREAM: the agent did not process it (RFC 9113 §8.7), so
    // even a SendMessage goes once more, on a new connection.
    let (agent, r) = send_toward(&[(1, REFUSED)]).await;
    assert_sent_t1(r);
    assert_eq!(agent.received(), 2);
    // Refused twice: sent at most twice, then the agent is unavailable.
    let (agent, r) = send_toward(&[(1, REFUSED), (2, REFUSED)]).await;
    let s = r.unwrap_err();
    assert_eq!(agent.received(), 2, "{s:?}");
    assert_eq!(s.code(), tonic::Code::Unavailable, "{s:?}");
    // Any other reset may come after the agent acted: in doubt.
    let other: [&'static [(usize, Fate)]; 2] = [
        &[(1, Fate::Reset(h2::Reason::INTERNAL_ERROR))],
        &[(1, Fate::Reset(h2::Reason::CANCEL))],
    ];
    for fates in other {
        let (agent, r) = send_toward(fates).await;
        let s = r.unwrap_err();
        assert_eq!(agent.received(), 1, "{s:?}");
        assert_outcome_unknown(&s);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_send_above_the_agents_goaway_is_sent_again_on_a_new_connection() {
    let agent = FlakyAgent::launch(Version::V03, &[], true, v03_sent_task()).await;
    assert_sent_t1(send_to(&agent).await);
    assert_eq!(agent.received(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_send_whose_stream_the_agent_refused_is_opened_again() {
    let agent = FlakyAgent::start_v(Version::V10, &[(1, REFUSED)], v10_task_event()).await;
    let px = proxy_of(&agent).await;
    let send = v03_streaming_send();
    assert_first_event_t1(px.v03().await.send_streaming_message(send).await).await;
    assert_eq!(agent.received(), 2);
}
