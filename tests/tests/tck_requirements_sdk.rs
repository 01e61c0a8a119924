//! What the A2A TCK asks of what the proxy answers itself, checked with the
//! real a2a-sdk 1.x (`tests/sdk/tck_requirements_client.py`) through the
//! proxy to the real a2a-sdk agents with security schemes of every kind
//! (`rest_card_agent_v03.py`, `rest_card_agent_v10.py`), issue #37 item 4:
//! the agent card's `Last-Modified` (CARD-CACHE-003), stable across
//! refetches; UNIMPLEMENTED for a gRPC call with an unsupported
//! `a2a-version`; ContentTypeNotSupported for a JSON-RPC body that is no
//! JSON and says it is `text/plain`; the header-less hybrid card: every
//! security scheme in its v1.0 form too (read by the SDK's own card
//! parser), and what remains without the v0.3-only members a valid v1.0
//! card (parsed strictly); the `A2A-Version: 1.0` card valid whole.

use std::time::Duration;

use e2e::peer::{run_client_with, start_grpc_agent, start_sdk_agent};
use e2e::sdk::{ensure_venvs, repo_root, sdk_script};
use serde_json::{json, Value};
use support::proxy_with_tables;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

/// The client's run through a proxy (HTTP and gRPC listeners, the card
/// refetched on every request) in front of `upstream` (its `[upstream]`
/// keys beside `url` in `upstream_keys`).
fn client_run(upstream: &str, upstream_keys: &str) -> e2e::peer::ClientRun {
    let addr = e2e::free_local_addr().expect("port");
    let g = e2e::free_local_addr().expect("port");
    // Under `[limits]`, where the tables start: Last-Modified must not move.
    let tables = format!(
        "card_default_ttl_secs = 0\n[grpc]\nlisten = \"{g}\"\n[upstream]\nurl = \"{upstream}\"\n{upstream_keys}"
    );
    let px = proxy_with_tables(addr, &tables);
    let grpc = proxy::grpc::GrpcServer::start_all(&px.apps).expect("gRPC listener");
    ensure_venvs();
    let run = run_client_with(
        &repo_root().join(".venv-grpc/bin/python"),
        &sdk_script("tck_requirements_client.py"),
        &px.url(),
        &[("A2A_GRPC", &g.to_string())],
        CLIENT_RUN,
    );
    drop(grpc);
    drop(px);
    run
}

/// The steps named `n` of `run`.
fn steps(run: &e2e::peer::ClientRun, n: &str) -> Vec<Value> {
    run.steps
        .iter()
        .filter(|s| s["step"] == n)
        .cloned()
        .collect()
}

/// The card's Last-Modified and the gRPC version status, checked into
/// `failed`.
fn card_and_version(run: &e2e::peer::ClientRun, failed: &mut Vec<String>) {
    let lm = steps(run, "last_modified");
    if lm.len() != 2 || lm.iter().any(|s| s["ok"] != true || s["etag"] != true) {
        failed.push(format!("Last-Modified: {lm:?}"));
    }
    let v = steps(run, "grpc_version");
    if v.first().map(|s| (&s["code"], &s["reason"]))
        != Some((&json!("UNIMPLEMENTED"), &json!("VERSION_NOT_SUPPORTED")))
    {
        failed.push(format!("gRPC a2a-version 99.0: {v:?}"));
    }
}

fn requirements_through_the_proxy(agent: &str) {
    let up = start_sdk_agent("rest_card_agent", agent, &[], AGENT_START);
    let run = client_run(&up.url(), "");
    let step = |n: &str| -> Vec<Value> {
        run.steps
            .iter()
            .filter(|s| s["step"] == n)
            .cloned()
            .collect()
    };
    let mut failed = Vec::new();
    card_and_version(&run, &mut failed);
    let ct = step("jsonrpc_content_type");
    if ct.first().map(|s| &s["codes"])
        != Some(&json!({"text/plain": -32005, "application/json": -32700}))
    {
        failed.push(format!("JSON-RPC body of another content type: {ct:?}"));
    }
    let h = step("hybrid_schemes");
    let want = json!({"bearer": ["httpAuthSecurityScheme"], "key": ["apiKeySecurityScheme"],
        "oauth": ["oauth2SecurityScheme"], "oidc": ["openIdConnectSecurityScheme"],
        "mtls": ["mtlsSecurityScheme"]});
    let want_req = json!([{"schemes": {"bearer": {}}},
        {"schemes": {"oauth": {"list": ["read"]}, "key": {}}}]);
    if h.first()
        .map(|s| (&s["schemes"], &s["without_v10_member"], &s["requirements"]))
        != Some((&want, &json!([]), &want_req))
    {
        failed.push(format!("hybrid card's security schemes: {h:?}"));
    }
    for name in ["hybrid_v10_members", "v10_card_strict"] {
        let s = step(name);
        if s.first().map(|s| &s["ok"]) != Some(&json!(true)) {
            failed.push(format!("{name}: {s:?}"));
        }
    }
    assert!(
        failed.is_empty(),
        "{agent} agent:\n{}\n--- client output:\n{}",
        failed.join("\n"),
        run.raw
    );
}

#[test]
fn tck_requirements_the_proxy_answers_in_front_of_a_v03_agent() {
    requirements_through_the_proxy("v03");
}

#[test]
fn tck_requirements_the_proxy_answers_in_front_of_a_v10_agent() {
    requirements_through_the_proxy("v10");
}

/// A v1.0 gRPC call to the proxy in front of the real a2a-sdk 1.x gRPC
/// server of the same version (raw passthrough through
/// `upstream.grpc_url`): the unsupported `a2a-version` is the proxy's to
/// refuse there too (a2a-sdk 1.x answers FAILED_PRECONDITION itself).
#[test]
fn tck_requirements_the_proxy_answers_in_passthrough_to_a_v10_grpc_agent() {
    let (_agent, g, c) = start_grpc_agent("1.0", &[], AGENT_START);
    let keys = format!("version = \"1.0\"\ngrpc_url = \"http://127.0.0.1:{g}\"\n");
    let run = client_run(&format!("http://127.0.0.1:{c}"), &keys);
    let mut failed = Vec::new();
    card_and_version(&run, &mut failed);
    assert!(
        failed.is_empty(),
        "{}\n--- client output:\n{}",
        failed.join("\n"),
        run.raw
    );
}
