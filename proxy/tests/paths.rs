//! Each interface where the agent's card puts it (issue #23): fake agents
//! on 127.0.0.1 whose cards list JSON-RPC and HTTP+JSON under paths of
//! their own, or on other hosts; the in-process proxy (upstream version
//! read from the card); clients that take each URL from the card the
//! proxy serves and follow it.

mod support;

use std::sync::{Arc, Mutex, OnceLock};

use proxy::config::AllowedHosts;
use proxy::config::{Config, UpstreamVersion};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;

/// A v0.3 task in the agent's REST (ProtoJSON) shape.
const TASK_V03_REST: &str = r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}}"#;
/// The same task of a v1.0 agent.
const TASK_V10: &str = r#"{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-02T03:04:05Z"}}}"#;

/// The task of a `{"task": ...}` answer, as GetTask answers it.
fn bare(answer: &str) -> String {
    serde_json::from_str::<Value>(answer).unwrap()["task"].to_string()
}

fn proxy_for(upstream: &str, allowed: Option<&[&str]>) -> RunningProxy {
    let mut config = Config::new(support::free_local_addr().unwrap(), upstream).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Auto;
    if let Some(list) = allowed {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        config.allowed_hosts = AllowedHosts::resolve(Some(&list), &config.upstream, None).unwrap();
    }
    proxy::start(config).unwrap()
}

/// A v0.3 card: JSON-RPC at `rpc`, HTTP+JSON at `rest` (full URLs).
fn card_v03(rpc: &str, rest: &str) -> String {
    json!({
        "protocolVersion": "0.3.0", "name": "paths", "description": "d", "version": "1",
        "url": rpc, "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": rpc, "transport": "JSONRPC"},
            {"url": rest, "transport": "HTTP+JSON"}
        ],
        "capabilities": {"streaming": true}, "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"], "skills": []
    })
    .to_string()
}

/// The card the proxy serves a client of `version` ("0.3" / "1.0").
async fn served_card(px: &RunningProxy, version: &str) -> Value {
    let r = get(
        px.addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", version)],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// The path (under the proxy) of the served v1.0 card's interface of
/// `binding`; panics when it is missing or not the proxy's.
fn v10_interface_path(px: &RunningProxy, card: &Value, binding: &str) -> String {
    let ifs = card["supportedInterfaces"].as_array().unwrap();
    let url = ifs
        .iter()
        .find(|i| i["protocolBinding"] == binding)
        .and_then(|i| i["url"].as_str())
        .unwrap_or_else(|| panic!("no {binding} interface: {card}"));
    url.strip_prefix(&px.url())
        .unwrap_or_else(|| panic!("{url} is not the proxy's: {card}"))
        .to_string()
}

/// The issue's case with fakes: a v0.3 agent with JSON-RPC at `/jsonrpc`
/// and REST under `/rest`; a v1.0 client follows the served card's
/// HTTP+JSON and JSON-RPC URLs, and each call reaches the agent under the
/// agent's own path, translated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v10_clients_of_a_v03_agent_follow_each_interface_under_its_path() {
    let up = agent_with_card(
        |host| card_v03(&format!("http://{host}/jsonrpc"), &format!("http://{host}/rest")),
        |r| match (r.method.as_str(), r.target.as_str()) {
            ("POST", "/rest/v1/message:send") => Reply::json(200, TASK_V03_REST),
            ("GET", "/rest/v1/tasks/t1") => Reply::json(200, &bare(TASK_V03_REST)),
            ("POST", "/jsonrpc") => Reply::json(
                200,
                r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"t1","contextId":"c1","status":{"state":"completed"}}}"#,
            ),
            _ => Reply::json(404, "{}"),
        },
    )
    .await;
    let px = proxy_for(&up.url(), None);
    let card = served_card(&px, "1.0").await;
    let rest = v10_interface_path(&px, &card, "HTTP+JSON");
    let rpc = v10_interface_path(&px, &card, "JSONRPC");
    assert_eq!((rest.as_str(), rpc.as_str()), ("/rest", "/jsonrpc"));

    let v10 = [("A2A-Version", "1.0")];
    let send = r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let r = post(
        px.addr,
        &format!("{rest}/message:send"),
        &v10,
        send.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let r = get(px.addr, &format!("{rest}/tasks/t1"), &v10).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["id"], "t1", "{}", r.text());
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}"#;
    let r = post(px.addr, &rpc, &v10, body).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json()["result"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    let calls: Vec<(String, String)> = up
        .calls()
        .into_iter()
        .map(|c| (c.method, c.target))
        .collect();
    let want = [
        ("POST", "/rest/v1/message:send"),
        ("GET", "/rest/v1/tasks/t1"),
        ("POST", "/jsonrpc"),
    ];
    assert_eq!(
        calls,
        want.map(|(m, t)| (m.to_string(), t.to_string())),
        "the agent's calls"
    );
    let sent = &up.calls()[1];
    assert_eq!(sent.header("a2a-version"), Some("0.3"));

    // A v0.3 REST client of the same agent: passed through under the path.
    let v03_card = served_card(&px, "0.3").await;
    let ifs = v03_card["additionalInterfaces"].as_array().unwrap();
    assert!(
        ifs.iter()
            .any(|i| i["transport"] == "HTTP+JSON" && i["url"] == format!("{}/rest", px.url())),
        "{v03_card}"
    );
    assert_eq!(v03_card["url"], format!("{}/jsonrpc", px.url()));
    let r = get(px.addr, "/rest/v1/tasks/t1", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, bare(TASK_V03_REST).as_bytes(), "byte for byte");
}

