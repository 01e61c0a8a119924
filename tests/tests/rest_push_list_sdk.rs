//! The v1.0 REST push-config calls of the real a2a-sdk 1.x client
//! (`tests/sdk/push_list_client_v10.py`) and the real @a2a-js/sdk 1.x
//! client (`tests/sdk/js-v10/push_list_client.mjs`) through the proxy to
//! the real a2a-sdk 0.3.26 agent (`tests/sdk/agent_v03.py --push --rest
//! --jsonrpc-path /jsonrpc`: REST at its base URL, JSON-RPC at `/jsonrpc`),
//! issue #37 item 2:
//! - an agent whose REST binding answers the list as the v0.3 spec (§7.7)
//!   has it, a bare array of `{taskId, pushNotificationConfig}`
//!   (`--rest-push-list`): the proxy's v0.3 REST reader refused it
//!   (`unknown field taskId`) and both clients got InvalidAgentResponse;
//! - the stock agent, whose REST list is not implemented (500): the list
//!   is asked over its JSON-RPC binding at `/jsonrpc`;
//!
//! each with push interception off (as the TCK runs) and on (the
//! subscriber's own values listed back).

use std::time::Duration;

use e2e::peer::{run_client, start_sdk_agent, ClientRun};
use e2e::sdk::{js_peers, python_v10, sdk_script};
use proxy::config::{Config, RawConfig};
use proxy::RunningProxy;
use serde_json::{json, Value};
use support::auto_proxy;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);
const HOOK: &str = "https://hooks.example.com/a2a/";

/// A proxy with push interception on, its store in a fresh directory
/// under the target dir (removed by the caller).
fn push_proxy(upstream: &str, dir: &std::path::Path) -> RunningProxy {
    let addr = e2e::free_local_addr().expect("port");
    let toml = format!(
        "listen = \"{addr}\"\nthreads = 1\n[upstream]\nurl = \"{upstream}\"\n\
         [push]\ndata_dir = \"{}\"\n[limits]\nread_timeout_ms = 20000\n",
        dir.display()
    );
    let raw = RawConfig::from_toml(&toml, "push.toml").expect("toml");
    proxy::start(Config::resolve(raw).expect("config")).expect("proxy")
}

/// The checks of one client run; `get` whether `get c2` must succeed
/// (a2a-sdk 0.3 answers a get with the task's first config, so without
/// interception the proxy answers TaskNotFound for `c2`).
fn check(label: &str, run: &ClientRun, task_get: bool, failed: &mut Vec<String>) {
    let step = |name: &str| run.step(name).cloned().unwrap_or(Value::Null);
    let send = step("send");
    let task = send["task_id"].as_str().unwrap_or_default().to_string();
    let c1 = json!({"id": "c1", "task_id": task, "url": format!("{HOOK}c1"),
        "token": "tok-1", "auth": ["Bearer", "hook-secret"]});
    let c2 = json!({"id": "c2", "task_id": task, "url": format!("{HOOK}c2")});
    let want = [
        ("list", json!([c1, c2])),
        ("list after delete", json!([c2])),
    ];
    if send["ok"] != true {
        failed.push(format!("{label}: send: {send}"));
    }
    for (name, configs) in want {
        let got = step(name);
        if got["ok"] != true || got["configs"] != configs {
            failed.push(format!("{label}: {name}: {got}, want configs {configs}"));
        }
    }
    for name in ["create c1", "create c2", "delete c1"] {
        if step(name)["ok"] != true {
            failed.push(format!("{label}: {name}: {}", step(name)));
        }
    }
    if task_get && (step("get c2")["ok"] != true || step("get c2")["config"] != c2) {
        failed.push(format!("{label}: get c2: {}", step("get c2")));
    }
}

/// Both v1.0 REST clients through a proxy (interception on or off) in
/// front of the a2a-sdk 0.3 agent started with `agent_args`.
fn both_clients(agent_args: &[&str], intercept: bool) {
    let mut args = vec!["--push", "--rest", "--jsonrpc-path", "/jsonrpc"];
    args.extend_from_slice(agent_args);
    let up = start_sdk_agent("agent", "v03", &args, AGENT_START);
    let dir = std::env::temp_dir().join(format!(
        "a2a-e2e-push-list-{}-{}",
        std::process::id(),
        up.addr.port()
    ));
    let px = if intercept {
        push_proxy(&up.url(), &dir)
    } else {
        auto_proxy(&up.url())
    };
    let base = px.url();
    let mut failed = Vec::new();
    let py = run_client(
        &python_v10(),
        &sdk_script("push_list_client_v10.py"),
        &base,
        CLIENT_RUN,
    );
    check("a2a-sdk 1.x", &py, intercept, &mut failed);
    let js = run_client(
        std::path::Path::new("node"),
        &js_peers("js-v10").join("push_list_client.mjs"),
        &base,
        CLIENT_RUN,
    );
    check("a2a-js 1.x", &js, intercept, &mut failed);
    drop(px);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failed.is_empty(),
        "agent {agent_args:?}, interception {intercept}:\n{}\n--- a2a-sdk client:\n{}\n--- a2a-js client:\n{}",
        failed.join("\n"),
        py.raw,
        js.raw
    );
}

#[test]
fn a_spec_form_rest_list_of_a_v03_agent_reaches_v10_rest_clients() {
    both_clients(&["--rest-push-list"], false);
}

#[test]
fn a_spec_form_rest_list_of_a_v03_agent_reaches_v10_rest_clients_with_interception() {
    both_clients(&["--rest-push-list"], true);
}

#[test]
fn a_rest_list_the_v03_agent_lacks_is_asked_over_its_jsonrpc_path() {
    both_clients(&[], false);
}

#[test]
fn a_rest_list_the_v03_agent_lacks_is_asked_over_its_jsonrpc_path_with_interception() {
    both_clients(&[], true);
}
