//! The proxy binary's `serve` as a child process whose log (stderr) is
//! read on a thread of its own and handed over a channel, so a test waits
//! for its lines with a bound.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Each line of `from` as it comes; the channel ends when `from` does.
pub fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// `a2a-compat-proxy serve ARGS` with `RUST_LOG=rust_log`, and its log
/// lines as they come ([`lines_of`]). The caller kills it.
pub fn serve_logging(args: &[&str], rust_log: &str) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .arg("serve")
        .args(args)
        .env("RUST_LOG", rust_log)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start serve");
    let rx = lines_of(child.stderr.take().expect("piped stderr"));
    (child, rx)
}

/// The lines of `rx` until `done` holds for those read (checked before
/// each line is waited for), the channel ends, or `within` has passed.
pub fn lines_until(
    rx: &mpsc::Receiver<String>,
    within: Duration,
    mut done: impl FnMut(&[String]) -> bool,
) -> Vec<String> {
    let end = Instant::now() + within;
    let mut lines = Vec::new();
    while !done(&lines) {
        let Some(left) = end.checked_duration_since(Instant::now()) else {
            break;
        };
        match rx.recv_timeout(left) {
            Ok(l) => lines.push(l),
            Err(_) => break,
        }
    }
    lines
}