/// A v1.0 agent with REST under `/a2a/rest` behind an upstream URL with a
/// path (`/a2a`): a v0.3 REST client's call reaches it under that path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn v03_clients_of_a_v10_agent_under_a_base_path() {
    let up = FakeUpstream::start(|r| match (r.method.as_str(), r.target.as_str()) {
        ("GET", "/a2a/.well-known/agent-card.json") => {
            let host = r.header("host").unwrap_or("?");
            Reply::json(
                200,
                &json!({
                    "name": "paths", "description": "d", "version": "1",
                    "supportedInterfaces": [
                        {"url": format!("http://{host}/a2a/rest"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
                        {"url": format!("http://{host}/a2a/jsonrpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                    ],
                    "capabilities": {}, "defaultInputModes": [], "defaultOutputModes": [], "skills": []
                })
                .to_string(),
            )
        }
        ("GET", "/a2a/rest/tasks/t1") => Reply::json(200, &bare(TASK_V10)),
        _ => Reply::json(404, "{}"),
    })
    .await;
    let px = proxy_for(&format!("{}/a2a", up.url()), None);
    let card = served_card(&px, "0.3").await;
    let rest = card["additionalInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["transport"] == "HTTP+JSON")
        .and_then(|i| i["url"].as_str())
        .unwrap_or_else(|| panic!("no HTTP+JSON interface: {card}"))
        .to_string();
    assert_eq!(rest, format!("{}/rest", px.url()), "{card}");
    let r = get(px.addr, "/rest/v1/tasks/t1", &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["status"]["state"], "TASK_STATE_COMPLETED");
    let calls: Vec<_> = up
        .recorded()
        .into_iter()
        .filter(|c| !c.target.contains("/.well-known/"))
        .collect();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].target, "/a2a/rest/tasks/t1");
    assert_eq!(calls[0].header("a2a-version"), Some("1.0"));
}

/// Log lines of the whole test binary (one subscriber for the process).
fn logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buf = Arc::new(Mutex::new(Vec::new()));
        let sink = buf.clone();
        let _ = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_max_level(tracing::Level::WARN)
            .with_writer(move || Sink(sink.clone()))
            .try_init();
        buf
    })
    .clone()
}

