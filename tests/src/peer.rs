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
