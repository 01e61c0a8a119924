//! Caller credentials and metadata reach the agent on every path (issue
//! #21, "caller metadata forwarded on every path"): an authorized caller's
//! `authorization` and `x-tenant` go on over gRPC (bridged to a JSON-RPC
//! agent, translated toward a gRPC agent, passed through), on the extended
//! card and on the task a v1.0 subscribe starts with; what is for one hop
//! (`proxy-authorization`, `connection`-listed names) or the proxy's own
//! (`a2a-version`, gRPC transport metadata) does not.

use std::sync::Arc;
use std::time::Duration;

use prost::Message as _;
use proto::v03 as p03;
use proto::v10 as p10;
use proxy::config::{Config, UpstreamVersion};
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use tokio::time::timeout;
use tonic::{Code, Status};

use crate::support::grpc_agent::{Answer, Call, GrpcAgent, GrpcFront};
use crate::support::*;

const TOKEN: &str = "Bearer good-token";
const TENANT: &str = "acme";
// W3C trace context (issue #23): end to end like credentials.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
const TRACESTATE: &str = "vendor=opaque,other=1";

fn card_v03(up: &str, extended: bool) -> Value {
    let mut c = json!({"name":"fake","description":"a fake agent","version":"1.0.0",
        "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
        "protocolVersion":"0.3.0","url":format!("http://{up}/rpc"),"preferredTransport":"JSONRPC",
        "capabilities":{"streaming":true},"supportsAuthenticatedExtendedCard":true,"skills":[]});
    if extended {
        c["skills"] =
            json!([{"id":"secret","name":"secret","description":"for members","tags":["x"]}]);
    }
    c
}

