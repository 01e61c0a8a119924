//! The real A2A SDK agents of `tests/sdk/` (`agent_v03.py`, `agent_v10.py`)
//! started as child processes on 127.0.0.1, killed when dropped.

use std::time::{Duration, Instant};

/// A real SDK echo agent (`tests/sdk/agent_{v}.py`; `--push` for push
/// notifications), its port read from its `PORT <n>` line.
pub struct SdkAgent {
    child: std::process::Child,
    pub port: u16,
}

impl Drop for SdkAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the SDK agent of version `v` (`"v03"` / `"v10"`) with `flags`,
/// once it accepts connections (within 30 s).
pub fn sdk_agent(v: &str, flags: &[&str]) -> SdkAgent {
    use std::io::BufRead;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let setup = std::process::Command::new("bash")
        .arg(root.join("tests/sdk/setup.sh"))
        .status()
        .expect("run tests/sdk/setup.sh");
    assert!(setup.success(), "tests/sdk/setup.sh failed");
    let mut child = std::process::Command::new(root.join(format!(".venv-{v}/bin/python")))
        .arg(root.join(format!("tests/sdk/agent_{v}.py")))
        .args(["--port", "0"])
        .args(flags)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start the SDK agent");
    let out = child.stdout.take().expect("agent stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(out).lines();
        for line in lines.by_ref().map_while(Result::ok) {
            if let Some(p) = line.strip_prefix("PORT ") {
                let _ = tx.send(p.trim().parse::<u16>().ok());
                break;
            }
        }
        for _ in lines {}
    });
    let port = rx
        .recv_timeout(Duration::from_secs(30))
        .ok()
        .flatten()
        .expect("the SDK agent printed no port");
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let end = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
        assert!(
            Instant::now() < end,
            "the SDK agent does not accept connections"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    SdkAgent { child, port }
}
