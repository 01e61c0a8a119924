//! Helpers of the tests of `gen`, `translate --jsonl`, `roundtrip` and the
//! SDK worked examples: the binary run with stdin, the official v0.3 JSON
//! schema, the SDK venv.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `a2a-compat-proxy ARGS` with `stdin` written to it (on a thread, so a
/// large input cannot block on a full output pipe); its output.
pub fn run(args: &[&str], stdin: &[u8]) -> Output {
    run_env(args, stdin, &[])
}

/// [`run`] with extra environment variables.
pub fn run_env(args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_a2a-compat-proxy"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start a2a-compat-proxy");
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("run a2a-compat-proxy");
    let _ = writer.join();
    out
}

/// The lines `gen ARGS` writes (it must succeed).
pub fn gen(args: &[&str]) -> Vec<String> {
    let mut all = vec!["gen"];
    all.extend_from_slice(args);
    let out = run(&all, b"");
    assert!(
        out.status.success(),
        "gen {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("gen writes UTF-8")
        .lines()
        .map(str::to_string)
        .collect()
}

/// Runs `tests/sdk/setup.sh` (idempotent, locked) once per process.
pub fn venvs() {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE.get_or_init(|| {
        Command::new("bash")
            .arg(root().join("tests/sdk/setup.sh"))
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    });
    assert!(ok, "tests/sdk/setup.sh failed");
}

/// The a2a-sdk 1.x venv's Python.
pub fn python_v10() -> PathBuf {
    venvs();
    root().join(".venv-v10/bin/python")
}

/// Runs `program ARGS` with `stdin`; its output (stdout must be UTF-8).
pub fn pipe(program: &Path, args: &[&str], stdin: &[u8]) -> (bool, String, String) {
    let mut child = Command::new(program)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()));
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    (
        out.status.success(),
        String::from_utf8(out.stdout).expect("UTF-8 output"),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The official v0.3 JSON schema: `A2A_V03_SCHEMA` (the file), else
/// `A2A_SHARED_DIR/spec/…`, else `shared/spec/…` beside the clone (or
/// beside the main checkout of a worktree). `None` outside CI when it is
/// not there (the check then prints `skipped:`); under CI a missing schema
/// fails.
pub fn v03_schema() -> Option<Value> {
    const REL: &str = "spec/a2a-v0.3.schema.json";
    let path = if let Some(f) = std::env::var_os("A2A_V03_SCHEMA") {
        PathBuf::from(f)
    } else if let Some(d) = std::env::var_os("A2A_SHARED_DIR") {
        PathBuf::from(d).join(REL)
    } else {
        let candidates = [root().join("../shared"), root().join("../../shared")];
        candidates
            .iter()
            .map(|d| d.join(REL))
            .find(|p| p.exists())
            .unwrap_or_else(|| candidates[0].join(REL))
    };
    if !path.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the official v0.3 JSON schema is missing at {}",
            path.display()
        );
        eprintln!(
            "skipped: the official v0.3 JSON schema is not at {}; set A2A_V03_SCHEMA to its file",
            path.display()
        );
        return None;
    }
    let text = std::fs::read_to_string(&path).expect("read the schema");
    Some(serde_json::from_str(&text).expect("the schema is JSON"))
}

/// The v0.3 definitions a document of `kind` (answering v1.0 `method`,
/// for responses and events) must satisfy, any one of them; requests by
/// their own method.
pub fn v03_definitions(kind: &str, method: Option<&str>, doc: &Value) -> Vec<&'static str> {
    match kind {
        "task" => vec!["Task"],
        "message" => vec!["Message"],
        "card" => vec!["AgentCard"],
        "push-config" => vec!["TaskPushNotificationConfig"],
        "push-body" => vec![
            "Task",
            "Message",
            "TaskStatusUpdateEvent",
            "TaskArtifactUpdateEvent",
        ],
        "request" => vec![match doc["method"].as_str().unwrap_or_default() {
            "message/send" => "SendMessageRequest",
            "message/stream" => "SendStreamingMessageRequest",
            "tasks/get" => "GetTaskRequest",
            "tasks/cancel" => "CancelTaskRequest",
            "tasks/resubscribe" => "TaskResubscriptionRequest",
            "tasks/pushNotificationConfig/set" => "SetTaskPushNotificationConfigRequest",
            "tasks/pushNotificationConfig/get" => "GetTaskPushNotificationConfigRequest",
            "tasks/pushNotificationConfig/list" => "ListTaskPushNotificationConfigRequest",
            "tasks/pushNotificationConfig/delete" => "DeleteTaskPushNotificationConfigRequest",
            "agent/getAuthenticatedExtendedCard" => "GetAuthenticatedExtendedCardRequest",
            other => panic!("no v0.3 request definition for {other:?}"),
        }],
        "response" | "event" => vec![match method.unwrap_or("SendStreamingMessage") {
            "SendMessage" => "SendMessageSuccessResponse",
            "SendStreamingMessage" | "SubscribeToTask" => "SendStreamingMessageSuccessResponse",
            "GetTask" => "GetTaskSuccessResponse",
            "CancelTask" => "CancelTaskSuccessResponse",
            "CreateTaskPushNotificationConfig" => "SetTaskPushNotificationConfigSuccessResponse",
            "GetTaskPushNotificationConfig" => "GetTaskPushNotificationConfigSuccessResponse",
            "ListTaskPushNotificationConfigs" => "ListTaskPushNotificationConfigSuccessResponse",
            "DeleteTaskPushNotificationConfig" => "DeleteTaskPushNotificationConfigSuccessResponse",
            "GetExtendedAgentCard" => "GetAuthenticatedExtendedCardSuccessResponse",
            other => panic!("no v0.3 response definition for {other:?}"),
        }],
        other => panic!("no v0.3 definition for kind {other:?}"),
    }
}

/// A validator of any of `defs` of the schema.
pub fn validator(schema: &Value, defs: &[&str]) -> jsonschema::Validator {
    let refs: Vec<Value> = defs
        .iter()
        .map(|d| json!({"$ref": format!("#/definitions/{d}")}))
        .collect();
    let root = match refs.as_slice() {
        [one] => json!({"$ref": one["$ref"], "definitions": schema["definitions"]}),
        _ => json!({"anyOf": refs, "definitions": schema["definitions"]}),
    };
    jsonschema::validator_for(&root).expect("the schema compiles")
}

/// Every method of `version` (`"0.3"` / `"1.0"`), by its v1.0 name.
pub fn methods(version: &str) -> Vec<&'static str> {
    let all = [
        "SendMessage",
        "SendStreamingMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "SubscribeToTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
    ];
    all.into_iter()
        .filter(|m| version == "1.0" || *m != "ListTasks")
        .collect()
}
