//! The `translate` subcommand as a user runs it: real process, stdin, stdout,
//! exit codes.

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
