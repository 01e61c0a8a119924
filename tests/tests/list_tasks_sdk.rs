//! ListTasks of the real a2a-sdk 1.x client (`tests/sdk/
//! list_tasks_client_v10.py`) through the proxy to the real a2a-sdk 0.3
//! agent whose card lists only JSON-RPC (`agent_v03.py`, at `/` and at
//! `/jsonrpc`), issue #37 item 3: the page's tasks are fetched through an
//! interface the agent's card lists, whatever binding the list came in on.
//! Over HTTP+JSON (`GET /tasks`) they used to be fetched with `GET
//! /v1/tasks/{id}`, which the agent does not serve: the owner got
//! `{"tasks": [], "totalSize": 2}`. Another caller sees none of them.

use std::time::Duration;

use e2e::peer::{run_client, start_sdk_agent};
use e2e::sdk::{python_v10, sdk_script};
use serde_json::{json, Value};
use support::auto_proxy;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

fn list_over_both_bindings(agent_args: &[&str]) {
    let up = start_sdk_agent("agent", "v03", agent_args, AGENT_START);
    let px = auto_proxy(&up.url());
    let run = run_client(
        &python_v10(),
        &sdk_script("list_tasks_client_v10.py"),
        &px.url(),
        CLIENT_RUN,
    );
    let step = |n: &str| run.step(n).cloned().unwrap_or(Value::Null);
    let mut failed = Vec::new();
    if step("card")["bindings"] != json!(["JSONRPC"]) {
        failed.push(format!(
            "the card should list JSON-RPC only: {}",
            step("card")
        ));
    }
    let sent = step("send")["task_ids"].clone();
    if sent.as_array().map(Vec::len) != Some(2) {
        failed.push(format!("send: {}", step("send")));
    }
    for name in ["list jsonrpc", "list rest"] {
        let got = step(name);
        if got["ok"] != true || got["task_ids"] != sent || got["total_size"] != 2 {
            failed.push(format!("{name}: {got}, want tasks {sent} and totalSize 2"));
        }
    }
    let other = step("list rest other caller");
    if other["ok"] != true || other["task_ids"] != json!([]) || other["total_size"] != 0 {
        failed.push(format!("another caller: {other}"));
    }
    assert!(
        failed.is_empty(),
        "agent {agent_args:?}:\n{}\n--- client output:\n{}",
        failed.join("\n"),
        run.raw
    );
}

#[test]
fn v10_rest_list_tasks_of_a_jsonrpc_only_v03_agent() {
    list_over_both_bindings(&[]);
}

#[test]
fn v10_rest_list_tasks_of_a_v03_agent_with_jsonrpc_under_a_path() {
    list_over_both_bindings(&["--jsonrpc-path", "/jsonrpc"]);
}
