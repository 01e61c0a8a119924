//! Issue #22 items 1, 2, 8 and 9: one hybrid card for header-less card
//! requests (real SDK clients of both versions read it), the gRPC
//! interface URL in the form each card's version uses, every JSON-RPC
//! request of the proxy's own with `params`, the push callback token under
//! `A2A-Notification-Token`, and a card error naming what is wrong.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use proto::v10 as p10;
use proxy::config::{Config, GrpcUrlForm, PushBackend, RawConfig, UpstreamVersion};
use proxy::grpc::GrpcServer;
use proxy::version::Version;
use proxy::RunningProxy;
use serde_json::{json, Value};

use crate::support::*;

/// A v0.3 agent: JSON-RPC at its base, HTTP+JSON at its base, gRPC.
const CARD_V03: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"http://UP","transport":"JSONRPC"},{"url":"http://UP","transport":"HTTP+JSON"},{"url":"http://UP-GRPC","transport":"GRPC"}],"capabilities":{"streaming":true},"securitySchemes":{"key":{"type":"apiKey","in":"header","name":"X-Key"}},"security":[{"key":[]}],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}"#;

/// A v1.0 agent: JSON-RPC and HTTP+JSON at its base, gRPC as `host:port`.
const CARD_V10: &str = r#"{"name":"fake","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://UP","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"},{"url":"UP-GRPC","protocolBinding":"GRPC","protocolVersion":"1.0"}],"capabilities":{"streaming":true,"extendedAgentCard":true},"securitySchemes":{"key":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}}},"securityRequirements":[{"schemes":{"key":{"list":[]}}}],"skills":[{"id":"s","name":"s","description":"d","tags":["t"]}]}"#;

/// A fake agent serving `card` (`UP` = its address, `UP-GRPC` = an
/// address of its gRPC) and answering everything else with `f`.
async fn agent_with(
    card: String,
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    let host = Arc::new(OnceLock::<String>::new());
    let h = host.clone();
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            let up = h.get().map(String::as_str).unwrap_or("?");
            let body = card.replace("UP-GRPC", "10.9.8.7:50051").replace("UP", up);
            Reply::json(200, &body)
        } else {
            f(r)
        }
    })
    .await;
    host.set(up.addr.to_string()).unwrap();
    up
}

async fn agent(card: &str) -> FakeUpstream {
    agent_with(card.to_string(), |_| Reply::json(200, "{}")).await
}

/// The proxy (in-process, `version` fixed or auto) with a gRPC listener.
struct Px {
    http: RunningProxy,
    grpc: GrpcServer,
}

impl Px {
    fn url(&self) -> String {
        self.http.url()
    }
    fn grpc_host_port(&self) -> String {
        format!("127.0.0.1:{}", self.grpc.addr.port())
    }
    async fn card(&self, headers: &[(&str, &str)]) -> Response {
        get(self.http.addr, "/.well-known/agent-card.json", headers).await
    }
}

fn proxy(up: &FakeUpstream, version: Option<Version>, tune: impl FnOnce(&mut Config)) -> Px {
    let mut config = Config::new(crate::support::free_local_addr().unwrap(), &up.url()).unwrap();
    config.threads = 1;
    config.upstream_version = match version {
        Some(v) => UpstreamVersion::Fixed(v),
        None => UpstreamVersion::Auto,
    };
    let grpc_addr = crate::support::free_local_addr().unwrap();
    config.grpc_listen = Some(grpc_addr);
    tune(&mut config);
    let http = proxy::start(config).unwrap();
    let grpc = GrpcServer::start(http.app.clone(), grpc_addr).unwrap();
    Px { http, grpc }
}