fn card_v10(up: &str, extended: bool) -> Value {
    let mut c = json!({"name":"fake","description":"a fake agent","version":"1.0.0",
        "defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
        "supportedInterfaces":[{"url":format!("http://{up}/rpc"),"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
        "capabilities":{"streaming":true,"extendedAgentCard":true},"skills":[]});
    if extended {
        c["skills"] =
            json!([{"id":"secret","name":"secret","description":"for members","tags":["x"]}]);
    }
    c
}

/// The caller's request: credentials, an identity header, and what must
/// not reach the agent (a credential for the proxy, a deadline).
fn authed<T>(m: T) -> tonic::Request<T> {
    let mut r = tonic::Request::new(m);
    let md = r.metadata_mut();
    md.insert("authorization", TOKEN.parse().unwrap());
    md.insert("x-tenant", TENANT.parse().unwrap());
    md.insert("traceparent", TRACEPARENT.parse().unwrap());
    md.insert("tracestate", TRACESTATE.parse().unwrap());
    md.insert("proxy-authorization", "Basic cHJveHk6cHc=".parse().unwrap());
    r.set_timeout(Duration::from_secs(20));
    r
}

// ------------------------------------------------------------ JSON-RPC agents

/// A JSON-RPC agent of `version` serving its card; `f` answers the rest.
async fn json_agent(
    version: Version,
    f: impl Fn(&Recorded, &Value) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    let host = Arc::new(std::sync::OnceLock::<String>::new());
    let h = host.clone();
    let up = FakeUpstream::start(move |r| {
        let up = h.get().map(String::as_str).unwrap_or("?");
        if r.target == "/.well-known/agent-card.json" {
            let card = match version {
                Version::V03 => card_v03(up, false),
                Version::V10 => card_v10(up, false),
            };
            return Reply::json(200, &card.to_string());
        }
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        f(r, &req)
    })
    .await;
    host.set(up.addr.to_string()).unwrap();
    up
}

fn rpc_result(req: &Value, result: Value) -> Reply {
    Reply::json(
        200,
        &json!({"jsonrpc":"2.0","id":req["id"],"result":result}).to_string(),
    )
}

/// A JSON-RPC TaskNotFound error answering `req`.
fn task_not_found(req: &Value) -> Reply {
    Reply::json(
        200,
        &json!({"jsonrpc":"2.0","id":req["id"],"error":{"code":-32001,"message":"Task not found"}})
            .to_string(),
    )
}

fn authorized(r: &Recorded) -> bool {
    r.header("authorization") == Some(TOKEN)
}

/// The agent's extended card for an authorized caller; anonymous: the
/// public card (v0.3, as a2a-python 0.3 serves it) or a refusal (v1.0:
/// the operation MUST require authentication).
fn extended_card_answer(version: Version, r: &Recorded, req: &Value) -> Reply {
    let ok = authorized(r);
    match version {
        Version::V03 => rpc_result(req, card_v03("127.0.0.1:9", ok)),
        Version::V10 if ok => rpc_result(req, card_v10("127.0.0.1:9", true)),
        Version::V10 => Reply::json(
            401,
            &json!({"jsonrpc":"2.0","id":req["id"],"error":{"code":-32600,"message":"authentication required"}})
                .to_string(),
        ),
    }
}

type Px = GrpcFront;

/// A proxy with a gRPC listener in front of the JSON-RPC agent `up`.
fn grpc_proxy(up: &FakeUpstream, version: Version) -> Px {
    GrpcFront::start(config_for(&up.url(), version))
}

/// What a JSON-RPC agent must have seen of an authorized gRPC caller.
fn assert_forwarded_http(r: &Recorded, upstream: Version) {
    assert_eq!(r.header("authorization"), Some(TOKEN), "{r:?}");
    assert_eq!(r.header("x-tenant"), Some(TENANT), "{r:?}");
    assert_eq!(r.header("traceparent"), Some(TRACEPARENT), "{r:?}");
    assert_eq!(r.header("tracestate"), Some(TRACESTATE), "{r:?}");
    for hop in [
        "proxy-authorization",
        "te",
        "grpc-timeout",
        "grpc-accept-encoding",
    ] {
        assert_eq!(r.header(hop), None, "{hop} reached the agent");
    }
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("a2a-version"), Some(upstream.as_str()));
}

/// SendMessage of a gRPC client of the other version, bridged to the
/// JSON-RPC agent of each version, reaches it with the caller's
/// credentials and identity header, and nothing for one hop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_send_bridged_to_jsonrpc_agents_carries_credentials() {
    for upstream in [Version::V03, Version::V10] {
        let up = json_agent(upstream, move |r, req| {
            if !authorized(r) {
                return Reply::json(401, "{}");
            }
            match upstream {
                Version::V03 => rpc_result(
                    req,
                    json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}),
                ),
                Version::V10 => rpc_result(
                    req,
                    json!({"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"}}}),
                ),
            }
        })
        .await;
        let px = grpc_proxy(&up, upstream);
        let task_id = match upstream {
            Version::V03 => {
                let r = px
                    .v10()
                    .await
                    .send_message(authed(grpc::v10_send_request("hi")))
                    .await;
                let r = r.unwrap().into_inner();
                match r.payload {
                    Some(p10::send_message_response::Payload::Task(t)) => t.id,
                    other => panic!("{other:?}"),
                }
            }
            Version::V10 => {
                let r = px
                    .v03()
                    .await
                    .send_message(authed(grpc::v03_send_request("hi")))
                    .await;
                let r = r.unwrap().into_inner();
                match r.payload {
                    Some(p03::send_message_response::Payload::Task(t)) => t.id,
                    other => panic!("{other:?}"),
                }
            }
        };
        assert_eq!(task_id, "t1");
        let calls = up.calls();
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_forwarded_http(&calls[0], upstream);
    }
}

/// GetExtendedAgentCard over gRPC, bridged to a JSON-RPC agent of each
/// version: the authorized caller gets the agent's extended card; an
/// anonymous one what the agent answers it (v0.3: the public card; v1.0:
/// its refusal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_extended_card_bridged_is_asked_with_the_callers_credentials() {
    for upstream in [Version::V03, Version::V10] {
        let up = json_agent(upstream, move |r, req| {
            extended_card_answer(upstream, r, req)
        })
        .await;
        let px = grpc_proxy(&up, upstream);
        let ask = p10::GetExtendedAgentCardRequest::default();
        let card = px.v10().await.get_extended_agent_card(authed(ask)).await;
        let card = card.unwrap().into_inner();
        assert!(
            card.skills.iter().any(|s| s.id == "secret"),
            "{upstream}: {card:?}"
        );
        assert_forwarded_http(&up.calls()[0], upstream);
        let ask = p10::GetExtendedAgentCardRequest::default();
        let anonymous = px.v10().await.get_extended_agent_card(ask).await;
        match upstream {
            Version::V03 => {
                let card = anonymous.unwrap().into_inner();
                assert_eq!(card.name, "fake");
                assert!(card.skills.is_empty(), "{card:?}");
            }
            Version::V10 => {
                // The agent's 401: UNAUTHENTICATED, as a v1.0 gRPC server
                // answers, with the agent's message.
                let s = anonymous.unwrap_err();
                assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
                assert_eq!(s.message(), "authentication required");
            }
        }
        assert_eq!(up.calls()[1].header("authorization"), None);
    }
}

