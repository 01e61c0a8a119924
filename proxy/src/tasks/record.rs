//! What translated answers say about tasks, recorded: a JSON-RPC answer
//! or event envelope, a bare REST result, or the facts the transcoder
//! learnt while writing one (repeated facts skip the look-up).

use chrono::{DateTime, FixedOffset};
use serde_json::Value;
use translate::transcode::TaskFacts;

use super::probe::{probe, At, Seen};
use super::{Scope, TaskIndex};
use crate::codec::Shape;

/// Facts recorded, and the [`super::Inner::generation`] right after: recording
/// the same facts again while the generation is still that one changes
/// nothing (the entry is there as they left it, already the newest and in
/// `changed`, or they recorded nothing), so it is skipped: a stream's
/// events repeat their task's facts (every status update of a task that
/// is not in the index, or whose state did not move) without a look-up.
pub(super) struct Last {
    generation: u64,
    scope: Scope,
    /// 1: a task, 2: a status update.
    what: u8,
    id: String,
    context: Option<String>,
    state: &'static str,
    ts: Option<DateTime<FixedOffset>>,
}

impl Last {
    fn is(&self, generation: u64, scope: Scope, facts: &TaskFacts<'_>) -> bool {
        if self.generation != generation || self.scope != scope {
            return false;
        }
        match facts {
            TaskFacts::Nothing => false,
            TaskFacts::Task {
                id,
                context,
                status,
            } => {
                self.what == 1
                    && self.id == **id
                    && self.context.as_deref() == context.as_deref()
                    && self.state == status.state
                    && self.ts == status.timestamp
            }
            TaskFacts::Status { task_id, status } => {
                self.what == 2
                    && self.id == **task_id
                    && self.state == status.state
                    && self.ts == status.timestamp
            }
        }
    }

    /// `last` now holds `facts` (its id's buffer kept).
    fn set(last: &mut Option<Last>, generation: u64, scope: Scope, facts: &TaskFacts<'_>) {
        let (what, id, context, status) = match facts {
            TaskFacts::Nothing => return,
            TaskFacts::Task {
                id,
                context,
                status,
            } => (1, id, context.as_deref(), status),
            TaskFacts::Status { task_id, status } => (2, task_id, None, status),
        };
        let l = last.get_or_insert_with(|| Last {
            generation,
            scope,
            what,
            id: String::new(),
            context: None,
            state: status.state,
            ts: None,
        });
        l.generation = generation;
        l.scope = scope;
        l.what = what;
        l.id.clear();
        l.id.push_str(id);
        l.context = context.map(str::to_string);
        l.state = status.state;
        l.ts = status.timestamp;
    }
}

/// The v1.0 methods whose answers carry tasks.
fn indexed(method: &str) -> bool {
    matches!(
        method,
        "SendMessage" | "GetTask" | "CancelTask" | "SendStreamingMessage" | "SubscribeToTask"
    )
}

/// The answer of `method` holds its task in `task`, not as the result itself.
fn wrapped(method: &str) -> bool {
    !matches!(method, "GetTask" | "CancelTask")
}

impl TaskIndex {
    /// What a probed answer says, recorded for `scope`.
    fn put_seen(&self, scope: Scope, seen: Seen) {
        match seen {
            Seen::Nothing => {}
            Seen::Status(u) => {
                if let (Some(id), Some(status)) = (u.task_id, u.status) {
                    let (state, ts) = (status.state.as_deref(), status.timestamp.as_deref());
                    self.put_status_of(scope, &id, state, ts);
                }
            }
            Seen::Task(p) => {
                let Some(id) = p.id else {
                    return;
                };
                let status = p.status.unwrap_or_default();
                let ts = status.timestamp.as_deref();
                let ts = ts.and_then(|s| DateTime::parse_from_rfc3339(s).ok());
                self.put_entry(
                    scope,
                    &id,
                    p.context.as_deref(),
                    status.state.as_deref(),
                    ts,
                );
            }
        }
    }

    /// Records what a translated v1.0 answer (a JSON-RPC response or one SSE
    /// event envelope) to a caller of `scope` says about tasks. `method` is
    /// the v1.0 method name.
    pub fn record(&self, scope: Scope, method: &str, envelope: &[u8]) {
        self.record_at(scope, method, envelope, Shape::Envelope);
    }

    /// [`Self::record`] for a bare v1.0 result (a REST answer body).
    pub fn record_result(&self, scope: Scope, method: &str, body: &[u8]) {
        self.record_at(scope, method, body, Shape::Bare);
    }

