//! Each interface reached where the agent's card puts it (issue #23): a
//! gRPC interface the card lists on a host the operator allows is where
//! gRPC calls go without `upstream.grpc_url` (one on a host not allowed is
//! never contacted); the gRPC bridge and the proxy's own task fetches go to
//! the whole URL of the card's JSON-RPC interface (its host and port, not
//! only its path); a gRPC call refused for naming no agent counts in
//! `/metrics` as an HTTP request of no agent does.

mod support;

use std::net::SocketAddr;

use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::{Config, RawConfig};
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::grpc_agent::{always, GrpcAgent};
use support::*;

/// The proxy of `toml` and a gRPC listener serving its first agent.
fn start(toml: &str) -> (RunningProxy, GrpcServer) {
    let raw = RawConfig::from_toml(toml, "t.toml").unwrap();
    let px = proxy::start(Config::resolve(raw).unwrap()).unwrap();
    let g = px.app.config.grpc_listen.expect("grpc.listen");
    let grpc = GrpcServer::start(px.app.clone(), g).unwrap();
    (px, grpc)
}

/// A config with an HTTP and a gRPC listener in front of `upstream`;
/// `extra` goes into `[upstream]`.
fn config(upstream: &str, extra: &str) -> String {
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();
    format!(
        "listen = \"{http}\"\nthreads = 1\n[upstream]\nurl = \"{upstream}\"\n{extra}\n[push]\nenabled = false\n[grpc]\nlisten = \"{g}\"\n"
    )
}

async fn v10_send(g: SocketAddr) -> Result<p10::SendMessageResponse, tonic::Status> {
    let mut c = p10::a2a_service_client::A2aServiceClient::new(grpc::channel(g, None).await);
    let req = grpc::v10_send_request("hi");
    c.send_message(req).await.map(|r| r.into_inner())
}

async fn v03_send(g: SocketAddr) -> Result<p03::SendMessageResponse, tonic::Status> {
    let mut c = p03::a2a_service_client::A2aServiceClient::new(grpc::channel(g, None).await);
    let req = grpc::v03_send_request("hi");
    c.send_message(req).await.map(|r| r.into_inner())
}

fn v10_task_id(r: p10::SendMessageResponse) -> String {
    match r.payload {
        Some(p10::send_message_response::Payload::Task(t)) => t.id,
        other => panic!("{other:?}"),
    }
}

fn v03_task_id(r: p03::SendMessageResponse) -> String {
    match r.payload {
        Some(p03::send_message_response::Payload::Task(t)) => t.id,
        other => panic!("{other:?}"),
    }
}

/// A fake agent serving `card` (`UP`: its own `host:port`, `GADDR`:
/// what the test puts there) whose JSON-RPC binding answers every call with
/// the task `task` in `version`'s shape.
async fn card_agent(card: String, version: Version, task: &'static str) -> FakeUpstream {
    agent_with_card(
        move |me| card.replace("UP", me),
        move |r| {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let result = match version {
                Version::V03 => json!({"kind": "task", "id": task, "contextId": "c",
                    "status": {"state": "completed"}}),
                Version::V10 => json!({"task": {"id": task, "contextId": "c",
                    "status": {"state": "TASK_STATE_COMPLETED"}}}),
            };
            Reply::rpc_result(&req["id"], &result)
        },
    )
    .await
}

const CARD_V10: &str = r#"{"name":"g","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"capabilities":{},"skills":[],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"GADDR","protocolBinding":"GRPC","protocolVersion":"1.0"}]}"#;

const CARD_V03: &str = r#"{"name":"g","description":"d","version":"1","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"capabilities":{},"skills":[],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP/rpc","transport":"JSONRPC"},{"url":"GADDR","transport":"GRPC"}]}"#;

/// A fake gRPC agent of `version` answering every call with the task `id`.
async fn grpc_agent(version: Version, id: &str) -> GrpcAgent {
    match version {
        Version::V10 => {
            let reply = p10::SendMessageResponse {
                payload: Some(p10::send_message_response::Payload::Task(
                    support::grpc::v10_task(id, p10::TaskState::Completed),
                )),
            };
            GrpcAgent::start(Version::V10, always(reply)).await
        }
        Version::V03 => {
            let reply = p03::SendMessageResponse {
                payload: Some(p03::send_message_response::Payload::Task(
                    support::grpc::v03_task(id, p03::TaskState::Completed),
                )),
            };
            GrpcAgent::start(Version::V03, always(reply)).await
        }
    }
}