/// A v1.0 gRPC SubscribeToTask bridged to a v0.3 JSON-RPC agent: the
/// `tasks/get` it starts with is the caller's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_subscribe_first_task_is_asked_with_the_callers_credentials() {
    let up = json_agent(Version::V03, |r, req| {
        if !authorized(r) {
            return task_not_found(req);
        }
        match req["method"].as_str() {
            Some("tasks/get") => rpc_result(
                req,
                json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}}),
            ),
            _ => Reply::Sse {
                events: vec![format!(
                    "data: {}\n\n",
                    json!({"jsonrpc":"2.0","id":req["id"],"result":{"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true}})
                )],
                gate: Arc::new(Semaphore::new(10)),
            },
        }
    })
    .await;
    let px = grpc_proxy(&up, Version::V03);
    let ask = p10::SubscribeToTaskRequest {
        id: "t1".into(),
        ..Default::default()
    };
    let mut s = px
        .v10()
        .await
        .subscribe_to_task(authed(ask))
        .await
        .unwrap()
        .into_inner();
    let first = timeout(WAIT, s.message()).await.unwrap().unwrap().unwrap();
    assert!(
        matches!(first.payload, Some(p10::stream_response::Payload::Task(ref t)) if t.id == "t1"),
        "{first:?}"
    );
    let calls = up.calls();
    let get = calls
        .iter()
        .find(|c| c.body.windows(9).any(|w| w == b"tasks/get"))
        .expect("tasks/get");
    assert_forwarded_http(get, Version::V03);
}

// ------------------------------------------------------------ gRPC agents

/// A proxy whose upstream is the gRPC agent (of `version`); its HTTP
/// upstream serves only the agent card.
async fn grpc_upstream_proxy(agent: &GrpcAgent, version: Version) -> Px {
    let card = match version {
        Version::V03 => card_v03("127.0.0.1:9", false),
        Version::V10 => card_v10("127.0.0.1:9", false),
    };
    GrpcFront::of_grpc_agent(&agent.url(), version, card.to_string(), |_| {}).await
}

fn grpc_authorized(c: &Call) -> bool {
    c.header("authorization") == Some(TOKEN)
}

/// What a gRPC agent must have seen of an authorized gRPC caller
/// (`a2a_version`: what the proxy sets, or the caller's own when passed
/// through).
fn assert_forwarded_grpc(c: &Call, a2a_version: Option<&str>) {
    let h = |k: &str| c.header(k);
    assert_eq!(h("authorization"), Some(TOKEN), "{}", c.path);
    assert_eq!(h("x-tenant"), Some(TENANT), "{}", c.path);
    assert_eq!(h("traceparent"), Some(TRACEPARENT), "{}", c.path);
    assert_eq!(h("tracestate"), Some(TRACESTATE), "{}", c.path);
    assert_eq!(h("proxy-authorization"), None, "{}", c.path);
    assert_eq!(h("a2a-version"), a2a_version, "{}", c.path);
}

/// An agent that answers only authorized callers.
fn only_authorized(ok: Vec<u8>) -> impl Fn(&Call) -> Answer + Send + Sync + 'static {
    move |c| {
        if grpc_authorized(c) {
            Answer::Msg(ok.clone())
        } else {
            Answer::Fail(Status::unauthenticated("authentication required"))
        }
    }
}

