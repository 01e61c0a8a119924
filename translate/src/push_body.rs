//! Push-notification (webhook) bodies (MAPPING-FACTS §9; DECISIONS "Push
//! bodies"): v0.3 receivers get a bare kind-tagged object (normally the Task;
//! a2a-js also sends events and messages), v1.0 receivers a `StreamResponse`.

use crate::lossy::{Direction, Lossy};
use crate::{event, v03, v10, TranslateError};

/// `Content-Type` of a v0.3 webhook body.
pub const V03_CONTENT_TYPE: &str = "application/json";
/// `Content-Type` of a v1.0 webhook body.
pub const V10_CONTENT_TYPE: &str = "application/a2a+json";

/// Lossy mappings of this module (see `crate::lossy`).
pub const LOSSY: &[Lossy] = &[Lossy {
    entity: "push body",
    direction: Direction::ToV03,
    what: "v0.3 receivers (a2a-python 0.3) expect the full Task on every push; a v1.0 statusUpdate / artifactUpdate / message body carries only a delta",
    decision: "to_v03 emits the bare kind-tagged v0.3 event or message (a2a-js legacy); fold_v03 folds it into the subscriber's Task snapshot (the proxy's push layer keeps the snapshots; a Message stays a bare Message)",
    fixture: "push-body/status-update.v10.json, push-body/status-update.v03.json",
    at: &[],
}];

/// Translates a v0.3 webhook body (bare Task, Message or event) to a v1.0
/// `StreamResponse`.
pub fn to_v10(b: v03::event::StreamEvent) -> Result<v10::event::StreamResponse, TranslateError> {
    event::stream_to_v10(b)
}

/// Translates a v1.0 webhook body (`StreamResponse`) to the bare kind-tagged
/// v0.3 object.
pub fn to_v03(b: v10::event::StreamResponse) -> Result<v03::event::StreamEvent, TranslateError> {
    event::stream_to_v03(b)
}

