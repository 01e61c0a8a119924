//! Child processes of the interop tests: a guard that kills on drop, a
//! bounded wait for a listening port, and the SDK peer scripts of
//! `tests/sdk/` (agents that print `PORT <n>`, clients that print one JSON
//! line per step).

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A child process that is killed (and reaped) when dropped.
pub struct Child {
    pub name: String,
    inner: std::process::Child,
}

impl Child {
    /// Spawns `cmd` (stdin closed).
    pub fn spawn(name: &str, cmd: &mut Command) -> Child {
        let inner = cmd
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Child {
            name: name.to_string(),
            inner,
        }
    }

    /// The OS process id.
    pub fn id(&self) -> u32 {
        self.inner.id()
    }

    /// Takes the child's piped stdout.
    pub fn take_stdout(&mut self) -> Option<std::process::ChildStdout> {
        self.inner.stdout.take()
    }

    /// Waits at most `limit` for the child to exit; kills it past that and
    /// returns `None`.
    pub fn wait_timeout(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            match self.inner.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(_) => break,
            }
        }
        self.kill();
        None
    }

    fn kill(&mut self) {
        if let Ok(None) = self.inner.try_wait() {
            let _ = self.inner.kill();
        }
        let _ = self.inner.wait();
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits (at most `limit`) until something accepts TCP connections on `addr`.
pub fn wait_for_port(addr: SocketAddr, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// A running SDK agent script.
pub struct Agent {
    pub child: Child,
    pub addr: SocketAddr,
    /// Drains the rest of the agent's stdout so it never blocks on a full pipe.
    _drain: JoinHandle<()>,
}

impl Agent {
    /// `http://addr`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Starts `python script --port 0`, reads its `PORT <n>` line (at most
/// `limit`), then waits for the port to accept connections.
pub fn start_agent(python: &Path, script: &Path, limit: Duration) -> Agent {
    start_agent_with(python, script, &[], limit)
}

/// [`start_agent`] with extra command-line arguments (e.g. `--rest`).
pub fn start_agent_with(python: &Path, script: &Path, args: &[&str], limit: Duration) -> Agent {
    let name = script.file_name().unwrap().to_string_lossy().to_string();
    let mut child = Child::spawn(
        &name,
        Command::new(python)
            .arg(script)
            .args(["--port", "0"])
            .args(args)
            .stdout(Stdio::piped()),
    );
    let stdout = child.take_stdout().expect("agent stdout");
    let (tx, rx) = mpsc::channel();
    let drain = std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for line in lines.by_ref() {
            let Ok(line) = line else { return };
            if let Some(port) = line.strip_prefix("PORT ") {
                let _ = tx.send(port.trim().parse::<u16>().ok());
                break;
            }
        }
        for _ in lines {}
    });
    let port = match rx.recv_timeout(limit) {
        Ok(Some(p)) => p,
        other => panic!("{name} did not print its port within {limit:?}: {other:?}"),
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    assert!(
        wait_for_port(addr, limit),
        "{name} does not accept connections on {addr}"
    );
    Agent {
        child,
        addr,
        _drain: drain,
    }
}

/// The SDK agent `tests/sdk/{stem}_{version}.py` ("v03" / "v10") under
/// its version's venv, started with `args` as [`start_agent_with`].
pub fn start_sdk_agent(stem: &str, version: &str, args: &[&str], limit: Duration) -> Agent {
    start_agent_with(
        &crate::sdk::python(version),
        &crate::sdk::sdk_script(&format!("{stem}_{version}.py")),
        args,
        limit,
    )
}

/// `tests/sdk/grpc_agent.py --version <version> <args>` (the a2a-sdk 1.x
/// gRPC server of either version, in `.venv-grpc`), its gRPC port and
/// its card's HTTP port (it prints `PORT <grpc> CARD <http>`), waited
/// for at most `limit`.
pub fn start_grpc_agent(version: &str, args: &[&str], limit: Duration) -> (Child, u16, u16) {
    crate::sdk::ensure_venvs();
    let mut child = Child::spawn(
        "grpc_agent.py",
        Command::new(crate::sdk::repo_root().join(".venv-grpc/bin/python"))
            .arg(crate::sdk::sdk_script("grpc_agent.py"))
            .args(["--version", version])
            .args(args)
            .stdout(Stdio::piped()),
    );
    let out = child.take_stdout().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(out).lines();
        for line in lines.by_ref().map_while(Result::ok) {
            let w: Vec<&str> = line.split_whitespace().collect();
            if let ["PORT", g, "CARD", c] = w[..] {
                let _ = tx.send((g.parse::<u16>().ok(), c.parse::<u16>().ok()));
                break;
            }
        }
        for _ in lines {}
    });
    let Ok((Some(g), Some(c))) = rx.recv_timeout(limit) else {
        panic!("grpc_agent.py --version {version} did not print its ports within {limit:?}");
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], g));
    assert!(wait_for_port(addr, limit), "gRPC agent on {addr}");
    (child, g, c)
}

