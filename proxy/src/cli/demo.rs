//! `a2a-compat-proxy demo`: a built-in A2A v0.3 echo agent on a loopback port,
//! with the proxy in front of it, so v1.0 (and v0.3) clients can try the
//! translation with nothing else installed.
//!
//! The echo agent is a deliberately small HTTP/1.1 JSON-RPC server speaking
//! v0.3 only: `message/send`, `message/stream`, `tasks/get`, `tasks/cancel`,
//! `tasks/resubscribe` and its agent card; everything else gets the v0.3 error
//! a real agent without those features would send.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use crate::cli::serve::ServeArgs;

/// Flags of `a2a-compat-proxy demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// Address the proxy listens on.
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Address of the gRPC listener (both versions' services).
    #[arg(long, value_name = "IP:PORT", default_value = "127.0.0.1:8081")]
    pub grpc_listen: String,
    /// No gRPC listener.
    #[arg(long, conflicts_with = "grpc_listen")]
    pub no_grpc: bool,
}

/// Largest request the echo agent reads.
const MAX_BODY: usize = 1 << 20;

#[derive(Default)]
struct Echo {
    addr: Mutex<Option<SocketAddr>>,
    tasks: Mutex<HashMap<String, Value>>,
    next: AtomicU64,
}

/// Starts the v0.3 echo agent on `127.0.0.1:0` on its own thread; returns its address.
pub fn start_echo_agent() -> std::io::Result<SocketAddr> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let state = Arc::new(Echo::default());
    *state.addr.lock().unwrap_or_else(|e| e.into_inner()) = Some(addr);
    std::thread::Builder::new()
        .name("echo-agent".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                let Ok(listener) = TcpListener::from_std(std_listener) else {
                    return;
                };
                while let Ok((sock, _)) = listener.accept().await {
                    // Head and body are separate writes: no Nagle delay.
                    let _ = sock.set_nodelay(true);
                    let state = state.clone();
                    tokio::spawn(async move {
                        let _ = serve_connection(sock, state).await;
                    });
                }
            });
        })?;
    Ok(addr)
}

async fn serve_connection(sock: TcpStream, state: Arc<Echo>) -> std::io::Result<()> {
    let (read, mut write) = sock.into_split();
    let mut reader = BufReader::new(read);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).await? == 0 {
            return Ok(());
        }
        let mut parts = request_line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut content_length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).await? == 0 {
                return Ok(());
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.trim().eq_ignore_ascii_case("content-length") {
                    content_length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        if content_length > MAX_BODY {
            write_response(&mut write, 413, "application/json", b"{}").await?;
            return Ok(());
        }
        let mut body = vec![0; content_length];
        reader.read_exact(&mut body).await?;
        match (method.as_str(), path.as_str()) {
            ("GET", "/.well-known/agent-card.json" | "/.well-known/agent.json") => {
                let card = state.card().to_string();
                write_response(&mut write, 200, "application/json", card.as_bytes()).await?;
            }
            ("POST", "/") => match state.handle(&body) {
                Reply::Json(v) => {
                    write_response(
                        &mut write,
                        200,
                        "application/json",
                        v.to_string().as_bytes(),
                    )
                    .await?
                }
                Reply::Stream(events) => {
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
                    write.write_all(head.as_bytes()).await?;
                    for e in events {
                        write.write_all(format!("data: {e}\n\n").as_bytes()).await?;
                        write.flush().await?;
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                    return Ok(());
                }
            },
            _ => write_response(&mut write, 404, "text/plain", b"not found").await?,
        }
    }
}

async fn write_response(
    w: &mut (impl AsyncWriteExt + Unpin),
    status: u16,
    ctype: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Payload Too Large",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    w.write_all(head.as_bytes()).await?;
    w.write_all(body).await?;
    w.flush().await
}

enum Reply {
    Json(Value),
    Stream(Vec<Value>),
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn rpc_error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn rpc_result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

impl Echo {
    fn card(&self) -> Value {
        let addr = self
            .addr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .map(|a| a.to_string())
            .unwrap_or_default();
        json!({
            "protocolVersion": "0.3.0",
            "name": "Echo Agent (A2A v0.3)",
            "description": "Repeats every text part it receives. Built into a2a-compat-proxy for its demo.",
            "url": format!("http://{addr}/"),
            "preferredTransport": "JSONRPC",
            "version": env!("CARGO_PKG_VERSION"),
            "capabilities": {"streaming": true, "pushNotifications": false},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "echo", "name": "Echo", "description": "Echoes the input text.", "tags": ["demo"], "examples": ["hello"]}]
        })
    }

    fn handle(&self, body: &[u8]) -> Reply {
        let Ok(req) = serde_json::from_slice::<Value>(body) else {
            return Reply::Json(rpc_error(&Value::Null, -32700, "Invalid JSON payload"));
        };
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        let params = req.get("params").cloned().unwrap_or(Value::Null);
        let task_id = params
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match req
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
        {
            "message/send" => match self.echo_task(&params) {
                Some(task) => Reply::Json(rpc_result(&id, task)),
                None => Reply::Json(rpc_error(
                    &id,
                    -32602,
                    "params.message with parts is required",
                )),
            },
            "message/stream" => match self.echo_task(&params) {
                Some(task) => Reply::Stream(stream_events(&id, &task)),
                None => Reply::Json(rpc_error(
                    &id,
                    -32602,
                    "params.message with parts is required",
                )),
            },
            "tasks/get" | "tasks/cancel" | "tasks/resubscribe" => {
                let method = req
                    .get("method")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let task = self
                    .tasks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get(&task_id)
                    .cloned();
                match (method, task) {
                    (_, None) => Reply::Json(rpc_error(&id, -32001, "Task not found")),
                    ("tasks/get", Some(t)) => Reply::Json(rpc_result(&id, t)),
                    ("tasks/cancel", Some(_)) => {
                        Reply::Json(rpc_error(&id, -32002, "Task cannot be canceled"))
                    }
                    (_, Some(t)) => Reply::Stream(vec![rpc_result(&id, t)]),
                }
            }
            m if m.starts_with("tasks/pushNotificationConfig/") => {
                Reply::Json(rpc_error(&id, -32003, "Push Notification is not supported"))
            }
            "agent/getAuthenticatedExtendedCard" => Reply::Json(rpc_error(
                &id,
                -32007,
                "Authenticated Extended Card is not configured",
            )),
            _ => Reply::Json(rpc_error(&id, -32601, "Method not found")),
        }
    }

    /// Runs the "agent": a completed task whose artifact echoes the text parts.
    fn echo_task(&self, params: &Value) -> Option<Value> {
        let message = params.get("message")?;
        let parts = message.get("parts")?.as_array()?;
        let text: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let task_id = format!("task-{n}");
        let context_id = message
            .get("contextId")
            .and_then(Value::as_str)
            .map_or_else(|| format!("ctx-{n}"), str::to_string);
        let mut user = message.clone();
        if let Some(m) = user.as_object_mut() {
            m.insert("taskId".into(), json!(task_id));
            m.insert("contextId".into(), json!(context_id));
        }
        let reply = format!("echo: {}", text.join(" "));
        let task = json!({
            "kind": "task",
            "id": task_id,
            "contextId": context_id,
            "status": {"state": "completed", "timestamp": now()},
            "history": [user],
            "artifacts": [{"artifactId": format!("echo-{n}"), "name": "echo", "parts": [{"kind": "text", "text": reply}]}]
        });
        self.tasks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task_id, task.clone());
        Some(task)
    }
}

