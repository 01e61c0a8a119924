//! A2A versions read as "0.3 and 1.N", end to end on 127.0.0.1: fake
//! agents whose cards declare 1.0 or 1.1, the in-process proxy, a raw
//! HTTP/1.1 client. Same-family 1.N traffic passes through untouched (1.1
//! members such as `generation` kept) with the client's own `A2A-Version`;
//! a 1.N newer than what the agent serves is VersionNotSupported (or passes
//! with `versions.newer_minor = "passthrough"`); a v0.3 client of a 1.1
//! agent is served by talking 1.0 to it; -32010 reaches v0.3 clients as
//! the code table says.

mod support;

use proxy::config::NewerMinor;
use proxy::config::{Config, UpstreamVersion};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::*;

/// A 1.1 agent's card: its interfaces declare 1.1.
const CARD_V11: &str = r#"{"name":"fake","description":"a 1.1 agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.1"},{"url":"http://UP","protocolBinding":"HTTP+JSON","protocolVersion":"1.1"}],"capabilities":{"streaming":true},"skills":[]}"#;

/// A 1.0 agent's card.
const CARD_V10: &str = r#"{"name":"fake","description":"a 1.0 agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"supportedInterfaces":[{"url":"http://UP/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"},{"url":"http://UP","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"capabilities":{"streaming":true},"skills":[]}"#;

/// A v0.3 agent's card.
const CARD_V03: &str = r#"{"name":"fake","description":"a 0.3 agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/rpc","preferredTransport":"JSONRPC","capabilities":{"streaming":true},"skills":[]}"#;