/// (binding, protocolVersion, url) of each `supportedInterfaces` entry.
fn interfaces(card: &Value) -> Vec<(String, String, String)> {
    card["supportedInterfaces"]
        .as_array()
        .map(|l| {
            l.iter()
                .map(|i| {
                    let s = |k: &str| i[k].as_str().unwrap_or("<none>").to_string();
                    (s("protocolBinding"), s("protocolVersion"), s("url"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Every interface URL of `card` (v0.3 and v1.0 members).
fn urls(card: &Value) -> Vec<String> {
    let mut out: Vec<String> = card["url"].as_str().map(String::from).into_iter().collect();
    for list in ["additionalInterfaces", "supportedInterfaces"] {
        for i in card[list].as_array().into_iter().flatten() {
            out.extend(i["url"].as_str().map(String::from));
        }
    }
    out
}

/// The hybrid card of a proxy in front of an agent of `agent_version`.
async fn hybrid_case(agent_version: Version) {
    let card = match agent_version {
        Version::V03 => CARD_V03,
        Version::V10 => CARD_V10,
    };
    let up = agent(card).await;
    let px = proxy(&up, None, |_| {});
    let (base, grpc) = (px.url(), px.grpc_host_port());

    let r = px.card(&[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.header("vary"), Some("A2A-Version"));
    let hybrid_tag = r.header("etag").unwrap().to_string();
    let c = r.json();
    // The v0.3 members.
    assert_eq!(c["url"], base.as_str(), "{c}");
    assert_eq!(c["preferredTransport"], "JSONRPC", "{c}");
    assert!(
        c["protocolVersion"]
            .as_str()
            .unwrap_or("")
            .starts_with("0.3"),
        "{c}"
    );
    let add = c["additionalInterfaces"]
        .as_array()
        .expect("additionalInterfaces");
    assert!(add.iter().any(|i| i["transport"] == "HTTP+JSON"), "{c}");
    assert!(
        add.contains(&json!({"url": format!("http://{grpc}"), "transport": "GRPC"})),
        "{c}"
    );
    assert_eq!(c["securitySchemes"]["key"]["type"], "apiKey", "{c}");
    assert_eq!(c["security"], json!([{"key": []}]), "{c}");
    // The v1.0 members: every interface in both versions, the proxy's.
    let got = interfaces(&c);
    for (binding, version, url) in [
        ("JSONRPC", "1.0", base.clone()),
        ("HTTP+JSON", "1.0", base.clone()),
        ("GRPC", "1.0", grpc.clone()),
        ("JSONRPC", "0.3", base.clone()),
        ("HTTP+JSON", "0.3", base.clone()),
        ("GRPC", "0.3", format!("http://{grpc}")),
    ] {
        let want = (binding.to_string(), version.to_string(), url);
        assert!(got.contains(&want), "no {want:?} in {got:?}");
    }
    assert_eq!(got.len(), 6, "{got:?}");
    // A client takes the first it supports: the 1.0 ones come first.
    assert_eq!(got[0].1, "1.0", "{got:?}");
    assert_eq!(
        c["securitySchemes"]["key"]["apiKeySecurityScheme"]["location"], "header",
        "{c}"
    );
    assert_eq!(
        c["securityRequirements"],
        json!([{"schemes": {"key": {"list": []}}}]),
        "{c}"
    );
    for u in urls(&c) {
        assert!(
            u.starts_with(&base) || u.ends_with(&grpc),
            "{u} is not the proxy's: {c}"
        );
    }
    let text = r.text();
    assert!(
        !text.contains(&up.addr.to_string()) && !text.contains("10.9.8.7"),
        "{text}"
    );

    // Explicit versions keep their shapes, each with its own ETag.
    let r03 = px.card(&[("A2A-Version", "0.3")]).await;
    let c03 = r03.json();
    assert!(c03.get("supportedInterfaces").is_none(), "{c03}");
    assert_eq!(c03["url"], base.as_str());
    let r10 = get(px.http.addr, "/.well-known/agent.json?A2A-Version=1.0", &[]).await;
    let c10 = r10.json();
    for k in [
        "url",
        "preferredTransport",
        "additionalInterfaces",
        "protocolVersion",
    ] {
        assert!(c10.get(k).is_none(), "{k} in the v1.0 card: {c10}");
    }
    assert!(interfaces(&c10).iter().all(|i| i.1 == "1.0"), "{c10}");
    let (t03, t10) = (
        r03.header("etag").unwrap().to_string(),
        r10.header("etag").unwrap().to_string(),
    );
    assert!(hybrid_tag != t03 && hybrid_tag != t10 && t03 != t10);
    assert_eq!(r10.header("vary"), Some("A2A-Version"));

    // 304 per shape: each shape's tag revalidates that shape only.
    let r = get(
        px.http.addr,
        "/.well-known/agent.json",
        &[("If-None-Match", &hybrid_tag)],
    )
    .await;
    assert_eq!(
        (r.status, r.header("etag")),
        (304, Some(hybrid_tag.as_str()))
    );
    assert!(r.body.is_empty());
    let r = px.card(&[("If-None-Match", &t03)]).await;
    assert_eq!(
        r.status, 200,
        "the v0.3 tag must not revalidate the hybrid card"
    );
    let r = px
        .card(&[("If-None-Match", &hybrid_tag), ("A2A-Version", "1.0")])
        .await;
    assert_eq!(
        r.status, 200,
        "the hybrid tag must not revalidate the v1.0 card"
    );
    let r = px
        .card(&[("If-None-Match", &t10), ("A2A-Version", "1.0")])
        .await;
    assert_eq!(r.status, 304);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headerless_card_is_hybrid_for_a_v03_agent() {
    hybrid_case(Version::V03).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headerless_card_is_hybrid_for_a_v10_agent() {
    hybrid_case(Version::V10).await;
}

/// The proxy's gRPC entry of a card: the v0.3 `additionalInterfaces` one
/// or the v1.0 `supportedInterfaces` one.
fn grpc_url(card: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for (list, key) in [
        ("additionalInterfaces", "transport"),
        ("supportedInterfaces", "protocolBinding"),
    ] {
        for i in card[list].as_array().into_iter().flatten() {
            if i[key] == "GRPC" {
                out.extend(i["url"].as_str().map(String::from));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_interface_url_takes_each_cards_form() {
    // Passthrough keeps the agent's form: a v0.3 agent writing a URL...
    let up03 = agent(CARD_V03).await;
    let px = proxy(&up03, Some(Version::V03), |_| {});
    let g = px.grpc_host_port();
    let c = px.card(&[("A2A-Version", "0.3")]).await.json();
    assert_eq!(grpc_url(&c), [format!("http://{g}")], "{c}");
    // ... across versions the v1.0 form.
    let c = px.card(&[("A2A-Version", "1.0")]).await.json();
    assert_eq!(grpc_url(&c), vec![g.clone()], "{c}");

    // A v1.0 agent writing host:port keeps it; its v0.3 card gets a URL.
    let up10 = agent(CARD_V10).await;
    let px = proxy(&up10, Some(Version::V10), |_| {});
    let g = px.grpc_host_port();
    let c = px.card(&[("A2A-Version", "1.0")]).await.json();
    assert_eq!(grpc_url(&c), vec![g.clone()], "{c}");
    let c = px.card(&[("A2A-Version", "0.3")]).await.json();
    assert_eq!(grpc_url(&c), [format!("http://{g}")], "{c}");
    // A v1.0 agent writing a URL for its gRPC keeps a URL.
    let up = agent(&CARD_V10.replace("\"UP-GRPC\"", "\"http://UP-GRPC\"")).await;
    let px = proxy(&up, Some(Version::V10), |_| {});
    let c = px.card(&[("A2A-Version", "1.0")]).await.json();
    assert_eq!(
        grpc_url(&c),
        [format!("http://{}", px.grpc_host_port())],
        "{c}"
    );

    // The override: one form for every card.
    let px = proxy(&up10, Some(Version::V10), |c| {
        c.grpc_card_url_form = GrpcUrlForm::Url
    });
    let g = px.grpc_host_port();
    for v in ["0.3", "1.0"] {
        let c = px.card(&[("A2A-Version", v)]).await.json();
        assert_eq!(grpc_url(&c), [format!("http://{g}")], "{v}: {c}");
    }
    let px = proxy(&up03, Some(Version::V03), |c| {
        c.grpc_card_url_form = GrpcUrlForm::HostPort
    });
    let g = px.grpc_host_port();
    for v in ["0.3", "1.0"] {
        let c = px.card(&[("A2A-Version", v)]).await.json();
        assert_eq!(grpc_url(&c), vec![g.clone()], "{v}: {c}");
    }

    // The key in the file.
    let conf = |form: &str| {
        let toml = format!(
            "[upstream]\nurl = \"http://127.0.0.1:9\"\n[grpc]\nlisten = \"127.0.0.1:8081\"\ncard_url_form = \"{form}\"\n"
        );
        Config::resolve(RawConfig::from_toml(&toml, "t").unwrap())
    };
    assert_eq!(conf("url").unwrap().grpc_card_url_form, GrpcUrlForm::Url);
    assert_eq!(
        conf("host-port").unwrap().grpc_card_url_form,
        GrpcUrlForm::HostPort
    );
    assert_eq!(conf("auto").unwrap().grpc_card_url_form, GrpcUrlForm::Auto);
    assert_eq!(conf("uri").unwrap_err().key, "grpc.card_url_form");
}

/// A v1.0 agent that refuses (-32602) any JSON-RPC request without an
/// object `params`, as some v1.0 servers do, and answers the extended card.
async fn strict_v10_agent() -> FakeUpstream {
    agent_with(CARD_V10.to_string(), |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let id = req["id"].clone();
        if !req["params"].is_object() {
            let e = json!({"code": -32602, "message": "params required"});
            return Reply::json(
                200,
                &json!({"jsonrpc": "2.0", "id": id, "error": e}).to_string(),
            );
        }
        let card: Value = serde_json::from_str(
            &CARD_V10
                .replace("UP-GRPC", "10.9.8.7:1")
                .replace("UP", "10.9.8.7:2"),
        )
        .unwrap();
        Reply::rpc_result(&id, &card)
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_proxys_own_jsonrpc_requests_carry_params() {
    let up = strict_v10_agent().await;
    let px = proxy(&up, Some(Version::V10), |_| {});
    // gRPC GetExtendedAgentCard, bridged to the agent's JSON-RPC.
    let mut client =
        p10::a2a_service_client::A2aServiceClient::connect(format!("http://{}", px.grpc.addr))
            .await
            .unwrap();
    let card = client
        .get_extended_agent_card(p10::GetExtendedAgentCardRequest::default())
        .await
        .expect("the extended card")
        .into_inner();
    assert_eq!(card.name, "fake");
    // A v0.3 JSON-RPC client's extended-card request without params (and
    // with `null`), translated by the proxy.
    for params in ["", r#","params":null"#] {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"agent/getAuthenticatedExtendedCard"{params}}}"#
        );
        let r = post(px.http.addr, "/", JSON_HEADER, body.as_bytes()).await;
        let v = r.json();
        assert_eq!(v["result"]["name"], "fake", "{v}");
        assert!(
            v["result"]["url"]
                .as_str()
                .is_some_and(|u| u.starts_with(&px.url())),
            "{v}"
        );
    }
    // A v1.0 JSON-RPC client's, toward a v0.3 agent.
    let up03 = agent_with(CARD_V03.to_string(), |r| {
        let req: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
        let result = json!({"params_seen": req["params"].is_object()});
        Reply::json(200, &json!({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32001, "message": "x", "data": result}}).to_string())
    })
    .await;
    let px03 = proxy(&up03, Some(Version::V03), |_| {});
    let body = r#"{"jsonrpc":"2.0","id":4,"method":"GetExtendedAgentCard"}"#;
    post(px03.http.addr, "/", JSON_V10, body.as_bytes()).await;
    let sent = up03.calls();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let sent: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(
        sent["method"], "agent/getAuthenticatedExtendedCard",
        "{sent}"
    );
    assert_eq!(sent["params"], json!({}), "{sent}");
    let calls = up.calls();
    assert!(!calls.is_empty());
    for c in &calls {
        let body: Value = serde_json::from_slice(&c.body).unwrap();
        assert!(body["params"].is_object(), "{body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn push_callback_takes_the_token_under_a2a_notification_token() {
    // A v1.0 agent keeping the push config it was given.
    let (up, seen) = pushing_v10_agent().await;
    let hook = FakeUpstream::start(|_| Reply::json(200, "{}")).await;
    let dir = fresh_dir("cards-push");
    let mut config = config_for(&up.url(), Version::V10);
    config.push.enabled = true;
    config.push.backend = PushBackend::Embedded(dir.clone());
    config.push.allow_hosts = vec!["127.0.0.1".into()];
    let px = proxy::start(config).unwrap();
    // A v0.3 client registers its webhook inline.
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
        "message": {"kind": "message", "messageId": "m1", "role": "user",
            "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"pushNotificationConfig": {"url": format!("{}/hook", hook.url()), "token": "v03-tok"}}}});
    let r = post(px.addr, "/", JSON_HEADER, send.to_string().as_bytes()).await;
    assert_eq!(r.json()["result"]["id"], "t9", "{}", r.text());
    let cfg = seen
        .lock()
        .unwrap()
        .clone()
        .expect("the agent got a config");
    let path = cfg["url"].as_str().unwrap()[px.url().len()..].to_string();
    let secret = cfg["token"].as_str().unwrap().to_string();
    let update = json!({"statusUpdate": {"taskId": "t9", "contextId": "c9",
        "status": {"state": "TASK_STATE_WORKING", "timestamp": "2024-03-15T18:30:01Z"}}});
    let push = |name: &'static str, value: String| {
        let (path, body) = (path.clone(), update.to_string());
        async move {
            post(
                px.addr,
                &path,
                &[
                    ("Content-Type", "application/json"),
                    ("A2A-Version", "1.0"),
                    (name, &value),
                ],
                body.as_bytes(),
            )
            .await
        }
    };
    // A wrong token under the new name is refused; the right one taken.
    let r = push("A2A-Notification-Token", "wrong".into()).await;
    assert!(r.status >= 400, "{} {}", r.status, r.text());
    let r = push("A2A-Notification-Token", secret.clone()).await;
    assert!(r.status < 300, "{} {}", r.status, r.text());
    let end = Instant::now() + Duration::from_secs(10);
    while hook.recorded().is_empty() && Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let hooks = hook.recorded();
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0].header("x-a2a-notification-token"), Some("v03-tok"));
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untranslatable_card_gets_an_error_naming_the_member() {
    // `capabilities` not an object: the v1.0 card cannot be made.
    let bad_caps = CARD_V03.replace(
        r#""capabilities":{"streaming":true}"#,
        r#""capabilities":"AGENT-SECRET-BYTES""#,
    );
    let up = agent(&bad_caps).await;
    let px = proxy(&up, Some(Version::V03), |_| {});
    let r = px.card(&[("A2A-Version", "1.0")]).await;
    let text = r.text();
    assert!(r.status >= 400, "{text}");
    assert!(text.contains("`capabilities`"), "{text}");
    assert!(!text.contains("translation from"), "{text}");
    assert!(!text.contains("AGENT-SECRET-BYTES"), "{text}");
    // The hybrid card falls back to the shape that can be made.
    let r = px.card(&[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.json().get("supportedInterfaces").is_none());

    // An optional member that breaks translation is named, its value not.
    let long = "x".repeat(5000);
    let bad_scheme = CARD_V03.replace(
        r#"{"type":"apiKey","in":"header","name":"X-Key"}"#,
        &format!(r#"{{"type":"{long}","in":"header","name":"X-Key"}}"#),
    );
    let up = agent(&bad_scheme).await;
    let px = proxy(&up, Some(Version::V03), |_| {});
    let r = px.card(&[("A2A-Version", "1.0")]).await;
    let text = r.text();
    assert!(r.status >= 400, "{text}");
    assert!(text.contains("`securitySchemes`"), "{text}");
    assert!(!text.contains(&long[..100]) && text.len() < 1000, "{text}");

    // A v1.0 agent with only a gRPC interface: with the proxy's gRPC
    // listener a v0.3 card with that one alone (issue #37: the listener
    // translates), never the agent's address; without it nothing to serve.
    let grpc_only = r#"{"name":"fake","description":"d","version":"1","defaultInputModes":[],"defaultOutputModes":[],"supportedInterfaces":[{"url":"UP-GRPC","protocolBinding":"GRPC","protocolVersion":"1.0"}],"capabilities":{},"skills":[]}"#;
    let up = agent(grpc_only).await;
    let px = proxy(&up, Some(Version::V10), |_| {});
    let r = px.card(&[("A2A-Version", "0.3")]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let card = r.json();
    let grpc = format!("http://{}", px.grpc_host_port());
    assert_eq!(
        (card["url"].as_str(), card["preferredTransport"].as_str()),
        (Some(grpc.as_str()), Some("GRPC"))
    );
    assert_eq!(
        card["additionalInterfaces"],
        json!([{"url": grpc, "transport": "GRPC"}])
    );
    assert!(!r.text().contains("10.9.8.7"), "{}", r.text());
    drop(px);
    let px = proxy(&up, Some(Version::V10), |c| c.grpc_listen = None);
    let r = px.card(&[("A2A-Version", "0.3")]).await;
    let text = r.text();
    assert!(r.status >= 400, "{text}");
    assert!(
        text.contains("`supportedInterfaces`") && text.contains("interface"),
        "{text}"
    );
    assert!(!text.contains("translation from"), "{text}");
}

/// A fake agent serving `card` with a `Last-Modified` of its own.
async fn agent_last_modified(last_modified: &'static str) -> FakeUpstream {
    let host = Arc::new(OnceLock::<String>::new());
    let h = host.clone();
    let up = FakeUpstream::start(move |r| {
        if r.target.starts_with("/.well-known/") {
            let up = h.get().map(String::as_str).unwrap_or("?");
            let body = CARD_V03
                .replace("UP-GRPC", "10.9.8.7:50051")
                .replace("UP", up);
            Reply::Full {
                status: 200,
                headers: vec![
                    ("Content-Type".into(), "application/json".into()),
                    ("Last-Modified".into(), last_modified.into()),
                ],
                body: body.into_bytes(),
            }
        } else {
            Reply::json(200, "{}")
        }
    })
    .await;
    host.set(up.addr.to_string()).unwrap();
    up
}

/// CARD-CACHE-003 (issue #37 item 4): every card shape carries
/// `Last-Modified`, the agent's own when it sent a usable one (written as
/// the proxy writes dates, never its bytes), else when the proxy first held
/// the card: the same on a refetch of the same bytes, and on a 304.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cards_carry_last_modified() {
    let agents_own = "Sun, 06 Nov 1994 08:49:37 GMT";
    let up = agent_last_modified("Sunday, 06-Nov-94 08:49:37 GMT\r\nX-Evil: 1").await;
    let px = proxy(&up, None, |c| c.limits.card_default_ttl = Duration::ZERO);
    let first = px.card(&[]).await;
    let lm = first.header("last-modified").map(str::to_string);
    // Not the agent's (an obsolete form it may not send, with a CRLF): the
    // proxy's own time, in the IMF-fixdate form.
    let lm = lm.expect("Last-Modified");
    assert!(lm.ends_with(" GMT") && lm.len() == 29, "{lm}");
    for asked in [None, Some("0.3"), Some("1.0")] {
        let h: Vec<(&str, &str)> = asked.iter().map(|v| ("A2A-Version", *v)).collect();
        let again = px.card(&h).await;
        assert_eq!(
            again.header("last-modified"),
            Some(lm.as_str()),
            "{asked:?}"
        );
        let etag = again.header("etag").unwrap().to_string();
        let mut h = h.clone();
        h.push(("If-None-Match", &etag));
        let not_modified = px.card(&h).await;
        assert_eq!(not_modified.status, 304);
        assert_eq!(not_modified.header("last-modified"), Some(lm.as_str()));
    }
    drop(px);

    let up = agent_last_modified(agents_own).await;
    let px = proxy(&up, None, |_| {});
    assert_eq!(px.card(&[]).await.header("last-modified"), Some(agents_own));
    drop(px);

    // One in the future is not believed.
    let up = agent_last_modified("Fri, 01 Jan 2100 00:00:00 GMT").await;
    let px = proxy(&up, None, |_| {});
    let lm = px
        .card(&[])
        .await
        .header("last-modified")
        .map(str::to_string);
    assert!(lm.is_some_and(|l| !l.contains("2100")));
}
