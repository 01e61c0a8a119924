//! The header-less agent card (issue #22 item 1) read by the REAL Python
//! A2A SDKs through the proxy: an SDK echo agent of each version
//! (`tests/sdk/agent_v*.py`), the in-process proxy in front of it (agent
//! version read from its card), and for each SDK client
//! (`tests/sdk/card_client_v*.py`) a card fetch with no `A2A-Version` and
//! one blocking JSON-RPC message sent through a client built from that
//! card. The v0.3 client must still read the card's v0.3 members; the
//! v1.x client must find a 1.0 JSON-RPC interface in `supportedInterfaces`
//! and use it (its plain 1.0 transport, not the SDK's v0.3 fallback).

use std::time::Duration;

use e2e::peer::{run_client, start_agent};
use e2e::sdk::{python_v03, python_v10, repo_root};
use proxy::config::{Config, UpstreamVersion};
use serde_json::Value;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(60);

/// Runs both SDK clients against the agent `agent` ("v03" / "v10")
/// behind the proxy; panics listing every failed check.
fn clients_read_the_headerless_card(agent: &str) {
    let python = match agent {
        "v03" => python_v03(),
        _ => python_v10(),
    };
    let up = start_agent(
        &python,
        &repo_root().join(format!("tests/sdk/agent_{agent}.py")),
        AGENT_START,
    );
    let mut config =
        Config::new(proxy::free_local_addr().expect("port"), &up.url()).expect("config");
    config.threads = 1;
    config.upstream_version = UpstreamVersion::Auto;
    config.limits.read_timeout = Duration::from_secs(20);
    let px = proxy::start(config).expect("proxy");
    let base = px.url();
    let mut failed = Vec::new();

    // a2a-sdk 0.3: the v0.3 members, pointing at the proxy; the call works.
    let run = run_client(
        &python_v03(),
        &repo_root().join("tests/sdk/card_client_v03.py"),
        &base,
        CLIENT_RUN,
    );
    let card = run.step("card").cloned().unwrap_or(Value::Null);
    let send = run.step("send").cloned().unwrap_or(Value::Null);
    if !card["url"].as_str().is_some_and(|u| u.starts_with(&base))
        || card["preferred_transport"] != "JSONRPC"
        || !card["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("0.3"))
    {
        failed.push(format!("v0.3 client: card {card}"));
    }
    if send["ok"] != true
        || send["state"] != "completed"
        || send["artifact_texts"] != serde_json::json!(["echo: hello"])
    {
        failed.push(format!("v0.3 client: send {send}\n{}", run.raw));
    }

    // a2a-sdk 1.x: a 1.0 JSON-RPC interface at the proxy, chosen and used.
    let run = run_client(
        &python_v10(),
        &repo_root().join("tests/sdk/card_client_v10.py"),
        &base,
        CLIENT_RUN,
    );
    let card = run.step("card").cloned().unwrap_or(Value::Null);
    let send = run.step("send").cloned().unwrap_or(Value::Null);
    let ifaces = card["interfaces"].as_array().cloned().unwrap_or_default();
    let has_v10 = ifaces.iter().any(|i| {
        i["binding"] == "JSONRPC"
            && i["protocol_version"]
                .as_str()
                .is_some_and(|v| v.starts_with("1.0"))
            && i["url"].as_str().is_some_and(|u| u.starts_with(&base))
    });
    if !has_v10 {
        failed.push(format!("v1.x client: no 1.0 JSON-RPC interface in {card}"));
    }
    if ifaces
        .iter()
        .any(|i| !i["url"].as_str().is_some_and(|u| u.starts_with(&base)))
    {
        failed.push(format!(
            "v1.x client: an interface not the proxy's in {card}"
        ));
    }
    if send["ok"] != true
        || send["transport"] != "JsonRpcTransport"
        || send["state"] != "TASK_STATE_COMPLETED"
        || send["artifact_texts"] != serde_json::json!(["echo: hello"])
    {
        failed.push(format!("v1.x client: send {send}\n{}", run.raw));
    }
    assert!(failed.is_empty(), "{agent} agent:\n{}", failed.join("\n"));
}

#[test]
fn sdk_clients_read_the_headerless_card_of_a_v03_agent() {
    clients_read_the_headerless_card("v03");
}

#[test]
fn sdk_clients_read_the_headerless_card_of_a_v10_agent() {
    clients_read_the_headerless_card("v10");
}
