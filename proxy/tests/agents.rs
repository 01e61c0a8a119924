//! Several agents behind one proxy (issue #23): two fake agents of
//! different versions on one listener, one routed by path prefix, one by
//! `Host`; each card lists only its own agent at its own public URL, calls
//! reach only their agent (prefix stripped) translated both ways, what no
//! agent serves gets a 404, every metric line names its agent, and each
//! agent's push callbacks live under its own prefix in a store of its own.

mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proxy::config::{Config, RawConfig};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;

const CARD_V03: &str = r#"{"name":"alpha","description":"agent A","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP/rpc","transport":"JSONRPC"},{"url":"http://UP/rest","transport":"HTTP+JSON"}],"capabilities":{"streaming":true,"pushNotifications":true},"skills":[]}"#;

const CARD_V10: &str = r#"{"name":"beta","description":"agent B","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://UP/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

fn start(toml: &str) -> RunningProxy {
    let raw = RawConfig::from_toml(toml, "agents.toml").unwrap();
    proxy::start(Config::resolve(raw).unwrap()).unwrap()
}

fn jsonrpc_answer(r: &Recorded, result: Value) -> Reply {
    let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
    Reply::rpc_result(&req["id"], &result)
}

/// A raw request with `host` as its `Host` header.
fn at(host: &str, method: &str, target: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let raw = request(method, target, headers, body);
    let cut = raw.len() - body.len();
    let head = String::from_utf8(raw[..cut].to_vec()).unwrap().replacen(
        "Host: test\r\n",
        &format!("Host: {host}\r\n"),
        1,
    );
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// A card answer of agent `name`: served, its every URL under `base`,
/// nothing of the other agent (`other`, at `other_addr`).
fn assert_own_card(
    r: &Response,
    name: &str,
    base: &str,
    other: &str,
    other_addr: std::net::SocketAddr,
) {
    assert_eq!(r.status, 200, "{}", r.text());
    let card = r.json();
    assert_eq!(card["name"], name, "{card}");
    let urls = card_urls(&card);
    assert!(!urls.is_empty(), "{card}");
    for u in &urls {
        assert!(u.starts_with(base), "{u}");
    }
    let text = r.text();
    assert!(
        !text.contains(other) && !text.contains(&other_addr.to_string()),
        "{text}"
    );
}

/// Every URL of a card (v0.3 `url`, both interface lists).
fn card_urls(card: &Value) -> Vec<String> {
    let mut out: Vec<String> = card["url"].as_str().map(String::from).into_iter().collect();
    for list in ["additionalInterfaces", "supportedInterfaces"] {
        for i in card[list].as_array().into_iter().flatten() {
            out.extend(i["url"].as_str().map(String::from));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_of_different_versions_by_prefix_and_by_host() {
    let a = agent_with_card(
        |me| CARD_V03.replace("UP", me),
        |r| {
            jsonrpc_answer(
                r,
                json!({"kind": "task", "id": "ta", "contextId": "ca",
                    "status": {"state": "completed"}}),
            )
        },
    )
    .await;
    let b = agent_with_card(
        |me| CARD_V10.replace("UP", me),
        |r| {
            jsonrpc_answer(
                r,
                json!({"task": {"id": "tb", "contextId": "cb",
                    "status": {"state": "TASK_STATE_COMPLETED"}}}),
            )
        },
    )
    .await;
    let addr = support::free_local_addr().unwrap();
    let port = addr.port();
    let px = start(&format!(
        r#"listen = "{addr}"
threads = 1
[push]
enabled = false
[[agents]]
name = "a"
prefix = "/a"
[agents.upstream]
url = "{}"
version = "auto"
[[agents]]
name = "b"
hosts = ["b.example"]
[agents.upstream]
url = "{}"
version = "1.0"
"#,
        a.url(),
        b.url()
    ));
    assert_eq!(px.apps.len(), 2);
    let host_b = format!("b.example:{port}");

    // Each card: its own agent, at its own public URL, nothing of the other.
    for version in ["0.3", "1.0"] {
        let r = get(
            addr,
            "/a/.well-known/agent-card.json",
            &[("A2A-Version", version)],
        )
        .await;
        assert_own_card(&r, "alpha", &format!("http://{addr}/a/"), "beta", b.addr);

        let r = send(
            addr,
            &at(
                &host_b,
                "GET",
                "/.well-known/agent-card.json",
                &[("A2A-Version", version)],
                b"",
            ),
        )
        .await;
        assert_own_card(&r, "beta", &format!("http://{host_b}/"), "alpha", a.addr);
    }

    // A v1.0 call to the v0.3 agent by prefix: translated, prefix stripped.
    let r = post(
        addr,
        "/a/rpc",
        JSON_V10,
        br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["task"]["id"], "ta", "{}", r.text());
    assert_eq!(
        r.json()["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let calls = a.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].target, "/rpc");
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["method"], "message/send");

    // A v0.3 call to the v1.0 agent by Host.
    let r = send(
        addr,
        &at(&host_b, "POST", "/rpc", JSON_HEADER,
        br#"{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["id"], "tb", "{}", r.text());
    assert_eq!(r.json()["result"]["status"]["state"], "completed");
    let calls = b.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].target, "/rpc");
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["method"], "SendMessage");
    assert_eq!(a.calls().len(), 1, "agent A got B's call");

    // Host matching ignores case and the port; an unknown host and a path
    // off every prefix (`/ab` is not under `/a`) reach no agent.
    let r = send(
        addr,
        &at("B.Example", "GET", "/.well-known/agent-card.json", &[], b""),
    )
    .await;
    assert_eq!(r.json()["name"], "beta");
    for (host, path) in [
        ("127.0.0.1", "/rpc"),
        ("127.0.0.1", "/ab/.well-known/agent-card.json"),
        ("c.example", "/.well-known/agent-card.json"),
    ] {
        let r = send(
            addr,
            &at(
                host,
                "POST",
                path,
                JSON_HEADER,
                br#"{"jsonrpc":"2.0","id":3,"method":"message/send","params":{}}"#,
            ),
        )
        .await;
        assert_eq!(r.status, 404, "{host}{path}: {}", r.text());
        let body = r.json();
        assert_eq!(body["error"]["code"], "no_agent", "{body}");
        assert_eq!(body["error"]["path"], path);
        assert_eq!(body["error"]["host"], host);
        let text = r.text();
        assert!(!text.contains(&a.addr.to_string()) && !text.contains(&b.addr.to_string()));
    }
    // A long host and path are repeated cut short.
    let long = "x".repeat(1000);
    let r = send(addr, &at(&long, "GET", &format!("/{long}"), &[], b"")).await;
    assert_eq!(r.status, 404);
    let body = r.json();
    assert_eq!(body["error"]["host"].as_str().unwrap().len(), 200, "{body}");
    assert_eq!(body["error"]["path"].as_str().unwrap().len(), 200, "{body}");
    assert_eq!(a.calls().len(), 1);
    assert_eq!(b.calls().len(), 1);

    // The proxy's own endpoints on every host; /ready names each agent.
    let r = send(addr, &at(&host_b, "GET", "/health", &[], b"")).await;
    assert_eq!(r.status, 200);
    let r = get(addr, "/ready", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let ready = r.json();
    assert_eq!(ready["agents"]["a"]["upstreamVersion"], "0.3", "{ready}");
    assert_eq!(ready["agents"]["b"]["upstreamVersion"], "1.0", "{ready}");

    // Every metric line names its agent; requests of no agent: agent="".
    let text = get(addr, "/metrics", &[]).await.text();
    assert!(text.contains(r#"a2a_proxy_requests_total{agent="a",method="SendMessage",direction="v10_v03",binding="jsonrpc",outcome="ok"} 1"#), "{text}");
    assert!(text.contains(r#"a2a_proxy_requests_total{agent="b",method="SendMessage",direction="v03_v10",binding="jsonrpc",outcome="ok"} 1"#), "{text}");
    assert!(text.contains(r#"a2a_proxy_requests_total{agent="",method="none",direction="local",binding="other",outcome="client_error"} 4"#), "{text}");
    assert!(
        text.contains(r#"a2a_proxy_open_streams{agent="a"} 0"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_proxy_open_streams{agent="b"} 0"#),
        "{text}"
    );
    assert_eq!(text.matches("# TYPE a2a_proxy_requests_total ").count(), 1);
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        assert!(line.contains("{agent=\""), "{line}");
    }
    // An agent's own /metrics under its prefix: its lines only.
    let own = get(addr, "/a/metrics", &[]).await.text();
    assert!(own.contains(r#"{agent="a","#), "{own}");
    assert!(!own.contains(r#"agent="b""#), "{own}");
}

/// A v0.3 agent answering message/send with task `task`, keeping the push
/// config it was given.
async fn pushing_v03_agent(task: &'static str) -> (FakeUpstream, Arc<Mutex<Option<Value>>>) {
    let seen: Arc<Mutex<Option<Value>>> = Arc::default();
    let s = seen.clone();
    let agent = agent_with_card(
        |me| CARD_V03.replace("UP", me),
        move |r| {
            let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let cfg = req["params"]["configuration"]["pushNotificationConfig"].clone();
            if cfg.is_object() {
                let mut cfg = cfg;
                cfg["id"] = json!("cfg-1");
                *s.lock().unwrap() = Some(cfg);
            }
            jsonrpc_answer(
                r,
                json!({"kind": "task", "id": task, "contextId": "c",
                    "status": {"state": "submitted"}}),
            )
        },
    )
    .await;
    (agent, seen)
}

async fn register(
    addr: std::net::SocketAddr,
    prefix: &str,
    hook: &str,
    seen: &Arc<Mutex<Option<Value>>>,
) -> (String, String) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
        "configuration": {"taskPushNotificationConfig": {"url": hook, "token": "client-tok"}}}});
    let r = post(
        addr,
        &format!("{prefix}/rpc"),
        JSON_V10,
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let cfg = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the agent got a push config");
    let url = cfg["url"].as_str().unwrap().to_string();
    let base = format!("http://{addr}{prefix}/a2a-proxy/push/");
    assert!(url.starts_with(&base), "the agent was given {url}");
    let path = url[format!("http://{addr}").len()..].to_string();
    (path, cfg["token"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_agent_has_its_own_push_callbacks_and_store() {
    let (a, seen_a) = pushing_v03_agent("ta").await;
    let (b, seen_b) = pushing_v03_agent("tb").await;
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let dir = fresh_dir("agents-push");
    let addr = support::free_local_addr().unwrap();
    let px = start(&format!(
        r#"listen = "{addr}"
threads = 1
[upstream]
version = "0.3"
[push]
data_dir = "{}"
allow_hosts = ["127.0.0.1"]
backoff_initial_ms = 50
backoff_max_ms = 200
[[agents]]
name = "a"
prefix = "/a"
[agents.upstream]
url = "{}"
[[agents]]
name = "b"
prefix = "/b"
[agents.upstream]
url = "{}"
"#,
        dir.display(),
        a.url(),
        b.url()
    ));
    // Each agent's store: a subdirectory of the data directory.
    assert!(dir.join("a").is_dir() && dir.join("b").is_dir());

    let (path_a, secret_a) = register(addr, "/a", &hook.url(), &seen_a).await;
    let (path_b, _) = register(addr, "/b", &hook.url(), &seen_b).await;
    assert_ne!(path_a, path_b);

    // A's callback id under B's prefix: B's store does not know it.
    let id_a = path_a.strip_prefix("/a").unwrap();
    let task = br#"{"kind":"task","id":"ta","contextId":"c","status":{"state":"completed"}}"#;
    let headers = [
        ("Content-Type", "application/json"),
        ("X-A2A-Notification-Token", secret_a.as_str()),
    ];
    let r = post(addr, &format!("/b{id_a}"), &headers, task).await;
    assert!(r.status >= 400, "{} {}", r.status, r.text());
    // Under its own prefix: accepted and delivered, translated to v1.0.
    let r = post(addr, &path_a, &headers, task).await;
    assert!(r.status < 300, "{} {}", r.status, r.text());
    let end = Instant::now() + Duration::from_secs(10);
    while hook.recorded().is_empty() && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = hook.recorded();
    assert_eq!(got.len(), 1, "{got:?}");
    let body: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(body["task"]["id"], "ta", "{body}");

    let text = get(addr, "/metrics", &[]).await.text();
    assert!(
        text.contains(r#"a2a_proxy_push_callbacks_total{agent="a",outcome="accepted"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_proxy_push_callbacks_total{agent="b",outcome="rejected"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_proxy_push_registrations_total{agent="a"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"a2a_proxy_push_registrations_total{agent="b"} 1"#),
        "{text}"
    );
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

/// gRPC: the top-level `grpc.listen` serves the first agent as with one
/// agent; another agent is served on a `grpc_listen` of its own, a third
/// naming none has none; each card advertises its own agent's listener
/// only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_agent_keeps_grpc_listen_and_another_has_its_own() {
    use proto::v10 as p10;
    let task = |id: &'static str| {
        move |r: &Recorded| {
            jsonrpc_answer(
                r,
                json!({"kind": "task", "id": id, "contextId": "c",
                    "status": {"state": "completed"}}),
            )
        }
    };
    let a = agent_with_card(|me| CARD_V03.replace("UP", me), task("ta")).await;
    let b = agent_with_card(|me| CARD_V03.replace("UP", me), task("tb")).await;
    let addr = support::free_local_addr().unwrap();
    let (g1, g2) = (
        support::free_local_addr().unwrap(),
        support::free_local_addr().unwrap(),
    );
    let px = start(&format!(
        r#"listen = "{addr}"
threads = 1
[grpc]
listen = "{g1}"
[push]
enabled = false
[upstream]
version = "0.3"
[[agents]]
name = "a"
prefix = "/a"
[agents.upstream]
url = "{}"
[[agents]]
name = "b"
prefix = "/b"
grpc_listen = "{g2}"
[agents.upstream]
url = "{}"
[[agents]]
name = "c"
prefix = "/c"
[agents.upstream]
url = "{}"
"#,
        a.url(),
        b.url(),
        b.url()
    ));
    let servers = proxy::grpc::GrpcServer::start_all(&px.apps).unwrap();
    let listening: Vec<_> = servers.iter().map(|s| s.addr).collect();
    assert_eq!(listening, [g1, g2]);

    for (g, want) in [(g1, "ta"), (g2, "tb")] {
        let mut client = p10::a2a_service_client::A2aServiceClient::connect(format!("http://{g}"))
            .await
            .unwrap();
        let mut req = tonic::Request::new(grpc::v10_send_request("hi"));
        req.metadata_mut()
            .insert("a2a-version", "1.0".parse().unwrap());
        let reply = client.send_message(req).await.unwrap().into_inner();
        match reply.payload {
            Some(p10::send_message_response::Payload::Task(t)) => assert_eq!(t.id, want),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(a.calls().len(), 1, "{:?}", a.calls());
    assert_eq!(b.calls().len(), 1, "{:?}", b.calls());

    // An agent naming no listener of its own has none.
    let card = get(
        addr,
        "/c/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await
    .json();
    let grpc = card["supportedInterfaces"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["protocolBinding"] == "GRPC")
        .count();
    assert_eq!(grpc, 0, "{card}");
    for (prefix, g, not) in [("/a", g1, g2), ("/b", g2, g1)] {
        let card = get(
            addr,
            &format!("{prefix}/.well-known/agent-card.json"),
            &[("A2A-Version", "1.0")],
        )
        .await
        .json();
        let grpc: Vec<String> = card["supportedInterfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["protocolBinding"] == "GRPC")
            .filter_map(|i| i["url"].as_str().map(String::from))
            .collect();
        assert_eq!(grpc.len(), 1, "{card}");
        assert!(grpc[0].ends_with(&format!(":{}", g.port())), "{card}");
        assert!(!grpc[0].ends_with(&format!(":{}", not.port())), "{card}");
    }
    drop(servers);
}

/// Each agent's own limits and ListTasks scope, on the wire: agent `b`
/// (`max_body_bytes = 1000`, `list_tasks = "off"`) refuses a 2 KB body with
/// a 413 in the client's shape and answers ListTasks UnsupportedOperation
/// without asking its agent; agent `a`, on the top-level defaults, takes
/// the same body to its agent and answers ListTasks from its index.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_agent_keeps_its_own_limits_and_list_tasks_scope() {
    let task03 = |r: &Recorded| {
        jsonrpc_answer(
            r,
            json!({"kind": "task", "id": "t1", "contextId": "c1",
                "status": {"state": "completed"}}),
        )
    };
    let a = agent_with_card(|me| CARD_V03.replace("UP", me), task03).await;
    let b = agent_with_card(|me| CARD_V03.replace("UP", me), task03).await;
    let addr = support::free_local_addr().unwrap();
    let _px = start(&format!(
        r#"listen = "{addr}"
threads = 1
[push]
enabled = false
[[agents]]
name = "a"
prefix = "/a"
[agents.upstream]
url = "{}"
version = "0.3"
[[agents]]
name = "b"
prefix = "/b"
list_tasks = "off"
[agents.upstream]
url = "{}"
version = "0.3"
[agents.limits]
max_body_bytes = 1000
"#,
        a.url(),
        b.url()
    ));
    let v10 = [("A2A-Version", "1.0"), ("Authorization", "Bearer one")];
    let big = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER",
            "parts": [{"text": "x".repeat(2000)}]}}})
    .to_string();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}}).to_string();

    // Agent a: the top-level defaults (4 MiB bodies, per-caller ListTasks).
    let r = post(addr, "/a/rpc", &v10, big.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["result"]["task"]["id"], "t1", "{}", r.text());
    assert_eq!(a.calls().len(), 1);
    let r = post(addr, "/a/rpc", &v10, list.as_bytes()).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let tasks = r.json()["result"]["tasks"].clone();
    assert_eq!(tasks.as_array().map(Vec::len), Some(1), "{}", r.text());
    assert_eq!(tasks[0]["id"], "t1");
    // The page's task was asked of agent a afresh (tasks/get).
    let asked = a.calls().len();
    assert!(
        a.calls()[1..]
            .iter()
            .all(|c| String::from_utf8_lossy(&c.body).contains("tasks/get")),
        "{:?}",
        a.calls()
    );

    // Agent b: its own bound and scope; its agent is never asked.
    let r = post(addr, "/b/rpc", &v10, big.as_bytes()).await;
    assert_eq!(r.status, 413, "{}", r.text());
    assert!(r.text().contains("1000"), "{}", r.text());
    let r = post(addr, "/b/rpc", &v10, list.as_bytes()).await;
    assert_eq!(r.json()["error"]["code"], -32004, "{}", r.text());
    assert!(b.calls().is_empty(), "{:?}", b.calls());
    assert_eq!(a.calls().len(), asked);
}
