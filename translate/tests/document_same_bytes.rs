//! The document API (`translate::document::translate`, what SDK authors and
//! the `translate` CLI call) takes the streaming transcoder first
//! (`translate::transcode::document`): wherever the transcoder answers, its
//! bytes are exactly those of the typed path (`document::translate_typed`);
//! wherever the typed path fails, it does not answer; and `translate`
//! answers, or fails with the same error, as the typed path does.
//!
//! Checked on every fixture of every kind (accepted and rejected), bare
//! params and results cut out of the envelope fixtures, compact, pretty,
//! with member order reversed and v0.3 `kind` members removed; and on
//! generated entities of both versions.

use std::cell::Cell;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde::Serialize;
use serde_json::Value;

use translate::document::{translate, translate_typed, Kind};
use translate::method::Method;
use translate::strategy::{card as sc, payload as sp, rpc as sr};
use translate::{transcode, Version};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

thread_local! {
    static TRANSCODED: Cell<usize> = const { Cell::new(0) };
}

fn transcoded() -> usize {
    TRANSCODED.with(Cell::get)
}

/// One input through the three entry points; `Ok(true)`: the transcoder
/// answered.
fn same(kind: Kind, to: Version, method: Option<&str>, input: &[u8]) -> Result<bool, String> {
    let typed = translate_typed(kind, to, method, input);
    let entry = translate(kind, to, method, input);
    let m = method.and_then(|n| Method::from_name(n).map(|(m, _)| m));
    let fast = if method.is_some() && m.is_none() {
        None
    } else {
        transcode::document(kind, to, m, input)
    };
    let show = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match (&entry, &typed) {
        (Ok(a), Ok(b)) if a == b => {}
        (Err(a), Err(b)) if a == b => {}
        _ => {
            return Err(format!(
                "{} to {to}: translate {:?} but translate_typed {:?}",
                kind.name(),
                entry.as_deref().map(show),
                typed.as_deref().map(show)
            ))
        }
    }
    match (fast, &typed) {
        (None, _) => Ok(false),
        (Some(f), Ok(t)) if &f == t => {
            TRANSCODED.with(|c| c.set(c.get() + 1));
            Ok(true)
        }
        (Some(f), Ok(t)) => Err(format!(
            "{} to {to}: differs\n  transcode {}\n  typed     {}",
            kind.name(),
            show(&f),
            show(t)
        )),
        (Some(f), Err(e)) => Err(format!(
            "{} to {to}: the transcoder answered {} where the typed path fails: {e}",
            kind.name(),
            show(&f)
        )),
    }
}

fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

fn kindless(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| k.as_str() != "kind")
                .map(|(k, v)| (k.clone(), kindless(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(kindless).collect()),
        other => other.clone(),
    }
}

fn variants(v: &Value) -> Vec<Vec<u8>> {
    let compact = |v: &Value| serde_json::to_vec(v).expect("render");
    vec![
        compact(v),
        serde_json::to_vec_pretty(v).expect("render"),
        compact(&reversed(v)),
        compact(&kindless(v)),
    ]
}

/// The input files of `dir` (`.v03.json` / `.v10.json`) and their version.
fn inputs(dir: &Path) -> Vec<(PathBuf, Version)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let v = if name.ends_with(".v03.json") {
                Version::V03
            } else if name.ends_with(".v10.json") {
                Version::V10
            } else {
                return None;
            };
            Some((e.path(), v))
        })
        .collect();
    out.sort();
    out
}

/// The method a response / event / request fixture is named after, in
/// the version `v` it is written in.
fn method_in(file: &Path, v: Version) -> Option<String> {
    let name = file.file_name()?.to_str()?;
    let (m, _) = Method::from_name(name.split('.').next()?)?;
    m.name(v).map(str::to_string)
}

