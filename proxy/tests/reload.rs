//! Reload without a restart (issue #39 item 2), end to end on the `serve`
//! binary and SIGHUP: a stream open across a reload ends on the agent it
//! started with while new calls go to the agent the file now names; an
//! agent added then removed, on the HTTP and the gRPC listener; a file
//! that fails is refused whole (the old settings stay, the log names the
//! key), as is one that changes what only a restart can; the push store
//! and the ListTasks index of a changed agent are kept. `/metrics` counts
//! reloads and refusals. Everything on 127.0.0.1; every wait bounded.

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proto::v03 as p03;
use serde_json::{json, Value};
use support::child::{lines_until, serve_logging};
use support::*;
use tokio::sync::Semaphore;

const CARD: &str = r#"{"name":"NAME","description":"a fake agent","version":"1.0.0","defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"protocolVersion":"0.3.0","url":"http://UP/","preferredTransport":"JSONRPC","capabilities":{"streaming":true,"pushNotifications":true},"skills":[]}"#;

/// A fake v0.3 agent named `name`: every JSON-RPC call is answered with
/// a completed task `t-<name>` (a stream: three events, each after a
/// permit of `gate`).
async fn agent(name: &'static str, gate: Arc<Semaphore>) -> FakeUpstream {
    agent_with_card(
        move |me| CARD.replace("UP", me).replace("NAME", name),
        move |r| {
            let asked: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let task = json!({"kind": "task", "id": format!("t-{name}"), "contextId": "c1",
                "status": {"state": "completed"}});
            if asked["method"] == "message/stream" {
                let events = (1..=3)
                    .map(|i| {
                        let mut t = task.clone();
                        t["metadata"] = json!({"n": i});
                        format!(
                            "data: {}\n\n",
                            json!({"jsonrpc": "2.0", "id": asked["id"], "result": t})
                        )
                    })
                    .collect();
                return Reply::Sse {
                    events,
                    gate: gate.clone(),
                };
            }
            Reply::json(
                200,
                &json!({"jsonrpc": "2.0", "id": asked["id"], "result": task}).to_string(),
            )
        },
    )
    .await
}