/// An agent of version `agent` answering authorized callers only (task
/// t1), the proxy before it, and one authorized SendMessage of a `client`
/// caller through it: it succeeds, and the agent's one call carries the
/// caller's credentials (and its own `A2A-Version` when translated).
async fn authed_send(client: Version, agent: Version) -> (Px, GrpcAgent) {
    let answer = match agent {
        Version::V03 => p03::SendMessageResponse {
            payload: Some(p03::send_message_response::Payload::Task(grpc::v03_task(
                "t1",
                p03::TaskState::Completed,
            ))),
        }
        .encode_to_vec(),
        Version::V10 => p10::SendMessageResponse {
            payload: Some(p10::send_message_response::Payload::Task(grpc::v10_task(
                "t1",
                p10::TaskState::Completed,
            ))),
        }
        .encode_to_vec(),
    };
    let up = GrpcAgent::start_with(agent, only_authorized(answer)).await;
    let px = grpc_upstream_proxy(&up, agent).await;
    let r = match client {
        Version::V03 => px
            .v03()
            .await
            .send_message(authed(grpc::v03_send_request("hi")))
            .await
            .map(drop),
        Version::V10 => px
            .v10()
            .await
            .send_message(authed(grpc::v10_send_request("hi")))
            .await
            .map(drop),
    };
    assert!(r.is_ok(), "{r:?}");
    let calls = up.calls();
    assert_eq!(calls.len(), 1);
    let path = match agent {
        Version::V03 => "/a2a.v1.A2AService/SendMessage",
        Version::V10 => "/lf.a2a.v1.A2AService/SendMessage",
    };
    assert_eq!(calls[0].path, path);
    assert_forwarded_grpc(&calls[0], (client != agent).then(|| agent.as_str()));
    (px, up)
}

/// An authorized gRPC SendMessage toward a gRPC agent carries the
/// caller's credentials, whatever the pairing of versions.
async fn grpc_send_carries_the_callers_credentials(client: Version, agent: Version) {
    authed_send(client, agent).await;
}

crate::version_pairs! {
    grpc_send_carries_the_callers_credentials,
}

/// SendMessage toward a gRPC agent of the other version (the translated
/// path, both directions) reaches it with the caller's credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_send_translated_to_grpc_agents_carries_credentials() {
    let (px, _agent) = authed_send(Version::V10, Version::V03).await;
    // Anonymous: the agent's refusal as it gave it.
    let s = px
        .v10()
        .await
        .send_message(grpc::v10_send_request("hi"))
        .await
        .unwrap_err();
    assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
    assert_eq!(s.message(), "authentication required");

    authed_send(Version::V03, Version::V10).await;
}

/// Same version toward a gRPC agent (passed through raw): the caller's
/// metadata goes on, the credential for the proxy does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_passthrough_carries_credentials_but_not_proxy_ones() {
    let (_px, agent) = authed_send(Version::V10, Version::V10).await;
    // The deadline goes on as the caller set it (nothing rewritten).
    assert!(agent.calls()[0].headers.get("grpc-timeout").is_some());
}

/// GetExtendedAgentCard toward a gRPC agent of each version: the
/// authorized caller gets the agent's extended card; an anonymous one what
/// the agent answers it (v0.3: the public card; v1.0: its refusal).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_extended_card_from_grpc_agents_is_asked_with_the_callers_credentials() {
    let card03 = |ext: bool| {
        let m: translate::v03::agent_card::AgentCard =
            serde_json::from_value(card_v03("127.0.0.1:9", ext)).unwrap();
        proto::convert_v03::agent_card_to_pb(m).encode_to_vec()
    };
    let (public, extended) = (card03(false), card03(true));
    let agent = GrpcAgent::start_with(Version::V03, move |c| {
        Answer::Msg(if grpc_authorized(c) {
            extended.clone()
        } else {
            public.clone()
        })
    })
    .await;
    let px = grpc_upstream_proxy(&agent, Version::V03).await;
    let ask = p10::GetExtendedAgentCardRequest::default();
    let card = px.v10().await.get_extended_agent_card(authed(ask)).await;
    let card = card.unwrap().into_inner();
    assert!(card.skills.iter().any(|s| s.id == "secret"), "{card:?}");
    assert_eq!(agent.calls()[0].path, "/a2a.v1.A2AService/GetAgentCard");
    assert_forwarded_grpc(&agent.calls()[0], Some("0.3"));
    let ask = p10::GetExtendedAgentCardRequest::default();
    let card = px.v10().await.get_extended_agent_card(ask).await;
    let card = card.unwrap().into_inner();
    assert!(card.skills.is_empty(), "{card:?}");

    let m: translate::v10::agent_card::AgentCard =
        serde_json::from_value(card_v10("127.0.0.1:9", true)).unwrap();
    let extended = proto::convert_v10::agent_card_to_pb(m).encode_to_vec();
    let agent = GrpcAgent::start_with(Version::V10, only_authorized(extended)).await;
    let px = grpc_upstream_proxy(&agent, Version::V10).await;
    let ask = p10::GetExtendedAgentCardRequest::default();
    let card = px.v10().await.get_extended_agent_card(authed(ask)).await;
    let card = card.unwrap().into_inner();
    assert!(card.skills.iter().any(|s| s.id == "secret"), "{card:?}");
    let calls = agent.calls();
    assert_eq!(calls[0].path, "/lf.a2a.v1.A2AService/GetExtendedAgentCard");
    assert_forwarded_grpc(&calls[0], Some("1.0"));
    let ask = p10::GetExtendedAgentCardRequest::default();
    let s = px
        .v10()
        .await
        .get_extended_agent_card(ask)
        .await
        .unwrap_err();
    // The agent's refusal as it gave it.
    assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
    assert_eq!(s.message(), "authentication required");
}

