//! The real a2a-sdk 0.3 REST client (`RestTransport`, `tests/sdk/
//! rest_card_client_v03.py`) through the proxy, to an a2a-sdk 1.x agent
//! (translated) and to an a2a-sdk 0.3 agent (passed through), both serving
//! HTTP+JSON with security schemes of every kind and an extended card
//! (issue #22 items 4 and 5):
//! - `GET /v1/card` parses with the client's `AgentCard.model_validate`
//!   and keeps the security requirements and every scheme's type (the
//!   proxy's v1.0 -> v0.3 card used to carry `security` in its ProtoJSON
//!   form, which that client refuses), and each of its security schemes
//!   also carries its ProtoJSON member, which a2a-js 0.3's REST client
//!   needs (a2a-sdk 0.3 agents write only the JSON-schema form);
//! - the real @a2a-js/sdk 0.3 REST client (`tests/sdk/js-v03/
//!   rest_card_client.mjs`, installed there by `npm install` when missing)
//!   parses the same `/v1/card` (it throws on a scheme without its
//!   ProtoJSON member, as a2a-sdk 0.3 agents write them) and sends;
//! - a `POST /v1/message:send` without `configuration` returns at once,
//!   as a2a-sdk 0.3's own REST server does (proto3 `blocking` is false),
//!   and the task still completes (the proxy used to let the v1.0 agent
//!   block until the task was done).

use std::time::Duration;

use e2e::peer::{run_client, start_sdk_agent, Child};
use e2e::sdk::{python_v03, repo_root, sdk_script};
use serde_json::{json, Value};
use support::auto_proxy;

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(60);
const NPM_INSTALL: Duration = Duration::from_secs(300);

/// `tests/sdk/js-v03` with @a2a-js/sdk 0.3 installed (`npm install` the
/// first time, bounded); panics when it cannot be.
fn js_v03_peers() -> std::path::PathBuf {
    // One installer at a time (the tests of this file run in parallel).
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo_root().join("tests/sdk/js-v03");
    if !dir.join("node_modules/@a2a-js/sdk/package.json").exists() {
        let mut npm = Child::spawn(
            "npm install",
            std::process::Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--no-package-lock"])
                .current_dir(&dir),
        );
        let status = npm.wait_timeout(NPM_INSTALL);
        assert!(
            status.is_some_and(|s| s.success()),
            "npm install in {} failed: {status:?}",
            dir.display()
        );
    }
    dir
}

/// Runs the v0.3 REST client through the proxy in front of the agent
/// `agent` ("v03" / "v10"); panics listing every failed check.
fn v03_rest_client_through_the_proxy(agent: &str) {
    let up = start_sdk_agent("rest_card_agent", agent, &[], AGENT_START);
    let px = auto_proxy(&up.url());
    let base = px.url();
    let run = run_client(
        &python_v03(),
        &sdk_script("rest_card_client_v03.py"),
        &base,
        CLIENT_RUN,
    );
    let step = |name: &str| run.step(name).cloned().unwrap_or(Value::Null);
    let mut failed = Vec::new();

    let card = step("card");
    if !card["rest_url"]
        .as_str()
        .is_some_and(|u| u.starts_with(&base))
        || card["extended"] != true
    {
        failed.push(format!("card: {card}"));
    }
    let ext = step("extended");
    let want_schemes = json!({"bearer": "http", "key": "apiKey", "oauth": "oauth2",
        "oidc": "openIdConnect", "mtls": "mutualTLS"});
    if ext["ok"] != true
        || ext["name"] != format!("secure-{agent}-extended")
        || ext["security"] != json!([{"bearer": []}, {"oauth": ["read"], "key": []}])
        || ext["schemes"] != want_schemes
        || ext["skills"] != json!(["echo-extended"])
        || ext["skill_security"] != json!([[{"oidc": ["openid"]}]])
    {
        failed.push(format!("extended card: {ext}"));
    }
    let forms = step("raw_card");
    let want_forms = json!({"bearer": ["httpAuthSecurityScheme"],
        "key": ["apiKeySecurityScheme"], "oauth": ["oauth2SecurityScheme"],
        "oidc": ["openIdConnectSecurityScheme"], "mtls": ["mtlsSecurityScheme"]});
    if forms["proto_forms"] != want_forms {
        failed.push(format!("ProtoJSON scheme forms on /v1/card: {forms}"));
    }
    let send = step("send");
    if send["state"] != "completed" || send["artifact_texts"] != json!(["echo: hello"]) {
        failed.push(format!("send: {send}"));
    }
    let no_config = step("no_config");
    let returned = no_config["state"].as_str().unwrap_or_default();
    if no_config["status"] != 200
        || !["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"].contains(&returned)
        || no_config["final"] != "completed"
    {
        failed.push(format!("send without configuration: {no_config}"));
    }

    // @a2a-js/sdk 0.3: the same card parses (each security requirement
    // reads as `{}` there: proxy/README.md, "The v0.3 REST card").
    let js = run_client(
        std::path::Path::new("node"),
        &js_v03_peers().join("rest_card_client.mjs"),
        &base,
        CLIENT_RUN,
    );
    let step = |name: &str| js.step(name).cloned().unwrap_or(Value::Null);
    let ext = step("extended");
    if ext["ok"] != true
        || ext["name"] != format!("secure-{agent}-extended")
        || ext["schemes"] != want_schemes
        || ext["security"].as_array().map(Vec::len) != Some(2)
        || ext["skills"] != json!(["echo-extended"])
    {
        failed.push(format!("a2a-js 0.3: extended card: {ext}"));
    }
    let send = step("send");
    if send["state"] != "completed" || send["artifact_texts"] != json!(["echo: hello"]) {
        failed.push(format!("a2a-js 0.3: send: {send}"));
    }
    assert!(
        failed.is_empty(),
        "{agent} agent:\n{}\n--- a2a-python client output:\n{}\n--- a2a-js client output:\n{}",
        failed.join("\n"),
        run.raw,
        js.raw
    );
}

#[test]
fn a2a_sdk_03_rest_client_through_the_proxy_to_a_v10_agent() {
    v03_rest_client_through_the_proxy("v10");
}

#[test]
fn a2a_sdk_03_rest_client_through_the_proxy_to_a_v03_agent() {
    v03_rest_client_through_the_proxy("v03");
}