/// An agent of `version` whose card lists its gRPC interface at `grpc`
/// (`{addr}`: the gRPC agent's address), with no `grpc_url`: calls of
/// both client versions reach the gRPC agent when `allowed` lets the card
/// send the proxy there, else they are bridged to the card's JSON-RPC
/// interface and the gRPC agent is never contacted.
async fn grpc_from_the_card(version: Version, grpc: &str) {
    let g = grpc_agent(version, "by-grpc").await;
    let card = match version {
        Version::V10 => CARD_V10,
        Version::V03 => CARD_V03,
    };
    let card = card.replace("GADDR", &grpc.replace("{addr}", &g.addr.to_string()));
    let up = card_agent(card, version, "by-jsonrpc").await;

    // The operator allows every port of 127.0.0.1: gRPC goes to the card's
    // gRPC interface, translated for the other version.
    let (_px, front) = start(&config(&up.url(), "allowed_hosts = [\"127.0.0.1\"]"));
    assert_eq!(v10_task_id(v10_send(front.addr).await.unwrap()), "by-grpc");
    assert_eq!(v03_task_id(v03_send(front.addr).await.unwrap()), "by-grpc");
    let calls = g.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let service = match version {
        Version::V10 => "/lf.a2a.v1.A2AService/SendMessage",
        Version::V03 => "/a2a.v1.A2AService/SendMessage",
    };
    assert!(calls.iter().all(|c| c.path == service), "{calls:?}");
    assert!(up.calls().is_empty(), "{:?}", up.calls());

    // Only upstream.url's host and port allowed (the default): the card's
    // gRPC interface is never contacted; calls take the JSON-RPC bridge,
    // and nothing the client gets names the gRPC agent's address.
    let (_px, front) = start(&config(&up.url(), ""));
    let answer = v10_send(front.addr).await.unwrap();
    assert!(!format!("{answer:?}").contains(&g.addr.port().to_string()));
    assert_eq!(v10_task_id(answer), "by-jsonrpc");
    assert_eq!(
        v03_task_id(v03_send(front.addr).await.unwrap()),
        "by-jsonrpc"
    );
    assert_eq!(g.calls().len(), 2, "the gRPC agent was called");
    assert_eq!(up.calls().len(), 2, "{:?}", up.calls());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_calls_go_to_the_v10_cards_grpc_interface_given_as_host_and_port() {
    grpc_from_the_card(Version::V10, "{addr}").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_calls_go_to_the_v03_cards_grpc_interface_given_as_a_url() {
    grpc_from_the_card(Version::V03, "http://{addr}").await;
}

/// A v0.3 agent whose JSON-RPC interface is on another port of 127.0.0.1
/// than `upstream.url` (which serves only the card): the gRPC bridge and
/// the tasks the proxy asks for itself (ListTasks pages, over JSON-RPC
/// and over gRPC) go there, with its own `Host`; the card's host is asked
/// for nothing but the card.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_and_task_fetches_go_to_the_card_interfaces_host() {
    let rpc = FakeUpstream::start(|r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let id = req
            .pointer("/params/id")
            .and_then(Value::as_str)
            .unwrap_or("t1");
        let task = json!({"kind": "task", "id": id, "contextId": "c1",
            "status": {"state": "working"}});
        Reply::rpc_result(&req["id"], &task)
    })
    .await;
    let card = CARD_V03
        .replace("http://UP/rpc", &format!("{}/rpc", rpc.url()))
        .replace(r#",{"url":"GADDR","transport":"GRPC"}"#, "");
    let up = agent_with_card(move |_| card.clone(), |_| Reply::json(404, "{}")).await;
    let (px, front) = start(&config(&up.url(), "allowed_hosts = [\"127.0.0.1\"]"));

    // Over JSON-RPC: the call itself, then a ListTasks page whose task the
    // proxy asks the agent for.
    let v10 = [("A2A-Version", "1.0"), ("Content-Type", "application/json")];
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let r = post(px.addr, "/rpc", &v10, send.to_string().as_bytes()).await;
    assert_eq!(r.json()["result"]["task"]["id"], "t1", "{}", r.text());
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}});
    let r = post(px.addr, "/rpc", &v10, list.to_string().as_bytes()).await;
    let listed = r.json();
    assert_eq!(listed["result"]["tasks"][0]["id"], "t1", "{listed}");

    // Over gRPC, bridged: the call, then a ListTasks page.
    let mut c =
        p10::a2a_service_client::A2aServiceClient::new(grpc::channel(front.addr, None).await);
    let req = p10::SendMessageRequest {
        message: Some(support::grpc::v10_msg("m2", "hi")),
        ..Default::default()
    };
    let r = c.send_message(req).await.unwrap().into_inner();
    assert_eq!(v10_task_id(r), "t1");
    let l = c
        .list_tasks(p10::ListTasksRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        l.tasks.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["t1"]
    );

    let methods: Vec<String> = rpc
        .calls()
        .iter()
        .map(|c| {
            assert_eq!(c.target, "/rpc");
            assert_eq!(c.header("host"), Some(rpc.addr.to_string().as_str()));
            let v: Value = serde_json::from_slice(&c.body).unwrap();
            v["method"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(
        methods,
        ["message/send", "tasks/get", "message/send", "tasks/get"]
    );
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

/// A gRPC call on the shared listener naming no agent's host is refused
/// with NOT_FOUND and counted in `/metrics` as a request of no agent
/// (`agent=""`), beside the HTTP 404 of a host no agent is served at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpc_call_for_no_agent_counts_in_metrics() {
    let up = card_agent(CARD_V10.replace("GADDR", "x"), Version::V10, "t").await;
    let http = support::free_local_addr().unwrap();
    let g = support::free_local_addr().unwrap();
    let toml = format!(
        "listen = \"{http}\"\nthreads = 1\n[push]\nenabled = false\n[grpc]\nlisten = \"{g}\"\n[upstream]\nurl = \"{}\"\n[[agents]]\nname = \"a\"\nhosts = [\"a.example\"]\n[[agents]]\nname = \"b\"\nhosts = [\"b.example\"]\n",
        up.url()
    );
    let raw = RawConfig::from_toml(&toml, "t.toml").unwrap();
    let px = proxy::start(Config::resolve(raw).unwrap()).unwrap();
    let _grpc = GrpcServer::start_all(&px.apps).unwrap();
    let ch = grpc::channel(g, Some("c.example:1")).await;
    let mut c = p10::a2a_service_client::A2aServiceClient::new(ch);
    let req = grpc::v10_send_request("hi");
    let s = c.send_message(req).await.unwrap_err();
    assert_eq!(s.code(), tonic::Code::NotFound, "{s:?}");
    assert!(up.calls().is_empty());
    let r = get(http, "/", &[]).await;
    assert_eq!(r.status, 404);

    let text = get(http, "/metrics", &[]).await.text();
    let line = "a2a_proxy_requests_total{agent=\"\",method=\"SendMessage\",direction=\"local\",binding=\"grpc\",outcome=\"grpc_notfound\"} 1";
    assert!(text.lines().any(|l| l == line), "{text}");
    // The HTTP 404 of no agent, in the same family and agent label.
    assert!(
        text.lines().any(|l| l.starts_with(
            "a2a_proxy_requests_total{agent=\"\",method=\"none\",direction=\"local\""
        )),
        "{text}"
    );
}

/// The card's gRPC interface is read with the card: when a new copy of
/// the card names another gRPC URL, calls go there; when it names none,
/// they are bridged to its JSON-RPC interface.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_card_moves_grpc_calls_to_its_grpc_interface() {
    let (one, two) = (
        grpc_agent(Version::V10, "one").await,
        grpc_agent(Version::V10, "two").await,
    );
    let grpc = std::sync::Arc::new(std::sync::Mutex::new(one.addr.to_string()));
    let g = grpc.clone();
    let up = agent_with_card(
        move |me| {
            let at = g.lock().unwrap().clone();
            let card = CARD_V10.replace("UP", me);
            if at.is_empty() {
                card.replace(
                    r#",{"url":"GADDR","protocolBinding":"GRPC","protocolVersion":"1.0"}"#,
                    "",
                )
            } else {
                card.replace("GADDR", &at)
            }
        },
        |r| {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let result = json!({"task": {"id": "rpc", "contextId": "c",
                "status": {"state": "TASK_STATE_COMPLETED"}}});
            Reply::rpc_result(&req["id"], &result)
        },
    )
    .await;
    // Every call reads the card again (no max-age).
    let extra = "allowed_hosts = [\"127.0.0.1\"]\n[limits]\ncard_default_ttl_secs = 0";
    let (_px, front) = start(&config(&up.url(), extra));
    assert_eq!(v10_task_id(v10_send(front.addr).await.unwrap()), "one");
    *grpc.lock().unwrap() = two.addr.to_string();
    assert_eq!(v10_task_id(v10_send(front.addr).await.unwrap()), "two");
    grpc.lock().unwrap().clear();
    assert_eq!(v10_task_id(v10_send(front.addr).await.unwrap()), "rpc");
    assert_eq!((one.calls().len(), two.calls().len()), (1, 1));
}
