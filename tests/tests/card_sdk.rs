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

use e2e::peer::{run_card_client, start_sdk_agent};
use support::auto_proxy;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(60);

/// Runs both SDK clients against the agent `agent` ("v03" / "v10")
/// behind the proxy; panics listing every failed check.
fn clients_read_the_headerless_card(agent: &str) {
    let up = start_sdk_agent("agent", agent, &[], AGENT_START);
    let px = auto_proxy(&up.url());
    let base = px.url();
    let mut failed = Vec::new();

    // a2a-sdk 0.3: the v0.3 members, pointing at the proxy; the call works.
    let r = run_card_client("v03", &base, CLIENT_RUN);
    let card = &r.card;
    if !card["url"].as_str().is_some_and(|u| u.starts_with(&base))
        || card["preferred_transport"] != "JSONRPC"
        || !card["protocol_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("0.3"))
    {
        failed.push(format!("v0.3 client: card {card}"));
    }
    if !r.echoed("v03") {
        failed.push(format!("v0.3 client: send {}\n{}", r.send, r.run.raw));
    }

    // a2a-sdk 1.x: a 1.0 JSON-RPC interface at the proxy, chosen and used.
    let r = run_card_client("v10", &base, CLIENT_RUN);
    let card = &r.card;
    if !r.has_v10_jsonrpc(|u| u.starts_with(&base)) {
        failed.push(format!("v1.x client: no 1.0 JSON-RPC interface in {card}"));
    }
    if r.interfaces
        .iter()
        .any(|i| !i["url"].as_str().is_some_and(|u| u.starts_with(&base)))
    {
        failed.push(format!(
            "v1.x client: an interface not the proxy's in {card}"
        ));
    }
    if !r.echoed("v10") {
        failed.push(format!("v1.x client: send {}\n{}", r.send, r.run.raw));
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