/// The SSE events of one streamed echo: task submitted, working, the
/// artifact, completed (`final: true`).
fn stream_events(id: &Value, task: &Value) -> Vec<Value> {
    let (tid, cid) = (task["id"].clone(), task["contextId"].clone());
    let mut submitted = task.clone();
    if let Some(m) = submitted.as_object_mut() {
        m.remove("artifacts");
        m.insert(
            "status".into(),
            json!({"state": "submitted", "timestamp": now()}),
        );
    }
    let status = |state: &str, last: bool| json!({"kind": "status-update", "taskId": tid, "contextId": cid, "status": {"state": state, "timestamp": now()}, "final": last});
    vec![
        rpc_result(id, submitted),
        rpc_result(id, status("working", false)),
        rpc_result(
            id,
            json!({"kind": "artifact-update", "taskId": tid, "contextId": cid, "artifact": task["artifacts"][0], "lastChunk": true}),
        ),
        rpc_result(id, status("completed", true)),
    ]
}

/// Runs the demo until interrupted; returns the exit code.
pub fn main(args: &DemoArgs) -> i32 {
    let agent = match start_echo_agent() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("a2a-compat-proxy demo: cannot start the echo agent: {e}");
            return 2;
        }
    };
    let url = format!("http://{}", args.listen);
    let grpc_listen = (!args.no_grpc).then(|| args.grpc_listen.clone());
    let grpc = match &grpc_listen {
        Some(g) => format!("gRPC (a2a.v1 and lf.a2a.v1 A2AService) on {g}.\n"),
        None => String::new(),
    };
    println!(
        "A2A v0.3 echo agent on http://{agent}/ ; a2a-compat-proxy on {url}/ in front of it.\n\n\
         Call it as an A2A v1.0 client (translated to v0.3 and back):\n  \
         curl -s {url}/ -H 'A2A-Version: 1.0' -H 'Content-Type: application/json' \\\n    \
         -d '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"SendMessage\",\"params\":{{\"message\":{{\"messageId\":\"m1\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hello\"}}]}}}}}}'\n\n\
         Its agent card as a v1.0 client sees it:\n  curl -s {url}/.well-known/agent-card.json -H 'A2A-Version: 1.0'\n\n\
         As a v0.3 client (passed through untouched): the same without the header, with \"method\":\"message/send\".\n\
         {grpc}\
         Ctrl-C stops it."
    );
    let serve = ServeArgs {
        listen: Some(args.listen.clone()),
        upstream: Some(format!("http://{agent}")),
        upstream_version: Some("0.3".into()),
        grpc_listen,
        // The echo agent sends no push notifications: no push store to
        // write into the directory the demo is started from.
        no_push: true,
        ..ServeArgs::default()
    };
    crate::cli::serve::main(&serve)
}
