//! The real-SDK client scenario's checks (`tests/sdk/client_v*.py`, every
//! step of [`e2e::peer::CLIENT_STEPS`]): what a run through one proxy must
//! show, shared by the suites that run it (`interop.rs` through one
//! instance, `instances.rs` through several behind a load balancer).

use std::path::PathBuf;
use std::time::Duration;

use e2e::json_eq;
use e2e::peer::{ClientRun, CLIENT_STEPS};
use e2e::sdk::{python_v03, python_v10, sdk_script};
use proxy::version::Version;
use serde_json::{json, Value};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sdk {
    V03,
    V10,
}

impl Sdk {
    pub fn python(self) -> PathBuf {
        match self {
            Sdk::V03 => python_v03(),
            Sdk::V10 => python_v10(),
        }
    }
    pub fn script(self, role: &str) -> PathBuf {
        let v = match self {
            Sdk::V03 => "v03",
            Sdk::V10 => "v10",
        };
        sdk_script(&format!("{role}_{v}.py"))
    }
    pub fn version(self) -> Version {
        match self {
            Sdk::V03 => Version::V03,
            Sdk::V10 => Version::V10,
        }
    }
}

/// The binding the SDK client uses (the agents serve both with `--rest`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Binding {
    JsonRpc,
    Rest,
}

/// `TASK_STATE_INPUT_REQUIRED` / `input-required` → `input-required`.
pub fn norm_state(v: &Value) -> String {
    let s = v.as_str().unwrap_or("<none>");
    s.strip_prefix("TASK_STATE_")
        .map(|r| r.to_ascii_lowercase().replace('_', "-"))
        .unwrap_or_else(|| s.to_string())
}

pub fn texts(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Collects failed checks instead of stopping at the first.
#[derive(Default)]
struct Checks(Vec<String>);

impl Checks {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }
}

/// Runs `client` against `agent` behind the proxy (upstream version fixed
/// to the agent's, or read from its card when `auto`) and returns the
/// client's run, the proxy URL and the time the client took.
fn check_parts(c: &mut Checks, parts: &Value) {
    let want_parts = json!([
        {"text": "echo: parts"},
        {"data": {"k": [1, "x", true, null], "nested": {"z": 2.5}}},
        {"bytes": "AAFiaW5hcnn/", "name": "b.bin", "mime": "application/octet-stream"},
        {"uri": "https://example.com/f.txt", "name": "f.txt", "mime": "text/plain"}
    ]);
    c.check(json_eq::same(&parts["artifact_parts"], &want_parts), || {
        format!(
            "parts: artifact parts {} (want {want_parts}); differ at {:?}",
            parts["artifact_parts"],
            json_eq::diff(&parts["artifact_parts"], &want_parts)
        )
    });
    let want_meta = json!({"trace": "abc", "n": 2});
    c.check(
        json_eq::same(&parts["artifact_metadata"], &want_meta),
        || {
            format!(
                "parts: artifact metadata {} (want {want_meta})",
                parts["artifact_metadata"]
            )
        },
    );
}

