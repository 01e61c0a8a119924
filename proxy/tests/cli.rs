//! The `translate` subcommand as a user runs it: real process, stdin, stdout,
//! exit codes.

#[path = "support/child.rs"]
mod child;
#[path = "support/ports.rs"]
mod ports;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .arg("translate")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a2a-compat-proxy");
    // A command that refuses its flags may exit before reading stdin: a
    // broken pipe here is its answer, not a failure.
    if let Err(e) = child.stdin.take().expect("stdin").write_all(stdin) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
    }
    child.wait_with_output().expect("wait")
}

fn ok_json(args: &[&str], input: &Value) -> Value {
    let out = run(args, input.to_string().as_bytes());
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn request_to_v10_renames_method_and_reshapes_parts() {
    let v03 = json!({"jsonrpc":"2.0","id":7,"method":"message/send","params":{"message":{
        "kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"hi"}]}}});
    let v10 = ok_json(&["--to", "1.0", "--kind", "request"], &v03);
    assert_eq!(v10["method"], "SendMessage");
    assert_eq!(v10["id"], 7);
    assert_eq!(v10["params"]["message"]["role"], "ROLE_USER");
    assert_eq!(v10["params"]["message"]["parts"][0], json!({"text": "hi"}));
    // and back again
    let back = ok_json(&["--to", "0.3", "--kind", "request"], &v10);
    assert_eq!(back["method"], "message/send");
    assert_eq!(
        back["params"]["message"]["parts"][0],
        json!({"kind": "text", "text": "hi"})
    );
}

#[test]
fn response_needs_the_source_method() {
    let v03 = json!({"jsonrpc":"2.0","id":"r1","result":{"kind":"task","id":"t1","contextId":"c1",
        "status":{"state":"completed","timestamp":"2024-03-15T18:30:00Z"}}});
    let v10 = ok_json(
        &[
            "--to",
            "1.0",
            "--kind",
            "response",
            "--method",
            "message/send",
        ],
        &v03,
    );
    assert_eq!(v10["id"], "r1");
    assert_eq!(
        v10["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );

    let out = run(
        &["--to", "1.0", "--kind", "response"],
        v03.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn card_and_push_body() {
    let card = json!({"protocolVersion":"0.3.0","name":"A","description":"d","url":"http://127.0.0.1:1/a2a",
        "version":"1","capabilities":{},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]});
    let v10 = ok_json(&["--to", "1.0", "--kind", "card"], &card);
    assert_eq!(
        v10["supportedInterfaces"][0]["url"],
        "http://127.0.0.1:1/a2a"
    );
    assert_eq!(v10["supportedInterfaces"][0]["protocolBinding"], "JSONRPC");
    assert_eq!(v10["supportedInterfaces"][0]["protocolVersion"], "0.3");

    let body = json!({"id":"t1","contextId":"c1","status":{"state":"completed"},"kind":"task"});
    let v10 = ok_json(&["--to", "1.0", "--kind", "push-body"], &body);
    assert_eq!(v10["task"]["status"]["state"], "TASK_STATE_COMPLETED");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    for (args, input) in [
        (&["--to", "1.0", "--kind", "request"][..], &b"{not json"[..]),
        (
            &["--to", "1.0", "--kind", "request"][..],
            &br#"{"jsonrpc":"2.0","id":1,"method":"no/such","params":{}}"#[..],
        ),
        (
            &["--to", "0.3", "--kind", "request"][..],
            &br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}"#[..],
        ),
        (&["--to", "1.0", "--kind", "card"][..], &b"[]"[..]),
    ] {
        let out = run(args, input);
        assert_eq!(
            out.status.code(),
            Some(2),
            "input {}",
            String::from_utf8_lossy(input)
        );
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("error: "), "{err}");
    }
}

#[test]
fn unknown_flag_values_are_refused() {
    let out = run(&["--to", "2.0", "--kind", "request"], b"{}");
    assert_ne!(out.status.code(), Some(0));
}

// Operations (issue #23): `config example` / `config check`, where
// `serve --help` sends readers, --callback-url, --log-format.

/// The binary with `args`, no stdin: (exit code, stdout, stderr).
fn proxy_cmd(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run a2a-compat-proxy");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("a2a-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join(name);
    std::fs::write(&f, text).unwrap();
    f
}

#[test]
fn config_example_is_accepted_by_config_check() {
    let (code, example, err) = proxy_cmd(&["config", "example"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(example.lines().filter(|l| l.starts_with('#')).count() > 3);
    for key in ["upstream", "limits", "push", "log_format", "tls_cert_file"] {
        assert!(example.contains(key), "example lacks {key}");
    }
    let f = temp_file("example.toml", &example);
    let (code, out, err) = proxy_cmd(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("valid"), "{out}");
    // The resolved settings: the example's values and the defaults.
    assert!(out.contains("127.0.0.1"), "{out}");
    assert!(out.contains("max_body_bytes: 4194304"), "{out}");
}

#[test]
fn config_check_refuses_bad_files_naming_the_key_and_hides_secrets() {
    for (text, key) in [
        ("[upstream]\nurl = \"ftp://a\"\n", "upstream.url"),
        ("listen = \"x\"\n[upstream]\nurl = \"http://a\"\n", "listen"),
        ("no_such_key = 1\n[upstream]\nurl = \"http://a\"\n", "no_such_key"),
        (
            "tls_cert_file = \"/nonexistent/cert.pem\"\ntls_key_file = \"/nonexistent/key.pem\"\n[upstream]\nurl = \"http://a\"\n",
            "tls_cert_file",
        ),
        ("log_format = \"xml\"\n[upstream]\nurl = \"http://a\"\n", "log_format"),
    ] {
        let f = temp_file("bad.toml", text);
        let (code, out, err) = proxy_cmd(&["config", "check", f.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{text}: {out} {err}");
        assert!(err.contains(key), "{text}: {err}");
    }
    let f = temp_file(
        "pg.toml",
        "[upstream]\nurl = \"http://a\"\n[push]\npostgres_url = \"postgres://u:s3cret-pw@db/a2a\"\n",
    );
    let (code, out, err) = proxy_cmd(&["config", "check", f.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        !out.contains("s3cret-pw") && !err.contains("s3cret-pw"),
        "{out}"
    );
    assert!(out.contains("redacted"), "{out}");
}

#[test]
fn serve_help_names_where_the_keys_are_documented() {
    let (code, out, _) = proxy_cmd(&["serve", "--help"]);
    assert_eq!(code, Some(0));
    assert!(out.contains("proxy/README.md"), "{out}");
    assert!(out.contains("config example"), "{out}");
    assert!(!out.contains("see the `config` module"), "{out}");
    for flag in ["--tls-cert", "--tls-key", "--callback-url", "--log-format"] {
        assert!(out.contains(flag), "{flag} missing: {out}");
    }
}

#[test]
fn callback_url_flag_is_read_and_checked() {
    let (code, _, err) = proxy_cmd(&[
        "serve",
        "--upstream",
        "http://127.0.0.1:9",
        "--callback-url",
        "ftp://nope",
    ]);
    assert_eq!(code, Some(2));
    assert!(err.contains("push.callback_url"), "{err}");
}

/// Starts `serve` with `args`, reads stderr until the "starting" line (at
/// most 10 s), stops it: the lines read.
fn first_log_lines(args: &[&str]) -> Vec<String> {
    let listen = ports::free_local_addr().unwrap().to_string();
    let mut all = vec!["--listen", &listen, "--upstream", "http://127.0.0.1:9"];
    all.extend(["--upstream-version", "0.3", "--no-push"]);
    all.extend(args);
    let (mut child, rx) = child::serve_logging(&all, "info");
    let started = |lines: &[String]| lines.last().is_some_and(|l| l.contains("starting"));
    let lines = child::lines_until(&rx, std::time::Duration::from_secs(10), started);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        lines.iter().any(|l| l.contains("starting")),
        "no start line: {lines:?}"
    );
    lines
}

#[test]
fn log_format_flag_chooses_text_or_json_and_never_colours_a_pipe() {
    // auto (the default) and text, on a pipe: no ANSI codes.
    for args in [
        &[][..],
        &["--log-format", "text"][..],
        &["--log-format", "auto"][..],
    ] {
        let lines = first_log_lines(args);
        assert!(
            !lines.iter().any(|l| l.contains('\x1b')),
            "{args:?}: {lines:?}"
        );
        assert!(
            serde_json::from_str::<Value>(&lines[0]).is_err(),
            "{lines:?}"
        );
    }
    // json, and --log-json as its alias: one JSON object per line.
    for args in [&["--log-format", "json"][..], &["--log-json"][..]] {
        for l in first_log_lines(args) {
            let v: Value = serde_json::from_str(&l).unwrap_or_else(|e| panic!("{e}: {l}"));
            assert!(v.is_object(), "{l}");
        }
    }
    let (code, _, _) = proxy_cmd(&["serve", "--log-format", "xml", "--upstream", "http://a"]);
    assert_eq!(code, Some(2));
}

/// With the call span on (`a2a_call` at DEBUG), a call's log lines are
/// in a span that names the caller's W3C trace id and the call's agent,
/// and its close is logged with the answer's status; off (the default),
/// no line names it.
#[test]
fn the_call_span_carries_the_callers_trace_id() {
    use std::io::Read;
    const TRACE_ID: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("00-{TRACE_ID}-00f067aa0ba902b7-01");
    for (filter, on) in [("info,a2a_call=debug", true), ("info", false)] {
        let listen = ports::free_local_addr().unwrap();
        let listen_at = listen.to_string();
        let (mut child, rx) = child::serve_logging(
            &[
                "--listen",
                &listen_at,
                "--upstream",
                "http://127.0.0.1:9",
                "--upstream-version",
                "0.3",
                "--no-push",
                "--log-format",
                "json",
            ],
            filter,
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
        let next = |rx: &std::sync::mpsc::Receiver<String>| {
            let left = deadline.checked_duration_since(std::time::Instant::now())?;
            rx.recv_timeout(left).ok()
        };
        while let Some(l) = next(&rx) {
            if l.contains("starting") {
                break;
            }
        }
        // One call (the agent is away: answered with an error), then the
        // access line that ends it.
        let mut status = 0;
        for _ in 0..100 {
            if let Ok(mut s) = std::net::TcpStream::connect(listen) {
                s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
                    .unwrap();
                let req = format!(
                    "POST / HTTP/1.1\r\nHost: x\r\nA2A-Version: 1.0\r\ntraceparent: {traceparent}\r\n\
                     Content-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
                );
                s.write_all(req.as_bytes()).unwrap();
                let mut out = String::new();
                let _ = s.read_to_string(&mut out);
                status = out
                    .split(' ')
                    .nth(1)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // A JSON-RPC error (no method), HTTP 200.
        assert_eq!(status, 200);
        let mut lines = Vec::new();
        while let Some(l) = next(&rx) {
            let access = l.contains("\"target\":\"access\"");
            lines.push(l);
            if access {
                break;
            }
        }
        // The span's close comes with the access line or right after it.
        if on {
            while !lines.iter().any(|l| l.contains("\"close\"")) {
                let Some(l) = next(&rx) else { break };
                lines.push(l);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            lines.iter().any(|l| l.contains("\"target\":\"access\"")),
            "{lines:?}"
        );
        // The access line's values as values: `"1.0"` and `200`, not
        // `"Some(\"1.0\")"` and `"Some(200)"`.
        let line = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v["target"] == "access")
            .unwrap_or_else(|| panic!("{lines:?}"));
        assert_eq!(line["fields"]["status"], 200, "{line}");
        assert_eq!(line["fields"]["client_version"], "1.0", "{line}");
        assert!(!line.to_string().contains("Some("), "{line}");
        let spanned: Vec<Value> = lines
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["span"]["trace_id"] == TRACE_ID)
            .collect();
        if !on {
            assert!(spanned.is_empty(), "{lines:?}");
            continue;
        }
        let access = spanned
            .iter()
            .find(|v| v["target"] == "access")
            .unwrap_or_else(|| panic!("the access line is in the call span: {lines:?}"));
        assert_eq!(access["span"]["name"], "call");
        assert_eq!(access["span"]["agent"], "default");
        let close = spanned
            .iter()
            .find(|v| v["fields"]["message"] == "close")
            .unwrap_or_else(|| panic!("the span's close is logged: {lines:?}"));
        assert_eq!(close["span"]["status"], status, "{close}");
    }
}