    /// The one path of [`Self::record`] and [`Self::record_result`]: the
    /// answer `bytes` (a JSON-RPC envelope or a bare result, as `shape`
    /// says) probed for its task's members, or read whole when the probe
    /// cannot tell.
    fn record_at(&self, scope: Scope, method: &str, bytes: &[u8], shape: Shape) {
        if !self.enabled || !indexed(method) {
            return;
        }
        let task = wrapped(method);
        let at = match shape {
            Shape::Envelope => At::Envelope { task },
            Shape::Bare => At::Bare { task },
        };
        if let Some(seen) = probe(bytes, at) {
            return self.put_seen(scope, seen);
        }
        let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else {
            return;
        };
        let result = match shape {
            Shape::Bare => v,
            Shape::Envelope => match v.get_mut("result") {
                Some(r) => r.take(),
                None => return,
            },
        };
        self.record_value(scope, method, result);
    }

    /// The result of `method`, read whole: what the probe reads in
    /// [`Self::record_at`] when it can tell.
    fn record_value(&self, scope: Scope, method: &str, result: Value) {
        if !wrapped(method) {
            return self.put_task(scope, &result);
        }
        if let Some(t) = result.get("task") {
            self.put_task(scope, t);
        } else if let Some(u) = result.get("statusUpdate") {
            self.put_status(scope, u);
        }
    }