/// The `serve` binary on `file`, its log lines; killed on drop.
struct Serve {
    child: Child,
    log: Receiver<String>,
    addr: SocketAddr,
    seen: Vec<String>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    async fn start(file: &Path, addr: SocketAddr) -> Serve {
        let (child, log) = serve_logging(&["--config", file.to_str().unwrap()], "info");
        let s = Serve {
            child,
            log,
            addr,
            seen: Vec::new(),
        };
        let end = Instant::now() + Duration::from_secs(20);
        while health_within(addr, Duration::from_secs(2)).await.is_none() {
            assert!(Instant::now() < end, "the proxy did not start on {addr}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        s
    }

    /// SIGHUP, then waits (20 s at most) until `/metrics` counts one more
    /// reload of `result` (`ok`, `refused`).
    async fn reload(&mut self, result: &str) {
        let before = self.reloads(result).await;
        // SAFETY: kill(2) on the child's own pid.
        let r = unsafe { libc::kill(self.child.id() as i32, libc::SIGHUP) };
        assert_eq!(r, 0, "SIGHUP");
        let end = Instant::now() + Duration::from_secs(20);
        while self.reloads(result).await <= before {
            assert!(Instant::now() < end, "no reload counted as {result}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn reloads(&self, result: &str) -> u64 {
        let text = get(self.addr, "/metrics", &[]).await.text();
        let key = format!("a2a_proxy_config_reloads_total{{agent=\"\",result=\"{result}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(key.as_str()))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or(0)
    }

    /// The log lines read so far and until one contains `what` (10 s).
    fn log_until(&mut self, what: &str) -> &[String] {
        let more = lines_until(&self.log, Duration::from_secs(10), |l| {
            l.iter().any(|x| x.contains(what))
        });
        self.seen.extend(more);
        &self.seen
    }
}

fn file_of(dir: &Path, text: &str) -> PathBuf {
    let f = dir.join("proxy.toml");
    std::fs::write(&f, text).unwrap();
    f
}

/// A v0.3 `message/send` through the proxy at `host`: the id of the task
/// that came back (it names the agent that answered).
async fn send(addr: SocketAddr, host: &str, path: &str) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message":
        {"kind": "message", "messageId": "m1", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}}});
    let body = body.to_string();
    let raw = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let v = support::send(addr, raw.as_bytes()).await.json();
    v.pointer("/result/id").cloned().unwrap_or(v)
}

fn head(listen: SocketAddr, grpc: Option<SocketAddr>) -> String {
    let grpc = grpc.map_or(String::new(), |g| format!("[grpc]\nlisten = \"{g}\"\n"));
    format!("listen = \"{listen}\"\nthreads = 1\n{grpc}[push]\nenabled = false\n")
}

fn agent_table(name: &str, url: &str, extra: &str) -> String {
    format!("\n[[agents]]\nname = \"{name}\"\n{extra}[agents.upstream]\nurl = \"{url}\"\nversion = \"0.3\"\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_runs_across_a_reload_and_new_calls_take_the_new_settings() {
    let gate = Arc::new(Semaphore::new(0));
    let one = agent("one", gate.clone()).await;
    let two = agent("two", gate.clone()).await;
    let dir = support::tls::temp_dir("reload-stream");
    let listen = free_local_addr().unwrap();
    let file = file_of(
        &dir,
        &format!("{}{}", head(listen, None), agent_table("a", &one.url(), "")),
    );
    let mut px = Serve::start(&file, listen).await;
    assert_eq!(send(listen, "x", "/").await, "t-one");

    // A stream of agent `one`, its first event in.
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "message/stream", "params": {"message":
        {"kind": "message", "messageId": "m2", "role": "user", "parts": [{"kind": "text", "text": "go"}]}}});
    let mut s = open(
        listen,
        &request(
            "POST",
            "/",
            &[("Content-Type", "application/json")],
            body.to_string().as_bytes(),
        ),
    )
    .await;
    assert_eq!(s.status, 200);
    let first = tokio::time::timeout(WAIT, s.reader.chunk(&mut s.sock))
        .await
        .expect("the first event")
        .unwrap()
        .unwrap();
    assert!(String::from_utf8_lossy(&first).contains("t-one"));

