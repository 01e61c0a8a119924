//! The README's first command: the built-in v0.3 echo agent behind the proxy,
//! driven as a v1.0 client and as a v0.3 client over real 127.0.0.1 sockets.

mod support;

use proxy::config::Config;
use serde_json::json;
use support::*;

#[tokio::test]
async fn demo_echo_agent_answers_v10_and_v03_clients() {
    let agent = proxy::demo::start_echo_agent().expect("echo agent");
    let config = Config::new(
        proxy::free_local_addr().expect("port"),
        &format!("http://{agent}"),
    )
    .expect("config");
    let running = proxy::start(config).expect("proxy");
    let addr = running.addr;

    // v1.0 client: SendMessage is translated to message/send and the Task back.
    let body = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
        "messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}});
    let resp = post(
        addr,
        "/",
        &[("A2A-Version", "1.0"), ("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let v = resp.json();
    let task = &v["result"]["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{v}");
    assert_eq!(
        task["artifacts"][0]["parts"][0],
        json!({"text": "echo: hello"})
    );
    let task_id = task["id"].as_str().expect("task id").to_string();

    // v1.0 GetTask of the same task.
    let body = json!({"jsonrpc":"2.0","id":"g","method":"GetTask","params":{"id": task_id}});
    let v = post(
        addr,
        "/",
        &[("A2A-Version", "1.0")],
        body.to_string().as_bytes(),
    )
    .await
    .json();
    assert_eq!(v["id"], "g");
    assert_eq!(v["result"]["id"], task_id.as_str());

    // v1.0 CancelTask of a completed task: the agent's v0.3 error, in v1.0 shape.
    let body = json!({"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id": task_id}});
    let v = post(
        addr,
        "/",
        &[("A2A-Version", "1.0")],
        body.to_string().as_bytes(),
    )
    .await
    .json();
    assert_eq!(v["error"]["code"], -32002, "{v}");

    // v0.3 client: passed through, v0.3 shapes.
    let body = json!({"jsonrpc":"2.0","id":3,"method":"message/send","params":{"message":{
        "kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"old"}]}}});
    let v = post(addr, "/", &[], body.to_string().as_bytes())
        .await
        .json();
    assert_eq!(v["result"]["kind"], "task", "{v}");
    assert_eq!(v["result"]["status"]["state"], "completed");

    // Agent card in the v1.0 shape, pointing at the proxy.
    let v = get(
        addr,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await
    .json();
    assert_eq!(
        v["supportedInterfaces"][0]["url"],
        format!("http://{addr}/"),
        "{v}"
    );
}

#[tokio::test]
async fn check_upstream_reports_the_echo_agent_and_a_dead_one() {
    let agent = proxy::demo::start_echo_agent().expect("echo agent");
    let config = Config::new(
        proxy::free_local_addr().expect("port"),
        &format!("http://{agent}"),
    )
    .expect("config");
    let app = proxy::app::App::new(config);
    let (ok, report) = proxy::check_cmd::report(&app).await;
    assert!(ok, "{report}");
    assert_eq!(report["card_version"], "0.3");
    assert_eq!(report["clients"]["0.3"]["mode"], "passthrough");
    assert_eq!(report["clients"]["1.0"]["mode"], "translated");

    let dead = proxy::free_local_addr().expect("port");
    let config = Config::new(
        proxy::free_local_addr().expect("port"),
        &format!("http://{dead}"),
    )
    .expect("config");
    let (ok, report) = proxy::check_cmd::report(&proxy::app::App::new(config)).await;
    assert!(!ok);
    assert_eq!(report["ok"], false);
    assert!(
        report["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{report}"
    );
}
