//! `a2a-compat-proxy doctor` (issue #39 item 3), the binary run from
//! outside against running proxies: in front of the REAL a2a-sdk agents
//! (`tests/tck/sut_v03.py`, a2a-sdk 0.3; `tests/sdk/agent_v10.py --rest`,
//! a2a-sdk 1.x) every row of every binding and client version is ok, with
//! the config of proxy/README.md's example; in front of broken agents (a
//! wrong card, an https agent whose certificate is refused, a REST
//! interface that answers 404 to everything) those rows fail, saying why,
//! and the exit status is 1. Everything on 127.0.0.1; every wait bounded.

mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use proxy::config::{Config, RawConfig};
use proxy::grpc::GrpcServer;
use serde_json::{json, Value};
use support::sdk::SdkAgent;
use support::*;

/// The doctor's run: exit code, stdout.
fn doctor(args: &[&str]) -> (i32, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .arg("doctor")
        .args(args)
        .args(["--timeout-ms", "20000"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start doctor");
    let end = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        if std::time::Instant::now() > end {
            let _ = child.kill();
            panic!("doctor did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("doctor's output");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), format!("{text}{err}"))
}

/// proxy/README.md's doctor example config (the ```toml block whose first
/// line is `# doctor example`), its addresses replaced by `ports`.
fn readme_config(ports: &[(&str, String)]) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("proxy/README.md");
    let start = readme
        .find("```toml\n# doctor example")
        .expect("the doctor example in proxy/README.md");
    let block = &readme[start + "```toml\n".len()..];
    let mut block = block[..block.find("```").unwrap()].to_string();
    for (from, to) in ports {
        assert!(block.contains(from), "the example has no {from}");
        block = block.replace(from, to);
    }
    block
}

fn start_proxy(toml: &str) -> (proxy::RunningProxy, Vec<GrpcServer>) {
    let config =
        Config::resolve(RawConfig::from_toml(toml, "proxy.toml").expect("toml")).expect("config");
    let px = proxy::start(config).expect("proxy");
    let grpc = GrpcServer::start_all(&px.apps).expect("gRPC listeners");
    (px, grpc)
}

fn rows(json: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["rows"].as_array().cloned().unwrap_or_default()
}

fn row<'a>(rows: &'a [Value], agent: &str, binding: &str, client: &str) -> Option<&'a Value> {
    rows.iter()
        .find(|r| r["agent"] == agent && r["binding"] == binding && r["client"] == client)
}

#[test]
fn the_sdk_agents_pass_on_every_binding_and_version() {
    let v03 = SdkAgent::start(".venv-v03", "tests/tck/sut_v03.py", &[]);
    let v10 = SdkAgent::start(".venv-v10", "tests/sdk/agent_v10.py", &["--rest"]);
    let (http, grpc, grpc_echo) = (
        free_local_addr().unwrap(),
        free_local_addr().unwrap(),
        free_local_addr().unwrap(),
    );
    let toml = readme_config(&[
        ("127.0.0.1:8080", http.to_string()),
        ("127.0.0.1:8081", grpc.to_string()),
        ("127.0.0.1:8082", grpc_echo.to_string()),
        ("http://127.0.0.1:9001", v03.url()),
        ("http://127.0.0.1:9002", v10.url()),
    ]);
    let dir = support::tls::temp_dir("doctor");
    let file = dir.join("proxy.toml");
    std::fs::write(&file, &toml).unwrap();
    let (_px, _grpc) = start_proxy(&toml);
    let file = file.to_str().unwrap();

    // The table: every row ok, exit 0.
    let (code, out) = doctor(&["--config", file]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("AGENT"), "{out}");
    assert!(out.contains("doctor: all 16 checks ok"), "{out}");

    // --json: each agent, each client version, the card and the three
    // bindings, every one ok.
    let (code, out) = doctor(&["--config", file, "--json"]);
    assert_eq!(code, 0, "{out}");
    let all = rows(&out);
    assert_eq!(all.len(), 16, "{out}");
    for agent in ["tck", "echo"] {
        for client in ["0.3", "1.0"] {
            for binding in ["card", "JSONRPC", "HTTP+JSON", "GRPC"] {
                let r = row(&all, agent, binding, client)
                    .unwrap_or_else(|| panic!("no row {agent} {binding} {client}: {out}"));
                assert_eq!(r["ok"], true, "{r}");
            }
        }
    }
    assert!(
        row(&all, "tck", "JSONRPC", "1.0").unwrap()["detail"]
            .as_str()
            .unwrap()
            .contains("TaskNotFound"),
        "{out}"
    );

    // --send: a message to the skill each agent declares, every binding
    // and version answering a task.
    for (url, skill) in [
        (format!("http://{http}"), "tck"),
        (format!("http://{http}/echo"), "echo"),
    ] {
        let (code, out) = doctor(&["--url", &url, "--send", "--skill", skill, "--json"]);
        assert_eq!(code, 0, "{out}");
        let all = rows(&out);
        assert_eq!(all.len(), 8, "{out}");
        for r in all.iter().filter(|r| r["binding"] != "card") {
            let d = r["detail"].as_str().unwrap();
            assert!(d.contains(&format!("send to skill {skill}: a task")), "{r}");
        }
    }
    // No skill tagged `test` on these cards: --send alone fails, saying so.
    let (code, out) = doctor(&["--url", &format!("http://{http}"), "--send"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("declares no test skill"), "{out}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A v1.0 agent whose card lists JSON-RPC at `/` and HTTP+JSON under
/// `/rest`, whose JSON-RPC answers TaskNotFound and whose REST interface
/// answers 404 to everything (a framework's "Not Found").
async fn rest_404_agent() -> FakeUpstream {
    agent_with_card(
        |host| {
            json!({"name": "r", "version": "1", "description": "d",
                "capabilities": {}, "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
                "skills": [],
                "supportedInterfaces": [
                    {"url": format!("http://{host}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                    {"url": format!("http://{host}/rest"), "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}]})
            .to_string()
        },
        |r| {
            if r.target.starts_with("/rest") {
                return Reply::json(404, r#"{"detail":"Not Found"}"#);
            }
            let asked: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            Reply::json(
                200,
                &json!({"jsonrpc": "2.0", "id": asked["id"],
                    "error": {"code": -32001, "message": "Task not found",
                        "data": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                  "reason": "TASK_NOT_FOUND", "domain": "a2a-protocol.org"}]}})
                .to_string(),
            )
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_agents_fail_their_rows_saying_why() {
    // A v0.3 card without `url` (nothing to call, not translatable).
    let wrong = agent_with_card(
        |_| json!({"name": "w", "protocolVersion": "0.3.0", "skills": []}).to_string(),
        |_| Reply::json(500, "{}"),
    )
    .await;
    // An https agent (a proxy with TLS in front of a fake agent) whose
    // certificate no CA the proxy trusts signed.
    let ca = support::tls::TestCa::new();
    let dir = support::tls::temp_dir("doctor-tls");
    let leaf = ca.leaf(&dir, "agent");
    let behind = rest_404_agent().await;
    let mut tls_config = config_for(&behind.url(), proxy::version::Version::V10);
    tls_config.push.enabled = false;
    tls_config.tls = Some((leaf.cert_file.clone(), leaf.key_file.clone()));
    let tls_agent = proxy::start(tls_config).unwrap();
    let rest404 = rest_404_agent().await;
    let listen = free_local_addr().unwrap();
    let toml = format!(
        r#"listen = "{listen}"
threads = 1
[push]
enabled = false

[[agents]]
name = "wrongcard"
prefix = "/w"
[agents.upstream]
url = "{}"

[[agents]]
name = "tls"
prefix = "/t"
[agents.upstream]
url = "https://127.0.0.1:{}"
version = "1.0"

[[agents]]
name = "rest404"
prefix = "/r"
[agents.upstream]
url = "{}"
"#,
        wrong.url(),
        tls_agent.addr.port(),
        rest404.url()
    );
    let file = dir.join("broken.toml");
    std::fs::write(&file, &toml).unwrap();
    let (_px, _grpc) = start_proxy(&toml);
    let file = file.to_str().unwrap().to_string();
    let (code, out) = tokio::task::spawn_blocking(move || doctor(&["--config", &file, "--json"]))
        .await
        .unwrap();
    assert_eq!(code, 1, "{out}");
    let all = rows(&out);
    let failure = |agent: &str, binding: &str, client: &str| -> String {
        let r = row(&all, agent, binding, client)
            .unwrap_or_else(|| panic!("no row {agent} {binding} {client}: {out}"));
        assert_eq!(r["ok"], false, "{r}");
        r["detail"].as_str().unwrap().to_string()
    };
    // The wrong card: both versions' card rows, and nothing else of it.
    assert!(
        failure("wrongcard", "card", "0.3").contains("card"),
        "{out}"
    );
    let f = failure("wrongcard", "card", "1.0");
    assert!(f.contains("HTTP 500") && f.contains("`description`"), "{f}");
    assert!(
        failure("wrongcard", "card", "0.3").contains("without `description`"),
        "{out}"
    );
    assert_eq!(
        all.iter().filter(|r| r["agent"] == "wrongcard").count(),
        2,
        "{out}"
    );
    // TLS refused: the proxy says which agent, the card rows say it.
    for client in ["0.3", "1.0"] {
        let f = failure("tls", "card", client);
        assert!(f.contains("agent \"tls\" unavailable"), "{f}");
    }
    // The REST interface that 404s: the v1.0 client's REST row fails
    // (passed through: the agent's 404 is no TaskNotFound); JSON-RPC is ok.
    let f = failure("rest404", "HTTP+JSON", "1.0");
    assert!(
        f.contains("HTTP 404 without a v1.0 TaskNotFound body"),
        "{f}"
    );
    assert!(f.contains("Not Found"), "{f}");
    for client in ["0.3", "1.0"] {
        let r = row(&all, "rest404", "JSONRPC", client).unwrap();
        assert_eq!(r["ok"], true, "{r}");
    }
    drop(tls_agent);
    let _ = std::fs::remove_dir_all(dir);
}
