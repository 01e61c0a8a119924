//! The real A2A SDK peers, installed into venvs by `tests/sdk/setup.sh`
//! (run by `.ci/run`, and by these helpers when a venv is missing).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `tests/sdk/setup.sh` once per process (it is idempotent and locked
/// across processes); panics if the venvs cannot be made.
pub fn ensure_venvs() {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        Command::new("bash")
            .arg(repo_root().join("tests/sdk/setup.sh"))
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    });
    assert!(
        ok,
        "tests/sdk/setup.sh failed: cannot install the a2a-sdk venvs"
    );
}

/// The Python interpreter of the a2a-sdk 1.x venv, creating the venvs first if needed.
pub fn python_v10() -> PathBuf {
    ensure_venvs();
    repo_root().join(".venv-v10/bin/python")
}

/// The Python interpreter of the a2a-sdk 0.3.x venv, creating the venvs first if needed.
pub fn python_v03() -> PathBuf {
    ensure_venvs();
    repo_root().join(".venv-v03/bin/python")
}

/// The Python interpreter of the a2a-sdk venv of `version`: "v03" for
/// 0.3.x, any other for 1.x.
pub fn python(version: &str) -> PathBuf {
    if version == "v03" {
        python_v03()
    } else {
        python_v10()
    }
}

/// `tests/sdk/{dir}` (an npm package of @a2a-js/sdk peers: `js-v03`,
/// `js-v10`) with its dependencies installed (`npm install` there the
/// first time, bounded; needs Node 20+ and npm); panics when it cannot be.
pub fn js_peers(dir: &str) -> PathBuf {
    // One installer at a time (tests run in parallel).
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = repo_root().join("tests/sdk").join(dir);
    if !dir.join("node_modules/@a2a-js/sdk/package.json").exists() {
        let mut npm = crate::peer::Child::spawn(
            "npm install",
            Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--no-package-lock"])
                .current_dir(&dir),
        );
        let status = npm.wait_timeout(std::time::Duration::from_secs(300));
        assert!(
            status.is_some_and(|s| s.success()),
            "npm install in {} failed: {status:?}",
            dir.display()
        );
    }
    dir
}

/// The SDK peer script `tests/sdk/{file}`.
pub fn sdk_script(file: &str) -> PathBuf {
    repo_root().join("tests/sdk").join(file)
}

/// One request to the SDK translation oracle (`tests/sdk/oracle.py`).
#[derive(Debug, Clone)]
pub struct OracleRequest {
    pub kind: String,
    /// "1.0" or "0.3": the version to produce.
    pub to: String,
    /// v1.0 method name, for `response` / `event` kinds.
    pub method: Option<String>,
    pub input: Value,
}

/// Runs the oracle over `requests` in one Python process; returns, per
/// request, `Ok(output)` or `Err(message)` (the SDK refused the input).
pub fn oracle(requests: &[OracleRequest]) -> Vec<Result<Value, String>> {
    let python = python_v10();
    let mut child = Command::new(python)
        .arg(repo_root().join("tests/sdk/oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start oracle.py");
    let mut input = String::new();
    for r in requests {
        let line =
            serde_json::json!({"kind": r.kind, "to": r.to, "method": r.method, "input": r.input});
        input.push_str(&line.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let stdout = child.stdout.take().expect("stdout");
    let mut out = Vec::with_capacity(requests.len());
    for line in BufReader::new(stdout).lines() {
        let v: Value =
            serde_json::from_str(&line.expect("oracle output")).expect("oracle JSON line");
        out.push(match (v.get("ok"), v.get("err")) {
            (Some(ok), _) => Ok(ok.clone()),
            (None, Some(err)) => Err(err.as_str().unwrap_or("?").to_string()),
            _ => Err(format!("malformed oracle line {v}")),
        });
    }
    writer
        .join()
        .expect("writer thread")
        .expect("write oracle stdin");
    assert!(
        child.wait().expect("oracle exit").success(),
        "oracle.py failed"
    );
    assert_eq!(out.len(), requests.len(), "oracle answered every request");
    out
}