/// Every step of the SDK client scenario (`tests/sdk/client_v*.py`), in
/// order: the first ten are its calls that succeed, the last four its
/// calls of finished or missing tasks.
pub const CLIENT_STEPS: [&str; 14] = [
    "card",
    "send",
    "stream",
    "get",
    "cancel",
    "resubscribe",
    "follow_up",
    "parts",
    "big",
    "big_stream",
    "get_no_history",
    "resubscribe_done",
    "get_missing",
    "cancel_done",
];

/// What an SDK client script printed.
#[derive(Debug)]
pub struct ClientRun {
    /// Exit status; `None` when it was killed at the time limit.
    pub status: Option<ExitStatus>,
    /// One JSON object per step, in order.
    pub steps: Vec<Value>,
    /// Every stdout line, for failure messages.
    pub raw: String,
}

impl ClientRun {
    /// The first line whose `step` is `name`.
    pub fn step(&self, name: &str) -> Option<&Value> {
        self.steps.iter().find(|s| s["step"] == name)
    }
}

/// Runs `python script base_url` to its end (killed past `limit`).
pub fn run_client(python: &Path, script: &Path, base_url: &str, limit: Duration) -> ClientRun {
    run_client_with(python, script, base_url, &[], limit)
}

/// [`run_client`] with extra environment variables (e.g. `A2A_BINDING`).
pub fn run_client_with(
    python: &Path,
    script: &Path,
    base_url: &str,
    env: &[(&str, &str)],
    limit: Duration,
) -> ClientRun {
    let name = script.file_name().unwrap().to_string_lossy().to_string();
    let mut child = Child::spawn(
        &name,
        Command::new(python)
            .arg(script)
            .arg(base_url)
            .envs(env.iter().copied())
            .stdout(Stdio::piped()),
    );
    let mut stdout = child.take_stdout().expect("client stdout");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let status = child.wait_timeout(limit);
    drop(child);
    let raw = reader.join().unwrap_or_default();
    let steps = raw
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect();
    ClientRun { status, steps, raw }
}

/// One run of an SDK card client (`tests/sdk/card_client_{version}.py`):
/// the card it read and its one message sent to an echo agent.
pub struct CardRun {
    pub card: Value,
    pub send: Value,
    /// The card's interfaces (as the client lists them).
    pub interfaces: Vec<Value>,
    pub run: ClientRun,
}

/// Runs the card client of `version` ("v03" / "v10") at `base`.
pub fn run_card_client(version: &str, base: &str, limit: Duration) -> CardRun {
    let run = run_client(
        &crate::sdk::python(version),
        &crate::sdk::sdk_script(&format!("card_client_{version}.py")),
        base,
        limit,
    );
    let card = run.step("card").cloned().unwrap_or(Value::Null);
    let send = run.step("send").cloned().unwrap_or(Value::Null);
    let interfaces = card["interfaces"].as_array().cloned().unwrap_or_default();
    CardRun {
        card,
        send,
        interfaces,
        run,
    }
}

impl CardRun {
    /// Whether the send got the echo agent's answer, its task completed
    /// (a2a-sdk 1.x: over its plain JSON-RPC transport, not the v0.3
    /// fallback).
    pub fn echoed(&self, version: &str) -> bool {
        let s = &self.send;
        let done = if version == "v03" {
            s["state"] == "completed"
        } else {
            s["transport"] == "JsonRpcTransport" && s["state"] == "TASK_STATE_COMPLETED"
        };
        s["ok"] == true && done && s["artifact_texts"] == serde_json::json!(["echo: hello"])
    }

    /// Whether the card lists a 1.0 JSON-RPC interface whose URL passes
    /// `url_ok`.
    pub fn has_v10_jsonrpc(&self, url_ok: impl Fn(&str) -> bool) -> bool {
        self.interfaces.iter().any(|i| {
            i["binding"] == "JSONRPC"
                && i["protocol_version"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("1.0"))
                && i["url"].as_str().is_some_and(&url_ok)
        })
    }
}