#[test]
fn every_fixture_through_the_document_api() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for rejected in [false, true] {
        for kind in Kind::ALL {
            let dir = if rejected {
                fixtures().join("rejected").join(kind.name())
            } else {
                fixtures().join(kind.name())
            };
            for (file, v) in inputs(&dir) {
                let bytes = std::fs::read(&file).expect("read");
                let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
                    continue;
                };
                let method = method_in(&file, v);
                let mut docs = vec![(doc.clone(), method.clone())];
                // Bare params and results, the method given.
                if matches!(kind, Kind::Request | Kind::Response | Kind::Event) {
                    let name = doc["method"].as_str().map(str::to_string).or(method);
                    for member in ["params", "result"] {
                        if let (Some(body), Some(n)) = (doc.get(member), &name) {
                            docs.push((body.clone(), Some(n.clone())));
                        }
                    }
                }
                for (doc, method) in docs {
                    let mut all = variants(&doc);
                    all.push(bytes.clone());
                    for input in all {
                        checked += 1;
                        if let Err(e) = same(kind, v.other(), method.as_deref(), &input) {
                            problems.push(format!("{}: {e}", file.display()));
                        }
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    eprintln!("fixtures: {checked} inputs, {} transcoded", transcoded());
    assert!(checked > 2000, "only {checked} inputs");
    assert!(
        transcoded() > 1000,
        "only {} inputs took the transcoder",
        transcoded()
    );
}

/// Inputs the document API gets from SDK users that the transcoder takes:
/// bare entities, bare send params and results.
#[test]
fn bare_documents_take_the_transcoder() {
    let task = br#"{"kind":"task","id":"t","contextId":"c","status":{"state":"working"}}"#;
    assert!(transcode::document(Kind::Task, Version::V10, None, task).is_some());
    let send = br#"{"message":{"kind":"message","messageId":"m","role":"user","parts":[]}}"#;
    let m = Some(Method::SendMessage);
    assert!(transcode::document(Kind::Request, Version::V10, m, send).is_some());
    // A bare result of GetTask, the method given either way.
    for name in ["tasks/get", "GetTask"] {
        assert!(same(Kind::Response, Version::V10, Some(name), task).expect("same"));
    }
    // A top-level `jsonrpc` member makes an envelope: never bare params.
    let odd = br#"{"message":{"kind":"message","messageId":"m","role":"user","parts":[]},"jsonrpc":"2.0"}"#;
    assert!(transcode::document(Kind::Request, Version::V10, m, odd).is_none());
    same(Kind::Request, Version::V10, Some("message/send"), odd).expect("same");
    // A non-streaming method for an event: the typed path's error.
    assert!(transcode::document(Kind::Event, Version::V10, Some(Method::GetTask), task).is_none());
    assert!(translate(Kind::Event, Version::V10, Some("tasks/get"), task).is_err());
}

fn check<T: Serialize>(
    kind: Kind,
    to: Version,
    method: Option<&str>,
    x: &T,
) -> Result<(), TestCaseError> {
    let v = serde_json::to_value(x).expect("render");
    for input in variants(&v) {
        same(kind, to, method, &input).map_err(TestCaseError::fail)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn v03_payloads(p in sp::v03_part(), m in sp::v03_message(), s in sp::v03_task_status(),
                    a in sp::v03_artifact()) {
        let to = Version::V10;
        check(Kind::Part, to, None, &p)?;
        check(Kind::Message, to, None, &m)?;
        check(Kind::TaskStatus, to, None, &s)?;
        check(Kind::Artifact, to, None, &a)?;
    }

    #[test]
    fn v03_tasks(t in sp::v03_task()) {
        check(Kind::Task, Version::V10, None, &t)?;
        check(Kind::Response, Version::V10, Some("tasks/get"), &t)?;
    }

    #[test]
    fn v03_status_updates(su in sp::v03_status_update()) {
        check(Kind::StatusUpdate, Version::V10, None, &su)?;
    }

    #[test]
    fn v03_artifact_updates(au in sp::v03_artifact_update()) {
        check(Kind::ArtifactUpdate, Version::V10, None, &au)?;
    }

    #[test]
    fn v03_stream_results(e in sp::v03_stream_event()) {
        let to = Version::V10;
        check(Kind::StreamResponse, to, None, &e)?;
        check(Kind::PushBody, to, None, &e)?;
        check(Kind::Event, to, Some("message/stream"), &e)?;
    }

    #[test]
    fn v10_payloads(p in sp::v10_part(), m in sp::v10_message(), s in sp::v10_task_status(),
                    a in sp::v10_artifact()) {
        let to = Version::V03;
        check(Kind::Part, to, None, &p)?;
        check(Kind::Message, to, None, &m)?;
        check(Kind::TaskStatus, to, None, &s)?;
        check(Kind::Artifact, to, None, &a)?;
    }

    #[test]
    fn v10_tasks(t in sp::v10_task()) {
        check(Kind::Task, Version::V03, None, &t)?;
        check(Kind::Response, Version::V03, Some("GetTask"), &t)?;
    }

    #[test]
    fn v10_status_updates(su in sp::v10_status_update()) {
        check(Kind::StatusUpdate, Version::V03, None, &su)?;
    }

    #[test]
    fn v10_artifact_updates(au in sp::v10_artifact_update()) {
        check(Kind::ArtifactUpdate, Version::V03, None, &au)?;
    }

    #[test]
    fn v10_stream_results(e in sp::v10_stream_response()) {
        let to = Version::V03;
        check(Kind::StreamResponse, to, None, &e)?;
        check(Kind::PushBody, to, None, &e)?;
        check(Kind::Event, to, Some("SendStreamingMessage"), &e)?;
    }

    #[test]
    fn send_params(a in sr::v03_send_params(), b in sr::v10_send_request()) {
        check(Kind::Request, Version::V10, Some("message/send"), &a)?;
        check(Kind::Request, Version::V03, Some("SendMessage"), &b)?;
    }

    #[test]
    fn cards(a in sc::v03_card_any(), b in sc::v10_card_any()) {
        check(Kind::Card, Version::V10, None, &a)?;
        check(Kind::Card, Version::V03, None, &b)?;
    }
}