struct Sink(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A card interface on a host that is not allowed is left out of every
/// served card, said in a log line, and never contacted: its calls go
/// nowhere near it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interface_on_a_host_not_allowed_is_left_out_and_never_contacted() {
    let logs = logs();
    let other = FakeUpstream::start(|_| Reply::json(200, TASK_V03_REST)).await;
    let elsewhere = format!("http://{}/rest", other.addr);
    let e = elsewhere.clone();
    let up = agent_with_card(
        move |host| card_v03(&format!("http://{host}/jsonrpc"), &e),
        |_| Reply::json(404, "{}"),
    )
    .await;
    let px = proxy_for(&up.url(), None);
    for v in ["0.3", "1.0"] {
        let card = served_card(&px, v).await;
        let text = card.to_string();
        assert!(!text.contains("HTTP+JSON"), "{v}: {card}");
        assert!(!text.contains(&other.addr.to_string()), "{v}: {card}");
    }
    let hybrid = get(px.addr, "/.well-known/agent-card.json", &[])
        .await
        .json();
    assert!(!hybrid.to_string().contains("HTTP+JSON"), "{hybrid}");
    // The REST paths the card named lead nowhere near the other host.
    let v10 = [("A2A-Version", "1.0")];
    let send = r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let _ = post(px.addr, "/rest/message:send", &v10, send.as_bytes()).await;
    let _ = get(px.addr, "/rest/v1/tasks/t1", &[]).await;
    assert!(other.recorded().is_empty(), "{:?}", other.recorded());
    let text = String::from_utf8_lossy(&logs.lock().unwrap()).to_string();
    assert!(
        text.lines().any(|l| l.contains("left out")
            && l.contains(&elsewhere)
            && l.contains("upstream.allowed_hosts")),
        "no log line for {elsewhere}:\n{text}"
    );
}

/// An interface on another host the operator allows: its binding's calls
/// go there (with that host's `Host`), translated or passed through, and
/// the card advertises it at the proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interface_on_an_allowed_host_is_where_its_calls_go() {
    let other = FakeUpstream::start(|r| match (r.method.as_str(), r.target.as_str()) {
        ("POST", "/rest/v1/message:send") | ("GET", "/rest/v1/tasks/t1") => {
            Reply::json(200, TASK_V03_REST)
        }
        _ => Reply::json(404, "{}"),
    })
    .await;
    let rest = format!("http://{}/rest", other.addr);
    let r2 = rest.clone();
    let up = agent_with_card(
        move |host| card_v03(&format!("http://{host}/"), &r2),
        |_| Reply::json(404, "{}"),
    )
    .await;
    let px = proxy_for(&up.url(), Some(&["127.0.0.1"]));
    let card = served_card(&px, "1.0").await;
    let path = v10_interface_path(&px, &card, "HTTP+JSON");
    assert_eq!(path, "/rest");
    // Translated (a v1.0 client) and passed through (a v0.3 client).
    let v10 = [("A2A-Version", "1.0")];
    let send = r#"{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}"#;
    let r = post(
        px.addr,
        &format!("{path}/message:send"),
        &v10,
        send.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["task"]["id"], "t1");
    let r = get(px.addr, &format!("{path}/v1/tasks/t1"), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, TASK_V03_REST.as_bytes());
    let got: Vec<(String, String, Option<String>)> = other
        .recorded()
        .into_iter()
        .map(|c| {
            let host = c.header("host").map(str::to_string);
            (c.method, c.target, host)
        })
        .collect();
    let host = Some(other.addr.to_string());
    assert_eq!(
        got,
        [
            ("POST".into(), "/rest/v1/message:send".into(), host.clone()),
            ("GET".into(), "/rest/v1/tasks/t1".into(), host),
        ]
    );
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

/// Health and metrics stay local: routing asks the agent for no card
/// first (an agent down must not slow them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_endpoints_ask_the_agent_nothing() {
    let up = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), None);
    for path in ["/health", "/metrics"] {
        let r = get(px.addr, path, &[]).await;
        assert_eq!(r.status, 200, "{path}");
    }
    assert!(up.recorded().is_empty(), "{:?}", up.recorded());
}