    // The agent now calls `two`, and its read timeout is another.
    file_of(
        &dir,
        &format!(
            "{}[limits]\nread_timeout_ms = 30000\n{}",
            head(listen, None),
            agent_table("a", &two.url(), "")
        ),
    );
    px.reload("ok").await;
    assert_eq!(send(listen, "x", "/").await, "t-two");
    assert!(
        two.calls()
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains("message/send")),
        "the new call did not reach the new upstream"
    );

    // The open stream ends on `one`, every event of it.
    gate.add_permits(2);
    let rest = s.rest().await;
    assert_eq!(rest.matches("t-one").count(), 2, "{rest}");
    assert!(!rest.contains("t-two"), "{rest}");
    assert_eq!(
        one.calls()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains("message/stream"))
            .count(),
        1
    );
    let log = px.log_until("config reloaded").join("\n");
    assert!(log.contains("kept=[\"a\"]"), "{log}");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_added_then_removed_on_both_listeners() {
    let gate = Arc::new(Semaphore::new(0));
    let a = agent("a", gate.clone()).await;
    let b = agent("b", gate.clone()).await;
    let dir = support::tls::temp_dir("reload-agents");
    let (listen, grpc) = (free_local_addr().unwrap(), free_local_addr().unwrap());
    let only_a = format!(
        "{}{}",
        head(listen, Some(grpc)),
        agent_table("a", &a.url(), "")
    );
    let file = file_of(&dir, &only_a);
    let mut px = Serve::start(&file, listen).await;
    let grpc_get = |authority: &'static str| async move {
        let mut c = p03::a2a_service_client::A2aServiceClient::new(
            support::grpc::channel(grpc, Some(authority)).await,
        );
        let r = c
            .get_task(tonic::Request::new(p03::GetTaskRequest {
                name: "tasks/x".into(),
                ..Default::default()
            }))
            .await
            .expect("GetTask");
        r.into_inner().id
    };
    assert_eq!(send(listen, "b.example", "/").await, "t-a");
    assert_eq!(grpc_get("b.example:1").await, "t-a");

    // Agent b added, by host, on both listeners.
    let with_b = format!(
        "{only_a}{}",
        agent_table("b", &b.url(), "hosts = [\"b.example\"]\n")
    );
    file_of(&dir, &with_b);
    px.reload("ok").await;
    assert_eq!(send(listen, "b.example", "/").await, "t-b");
    assert_eq!(send(listen, "other.example", "/").await, "t-a");
    assert_eq!(grpc_get("b.example:1").await, "t-b");
    assert_eq!(grpc_get("other.example:1").await, "t-a");
    let m = get(listen, "/metrics", &[]).await.text();
    assert!(m.contains("agent=\"b\""), "{m}");

    // Removed again: its host is the catch-all's.
    file_of(&dir, &only_a);
    px.reload("ok").await;
    let before = b.calls().len();
    assert_eq!(send(listen, "b.example", "/").await, "t-a");
    assert_eq!(grpc_get("b.example:1").await, "t-a");
    assert_eq!(b.calls().len(), before, "a removed agent was called");
    let log = px.log_until("removed=[\"b\"]").join("\n");
    assert!(log.contains("added=[\"b\"]"), "{log}");
    assert_eq!(px.reloads("ok").await, 2);
    assert_eq!(px.reloads("refused").await, 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_file_is_refused_whole_and_the_old_settings_stay() {
    let gate = Arc::new(Semaphore::new(0));
    let one = agent("one", gate.clone()).await;
    let two = agent("two", gate.clone()).await;
    let dir = support::tls::temp_dir("reload-bad");
    let listen = free_local_addr().unwrap();
    let good = format!("{}{}", head(listen, None), agent_table("a", &one.url(), ""));
    let file = file_of(&dir, &good);
    let mut px = Serve::start(&file, listen).await;

    // One good change and one bad value: neither is applied.
    let bad = format!(
        "{}{}{}",
        head(listen, None),
        agent_table("a", &two.url(), ""),
        agent_table("b", "ftp://127.0.0.1:1", "prefix = \"/b\"\n")
    );
    file_of(&dir, &bad);
    px.reload("refused").await;
    let log = px.log_until("config reload refused").join("\n");
    assert!(log.contains("agents[1].upstream.url"), "{log}");
    assert_eq!(send(listen, "x", "/").await, "t-one");
    assert!(two.calls().is_empty());

    // Not TOML at all.
    file_of(&dir, "listen = [");
    px.reload("refused").await;
    assert_eq!(send(listen, "x", "/").await, "t-one");

    // What only a restart changes: refused, naming the key.
    let moved = good.replace(&listen.to_string(), "127.0.0.1:1");
    file_of(
        &dir,
        &format!(
            "{moved}[[agents]]\nname = \"b\"\nprefix = \"/b\"\n[agents.upstream]\nurl = \"{}\"\n",
            two.url()
        ),
    );
    px.reload("refused").await;
    let log = px.log_until("cannot change without a restart").join("\n");
    assert!(log.contains("key=listen"), "{log}");
    assert_eq!(send(listen, "x", "/b/").await, "t-one");
    assert!(two.calls().is_empty());
    assert_eq!(px.reloads("ok").await, 0);
    assert_eq!(px.reloads("refused").await, 3);

    // Fixed: applied.
    file_of(&dir, &good.replace(&one.url(), &two.url()));
    px.reload("ok").await;
    assert_eq!(send(listen, "x", "/").await, "t-two");
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_push_store_and_the_list_index_are_kept() {
    let gate = Arc::new(Semaphore::new(0));
    let one = agent("one", gate.clone()).await;
    let two = agent("two", gate.clone()).await;
    let dir = support::tls::temp_dir("reload-kept");
    let data = dir.join("push");
    let listen = free_local_addr().unwrap();
    let config = |url: &str| {
        format!(
            "listen = \"{listen}\"\nthreads = 1\n[push]\ndata_dir = \"{}\"\n{}",
            data.display(),
            agent_table("a", url, "")
        )
    };
    let file = file_of(&dir, &config(&one.url()));
    let mut px = Serve::start(&file, listen).await;
    let v10 = &[
        ("Content-Type", "application/json"),
        ("A2A-Version", "1.0"),
        ("Authorization", "Bearer caller-1"),
    ];
    let send = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message":
        {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}});
    let r = post(listen, "/", v10, send.to_string().as_bytes())
        .await
        .json();
    assert_eq!(r.pointer("/result/task/id"), Some(&json!("t-one")), "{r}");

    // The agent's upstream changes; its push store (open, locked) is not
    // opened again, and the tasks its callers saw are still listed.
    file_of(&dir, &config(&two.url()));
    px.reload("ok").await;
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "ListTasks", "params": {}});
    let r = post(listen, "/", v10, list.to_string().as_bytes())
        .await
        .json();
    let ids: Vec<&Value> = r["result"]["tasks"]
        .as_array()
        .map(|t| t.iter().map(|t| &t["id"]).collect())
        .unwrap_or_default();
    // The listed task asked of the agent now configured (`two` answers
    // `t-two` for any id, so the entry is the one recorded before).
    assert_eq!(r["result"]["totalSize"], 1, "{r}");
    assert!(
        ids.is_empty() || ids == [&json!("t-one")] || ids == [&json!("t-two")],
        "{r}"
    );
    assert!(
        two.calls()
            .iter()
            .any(|c| String::from_utf8_lossy(&c.body).contains("tasks/get")),
        "the listed task was not asked of the new upstream"
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_admin_reload_on_the_admin_listener_only() {
    let gate = Arc::new(Semaphore::new(0));
    let one = agent("one", gate.clone()).await;
    let two = agent("two", gate.clone()).await;
    let dir = support::tls::temp_dir("reload-admin");
    let (listen, admin) = (free_local_addr().unwrap(), free_local_addr().unwrap());
    let config = |url: &str| {
        format!(
            "admin_listen = \"{admin}\"\n{}{}",
            head(listen, None),
            agent_table("a", url, "")
        )
    };
    let file = file_of(&dir, &config(&one.url()));
    let px = Serve::start(&file, listen).await;

    // The clients' listener has no admin endpoint: the agent's path.
    file_of(&dir, &config(&two.url()));
    let r = post(listen, "/admin/reload", JSON_HEADER, b"").await;
    assert_ne!(r.json()["status"], "reloaded", "{}", r.text());
    assert_eq!(px.reloads("ok").await, 0);
    assert_eq!(send(listen, "x", "/").await, "t-one");

    // The admin listener's.
    let r = get(admin, "/admin/reload", &[]).await;
    assert_eq!(r.status, 405);
    assert_eq!(get(admin, "/other", &[]).await.status, 404);
    let r = post(admin, "/admin/reload", &[], b"").await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.json(),
        json!({"status": "reloaded", "added": [], "removed": [], "kept": ["a"]})
    );
    assert_eq!(send(listen, "x", "/").await, "t-two");

    // A bad file: 422, the key named, the settings in force kept.
    file_of(&dir, &config("ftp://127.0.0.1:1"));
    let r = post(admin, "/admin/reload", &[], b"").await;
    assert_eq!(r.status, 422, "{}", r.text());
    assert_eq!(r.json()["key"], "agents[0].upstream.url", "{}", r.text());
    assert_eq!(send(listen, "x", "/").await, "t-two");
    assert_eq!(px.reloads("ok").await, 1);
    assert_eq!(px.reloads("refused").await, 1);
    let _ = std::fs::remove_dir_all(dir);
}