// ------------------------------------------------------------ JSON-RPC / REST

fn http_proxy(up: &FakeUpstream, version: Version) -> RunningProxy {
    proxy::start(config_for(&up.url(), version)).unwrap()
}

/// An access-controlled v0.3 agent: anonymous `tasks/get` is refused as
/// an unknown task (it reveals nothing), the resubscribe streams.
fn guarded_v03(r: &Recorded, req: &Value) -> Reply {
    let method = req["method"].as_str().unwrap_or_default();
    let rest_get = r.method == "GET" && r.target.split('?').next() == Some("/v1/tasks/t1");
    if !authorized(r) {
        if rest_get {
            return Reply::json(404, r#"{"error":"not found"}"#);
        }
        return task_not_found(req);
    }
    // Over REST a v0.3 agent speaks the proto's JSON.
    if rest_get {
        let task = json!({"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}});
        return Reply::json(200, &task.to_string());
    }
    if method == "tasks/get" {
        let task = json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"working"}});
        return rpc_result(req, task);
    }
    let event = if r.target.starts_with("/v1/") {
        json!({"statusUpdate":{"taskId":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED"},"final":true}})
    } else {
        let update = json!({"kind":"status-update","taskId":"t1","contextId":"c1","status":{"state":"completed"},"final":true});
        json!({"jsonrpc":"2.0","id":req["id"],"result":update})
    };
    Reply::Sse {
        events: vec![format!("data: {event}\n\n")],
        gate: Arc::new(Semaphore::new(10)),
    }
}

/// A v1.0 JSON-RPC SubscribeToTask toward a v0.3 agent: the `tasks/get`
/// the proxy starts the stream with carries the caller's Authorization and
/// identity header (an agent with access control would refuse it without).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_subscribe_first_task_is_asked_with_the_callers_credentials() {
    let up = json_agent(Version::V03, guarded_v03).await;
    let px = http_proxy(&up, Version::V03);
    let body = br#"{"jsonrpc":"2.0","id":"s","method":"SubscribeToTask","params":{"id":"t1"}}"#;
    let headers = [
        ("A2A-Version", "1.0"),
        ("Authorization", TOKEN),
        ("X-Tenant", TENANT),
        ("Proxy-Authorization", "Basic cHJveHk6cHc="),
    ];
    let mut s = open(px.addr, &request("POST", "/rpc", &headers, body)).await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("\"task\""), "{text}");
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    let calls = up.calls();
    let get = calls
        .iter()
        .find(|c| c.body.windows(9).any(|w| w == b"tasks/get"))
        .expect("tasks/get");
    assert_eq!(get.header("authorization"), Some(TOKEN));
    assert_eq!(get.header("x-tenant"), Some(TENANT));
    assert_eq!(get.header("proxy-authorization"), None);
    assert_eq!(get.header("a2a-version"), Some("0.3"));
}

/// The REST twin: a v1.0 REST subscribe toward a v0.3 agent asks its
/// `GET /v1/tasks/{id}` with the caller's credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rest_subscribe_first_task_is_asked_with_the_callers_credentials() {
    let up = json_agent(Version::V03, guarded_v03).await;
    let px = http_proxy(&up, Version::V03);
    let headers = [
        ("A2A-Version", "1.0"),
        ("Authorization", TOKEN),
        ("X-Tenant", TENANT),
        ("Accept-Encoding", "gzip"),
        ("traceparent", TRACEPARENT),
        ("tracestate", TRACESTATE),
    ];
    let mut s = open(
        px.addr,
        &request("POST", "/tasks/t1:subscribe", &headers, b"{}"),
    )
    .await;
    assert_eq!(s.status, 200);
    let text = s.rest().await;
    assert!(text.contains("TASK_STATE_WORKING"), "{text}");
    let calls = up.calls();
    let get = calls
        .iter()
        .find(|c| c.method == "GET" && c.target.starts_with("/v1/tasks/t1"))
        .expect("GET /v1/tasks/t1");
    assert_eq!(get.header("authorization"), Some(TOKEN));
    assert_eq!(get.header("x-tenant"), Some(TENANT));
    // The stream itself: the caller's, unencoded (the proxy translates it).
    let sub = calls
        .iter()
        .find(|c| c.target.starts_with("/v1/tasks/t1:subscribe"))
        .expect("the subscribe");
    assert_eq!(sub.header("authorization"), Some(TOKEN));
    assert_eq!(sub.header("accept-encoding"), None);
    for c in [get, sub] {
        assert_eq!(c.header("traceparent"), Some(TRACEPARENT), "{c:?}");
        assert_eq!(c.header("tracestate"), Some(TRACESTATE), "{c:?}");
    }
}