    /// [`Self::record`] of what the transcoder learnt about a translated
    /// v1.0 answer while writing it: the same entries as reading the
    /// answer's bytes again (`record_from_facts_as_from_bytes` checks it).
    pub fn record_facts(&self, scope: Scope, method: &str, facts: &TaskFacts<'_>) {
        if !self.enabled || !indexed(method) || matches!(facts, TaskFacts::Nothing) {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        let inner = &mut *inner;
        if inner
            .last
            .as_ref()
            .is_some_and(|l| l.is(inner.generation, scope, facts))
        {
            return;
        }
        match facts {
            TaskFacts::Nothing => {}
            TaskFacts::Task {
                id,
                context,
                status,
            } => {
                self.put_entry_in(
                    inner,
                    scope,
                    id,
                    context.as_deref(),
                    Some(status.state),
                    status.timestamp,
                );
            }
            TaskFacts::Status { task_id, status } => {
                self.put_status_in(inner, scope, task_id, Some(status.state), || {
                    status.timestamp
                });
            }
        }
        Last::set(&mut inner.last, inner.generation, scope, facts);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn records_answers_and_status_updates_per_caller_and_stays_bounded() {
        let ix = new_index(IndexLimits {
            max_tasks: 2,
            ..IndexLimits::default()
        });
        let t = task("t1", "c1", "TASK_STATE_WORKING", "2025-01-01T00:00:01Z");
        let env = json!({"jsonrpc": "2.0", "id": 1, "result": {"task": t}}).to_string();
        ix.record(a(), "SendMessage", env.as_bytes());
        let ev = json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t1", "contextId": "c1",
            "status": {"state": "TASK_STATE_COMPLETED", "timestamp": "2025-01-01T00:00:09Z"}}}})
        .to_string();
        // Another caller's update does not touch a's entry.
        ix.record(scope_of("Bearer b"), "SendStreamingMessage", ev.as_bytes());
        let p = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_COMPLETED"})))
            .unwrap();
        assert!(p.ids.is_empty());
        ix.record(a(), "SendStreamingMessage", ev.as_bytes());
        let p = ix
            .page(a(), Some(&json!({"status": "TASK_STATE_COMPLETED"})))
            .unwrap();
        assert_eq!(p.ids, ["t1"]);
        ix.record(a(), "ListTaskPushNotificationConfigs", env.as_bytes());
        ix.record(a(), "GetTask", br#"{"jsonrpc":"2.0","id":2,"result":{"id":"t2","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}"#);
        ix.record_result(
            a(),
            "GetTask",
            br#"{"id":"t3","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}"#,
        );
        assert_eq!(ix.len(), 2);
        ix.record(a(), "GetTask", b"not json");
        assert_eq!(ix.len(), 2);
        // Nothing of a task but its summary is kept.
        assert!(ix.bytes() < 2 * (SCOPE_BYTES + 64), "{}", ix.bytes());
    }

    /// The v0.3 answers and events of the fixtures (and, embedded in an
    /// event, the status updates and tasks), with the method they answer,
    /// and a few edge cases of ids and timestamps.
    fn v03_answers() -> Vec<(translate::method::Method, Vec<u8>)> {
        use translate::method::Method;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let mut out = Vec::new();
        let files = |dir: &str| {
            let mut f: Vec<_> = std::fs::read_dir(root.join(dir))
                .map(|d| d.flatten().map(|e| e.path()).collect())
                .unwrap_or_default();
            f.retain(|p: &std::path::PathBuf| p.to_string_lossy().ends_with(".v03.json"));
            f.sort();
            f
        };
        for dir in ["event", "response"] {
            for file in files(dir) {
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                let Some((m, _)) = Method::from_name(name.split('.').next().unwrap()) else {
                    continue;
                };
                out.push((m, std::fs::read(&file).unwrap()));
            }
        }
        for (dir, m) in [
            ("status-update", Method::SendStreamingMessage),
            ("task", Method::SendStreamingMessage),
            ("task", Method::SendMessage),
            ("task", Method::GetTask),
            ("artifact-update", Method::SubscribeToTask),
            ("message", Method::SendMessage),
        ] {
            for file in files(dir) {
                let x = String::from_utf8(std::fs::read(&file).unwrap()).unwrap();
                out.push((
                    m,
                    format!(r#"{{"jsonrpc":"2.0","id":3,"result":{x}}}"#).into_bytes(),
                ));
            }
        }
        for ts in [
            "2024-03-15T18:30:00.120+02:00",
            "2025-04-02T16:59:25.331844",
            "2016-12-31T23:59:60.5Z",
            "9999-12-31T23:59:59-01:00",
            "0000-01-01T00:00:00+01:00",
        ] {
            let ev = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"status-update","taskId":"t\"1","contextId":"c","status":{{"state":"working","timestamp":"{ts}"}},"final":false}}}}"#
            );
            out.push((Method::SendStreamingMessage, ev.into_bytes()));
            let task = format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"task","id":"t\\2","contextId":"","status":{{"state":"failed","timestamp":"{ts}"}}}}}}"#
            );
            out.push((Method::SendMessage, task.into_bytes()));
        }
        out
    }

    /// What the transcoder learns while translating a v0.3 answer to v1.0
    /// records the same entries as reading the v1.0 answer's bytes again
    /// (the probe, or the whole value).
    /// Facts repeated (a stream's status updates) are recorded once while
    /// nothing else changes the index, and the index lists, orders, evicts
    /// and hands to the store exactly what recording every one gives.
    #[test]
    fn repeated_facts_skip_the_look_up_and_list_the_same() {
        use translate::transcode::StatusFacts;
        let limits = IndexLimits {
            max_tasks: 3,
            ..IndexLimits::default()
        };
        let (skipping, every) = (new_index(limits), new_index(limits));
        every.track_changes();
        skipping.track_changes();
        let ts = |s: &str| Some(DateTime::parse_from_rfc3339(s).unwrap());
        let status = |state, t: &str| StatusFacts {
            state,
            timestamp: ts(t),
        };
        let b = scope_of("Bearer b");
        let facts = |i: usize| -> (Scope, TaskFacts<'static>) {
            let id = ["t1", "t2", "t3", "t4", "u"][i % 5];
            let scope = if i % 7 == 3 { b } else { a() };
            let st = ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"][i / 9 % 2];
            let t = ["2025-01-01T00:00:01Z", "2025-01-01T00:00:02Z"][i / 4 % 2];
            let f = if i.is_multiple_of(3) {
                TaskFacts::Task {
                    id: id.into(),
                    context: i.is_multiple_of(2).then(|| "c1".into()),
                    status: status(st, t),
                }
            } else {
                TaskFacts::Status {
                    task_id: id.into(),
                    status: status(st, t),
                }
            };
            (scope, f)
        };
        // Each step repeated a few times, as a stream's events do.
        for step in 0..60 {
            for _ in 0..1 + step % 3 {
                let (scope, f) = facts(step * 5 / 3);
                skipping.record_facts(scope, "SendStreamingMessage", &f);
                // The reference: every event looked up and written again.
                match &f {
                    TaskFacts::Task {
                        id,
                        context,
                        status,
                    } => {
                        every.put_entry(
                            scope,
                            id,
                            context.as_deref(),
                            Some(status.state),
                            status.timestamp,
                        );
                    }
                    TaskFacts::Status { task_id, status } => {
                        every.put_status_with(scope, task_id, Some(status.state), || {
                            status.timestamp
                        });
                    }
                    TaskFacts::Nothing => {}
                }
            }
            for scope in [a(), b] {
                let (ids, _) = listed(&skipping, scope, json!({}), &[]);
                let (want, _) = listed(&every, scope, json!({}), &[]);
                assert_eq!(ids, want, "step {step}");
            }
            if step % 4 == 0 {
                assert_eq!(skipping.take_changed(), every.take_changed(), "{step}");
            }
            assert_eq!(skipping.bytes(), every.bytes(), "{step}");
        }
        // A repeat takes no look-up: the order counter does not move.
        let f = TaskFacts::Status {
            task_id: "nowhere".into(),
            status: status("TASK_STATE_WORKING", "2025-01-01T00:00:01Z"),
        };
        skipping.record_facts(a(), "SubscribeToTask", &f);
        let seq = skipping.inner.lock().unwrap().seq;
        skipping.record_facts(a(), "SubscribeToTask", &f);
        assert_eq!(skipping.inner.lock().unwrap().seq, seq);
        // Anything changed in between, and it is looked up again.
        skipping.put_task(
            a(),
            &task("nowhere", "c", "TASK_STATE_WORKING", "2025-01-01T00:00:00Z"),
        );
        skipping.record_facts(a(), "SubscribeToTask", &f);
        let inner = skipping.inner.lock().unwrap();
        let e = &inner.tasks[&(a(), Arc::from("nowhere"))];
        assert_eq!(e.ts, ts("2025-01-01T00:00:01Z"));
    }

    #[test]
    fn record_from_facts_as_from_bytes() {
        use translate::transcode::{response_to_v10_with_facts, TaskFacts};
        let from_bytes = new_index(IndexLimits::default());
        let from_facts = new_index(IndexLimits::default());
        from_bytes.track_changes();
        from_facts.track_changes();
        let (mut checked, mut statuses, mut tasks) = (0, 0, 0);
        for (m, input) in v03_answers() {
            let name = m.name(crate::version::Version::V10).unwrap();
            let Ok(text) = std::str::from_utf8(&input) else {
                continue;
            };
            let Some((out, facts)) = response_to_v10_with_facts(m, text) else {
                continue;
            };
            // A status update lands only on a task the index knows.
            if let TaskFacts::Status { task_id, .. } = &facts {
                statuses += 1;
                for ix in [&from_bytes, &from_facts] {
                    ix.put(a(), task_id, Some("seeded"), None);
                }
            }
            if let TaskFacts::Task { .. } = &facts {
                tasks += 1;
            }
            from_bytes.record(a(), name, &out);
            from_facts.record_facts(a(), name, &facts);
            assert_eq!(
                from_facts.take_changed(),
                from_bytes.take_changed(),
                "{}",
                String::from_utf8_lossy(&out)
            );
            checked += 1;
        }
        assert!(
            checked > 40 && statuses > 10 && tasks > 10,
            "{checked} {statuses} {tasks}"
        );
        assert_eq!(from_facts.len(), from_bytes.len());
    }

    /// What the answer-probing `record` keeps equals what reading the whole
    /// answer as a value keeps (the reference).
    #[test]
    fn probed_answers_list_as_whole_values() {
        let t = |id: &str, ctx: &str| {
            task(id, ctx, "TASK_STATE_WORKING", "2025-01-01T00:00:01Z").to_string()
        };
        let cases: Vec<(&str, String)> = vec![
            ("GetTask", format!(r#"{{"jsonrpc":"2.0","id":1,"result":{}}}"#, t("a", "c1"))),
            ("CancelTask", format!(r#"{{"id":1,"result":{},"jsonrpc":"2.0"}}"#, t("b", "c2"))),
            ("SendMessage", format!(r#"{{"jsonrpc":"2.0","id":1,"result":{{"task":{}}}}}"#, t("c", "c1"))),
            ("SubscribeToTask", format!(r#"{{"result":{{"x":[1,{{"task":2}}],"task":{}}}}}"#, t("d", "c3"))),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"a","status":{"state":"TASK_STATE_COMPLETED","timestamp":"2025-01-01T00:00:05Z"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"c","status":[1]}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"zz","status":{}}}}"#.into()),
            ("SendMessage", r#"{"result":{"task":null,"statusUpdate":{"taskId":"a","status":{}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"contextId":"c1","status":{"message":{"parts":[{"text":"x"}]},"state":"TASK_STATE_FAILED","timestamp":"2025-01-01T00:00:06Z"},"taskId":"b"}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"c","status":{"state":"TASK_STATE_WORKING","state":"TASK_STATE_CANCELED"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"\u0064","status":{"state":"TASK_\u0053TATE_REJECTED","timestamp":"2025-01-01T00:00:07\u005a"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"d","status":null}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":7,"status":{"state":"TASK_STATE_FAILED"}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":{"taskId":"a","status":{"state":9,"timestamp":{"t":1}}}}}"#.into()),
            ("SendStreamingMessage", r#"{"result":{"statusUpdate":"a"}}"#.into()),
            ("SendMessage", r#"{"result":{"message":{"messageId":"m"}}}"#.into()),
            ("GetTask", r#"{"result":{"id":5,"status":{}}}"#.into()),
            ("GetTask", r#"{"result":[{"id":"arr"}]}"#.into()),
            ("GetTask", r#"[{"result":{"id":"arr2"}}]"#.into()),
            ("GetTask", r#"{"result":{"id":"dup","id":"dup2","contextId":7}}"#.into()),
            ("GetTask", r#"{"result":{"id":"e","status":null,"contextId":"c1"},"result":{"id":"e2"}}"#.into()),
            ("GetTask", r#"{"result":{"id":"f","status":{"state":"TASK_STATE_WORKING"}}} trailing"#.into()),
            ("GetTask", r#"{"result":{"id":"g","history":[{"messageId":"m1"},{"messageId":"m2"}],"artifacts":[]}}"#.into()),
            ("GetTask", r#"{"result":{"status":{"message":{"parts":[{"text":"x"}],"state":"no"},"timestamp":"2025-01-01T00:00:08Z","state":"TASK_STATE_INPUT_REQUIRED"},"contextId":"c\u0032","id":"h"}}"#.into()),
            ("GetTask", r#"{"result":{"id":"i","contextId":"c1","status":[1]}}"#.into()),
            ("GetTask", r#"{"result":{"id":"j","status":{"state":"TASK_STATE_WORKING","state":"TASK_STATE_COMPLETED"}}}"#.into()),
            ("GetTask", r#"{"result":{"id":"k","status":{"state":9,"timestamp":{"t":1}}}}"#.into()),
            ("GetTask", r#"{"result":{"id":"l","status":"TASK_STATE_COMPLETED","contextId":null}}"#.into()),
            ("SendMessage", r#"{"result":{"task":{"id":"m","status":{"state":"TASK_STATE_COMPLETED","timestamp":"not a time"}}}}"#.into()),
        ];
        let probed = new_index(IndexLimits::default());
        let whole = new_index(IndexLimits::default());
        for (method, env) in &cases {
            probed.record(a(), method, env.as_bytes());
            if let Ok(mut v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get_mut("result") {
                    whole.record_value(a(), method, r.take());
                }
            }
            // REST bodies: the bare result.
            if let Ok(v) = serde_json::from_slice::<Value>(env.as_bytes()) {
                if let Some(r) = v.get("result") {
                    let body = r.to_string();
                    probed.record_result(a(), method, body.as_bytes());
                    whole.record_value(a(), method, r.clone());
                }
            }
        }
        for params in [
            json!({}),
            json!({"contextId": "c1"}),
            json!({"status": "TASK_STATE_COMPLETED"}),
            json!({"status": "TASK_STATE_WORKING"}),
            json!({"statusTimestampAfter": "2025-01-01T00:00:02Z"}),
            json!({"statusTimestampAfter": "2025-01-01T00:00:07Z"}),
            json!({"status": "TASK_STATE_INPUT_REQUIRED"}),
            json!({"contextId": "c2"}),
            json!({"pageSize": 2}),
        ] {
            let p = probed.page(a(), Some(&params)).unwrap();
            let w = whole.page(a(), Some(&params)).unwrap();
            assert_eq!(p.ids, w.ids, "{params}");
            assert_eq!(p.total, w.total, "{params}");
        }
        assert_eq!(probed.len(), whole.len());
        assert!(probed.len() >= 5, "{}", probed.len());
    }

    #[test]
    fn off_records_nothing() {
        let ix = TaskIndex::new(false, IndexLimits::default(), key(), &[]);
        ix.put_task(a(), &all()[0]);
        assert!(ix.is_empty() && !ix.enabled());
    }
}
