//! The real A2A SDK agents of `tests/sdk/` and `tests/tck/` (a2a-sdk 0.3
//! and 1.x, Python) as child processes on 127.0.0.1, killed on drop. The
//! venvs are made by `tests/sdk/setup.sh` when missing. Every wait is
//! bounded.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A running SDK agent; killed on drop.
pub struct SdkAgent {
    child: Child,
    pub addr: SocketAddr,
}

impl Drop for SdkAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl SdkAgent {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `script` (relative to the root) run by the Python of `venv`
    /// (`.venv-v03`, `.venv-v10`) with `--port 0` and `args`, once it
    /// printed `PORT <n>` and accepts connections (60 s at most).
    pub fn start(venv: &str, script: &str, args: &[&str]) -> SdkAgent {
        let python = root().join(venv).join("bin/python");
        if !python.exists() {
            let ok = Command::new("bash")
                .arg(root().join("tests/sdk/setup.sh"))
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "tests/sdk/setup.sh could not make the a2a-sdk venvs");
        }
        let mut child = Command::new(python)
            .arg(root().join(script))
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {script}: {e}"));
        let out = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(out).lines();
            for line in lines.by_ref() {
                let Ok(line) = line else { return };
                if let Some(p) = line.strip_prefix("PORT ") {
                    let _ = tx.send(p.trim().parse::<u16>().ok());
                    break;
                }
            }
            for _ in lines {}
        });
        let port = rx.recv_timeout(Duration::from_secs(60)).ok().flatten();
        let Some(port) = port else {
            let _ = child.kill();
            panic!("{script} printed no port");
        };
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut agent = SdkAgent { child, addr };
        for _ in 0..600 {
            if std::net::TcpStream::connect(addr).is_ok() {
                return agent;
            }
            if let Ok(Some(s)) = agent.child.try_wait() {
                panic!("{script} exited: {s}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("{script} never listened");
    }
}
