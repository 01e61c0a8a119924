//! Differential fuzzing of the streaming transcoder against the typed
//! general path: whenever `translate::transcode` answers, the general path
//! (`document::translate`) must succeed with exactly the same bytes.
//!
//! ```text
//! cd translate/fuzz
//! python3 seeds.py corpus/transcode      # fixtures as seeds
//! cargo +nightly fuzz run -O transcode corpus/transcode -- -dict=transcode.dict -max_total_time=600
//! ```
//!
//! The first input byte picks the direction, request or response, and the
//! method, or (high bit set) an agent card (`transcode::card` against
//! `translate(Kind::Card, ..)`), or (bit 6 set) a whole document of one of
//! the document API's kinds (`transcode::document` against
//! `document::translate_typed`, bare params and results included); the
//! rest is the body.
//!
//! A response the transcoder writes in v1.0 is also written with its task
//! facts (`transcode::response_to_v10_with_facts`): the bytes must be the
//! same, and the facts what reading the v1.0 bytes finds (as the proxy's
//! ListTasks index reads them).
#![no_main]

use libfuzzer_sys::fuzz_target;
use translate::document::{translate_typed as translate, Kind};
use translate::method::Method;
use chrono::{DateTime, FixedOffset};
use serde_json::Value;
use translate::transcode::TaskFacts;
use translate::{transcode, Version};

/// The document kinds the transcoder takes whole, with the method a bare
/// request or result is given (a request or event envelope names its own).
const DOCUMENTS: [(Kind, Option<Method>); 16] = [
    (Kind::Part, None),
    (Kind::Message, None),
    (Kind::Task, None),
    (Kind::TaskStatus, None),
    (Kind::Artifact, None),
    (Kind::StatusUpdate, None),
    (Kind::ArtifactUpdate, None),
    (Kind::StreamResponse, None),
    (Kind::PushBody, None),
    (Kind::Request, None),
    (Kind::Request, Some(Method::SendMessage)),
    (Kind::Response, Some(Method::SendMessage)),
    (Kind::Response, Some(Method::GetTask)),
    (Kind::Event, None),
    (Kind::Event, Some(Method::SubscribeToTask)),
    (Kind::Card, None),
];

/// A task or status update as the index reads it from v1.0 bytes.
#[derive(Debug, PartialEq)]
enum Read {
    Nothing,
    Task(String, Option<String>, Option<String>, Option<DateTime<FixedOffset>>),
    Status(String, Option<String>, Option<DateTime<FixedOffset>>),
}

fn status_of(status: &Value) -> (Option<String>, Option<DateTime<FixedOffset>>) {
    (
        status.get("state").and_then(Value::as_str).map(str::to_string),
        status
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok()),
    )
}

fn read_task(t: &Value) -> Read {
    match t.get("id").and_then(Value::as_str) {
        Some(id) => {
            let (state, ts) = t.get("status").map(status_of).unwrap_or((None, None));
            let context = t.get("contextId").and_then(Value::as_str).map(str::to_string);
            Read::Task(id.to_string(), context, state, ts)
        }
        None => Read::Nothing,
    }
}

fn read_answer(method: Method, out: &[u8]) -> Read {
    let v: Value = serde_json::from_slice(out).expect("v1.0 output is JSON");
    let result = &v["result"];
    if matches!(method, Method::GetTask | Method::CancelTask) {
        return read_task(result);
    }
    if let Some(t) = result.get("task") {
        return read_task(t);
    }
    let Some(u) = result.get("statusUpdate") else {
        return Read::Nothing;
    };
    match (u.get("taskId").and_then(Value::as_str), u.get("status")) {
        (Some(id), Some(status)) => {
            let (state, ts) = status_of(status);
            Read::Status(id.to_string(), state, ts)
        }
        _ => Read::Nothing,
    }
}

fn read_facts(f: &TaskFacts<'_>) -> Read {
    match f {
        TaskFacts::Nothing => Read::Nothing,
        TaskFacts::Task { id, context, status } => Read::Task(
            id.to_string(),
            context.as_deref().map(str::to_string),
            Some(status.state.to_string()),
            status.timestamp,
        ),
        TaskFacts::Status { task_id, status } => Read::Status(
            task_id.to_string(),
            Some(status.state.to_string()),
            status.timestamp,
        ),
    }
}

fn check_facts(m: Method, body: &[u8], out: &[u8]) {
    let text = std::str::from_utf8(body).expect("the transcoder took it: UTF-8");
    let (with, facts) = transcode::response_to_v10_with_facts(m, text)
        .expect("the transcoder answers with facts where it answers");
    assert_eq!(with, out, "the output with facts differs");
    assert_eq!(
        read_facts(&facts),
        read_answer(m, out),
        "facts differ from the output's: {}",
        String::from_utf8_lossy(out)
    );
}

const RESPONSES: [Method; 5] = [
    Method::SendMessage,
    Method::SendStreamingMessage,
    Method::SubscribeToTask,
    Method::GetTask,
    Method::CancelTask,
];

fn check(what: &str, fast: Option<Vec<u8>>, slow: impl FnOnce() -> Result<Vec<u8>, String>) {
    let Some(fast) = fast else {
        return;
    };
    match slow() {
        Ok(slow) if slow == fast => {}
        Ok(slow) => panic!(
            "{what}: transcoder and typed path differ\n  transcode {}\n  typed     {}",
            String::from_utf8_lossy(&fast),
            String::from_utf8_lossy(&slow)
        ),
        Err(e) => panic!(
            "{what}: transcoder answered {} where the typed path fails: {e}",
            String::from_utf8_lossy(&fast)
        ),
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else {
        return;
    };
    let to = if sel & 1 == 0 {
        Version::V10
    } else {
        Version::V03
    };
    if sel & 0xc0 == 0x40 {
        let (kind, m) = DOCUMENTS[usize::from(sel >> 2) % DOCUMENTS.len()];
        let name = m.and_then(|m| m.name(to.other()));
        check("document", transcode::document(kind, to, m, body), || {
            translate(kind, to, name, body).map_err(|e| e.to_string())
        });
    } else if sel & 0x80 != 0 {
        check("card", transcode::card(to, body), || {
            translate(Kind::Card, to, None, body).map_err(|e| e.to_string())
        });
    } else if sel & 2 == 0 {
        let m = RESPONSES[usize::from(sel >> 2) % RESPONSES.len()];
        let name = m.name(Version::V10).unwrap_or_default();
        let fast = transcode::response(to, m, body);
        if let (Some(out), Version::V10) = (&fast, to) {
            check_facts(m, body, out);
        }
        check("response", fast, || {
            translate(Kind::Response, to, Some(name), body).map_err(|e| e.to_string())
        });
    } else {
        let name = match (to, (sel >> 2) & 1) {
            (Version::V10, 0) => "message/send",
            (Version::V10, _) => "message/stream",
            (Version::V03, 0) => "SendMessage",
            (Version::V03, _) => "SendStreamingMessage",
        };
        check("request", transcode::request(to, name, body), || {
            translate(Kind::Request, to, None, body).map_err(|e| e.to_string())
        });
    }
});
