//! The README's first command: the built-in v0.3 echo agent behind the proxy,
//! driven as a v1.0 client and as a v0.3 client over real 127.0.0.1 sockets.

mod support;

use proxy::config::Config;
use serde_json::json;
use support::*;

/// The built-in echo agent started, and a proxy's config toward it.
fn echo_config() -> Config {
    let agent = proxy::cli::demo::start_echo_agent().expect("echo agent");
    Config::new(
        support::free_local_addr().expect("port"),
        &format!("http://{agent}"),
    )
    .expect("config")
}

/// A v1.0 call's headers, no content type.
const V10: &[(&str, &str)] = &[("A2A-Version", "1.0")];

#[tokio::test]
async fn demo_echo_agent_answers_v10_and_v03_clients() {
    let config = echo_config();
    let running = proxy::start(config).expect("proxy");
    let addr = running.addr;

    // v1.0 client: SendMessage is translated to message/send and the Task back.
    let body = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
        "messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}});
    let resp = post(addr, "/", JSON_V10, body.to_string().as_bytes()).await;
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
    let v = post(addr, "/", V10, body.to_string().as_bytes())
        .await
        .json();
    assert_eq!(v["id"], "g");
    assert_eq!(v["result"]["id"], task_id.as_str());

    // v1.0 CancelTask of a completed task: the agent's v0.3 error, in v1.0 shape.
    let body = json!({"jsonrpc":"2.0","id":2,"method":"CancelTask","params":{"id": task_id}});
    let v = post(addr, "/", V10, body.to_string().as_bytes())
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
    let config = echo_config();
    let app = proxy::app::App::new(config);
    let (ok, report) = proxy::cli::check::report(&app).await;
    assert!(ok, "{report}");
    assert_eq!(report["card_version"], "0.3");
    assert_eq!(report["clients"]["0.3"]["mode"], "passthrough");
    assert_eq!(report["clients"]["1.0"]["mode"], "translated");

    let dead = support::free_local_addr().expect("port");
    let config = Config::new(
        support::free_local_addr().expect("port"),
        &format!("http://{dead}"),
    )
    .expect("config");
    let (ok, report) = proxy::cli::check::report(&proxy::app::App::new(config)).await;
    assert!(!ok);
    assert_eq!(report["ok"], false);
    assert!(
        report["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{report}"
    );
}

/// Kills the demo process when the test ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `a2a-compat-proxy demo` as the README runs it, on ports of its own:
/// `--listen` and `--grpc-listen` are where it serves, and it prints them.
#[tokio::test]
async fn the_demo_command_serves_where_it_is_told() {
    use std::io::BufRead;
    let http = support::free_local_addr().expect("port");
    let grpc = support::free_local_addr().expect("port");
    // Started in an empty directory, which it must leave empty.
    let cwd = std::env::temp_dir().join(format!("a2a-demo-cwd-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let mut child = Child(
        std::process::Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
            .current_dir(&cwd)
            .args(["demo", "--listen", &http.to_string()])
            .args(["--grpc-listen", &grpc.to_string()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the demo"),
    );
    let out = child.0.stdout.take().expect("stdout");
    // Its banner, up to the Ctrl-C line; what follows is drained, so the
    // demo never writes into a closed pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(out).lines().map_while(Result::ok);
        let banner: Vec<String> = lines
            .by_ref()
            .take_while(|l| !l.contains("Ctrl-C"))
            .collect();
        let _ = tx.send(banner.join("\n"));
        for _ in lines {}
    });
    let printed = tokio::task::spawn_blocking(move || {
        rx.recv_timeout(std::time::Duration::from_secs(20))
            .expect("the demo printed no banner")
    })
    .await
    .unwrap();
    assert!(printed.contains(&format!("http://{http}/")), "{printed}");
    assert!(
        printed.contains(&format!("gRPC (a2a.v1 and lf.a2a.v1 A2AService) on {grpc}")),
        "{printed}"
    );
    let body = json!({"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{
        "messageId":"m1","role":"ROLE_USER","parts":[{"text":"hello"}]}}});
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let v = loop {
        let r = try_post(http, body.to_string().as_bytes()).await;
        if let Some(v) = r {
            break v;
        }
        assert!(std::time::Instant::now() < end, "the demo never answered");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(
        v["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{v}"
    );
    let end = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while tokio::net::TcpStream::connect(grpc).await.is_err() {
        assert!(
            std::time::Instant::now() < end,
            "no gRPC listener on {grpc}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let left: Vec<_> = std::fs::read_dir(&cwd)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(
        left.is_empty(),
        "the demo wrote into its directory: {left:?}"
    );
    drop(child);
    let _ = std::fs::remove_dir_all(&cwd);
}

/// A v1.0 SendMessage to the demo, `None` while it does not listen yet.
async fn try_post(addr: std::net::SocketAddr, body: &[u8]) -> Option<serde_json::Value> {
    tokio::net::TcpStream::connect(addr).await.ok()?;
    let r = post(addr, "/", JSON_V10, body).await;
    (r.status == 200).then(|| r.json())
}
