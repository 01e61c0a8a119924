//! The fixed wire bytes of the benchmark: a SendMessage request and the Task
//! answer in both versions, and streaming events.

/// Text of the agent's artifact, long enough that translation has real work.
fn artifact_text() -> String {
    "The quick brown fox jumps over the lazy dog. ".repeat(24)
}

/// `message/send` (v0.3) or `SendMessage` (v1.0) request body.
pub fn send_request(v10: bool, streaming: bool) -> Vec<u8> {
    let method = match (v10, streaming) {
        (false, false) => "message/send",
        (false, true) => "message/stream",
        (true, false) => "SendMessage",
        (true, true) => "SendStreamingMessage",
    };
    let message = if v10 {
        r#"{"messageId":"m-1","contextId":"ctx-1","role":"ROLE_USER","parts":[{"text":"hello from the benchmark"}],"metadata":{"bench":true}}"#
    } else {
        r#"{"kind":"message","messageId":"m-1","contextId":"ctx-1","role":"user","parts":[{"kind":"text","text":"hello from the benchmark"}],"metadata":{"bench":true}}"#
    };
    format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"message":{message}}}}}"#)
        .into_bytes()
}

/// The Task the fake agent answers with, as a JSON-RPC response.
pub fn task_response(v10: bool) -> Vec<u8> {
    let text = artifact_text();
    let task = if v10 {
        format!(
            concat!(
                r#"{{"id":"task-1","contextId":"ctx-1","status":{{"state":"TASK_STATE_COMPLETED","timestamp":"2026-01-01T00:00:00Z"}},"#,
                r#""history":[{{"messageId":"m-1","contextId":"ctx-1","taskId":"task-1","role":"ROLE_USER","parts":[{{"text":"hello from the benchmark"}}]}},"#,
                r#"{{"messageId":"m-2","contextId":"ctx-1","taskId":"task-1","role":"ROLE_AGENT","parts":[{{"text":"working on it"}}]}}],"#,
                r#""artifacts":[{{"artifactId":"a-1","name":"answer","parts":[{{"text":"{}"}},{{"data":{{"score":0.97,"tags":["x","y"]}}}}]}}],"#,
                r#""metadata":{{"bench":true}}}}"#
            ),
            text
        )
    } else {
        format!(
            concat!(
                r#"{{"kind":"task","id":"task-1","contextId":"ctx-1","status":{{"state":"completed","timestamp":"2026-01-01T00:00:00Z"}},"#,
                r#""history":[{{"kind":"message","messageId":"m-1","contextId":"ctx-1","taskId":"task-1","role":"user","parts":[{{"kind":"text","text":"hello from the benchmark"}}]}},"#,
                r#"{{"kind":"message","messageId":"m-2","contextId":"ctx-1","taskId":"task-1","role":"agent","parts":[{{"kind":"text","text":"working on it"}}]}}],"#,
                r#""artifacts":[{{"artifactId":"a-1","name":"answer","parts":[{{"kind":"text","text":"{}"}},{{"kind":"data","data":{{"score":0.97,"tags":["x","y"]}}}}]}}],"#,
                r#""metadata":{{"bench":true}}}}"#
            ),
            text
        )
    };
    let result = if v10 {
        format!(r#"{{"task":{task}}}"#)
    } else {
        task
    };
    format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#).into_bytes()
}

/// One SSE `data:` frame: a status update (`last` = the final one).
pub fn status_event(v10: bool, n: usize, last: bool) -> Vec<u8> {
    let body = if v10 {
        let state = if last {
            "TASK_STATE_COMPLETED"
        } else {
            "TASK_STATE_WORKING"
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"statusUpdate":{{"taskId":"task-1","contextId":"ctx-1","status":{{"state":"{state}","message":{{"messageId":"s-{n}","role":"ROLE_AGENT","parts":[{{"text":"step {n}"}}]}},"timestamp":"2026-01-01T00:00:00Z"}}}}}}}}"#
        )
    } else {
        let state = if last { "completed" } else { "working" };
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{{"state":"{state}","message":{{"kind":"message","messageId":"s-{n}","role":"agent","parts":[{{"kind":"text","text":"step {n}"}}]}},"timestamp":"2026-01-01T00:00:00Z"}},"final":{last}}}}}"#
        )
    };
    format!("data: {body}\n\n").into_bytes()
}