/// Checks every step of a client run; panics listing every failure.
pub fn check_run(
    label: &str,
    client: Sdk,
    agent: Sdk,
    binding: Binding,
    run: &ClientRun,
    proxy_url: &str,
    took: Duration,
) {
    eprintln!("{label}: client ran {took:?}\n{}", run.raw);
    let mut c = Checks::default();
    let step = |name: &str| -> Value { run.step(name).cloned().unwrap_or(Value::Null) };
    for name in CLIENT_STEPS {
        let s = step(name);
        c.check(s["ok"] == true, || format!("{name}: not ok: {s}"));
    }

    // Card: discovered through the proxy, pointing at the proxy.
    let card = step("card");
    let agent_name = match agent {
        Sdk::V03 => "echo-v03",
        Sdk::V10 => "echo-v10",
    };
    c.check(card["name"] == agent_name, || {
        format!("card: name {}", card["name"])
    });
    c.check(card["streaming"] == true, || {
        format!("card: streaming {}", card["streaming"])
    });
    let want_url = match binding {
        Binding::JsonRpc => format!("{proxy_url}/"),
        Binding::Rest => proxy_url.to_string(),
    };
    match client {
        Sdk::V03 => {
            let primary = format!("{proxy_url}/");
            c.check(card["url"] == primary.as_str(), || {
                format!("card: url {} (want {primary})", card["url"])
            });
            if binding == Binding::Rest {
                let ifaces = card["interfaces"].as_array().cloned().unwrap_or_default();
                c.check(ifaces.iter().any(|i| i["url"] == want_url.as_str()), || {
                    format!("card: no HTTP+JSON interface at {want_url}: {ifaces:?}")
                });
            }
            c.check(
                card["protocol_version"]
                    .as_str()
                    .is_some_and(|v| v.starts_with("0.3")),
                || format!("card: protocolVersion {}", card["protocol_version"]),
            );
            c.check(card["preferred_transport"] == "JSONRPC", || {
                format!("card: preferredTransport {}", card["preferred_transport"])
            });
        }
        Sdk::V10 => {
            let ifaces = card["interfaces"].as_array().cloned().unwrap_or_default();
            c.check(
                ifaces.iter().any(|i| {
                    i["url"] == want_url.as_str()
                        && i["protocol_version"]
                            .as_str()
                            .is_some_and(|v| v.starts_with("1.0"))
                }),
                || format!("card: no {binding:?} 1.0 interface at {want_url}: {ifaces:?}"),
            );
        }
    }

    // Send (blocking): a completed Task echoing the text.
    let send = step("send");
    let send_id = send["task_id"].as_str().unwrap_or("").to_string();
    c.check(send["kind"] == "task", || {
        format!("send: kind {}", send["kind"])
    });
    c.check(!send_id.is_empty(), || "send: no task id".into());
    c.check(norm_state(&send["state"]) == "completed", || {
        format!("send: state {}", send["state"])
    });
    c.check(texts(&send["artifact_texts"]) == ["echo: hello"], || {
        format!("send: artifacts {}", send["artifact_texts"])
    });

    // Stream: task, working, artifact, completed, all of one task.
    let stream = step("stream");
    let events = stream["events"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    c.check(kinds.first() == Some(&"task"), || {
        format!("stream: first event {kinds:?}")
    });
    c.check(
        events
            .iter()
            .any(|e| e["kind"] == "status-update" && norm_state(&e["state"]) == "working"),
        || format!("stream: no working status-update in {kinds:?}"),
    );
    c.check(
        events.iter().any(|e| {
            e["kind"] == "artifact-update" && texts(&e["artifact_texts"]) == ["echo: stream me"]
        }),
        || "stream: no artifact-update echoing the text".into(),
    );
    c.check(
        events.last().is_some_and(|e| {
            e["kind"] == "status-update" && norm_state(&e["state"]) == "completed"
        }),
        || format!("stream: last event {:?}", events.last()),
    );
    let stream_id = stream["task_id"].as_str().unwrap_or("");
    c.check(
        !stream_id.is_empty() && events.iter().all(|e| e["task_id"] == stream_id),
        || format!("stream: events of several tasks ({stream_id})"),
    );
    c.check(norm_state(&stream["final_state"]) == "completed", || {
        format!("stream: final state {}", stream["final_state"])
    });
    if client == Sdk::V03 {
        c.check(
            events
                .iter()
                .filter(|e| e["kind"] == "status-update")
                .all(|e| e["final"] == (norm_state(&e["state"]) == "completed")),
            || "stream: v0.3 `final` flags wrong".into(),
        );
    }

    // Get: the task of the send step.
    let get = step("get");
    c.check(get["task_id"] == send_id.as_str(), || {
        format!("get: task id {} (want {send_id})", get["task_id"])
    });
    c.check(get["context_id"] == send["context_id"], || {
        format!(
            "get: context id {} vs {}",
            get["context_id"], send["context_id"]
        )
    });
    c.check(norm_state(&get["state"]) == "completed", || {
        format!("get: state {}", get["state"])
    });
    c.check(texts(&get["artifact_texts"]) == ["echo: hello"], || {
        format!("get: artifacts {}", get["artifact_texts"])
    });

    // History: the user's message, role and text intact, in send and get.
    for (name, s, text) in [("send", &send, "hello"), ("get", &get, "hello")] {
        let h = s["history"].as_array().cloned().unwrap_or_default();
        c.check(
            h.iter().any(|m| {
                matches!(m["role"].as_str(), Some("user" | "ROLE_USER"))
                    && texts(&m["text"]) == [text]
            }),
            || format!("{name}: history without the user's {text:?}: {h:?}"),
        );
    }

    // Follow-up in the same context: a new task, same context id, echoed.
    let follow = step("follow_up");
    c.check(follow["context_id"] == send["context_id"], || {
        format!(
            "follow_up: context id {} vs {}",
            follow["context_id"], send["context_id"]
        )
    });
    c.check(
        follow["task_id"].is_string() && follow["task_id"] != send["task_id"],
        || format!("follow_up: task id {}", follow["task_id"]),
    );
    c.check(texts(&follow["artifact_texts"]) == ["echo: again"], || {
        format!("follow_up: artifacts {}", follow["artifact_texts"])
    });

    // Parts of every kind and the message metadata, echoed back by the agent.
    // Over REST this also covers the v0.3 proto `fileWithBytes`, which the
    // SDKs fill with the base64 text (proto::convert_v03::v03_file_bytes_to_pb).
    check_parts(&mut c, &step("parts"));

    // ~100 KB bodies (past the proxy's 64 KiB read-ahead): echoed intact.
    for name in ["big", "big_stream"] {
        let b = step(name);
        c.check(
            b["echo_ok"] == true && norm_state(&b["state"]) == "completed",
            || format!("{name}: {b}"),
        );
    }

    // Cancel: a running task becomes canceled.
    let cancel = step("cancel");
    let started = &cancel["started"];
    c.check(
        matches!(
            norm_state(&started["state"]).as_str(),
            "submitted" | "working"
        ),
        || format!("cancel: non-blocking send returned {}", started["state"]),
    );
    c.check(
        cancel["task_id"] == started["task_id"] && started["task_id"].is_string(),
        || {
            format!(
                "cancel: task id {} vs {}",
                cancel["task_id"], started["task_id"]
            )
        },
    );
    c.check(norm_state(&cancel["state"]) == "canceled", || {
        format!("cancel: state {}", cancel["state"])
    });

    // Resubscribe: the rest of a running task's events.
    let resub = step("resubscribe");
    let started = &resub["started"];
    let events = resub["events"].as_array().cloned().unwrap_or_default();
    c.check(
        matches!(
            norm_state(&started["state"]).as_str(),
            "submitted" | "working"
        ),
        || {
            format!(
                "resubscribe: non-blocking send returned {}",
                started["state"]
            )
        },
    );
    c.check(!events.is_empty(), || "resubscribe: no events".into());
    c.check(
        events.iter().all(|e| e["task_id"] == started["task_id"]),
        || {
            format!(
                "resubscribe: events of another task than {}",
                started["task_id"]
            )
        },
    );
    c.check(norm_state(&resub["final_state"]) == "completed", || {
        format!("resubscribe: final state {}", resub["final_state"])
    });
    c.check(
        texts(&resub["artifact_texts"]) == ["echo: slow resubscribe"],
        || format!("resubscribe: artifacts {}", resub["artifact_texts"]),
    );

    // GetTask with historyLength 0: v0.3 reads 0 as "unlimited", v1.0 as
    // "none" (the proxy drops a v0.3 agent's history for a v1.0 client).
    let h = step("get_no_history");
    let history_len = h["history"].as_array().map(Vec::len);
    let want_len = match client {
        Sdk::V03 => 1,
        Sdk::V10 => 0,
    };
    c.check(history_len == Some(want_len), || {
        format!("get_no_history: want {want_len} history messages: {h}")
    });

    // Resubscribe to a completed task: the agent's error, read by the
    // client's SDK as a JSON-RPC error (a2a-python 0.3 reads it only from an
    // event stream; v0.3 agents say -32602, v1.0 agents -32004).
    let e = step("resubscribe_done");
    match (client, binding) {
        // Over REST the v0.3 SDK reports only an HTTP-level failure.
        (Sdk::V03, Binding::Rest) => c.check(
            e["error_type"]
                .as_str()
                .is_some_and(|t| t.starts_with("A2AClient")),
            || format!("resubscribe_done: {e}"),
        ),
        (Sdk::V03, Binding::JsonRpc) => c.check(
            e["error_type"] == "A2AClientJSONRPCError"
                && (e["code"] == -32602 || e["code"] == -32004),
            || format!("resubscribe_done: {e}"),
        ),
        (Sdk::V10, _) => c.check(
            matches!(
                e["error_type"].as_str(),
                Some("InvalidParamsError" | "UnsupportedOperationError")
            ),
            || format!("resubscribe_done: {e}"),
        ),
    }

    // Errors: the agent's TaskNotFound / TaskNotCancelable, as the client's SDK knows them.
    // Over REST the v0.3 SDK sees only the HTTP status: a2a-python 0.3's
    // 404 / 409, also for a v1.0 agent (whose TaskNotCancelable is a 400:
    // the proxy reads the translated body's code before it answers).
    let not_cancelable_status = 409;
    for (name, code, class, status) in [
        ("get_missing", -32001, "TaskNotFoundError", 404),
        (
            "cancel_done",
            -32002,
            "TaskNotCancelableError",
            not_cancelable_status,
        ),
    ] {
        let e = step(name);
        match (client, binding) {
            (Sdk::V03, Binding::JsonRpc) => c.check(
                e["error_type"] == "A2AClientJSONRPCError" && e["code"] == code,
                || format!("{name}: error {e}"),
            ),
            (Sdk::V03, Binding::Rest) => c.check(
                e["error_type"] == "A2AClientHTTPError" && e["status"] == status,
                || format!("{name}: error {e} (want HTTP {status})"),
            ),
            (Sdk::V10, _) => c.check(e["error_type"] == class, || format!("{name}: error {e}")),
        }
    }

    super::assert_run_passed(label, c.0, run);
}

/// An SDK of `v` ("v03" / "v10").
pub fn sdk(v: &str) -> Sdk {
    if v == "v03" {
        Sdk::V03
    } else {
        Sdk::V10
    }
}