/// Folds one v0.3 webhook body into the Task snapshot a v0.3 receiver
/// expects (EDGE-CASES 25–26: v0.3 webhooks get the full Task on every
/// push). `known` is the snapshot built from this subscriber's earlier
/// pushes, if any:
/// - a Task replaces it;
/// - a status update sets the status (the previous status message goes to
///   the history, event metadata is merged into the task's), as a2a-python
///   0.3's task manager does;
/// - an artifact update adds or replaces the artifact by id, or appends
///   its parts when `append` is set (a chunk whose artifact is unknown is
///   added, not dropped);
/// - without `known`, the snapshot starts from what the event carries (id,
///   context id, status or `unknown`).
///
/// A Message has no v0.3 push form as a Task: it comes back unchanged, as
/// the bare kind-tagged Message.
pub fn fold_v03(
    known: Option<v03::task::Task>,
    e: v03::event::StreamEvent,
) -> v03::event::StreamEvent {
    use v03::event::StreamEvent;
    use v03::task::{Task, TaskState, TaskStatus};
    let start = |id: &str, context_id: &str, known: Option<Task>| {
        known.filter(|t| t.id == id).unwrap_or_else(|| Task {
            kind: Default::default(),
            id: id.to_string(),
            context_id: context_id.to_string(),
            status: TaskStatus {
                state: TaskState::Unknown,
                message: None,
                timestamp: None,
                extra: Default::default(),
            },
            artifacts: None,
            history: None,
            metadata: None,
            extra: Default::default(),
        })
    };
    match e {
        StreamEvent::Task(t) => StreamEvent::Task(t),
        StreamEvent::Message(m) => StreamEvent::Message(m),
        StreamEvent::StatusUpdate(u) => {
            let mut t = start(&u.task_id, &u.context_id, known);
            if let Some(m) = t.status.message.take() {
                t.history.get_or_insert_with(Vec::new).push(m);
            }
            if let Some(md) = u.metadata {
                t.metadata.get_or_insert_with(Default::default).extend(md);
            }
            t.status = u.status;
            StreamEvent::Task(t)
        }
        StreamEvent::ArtifactUpdate(a) => {
            let mut t = start(&a.task_id, &a.context_id, known);
            let list = t.artifacts.get_or_insert_with(Vec::new);
            let art = a.artifact;
            match list.iter_mut().find(|x| x.artifact_id == art.artifact_id) {
                Some(x) if a.append == Some(true) => x.parts.extend(art.parts),
                Some(x) => *x = art,
                None => list.push(art),
            }
            StreamEvent::Task(t)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use v03::event::StreamEvent;

    fn ev(v: serde_json::Value) -> StreamEvent {
        serde_json::from_value(v).unwrap()
    }

    fn json_of(e: &StreamEvent) -> serde_json::Value {
        serde_json::to_value(e).unwrap()
    }

    fn task_of(e: StreamEvent) -> v03::task::Task {
        match e {
            StreamEvent::Task(t) => t,
            other => panic!("not a task: {other:?}"),
        }
    }

    #[test]
    fn deltas_fold_into_a_full_task() {
        let submitted = ev(json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "submitted", "message": {"kind": "message", "messageId": "m0",
                "role": "agent", "parts": [{"kind": "text", "text": "queued"}]}}}));
        let t = task_of(fold_v03(None, submitted));
        let working = ev(
            json!({"kind": "status-update", "taskId": "t1", "contextId": "c1",
            "status": {"state": "working"}, "final": false, "metadata": {"step": 1}}),
        );
        let t = task_of(fold_v03(Some(t), working));
        assert_eq!(t.status.state, v03::task::TaskState::Working);
        assert_eq!(
            t.history.as_ref().map(Vec::len),
            Some(1),
            "old status message kept"
        );
        assert_eq!(t.metadata.as_ref().unwrap()["step"], 1);
        let chunk = |text: &str, append: bool| {
            ev(
                json!({"kind": "artifact-update", "taskId": "t1", "contextId": "c1", "append": append,
                "artifact": {"artifactId": "a1", "parts": [{"kind": "text", "text": text}]}}),
            )
        };
        let t = task_of(fold_v03(Some(t), chunk("one", false)));
        let t = task_of(fold_v03(Some(t), chunk("two", true)));
        let done = ev(
            json!({"kind": "status-update", "taskId": "t1", "contextId": "c1",
            "status": {"state": "completed"}, "final": true}),
        );
        let out = fold_v03(Some(t), done);
        let v = json_of(&out);
        assert_eq!(v["kind"], "task");
        assert_eq!(v["status"]["state"], "completed");
        assert_eq!(v["artifacts"][0]["parts"].as_array().unwrap().len(), 2);
        assert_eq!(v["artifacts"][0]["parts"][1]["text"], "two");
        // A non-appending update replaces the artifact.
        let t = task_of(fold_v03(Some(task_of(out)), chunk("three", false)));
        assert_eq!(t.artifacts.as_ref().unwrap()[0].parts.len(), 1);
    }

    #[test]
    fn without_a_snapshot_the_task_starts_from_the_event() {
        let u = ev(
            json!({"kind": "artifact-update", "taskId": "t9", "contextId": "c9",
            "append": true, "artifact": {"artifactId": "a", "parts": [{"kind": "text", "text": "x"}]}}),
        );
        let v = json_of(&fold_v03(None, u));
        assert_eq!(
            (v["kind"].as_str(), v["id"].as_str()),
            (Some("task"), Some("t9"))
        );
        assert_eq!(v["contextId"], "c9");
        assert_eq!(v["status"]["state"], "unknown");
        assert_eq!(v["artifacts"][0]["artifactId"], "a");
        // A snapshot of another task is not used.
        let other = task_of(fold_v03(
            None,
            ev(json!({"kind": "task", "id": "t1", "contextId": "c1",
            "status": {"state": "working"}})),
        ));
        let s = ev(
            json!({"kind": "status-update", "taskId": "t9", "contextId": "c9",
            "status": {"state": "failed"}, "final": true}),
        );
        let t = task_of(fold_v03(Some(other), s));
        assert_eq!(t.id, "t9");
        let m = ev(json!({"kind": "message", "messageId": "m", "role": "agent", "parts": []}));
        assert_eq!(json_of(&fold_v03(Some(t), m))["kind"], "message");
    }
}
