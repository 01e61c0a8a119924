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

use e2e::peer::{run_client_with, start_sdk_agent};
use e2e::sdk::{ensure_venvs, repo_root, sdk_script};
use serde_json::{json, Value};
use support::proxy_with_tables;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(90);

fn requirements_through_the_proxy(agent: &str) {
    let up = start_sdk_agent("rest_card_agent", agent, &[], AGENT_START);
    let addr = e2e::free_local_addr().expect("port");
    let g = e2e::free_local_addr().expect("port");
    // The card refetched on every request (under `[limits]`, where the
    // tables start): Last-Modified must not move.
    let tables = format!(
        "card_default_ttl_secs = 0\n[grpc]\nlisten = \"{g}\"\n[upstream]\nurl = \"{}\"\n",
        up.url()
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
    let step = |n: &str| -> Vec<Value> {
        run.steps
            .iter()
            .filter(|s| s["step"] == n)
            .cloned()
            .collect()
    };
    let mut failed = Vec::new();
    let lm = step("last_modified");
    if lm.len() != 2 || lm.iter().any(|s| s["ok"] != true || s["etag"] != true) {
        failed.push(format!("Last-Modified: {lm:?}"));
    }
    let v = step("grpc_version");
    if v.first().map(|s| (&s["code"], &s["reason"]))
        != Some((&json!("UNIMPLEMENTED"), &json!("VERSION_NOT_SUPPORTED")))
    {
        failed.push(format!("gRPC a2a-version 99.0: {v:?}"));
    }
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
