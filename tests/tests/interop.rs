//! Interop through the proxy with the REAL Python A2A SDKs, JSON-RPC and
//! HTTP+JSON (REST) bindings, on 127.0.0.1: an SDK echo agent (`tests/sdk/agent_v*.py`), the in-process
//! proxy in front of it, an SDK client (`tests/sdk/client_v*.py`) driving
//! card discovery, send, stream, get, cancel, resubscribe, a follow-up in
//! the same context, parts of every kind with metadata echoed, ~100 KB bodies (blocking and
//! streamed), and two
//! expected errors (unknown task, cancel of a completed task).
//!
//! Every step's observation is checked, and every failing check of a run is
//! reported at once. The v1.x agent runs with the SDK's own v0.3
//! compatibility off and the v1.x client speaks only 1.0, so a cross-version
//! pair works only through the proxy's translation.

use std::time::{Duration, Instant};

use e2e::peer::{run_client_with, start_agent_with, ClientRun};
use proxy::config::{Config, UpstreamVersion};

#[macro_use]
mod support;

use support::scenario::{check_run, sdk, Binding, Sdk};

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

fn run_pair(
    client: Sdk,
    agent: Sdk,
    auto: bool,
    binding: Binding,
) -> (ClientRun, String, Duration) {
    let (args, env): (&[&str], &[(&str, &str)]) = match binding {
        Binding::JsonRpc => (&[], &[]),
        Binding::Rest => (&["--rest"], &[("A2A_BINDING", "HTTP+JSON")]),
    };
    let up = start_agent_with(&agent.python(), &agent.script("agent"), args, AGENT_START);
    let mut config = Config::new(e2e::free_local_addr().expect("port"), &up.url()).expect("config");
    config.threads = 1;
    config.upstream_version = if auto {
        UpstreamVersion::Auto
    } else {
        UpstreamVersion::Fixed(agent.version())
    };
    config.limits.read_timeout = Duration::from_secs(20);
    let px = proxy::start(config).expect("proxy");
    let started = Instant::now();
    let run = run_client_with(
        &client.python(),
        &client.script("client"),
        &px.url(),
        env,
        CLIENT_RUN,
    );
    let took = started.elapsed();
    (run, px.url(), took)
}

/// Parts of every kind and the message metadata, echoed back by the agent.
fn interop(client: Sdk, agent: Sdk, auto: bool) {
    interop_over(client, agent, auto, Binding::JsonRpc);
}

fn interop_over(client: Sdk, agent: Sdk, auto: bool, binding: Binding) {
    let mode = if auto { "auto" } else { "fixed" };
    let label = format!(
        "{client:?} client -> proxy (upstream version {mode}, {binding:?}) -> {agent:?} agent"
    );
    let (run, url, took) = run_pair(client, agent, auto, binding);
    check_run(&label, client, agent, binding, &run, &url, took);
}

/// JSON-RPC, the agent's version fixed in the config: translated across
/// versions, passed through within one.
fn jsonrpc(client: &str, agent: &str) {
    interop(sdk(client), sdk(agent), false);
}

/// HTTP+JSON: the agents serve REST beside JSON-RPC, the clients pick the
/// card's HTTP+JSON interface (the proxy advertises it, rewritten).
fn rest(client: &str, agent: &str) {
    interop_over(sdk(client), sdk(agent), true, Binding::Rest);
}

sdk_pairs! {
    jsonrpc,
    rest,
}

/// The default configuration: the proxy learns the agent's version from its card.
#[test]
fn v10_client_to_v03_agent_auto_version() {
    interop(Sdk::V10, Sdk::V03, true);
}

#[test]
fn v03_client_to_v10_agent_auto_version() {
    interop(Sdk::V03, Sdk::V10, true);
}
