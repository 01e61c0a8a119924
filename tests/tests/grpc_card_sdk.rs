//! The card of the real a2a-sdk 0.3 gRPC client (`GrpcTransport`,
//! `tests/sdk/grpc_card_client_v03.py`) through the proxy's gRPC listener,
//! issue #37 item 1. The client asks `GetAgentCard` when the card says
//! `supportsAuthenticatedExtendedCard`; the proxy's v0.3 card RPC follows
//! v1.0's `GetExtendedAgentCard` rule: a caller sending `authorization`
//! metadata gets the agent's extended card (its extra skill) in v0.3 shape,
//! an anonymous one the public card. On all four paths:
//! - a v0.3 and a v1.0 agent bridged to JSON-RPC (`rest_card_agent_v03.py`,
//!   `rest_card_agent_v10.py`, both with an extended card);
//! - the real a2a-sdk 1.x gRPC servers of both versions through
//!   `upstream.grpc_url` (`grpc_agent.py --extended`; its v0.3
//!   `GetAgentCard` answers the extended card).
//!
//! The proxy used to answer every caller the public card.

use std::time::Duration;

use e2e::peer::{run_client, start_grpc_agent, start_sdk_agent};
use e2e::sdk::{repo_root, sdk_script};
use serde_json::{json, Value};
use support::proxy_with_tables;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

/// A proxy (HTTP and gRPC listeners) in front of `upstream` (extra
/// `[upstream]` keys in `upstream_keys`), and the v0.3 card client's run
/// through it.
fn client_through_proxy(
    upstream: &str,
    upstream_keys: &str,
) -> (e2e::peer::ClientRun, [String; 2]) {
    let addr = e2e::free_local_addr().expect("port");
    let g = e2e::free_local_addr().expect("port");
    let tables =
        format!("[grpc]\nlisten = \"{g}\"\n[upstream]\nurl = \"{upstream}\"\n{upstream_keys}");
    let px = proxy_with_tables(addr, &tables);
    let grpc = proxy::grpc::GrpcServer::start_all(&px.apps).expect("gRPC listener");
    let base = px.url();
    let run = run_client(
        &repo_root().join(".venv-v03-grpc/bin/python"),
        &sdk_script("grpc_card_client_v03.py"),
        &base,
        CLIENT_RUN,
    );
    drop(grpc);
    drop(px);
    (run, [addr.to_string(), g.to_string()])
}

/// The anonymous client got the public card `public`, the authorized one
/// the extended card `extended` with the extra skill, its URL one of the
/// proxy's (`listeners`: its HTTP and gRPC `host:port`).
fn assert_cards(
    label: &str,
    (run, listeners): &(e2e::peer::ClientRun, [String; 2]),
    public: &str,
    extended: &str,
) {
    let step = |n: &str| run.step(n).cloned().unwrap_or(Value::Null);
    let mut failed = Vec::new();
    let p = step("public");
    if p["ok"] != true || p["extended"] != true || p["name"] != public {
        failed.push(format!("public card over HTTP: {p}"));
    }
    let anon = step("anonymous");
    if anon["ok"] != true || anon["name"] != public || anon["skills"] != json!(["echo"]) {
        failed.push(format!(
            "anonymous GetAgentCard: {anon}, want the public card {public}"
        ));
    }
    let auth = step("authorized");
    let skills = auth["skills"].as_array().cloned().unwrap_or_default();
    let proxys = auth["url"].as_str().is_some_and(|u| {
        listeners
            .iter()
            .any(|l| u.trim_start_matches("http://").trim_end_matches('/') == l)
    });
    if auth["ok"] != true
        || auth["name"] != extended
        || !skills.contains(&json!("echo-extended"))
        || !proxys
    {
        failed.push(format!(
            "authorized GetAgentCard: {auth}, want the extended card {extended}"
        ));
    }
    if step("send")["ok"] != true {
        failed.push(format!("send after the card: {}", step("send")));
    }
    assert!(
        failed.is_empty(),
        "{label}:\n{}\n--- client output:\n{}",
        failed.join("\n"),
        run.raw
    );
}

#[test]
fn v03_grpc_card_of_a_v03_jsonrpc_agent() {
    let up = start_sdk_agent("rest_card_agent", "v03", &[], AGENT_START);
    let run = client_through_proxy(&up.url(), "");
    assert_cards(
        "v0.3 agent, bridged",
        &run,
        "secure-v03",
        "secure-v03-extended",
    );
}

#[test]
fn v03_grpc_card_of_a_v10_jsonrpc_agent() {
    let up = start_sdk_agent("rest_card_agent", "v10", &[], AGENT_START);
    let run = client_through_proxy(&up.url(), "");
    assert_cards(
        "v1.0 agent, bridged",
        &run,
        "secure-v10",
        "secure-v10-extended",
    );
}

#[test]
fn v03_grpc_card_of_a_v03_grpc_agent() {
    let (_agent, g, c) = start_grpc_agent("0.3", &["--extended"], AGENT_START);
    let keys = format!("version = \"0.3\"\ngrpc_url = \"http://127.0.0.1:{g}\"\n");
    let run = client_through_proxy(&format!("http://127.0.0.1:{c}"), &keys);
    assert_cards(
        "v0.3 gRPC agent",
        &run,
        "grpc-echo-0.3",
        "grpc-echo-0.3-extended",
    );
}

#[test]
fn v03_grpc_card_of_a_v10_grpc_agent() {
    let (_agent, g, c) = start_grpc_agent("1.0", &["--extended"], AGENT_START);
    let keys = format!("version = \"1.0\"\ngrpc_url = \"http://127.0.0.1:{g}\"\n");
    let run = client_through_proxy(&format!("http://127.0.0.1:{c}"), &keys);
    assert_cards(
        "v1.0 gRPC agent",
        &run,
        "grpc-echo-1.0",
        "grpc-echo-1.0-extended",
    );
}