/// A translated JSON-RPC call (one the proxy sends itself): the caller's
/// credentials go on; a credential for the proxy and the names its
/// `Connection` header lists do not (as on the proxied path).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jsonrpc_translated_call_drops_hop_by_hop_headers() {
    let up = json_agent(Version::V03, |_, req| {
        rpc_result(
            req,
            json!({"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}),
        )
    })
    .await;
    let px = http_proxy(&up, Version::V03);
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#;
    let headers = [
        ("A2A-Version", "1.0"),
        ("Authorization", TOKEN),
        ("X-Tenant", TENANT),
        ("Proxy-Authorization", "Basic cHJveHk6cHc="),
        ("Connection", "keep-alive, X-Hop"),
        ("X-Hop", "1"),
        ("Accept-Encoding", "gzip, br"),
        ("traceparent", TRACEPARENT),
        ("tracestate", TRACESTATE),
    ];
    let r = post(px.addr, "/rpc", &headers, body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = up.calls();
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!(c.header("authorization"), Some(TOKEN));
    assert_eq!(c.header("x-tenant"), Some(TENANT));
    assert_eq!(c.header("proxy-authorization"), None);
    assert_eq!(c.header("x-hop"), None);
    assert_eq!(c.header("traceparent"), Some(TRACEPARENT));
    assert_eq!(c.header("tracestate"), Some(TRACESTATE));
    // The proxy translates the answer: it asks for it unencoded.
    assert_eq!(c.header("accept-encoding"), None);
    assert_eq!(c.header("a2a-version"), Some("0.3"));
}

/// A v0.3 JSON-RPC client registers a webhook for a task a v1.0 agent
/// already runs: the GetTask the proxy asks first (the push fold starts at
/// the task as the agent has it) is the caller's, as the create itself is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_seed_task_is_asked_with_the_callers_credentials() {
    let up = json_agent(Version::V10, |r, req| {
        if !authorized(r) {
            return task_not_found(req);
        }
        match req["method"].as_str() {
            Some("GetTask") => rpc_result(
                req,
                json!({"id":"t9","contextId":"c9","status":{"state":"TASK_STATE_WORKING"}}),
            ),
            _ => {
                let mut cfg = req["params"].clone();
                cfg["id"] = json!("cfg-1");
                rpc_result(req, cfg)
            }
        }
    })
    .await;
    let dir = fresh_dir("meta-seed");
    let addr = crate::support::free_local_addr().unwrap();
    let mut config = Config::new(addr, &up.url()).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Fixed(Version::V10);
    config.push.enabled = true;
    config.push.backend = proxy::config::PushBackend::Embedded(dir.clone());
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    let px = proxy::start(config).unwrap();
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/set","params":{"taskId":"t9","pushNotificationConfig":{"url":"http://127.0.0.1:9/hook","token":"tok"}}}"#;
    let headers = [
        ("A2A-Version", "0.3"),
        ("Authorization", TOKEN),
        ("X-Tenant", TENANT),
    ];
    let r = post(px.addr, "/rpc", &headers, body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let calls = up.calls();
    let get = calls
        .iter()
        .find(|c| c.body.windows(9).any(|w| w == b"\"GetTask\""))
        .expect("GetTask");
    assert_eq!(get.header("authorization"), Some(TOKEN));
    assert_eq!(get.header("x-tenant"), Some(TENANT));
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}
