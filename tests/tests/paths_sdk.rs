//! Each binding where the agent's card puts it (issue #23), with the REAL
//! Python A2A SDKs on 127.0.0.1: agents serving JSON-RPC at `/jsonrpc` and
//! HTTP+JSON under `/rest` (`tests/sdk/paths_agent_v*.py`, the echo
//! agents of `agent_v*.py`), the in-process proxy in front (upstream
//! version read from the card), and the SDK clients of `interop.rs`
//! (`client_v*.py`: card discovery, send, stream, get, cancel,
//! resubscribe, follow-up, parts, big bodies, expected errors) following
//! the interface the proxy's card gives for their binding. Each run checks
//! every step, and that the interface the client used is the proxy's,
//! under the agent's own path.

use std::time::Duration;

use e2e::peer::{run_client_with, start_sdk_agent, ClientRun, CLIENT_STEPS};
use e2e::sdk::{python, sdk_script};
use serde_json::Value;
use support::{assert_run_passed, auto_proxy};

#[macro_use]
mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

/// Runs the `client` SDK ("v03" / "v10") over `binding` ("JSONRPC" /
/// "HTTP+JSON") through the proxy in front of the `agent` SDK's agent
/// with its bindings under paths; returns the run and the proxy's URL.
fn run(client: &str, agent: &str, binding: &str) -> (ClientRun, String) {
    let up = start_sdk_agent("paths_agent", agent, &[], AGENT_START);
    let px = auto_proxy(&up.url());
    let run = run_client_with(
        &python(client),
        &sdk_script(&format!("client_{client}.py")),
        &px.url(),
        &[("A2A_BINDING", binding)],
        CLIENT_RUN,
    );
    drop(up);
    (run, px.url())
}

/// Every step passed, and the card's interface for `binding` is the
/// proxy's at the agent's path for it.
fn check(label: &str, client: &str, binding: &str, run: &ClientRun, proxy_url: &str) {
    let mut failed = Vec::new();
    for name in CLIENT_STEPS {
        let s = run.step(name).cloned().unwrap_or(Value::Null);
        if s["ok"] != true {
            failed.push(format!("{name}: not ok: {s}"));
        }
    }
    let path = if binding == "JSONRPC" {
        "jsonrpc"
    } else {
        "rest"
    };
    let want = format!("{proxy_url}/{path}");
    let card = run.step("card").cloned().unwrap_or(Value::Null);
    let ifaces = card["interfaces"].as_array().cloned().unwrap_or_default();
    let listed = ifaces.iter().any(|i| i["url"] == want.as_str());
    let primary = client == "v03" && binding == "JSONRPC" && card["url"] == want.as_str();
    if !(listed || primary) {
        failed.push(format!("card: no {binding} interface at {want}: {card}"));
    }
    assert_run_passed(label, failed, run);
}

fn pair(client: &str, agent: &str, binding: &str) {
    let label =
        format!("{client} client ({binding}) -> proxy -> {agent} agent under /jsonrpc and /rest");
    let (run, url) = run(client, agent, binding);
    check(&label, client, binding, &run, &url);
}

/// JSON-RPC at the agent's `/jsonrpc`: translated across versions,
/// passed through within one.
fn jsonrpc(client: &str, agent: &str) {
    pair(client, agent, "JSONRPC");
}

/// HTTP+JSON under the agent's `/rest`. The case is
/// `rest::v10_client_v03_agent`: a v0.3 agent with REST under `/rest` and
/// JSON-RPC under `/jsonrpc`, translated for the a2a-sdk 1.x REST client.
fn rest(client: &str, agent: &str) {
    pair(client, agent, "HTTP+JSON");
}

sdk_pairs! {
    jsonrpc,
    rest,
}
