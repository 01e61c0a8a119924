//! The `--against` command: an external converter that reads JSON Lines on
//! its stdin and writes one line per line read on its stdout, either the
//! translated document or `{"error":{"code":…,"message":…}}`.
//!
//! It runs as `sh -c CMD` in a process group of its own, fed by a thread
//! (so it can write while it is fed), within a deadline after which the
//! whole group is killed. A line it never answers, or answers with
//! something that is not JSON, is a refusal of that line; its stderr is
//! the user's to read.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Refusal;

/// The largest line read from the converter (a document it writes).
const MAX_LINE: usize = 64 << 20;

/// Feeds `inputs` to `cmd` and reads its answers, one per input.
/// `Err`: the command could not be started.
pub fn run(
    cmd: &str,
    env: &[(&'static str, String)],
    inputs: &[&[u8]],
    timeout: Duration,
) -> Result<Vec<Result<Vec<u8>, Refusal>>, String> {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start --against command {cmd:?}: {e}"))?;
    let group = child.id() as libc::pid_t;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let feed: Vec<u8> = inputs
        .iter()
        .flat_map(|l| l.iter().chain(b"\n"))
        .copied()
        .collect();
    let writer = std::thread::spawn(move || {
        // A converter that stops reading early: its missing answers say so.
        let _ = stdin.write_all(&feed);
    });
    let done = Arc::new(AtomicBool::new(false));
    let timed_out = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let (done, timed_out) = (done.clone(), timed_out.clone());
        std::thread::spawn(move || {
            let end = Instant::now() + timeout;
            while !done.load(Ordering::Acquire) {
                if Instant::now() >= end {
                    timed_out.store(true, Ordering::Release);
                    // SAFETY: kill(2) on the process group this run started.
                    unsafe {
                        libc::kill(-group, libc::SIGKILL);
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let mut out = Vec::with_capacity(inputs.len());
    let mut reader = BufReader::with_capacity(1 << 16, stdout);
    let mut line = Vec::new();
    let mut extra = 0usize;
    loop {
        line.clear();
        let n = match std::io::Read::take(&mut reader, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
        {
            Ok(n) => n,
            Err(_) => break,
        };
        if n == 0 {
            break;
        }
        if line.len() > MAX_LINE && !line.ends_with(b"\n") {
            out.push(Err(refusal(format!("a line longer than {MAX_LINE} bytes"))));
            // Skip the rest of that line.
            let mut rest = Vec::new();
            let _ = reader.read_until(b'\n', &mut rest);
            continue;
        }
        if out.len() == inputs.len() {
            extra += 1;
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        out.push(answer(text));
    }
    let _ = writer.join();
    let _ = child.wait();
    done.store(true, Ordering::Release);
    let _ = watchdog.join();
    if extra > 0 {
        eprintln!("roundtrip: the --against command wrote {extra} lines more than it was given");
    }
    let why = if timed_out.load(Ordering::Acquire) {
        format!(
            "the --against command did not answer within {} s",
            timeout.as_secs()
        )
    } else {
        "the --against command wrote no line for this input".to_string()
    };
    while out.len() < inputs.len() {
        out.push(Err(refusal(why.clone())));
    }
    Ok(out)
}

fn refusal(message: String) -> Refusal {
    Refusal {
        code: None,
        message,
    }
}

/// One line the converter wrote: a document, or its refusal.
fn answer(text: &[u8]) -> Result<Vec<u8>, Refusal> {
    let v: Value = serde_json::from_slice(text).map_err(|e| {
        refusal(format!(
            "the --against command wrote a line that is not JSON: {e}"
        ))
    })?;
    if let Some(e) = v
        .as_object()
        .filter(|o| o.len() == 1)
        .and_then(|o| o.get("error"))
    {
        return Err(Refusal {
            code: e.get("code").and_then(Value::as_i64),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_string),
        });
    }
    Ok(text.to_vec())
}
