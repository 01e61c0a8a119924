//! Several agents behind one proxy (issue #23) with the REAL Python A2A
//! SDKs: an SDK echo agent of each version (`tests/sdk/agent_v*.py`)
//! behind one in-process proxy, one routed by path prefix (`/p`), the
//! other by `Host` (`localhost`); each SDK client (`card_client_v*.py`,
//! a2a-sdk 0.3 and 1.x) reads each agent's card through the proxy (its
//! own agent's name, every URL at that agent's public base) and sends one
//! blocking JSON-RPC message that its agent echoes. Run both ways round:
//! the v0.3 agent by prefix and the v1.0 one by host, then swapped.

use std::time::Duration;

use e2e::peer::{run_card_client, run_client_with, start_sdk_agent};
use e2e::sdk::{python_v03, python_v10, repo_root, sdk_script};
use serde_json::{json, Value};
use support::{metrics_of, proxy_with_tables};

mod support;

const AGENT_START: Duration = Duration::from_secs(30);
const CLIENT_RUN: Duration = Duration::from_secs(60);

/// Every failed check of the two SDK clients against the agent named
/// `name` (`echo-v03` / `echo-v10`) at `base`.
fn check_agent_at(base: &str, name: &str) -> Vec<String> {
    let mut failed = Vec::new();
    let under_base = |u: &Value| {
        u.as_str()
            .is_some_and(|u| u == base || u.starts_with(&format!("{base}/")))
    };

    // a2a-sdk 0.3: the card's v0.3 members, then one call.
    let r = run_card_client("v03", base, CLIENT_RUN);
    if r.card["name"] != name
        || !under_base(&r.card["url"])
        || r.interfaces.iter().any(|i| !under_base(&i["url"]))
    {
        failed.push(format!(
            "v0.3 client at {base}: card {}\n{}",
            r.card, r.run.raw
        ));
    }
    if !r.echoed("v03") {
        failed.push(format!(
            "v0.3 client at {base}: send {}\n{}",
            r.send, r.run.raw
        ));
    }

    // a2a-sdk 1.x: a 1.0 JSON-RPC interface at this agent's base, used.
    let r = run_card_client("v10", base, CLIENT_RUN);
    if r.card["name"] != name
        || !r.has_v10_jsonrpc(|_| true)
        || r.interfaces.iter().any(|i| !under_base(&i["url"]))
    {
        failed.push(format!(
            "v1.x client at {base}: card {}\n{}",
            r.card, r.run.raw
        ));
    }
    if !r.echoed("v10") {
        failed.push(format!(
            "v1.x client at {base}: send {}\n{}",
            r.send, r.run.raw
        ));
    }
    failed
}

/// The agent of version `by_prefix` ("v03" / "v10") at `/p`, the other at
/// host `localhost`, both versions read from their cards.
fn two_sdk_agents(by_prefix: &str) {
    let by_host = if by_prefix == "v03" { "v10" } else { "v03" };
    let start = |v: &str| start_sdk_agent("agent", v, &[], AGENT_START);
    let (prefixed, hosted) = (start(by_prefix), start(by_host));
    let addr = e2e::free_local_addr().expect("port");
    let tables = format!(
        r#"[[agents]]
name = "prefixed"
prefix = "/p"
[agents.upstream]
url = "{}"
[[agents]]
name = "hosted"
hosts = ["localhost"]
[agents.upstream]
url = "{}"
"#,
        prefixed.url(),
        hosted.url()
    );
    let px = proxy_with_tables(addr, &tables);
    let mut failed = check_agent_at(&format!("http://{addr}/p"), &format!("echo-{by_prefix}"));
    failed.extend(check_agent_at(
        &format!("http://localhost:{}", addr.port()),
        &format!("echo-{by_host}"),
    ));
    // Each agent was asked only through its own route.
    let metrics = metrics_of(addr);
    for agent in ["prefixed", "hosted"] {
        let sends = format!("{{agent=\"{agent}\",method=\"SendMessage\"");
        if !metrics.contains(&sends) {
            failed.push(format!(
                "no SendMessage counted for agent {agent}:\n{metrics}"
            ));
        }
    }
    drop(px);
    assert!(
        failed.is_empty(),
        "{by_prefix} agent by prefix, {by_host} agent by host:\n{}",
        failed.join("\n")
    );
}