/// A fake agent serving `card` (its `UP` replaced by its own address) and
/// answering everything else with `f`.
async fn agent(
    card: &'static str,
    f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> FakeUpstream {
    agent_with_card(move |me| card.replace("UP", me), f).await
}

/// A proxy reading the agent's version from its card.
fn proxy_for(upstream: &str, tweak: impl FnOnce(&mut Config)) -> RunningProxy {
    let addr = support::free_local_addr().unwrap();
    let mut config = Config::new(addr, upstream).unwrap();
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Auto;
    tweak(&mut config);
    proxy::start(config).unwrap()
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_one_client_of_a_one_one_agent_passes_through_untouched() {
    // Odd spacing and 1.1 members: any re-serialisation would show.
    let answer = "{ \"jsonrpc\":\"2.0\",\"id\":1, \"result\":{\"task\":{\"id\":\"t1\",\"contextId\":\"c1\",\"generation\":\"4\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}";
    let rest_answer =
        "{\"id\":\"t1\", \"generation\":\"5\",\"status\":{\"state\":\"TASK_STATE_COMPLETED\"}}";
    let up = agent(CARD_V11, move |r| {
        if r.method == "GET" {
            Reply::json(200, rest_answer)
        } else {
            Reply::json(200, answer)
        }
    })
    .await;
    let px = proxy_for(&up.url(), |_| {});

    // JSON-RPC, with 1.1's ifGenerationMatch.
    let sent = br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"t1","parts":[{"text":"hi"}]},"configuration":{"ifGenerationMatch":"3"}}}"#;
    let r = post(px.addr, "/rpc", &[("A2A-Version", "1.1"), JSON], sent).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, answer.as_bytes());
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].body, sent);
    assert_eq!(calls[0].header("a2a-version"), Some("1.1"));

    // REST long-poll GetTask (1.1's currentGeneration), by query parameter.
    let r = get(
        px.addr,
        "/tasks/t1?currentGeneration=3&A2A-Version=1.1",
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, rest_answer.as_bytes());
    let calls = up.calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(
        calls[1].target,
        "/tasks/t1?currentGeneration=3&A2A-Version=1.1"
    );
    assert_eq!(calls[1].header("a2a-version"), Some("1.1"));

    // An earlier minor (1.0.2 is 1.0) of the 1.1 agent passes as 1.0.
    let sent10 = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}"#;
    let r = post(px.addr, "/rpc", &[("A2A-Version", "1.0.2"), JSON], sent10).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, answer.as_bytes());
    let calls = up.calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[2].body, sent10);
    assert_eq!(calls[2].header("a2a-version"), Some("1.0"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_one_agents_card_is_read_as_one_n() {
    let up = agent(CARD_V11, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), |_| {});
    let me = format!("http://{}", px.addr);

    // To a 1.1 client: the agent's card, its URLs pointing here.
    let card = card_as(px.addr, "/.well-known/agent-card.json", "1.1").await;
    let ifaces = card["supportedInterfaces"].as_array().unwrap();
    assert!(!ifaces.is_empty(), "{card}");
    for i in ifaces {
        assert_eq!(i["protocolVersion"], "1.1", "{card}");
        assert!(i["url"].as_str().unwrap().starts_with(&me), "{card}");
    }
    assert_eq!(card["description"], "a 1.1 agent");

    // To a v0.3 client: translated as from any 1.x card.
    let card = card_as(px.addr, "/.well-known/agent-card.json", "0.3").await;
    assert!(card.get("supportedInterfaces").is_none(), "{card}");
    assert_eq!(card["protocolVersion"], "0.3.0", "{card}");
    assert_eq!(card["url"], format!("{me}/rpc"), "{card}");

    // The proxy takes the agent for a 1.1 upstream: a 1.1 call passes.
    let r = post(
        px.addr,
        "/rpc",
        &[("A2A-Version", "1.1"), JSON],
        br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, b"{}");
}

/// The JSON-RPC VersionNotSupported a 1.1 call gets, and its ErrorInfo.
fn refused(r: &Response) -> Value {
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["code"], -32009, "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("1.1 is not supported by this agent"), "{msg}");
    let info = v["error"]["data"][0].clone();
    assert_eq!(info["reason"], "VERSION_NOT_SUPPORTED", "{v}");
    assert_eq!(info["metadata"]["requestedVersion"], "1.1", "{v}");
    info
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_one_client_of_a_one_zero_agent_is_refused_unless_configured() {
    let answer = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1"}}}"#;
    let sent = br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}"#;
    let up = agent(CARD_V10, move |_| Reply::json(200, answer)).await;

    let px = proxy_for(&up.url(), |_| {});
    let r = post(px.addr, "/rpc", &[("A2A-Version", "1.1"), JSON], sent).await;
    let info = refused(&r);
    assert_eq!(info["metadata"]["supportedVersions"], "0.3,1.0");
    // REST, in its own shape.
    let r = get(px.addr, "/tasks/t1", &[("A2A-Version", "1.1")]).await;
    assert_eq!(r.status, 400, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["status"], "FAILED_PRECONDITION", "{v}");
    assert_eq!(v["error"]["details"][0]["reason"], "VERSION_NOT_SUPPORTED");
    assert_eq!(
        v["error"]["details"][0]["metadata"]["supportedVersions"],
        "0.3,1.0"
    );
    // The agent saw none of it; 1.0 still passes.
    assert!(up.calls().is_empty(), "{:?}", up.calls());
    let r = post(px.addr, "/rpc", &[("A2A-Version", "1.0"), JSON], sent).await;
    assert_eq!(r.body, answer.as_bytes());
    drop(px);

    // versions.newer_minor = "passthrough": on to the agent untouched,
    // under the client's own A2A-Version (the agent decides).
    let px = proxy_for(&up.url(), |c| c.newer_minor = NewerMinor::Passthrough);
    let before = up.calls().len();
    let r = post(px.addr, "/rpc", &[("A2A-Version", "1.1"), JSON], sent).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.body, answer.as_bytes());
    let calls = up.calls();
    assert_eq!(calls.len(), before + 1, "{calls:?}");
    assert_eq!(calls[before].body, sent);
    assert_eq!(calls[before].header("a2a-version"), Some("1.1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_one_client_of_a_v03_agent_is_refused() {
    // The proxy serves a v0.3 agent as 1.0 (translation): 1.1 is refused.
    let up = agent(CARD_V03, |_| Reply::json(200, "{}")).await;
    let px = proxy_for(&up.url(), |_| {});
    let r = post(
        px.addr,
        "/rpc",
        &[("A2A-Version", "1.1"), JSON],
        br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t1"}}"#,
    )
    .await;
    let info = refused(&r);
    assert_eq!(info["metadata"]["supportedVersions"], "0.3,1.0");
    assert!(up.calls().is_empty(), "{:?}", up.calls());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v03_client_of_a_one_one_agent_is_served_in_one_zero() {
    let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","generation":"4","status":{"state":"TASK_STATE_WORKING"}}}}"#;
    // 1.1's TaskGenerationMismatchError (spec 1.1 §11.6's example).
    let mismatch = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32010,"message":"Task generation mismatch: expected 3 but current generation is 5","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_GENERATION_MISMATCH","domain":"a2a-protocol.org","metadata":{"taskId":"t1","expectedGeneration":"3","currentGeneration":"5"}}]}}"#;
    let rest_mismatch = r#"{"error":{"code":409,"status":"ABORTED","message":"Task generation mismatch","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"TASK_GENERATION_MISMATCH","domain":"a2a-protocol.org","metadata":{"taskId":"t1","expectedGeneration":"3","currentGeneration":"5"}}]}}"#;
    let up = agent(CARD_V11, move |r| {
        let body = String::from_utf8_lossy(&r.body);
        if r.target == "/message:send" {
            Reply::json(409, rest_mismatch)
        } else if body.contains("ifGenerationMatch") {
            Reply::json(200, mismatch)
        } else {
            Reply::json(200, ok)
        }
    })
    .await;
    let px = proxy_for(&up.url(), |_| {});

    // A v0.3 call: translated, and the agent is spoken to in 1.0.
    let r = post(
        px.addr,
        "/rpc",
        &[JSON],
        br#"{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["result"]["kind"], "task", "{v}");
    assert_eq!(v["result"]["status"]["state"], "working", "{v}");
    let calls = up.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].header("a2a-version"), Some("1.0"));
    let sent: Value = serde_json::from_slice(&calls[0].body).unwrap();
    assert_eq!(sent["method"], "SendMessage", "{sent}");

    // -32010 from the agent: the code as it is, its metadata as v0.3 data
    // (code LOSSY row, fixture error/task-generation-mismatch.to-v03.json).
    let r = post(
        px.addr,
        "/rpc",
        &[JSON],
        br#"{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","taskId":"t1","parts":[{"kind":"text","text":"again"}]},"configuration":{"ifGenerationMatch":"3"}}}"#,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"jsonrpc":"2.0","id":2,"error":{"code":-32010,"message":"Task generation mismatch: expected 3 but current generation is 5","data":{"taskId":"t1","expectedGeneration":"3","currentGeneration":"5"}}})
    );
    let calls = up.calls();
    assert_eq!(calls[1].header("a2a-version"), Some("1.0"));

    // The same over v0.3 REST: 409 with the code (v0.3 REST bodies are
    // {code, message}).
    let r = post(
        px.addr,
        "/v1/message:send",
        &[JSON],
        br#"{"message":{"messageId":"m3","role":"ROLE_USER","taskId":"t1","content":[{"text":"again"}]}}"#,
    )
    .await;
    assert_eq!(r.status, 409, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"code":-32010,"message":"Task generation mismatch"})
    );
    let calls = up.calls();
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert_eq!(calls[2].target, "/message:send");
    assert_eq!(calls[2].header("a2a-version"), Some("1.0"));
}