#[test]
fn sdk_clients_reach_a_v03_agent_by_prefix_and_a_v10_agent_by_host() {
    two_sdk_agents("v03");
}

#[test]
fn sdk_clients_reach_a_v10_agent_by_prefix_and_a_v03_agent_by_host() {
    two_sdk_agents("v10");
}

/// The whole SDK client scenario (card, send, stream, get, cancel,
/// resubscribe, follow-up, every part kind, big bodies, expected errors)
/// of both SDK clients on both bindings (JSON-RPC, HTTP+JSON), through
/// each route: the v0.3 agent by prefix, the v1.0 agent by host. Every
/// step must succeed.
#[test]
fn whole_sdk_scenarios_by_prefix_and_by_host_on_both_bindings() {
    whole_sdk_scenarios("agent", &["--rest"]);
}

/// The same with agents whose card puts JSON-RPC at `/jsonrpc` and
/// HTTP+JSON under `/rest` (`paths_agent_v*.py`): each interface is
/// served under the agent's prefix (or host) and its own path.
#[test]
fn whole_sdk_scenarios_with_interfaces_under_paths_by_prefix_and_by_host() {
    whole_sdk_scenarios("paths_agent", &[]);
}

/// The agents of `tests/sdk/{script}_v*.py` (started with `args`): the
/// v0.3 one by prefix, the v1.0 one by host; every client run checked.
fn whole_sdk_scenarios(script: &str, args: &[&str]) {
    let start = |v: &str| start_sdk_agent(script, v, args, AGENT_START);
    let (v03, v10) = (start("v03"), start("v10"));
    let addr = e2e::free_local_addr().expect("port");
    let tables = format!(
        r#"[[agents]]
name = "p"
prefix = "/agents/p"
[agents.upstream]
url = "{}"
version = "0.3"
[[agents]]
name = "h"
hosts = ["localhost"]
[agents.upstream]
url = "{}"
version = "1.0"
"#,
        v03.url(),
        v10.url()
    );
    let px = proxy_with_tables(addr, &tables);
    let mut failed = Vec::new();
    let bases = [
        format!("http://{addr}/agents/p"),
        format!("http://localhost:{}", addr.port()),
    ];
    for base in &bases {
        for binding in ["JSONRPC", "HTTP+JSON"] {
            for (client, python) in [("v03", python_v03()), ("v10", python_v10())] {
                let run = run_client_with(
                    &python,
                    &sdk_script(&format!("client_{client}.py")),
                    base,
                    &[("A2A_BINDING", binding)],
                    Duration::from_secs(90),
                );
                let bad: Vec<_> = run.steps.iter().filter(|s| s["ok"] != true).collect();
                if run.steps.len() < 10
                    || !bad.is_empty()
                    || run.status.is_none_or(|s| !s.success())
                {
                    failed.push(format!(
                        "{client} client, {binding}, at {base}: {} steps, failed {bad:?}\n{}",
                        run.steps.len(),
                        run.raw
                    ));
                }
            }
        }
    }
    // Both bindings reached each agent, each through its own route.
    let metrics = metrics_of(addr);
    for (agent, other_client) in [("p", "v10_v03"), ("h", "v03_v10")] {
        for binding in ["jsonrpc", "rest"] {
            let line = format!(
                "{{agent=\"{agent}\",method=\"SendMessage\",direction=\"{other_client}\",binding=\"{binding}\",outcome=\"ok\"}}"
            );
            if !metrics.contains(&line) {
                failed.push(format!("no {line} in\n{metrics}"));
            }
        }
    }
    drop(px);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

/// gRPC with several agents: the SDK echo agents of both versions behind
/// one shared gRPC listener (`grpc.listen`), each named by `hosts`; real
/// a2a-sdk gRPC clients (`grpc_authority_client.py`: the SDK 1.x
/// `GrpcTransport`, its bundled v0.3 stub) set the channel's authority to
/// an agent's host and reach that agent only (its card, its messages,
/// counted under its name); an authority of no agent's host is refused
/// with NOT_FOUND naming it.
#[test]
fn sdk_grpc_clients_reach_two_agents_behind_one_grpc_listener_by_authority() {
    let (v03, v10) = (
        start_sdk_agent("agent", "v03", &[], AGENT_START),
        start_sdk_agent("agent", "v10", &[], AGENT_START),
    );
    let python_grpc = repo_root().join(".venv-grpc/bin/python");
    let addr = e2e::free_local_addr().expect("port");
    let g = e2e::free_local_addr().expect("port");
    let tables = format!(
        r#"[grpc]
listen = "{g}"
[[agents]]
name = "old"
hosts = ["old.example"]
[agents.upstream]
url = "{}"
[[agents]]
name = "new"
hosts = ["new.example"]
[agents.upstream]
url = "{}"
"#,
        v03.url(),
        v10.url()
    );
    let px = proxy_with_tables(addr, &tables);
    let grpc = proxy::grpc::GrpcServer::start_all(&px.apps).expect("gRPC listener");
    assert_eq!(grpc.len(), 1, "one shared gRPC listener");
    let run = |authority: &str| {
        run_client_with(
            &python_grpc,
            &sdk_script("grpc_authority_client.py"),
            &g.to_string(),
            &[("A2A_AUTHORITY", authority)],
            CLIENT_RUN,
        )
    };
    let mut failed = Vec::new();
    for (host, name) in [("old.example", "echo-v03"), ("new.example", "echo-v10")] {
        let authority = format!("{host}:{}", g.port());
        let r = run(&authority);
        let card = r.step("v03 card").cloned().unwrap_or(Value::Null);
        let grpc_urls: Vec<&Value> = card["interfaces"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["transport"] == "GRPC")
            .map(|i| &i["url"])
            .collect();
        if card["ok"] != true
            || card["name"] != name
            || grpc_urls != [&json!(format!("http://{authority}"))]
        {
            failed.push(format!("{authority}: card {card}\n{}", r.raw));
        }
        for step in ["v10 send", "v03 send"] {
            let s = r.step(step).cloned().unwrap_or(Value::Null);
            if s["ok"] != true || s["artifacts"] != json!(["echo: hello"]) {
                failed.push(format!("{authority}: {step} {s}\n{}", r.raw));
            }
        }
    }
    // No agent's host: refused, naming the authority.
    let r = run("nobody.example:1");
    for step in ["v10 send", "v03 card", "v03 send"] {
        let s = r.step(step).cloned().unwrap_or(Value::Null);
        let named = s["message"]
            .as_str()
            .is_some_and(|m| m.contains("nobody.example:1"));
        if s["ok"] != false || s["code"] != "NOT_FOUND" || !named {
            failed.push(format!("nobody.example: {step} {s}\n{}", r.raw));
        }
    }
    // Each agent was asked through its own authority only: both sends of
    // each counted under its own name, in each direction.
    let metrics = metrics_of(addr);
    for (agent, directions) in [
        ("old", ["v03_v03", "v10_v03"]),
        ("new", ["v03_v10", "v10_v10"]),
    ] {
        for d in directions {
            let line = format!(
                "{{agent=\"{agent}\",method=\"SendMessage\",direction=\"{d}\",binding=\"grpc\",outcome=\"ok\"}} 1"
            );
            if !metrics.contains(&line) {
                failed.push(format!("no {line} in\n{metrics}"));
            }
        }
    }
    drop(grpc);
    drop(px);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
