//! Our translator against the official a2a-python 1.x SDK's own v0.3 <-> v1.0
//! converters, on every fixture of a kind the SDK can convert.
//!
//! Both outputs are compared after removing proto3 default values
//! (`json_eq::without_defaults`): the SDK routes everything through protobuf,
//! which cannot tell `false`/`[]`/`""` from absent.
//!
//! Every remaining difference must be listed, with its reason, in
//! `tests/sdk/divergences.txt` (`<fixture> <to-version> # why`); an unlisted
//! difference fails, and so does a listed one that no longer differs.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use e2e::json_eq;
use e2e::sdk::{oracle, OracleRequest};
use serde_json::Value;
use translate::document::{self, Kind};
use translate::method::Method;
use translate::Version;

const ORACLE_KINDS: &[&str] = &[
    "part",
    "message",
    "task",
    "task-status",
    "artifact",
    "status-update",
    "artifact-update",
    "push-config",
    "auth-info",
    "card",
    "stream-response",
    "request",
    "response",
    "event",
];

struct Case {
    file: String,
    kind: Kind,
    to: Version,
    /// The method in the source version (for response/event).
    source_method: Option<String>,
    oracle: OracleRequest,
}

fn cases() -> Vec<Case> {
    let root = fixtures::root();
    let mut out = Vec::new();
    for kind_name in ORACLE_KINDS {
        let dir = root.join(kind_name);
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        files.sort();
        for path in files {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let (from, to) = if name.ends_with(".v03.json") {
                (Version::V03, Version::V10)
            } else if name.ends_with(".v10.json") {
                (Version::V10, Version::V03)
            } else {
                continue;
            };
            let kind = Kind::from_name(kind_name).expect("fixture kind is a document kind");
            let input: Value = serde_json::from_slice(&fs::read(&path).expect("read fixture"))
                .expect("fixture JSON");
            let v10_method = matches!(*kind_name, "response" | "event")
                .then(|| name.split('.').next().unwrap_or_default().to_string());
            if v10_method.as_deref() == Some("ListTasks") {
                continue; // no v0.3 counterpart, nothing for the SDK to convert
            }
            if *kind_name == "request"
                && input.get("method").and_then(Value::as_str) == Some("ListTasks")
            {
                continue;
            }
            let source_method = v10_method.as_deref().map(|m| {
                let (method, _) =
                    Method::from_name(m).unwrap_or_else(|| panic!("{name}: unknown method {m}"));
                method
                    .name(from)
                    .expect("method exists in the source version")
                    .to_string()
            });
            out.push(Case {
                file: format!("{kind_name}/{name}"),
                kind,
                to,
                source_method,
                oracle: OracleRequest {
                    kind: kind_name.to_string(),
                    to: to.as_str().to_string(),
                    method: v10_method,
                    input,
                },
            });
        }
    }
    out
}

fn divergences() -> BTreeMap<(String, String), String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/divergences.txt");
    let text = fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| {
            let (head, why) = l.split_once('#').unwrap_or((l, ""));
            let mut it = head.split_whitespace();
            let file = it.next().unwrap_or_default().to_string();
            let to = it.next().unwrap_or_default().to_string();
            ((file, to), why.trim().to_string())
        })
        .collect()
}

#[test]
fn translator_matches_the_python_sdk_converters() {
    let cases = cases();
    assert!(
        cases.len() >= 40,
        "expected the fixture set to give >= 40 oracle cases, got {}",
        cases.len()
    );
    let requests: Vec<OracleRequest> = cases.iter().map(|c| c.oracle.clone()).collect();
    let answers = oracle(&requests);
    let listed = divergences();
    let (mut equal, mut sdk_refused, mut known) = (0, 0, 0);
    let mut failures = Vec::new();
    let mut seen_divergent = Vec::new();
    for (case, answer) in cases.iter().zip(answers) {
        let key = (case.file.clone(), case.to.as_str().to_string());
        let input = serde_json::to_vec(&case.oracle.input).expect("json");
        let ours = document::translate(case.kind, case.to, case.source_method.as_deref(), &input)
            .map(|b| serde_json::from_slice::<Value>(&b).expect("translator emits JSON"));
        let ours = ours.map(|v| json_eq::without_defaults(&v));
        let answer = answer.map(|v| json_eq::without_defaults(&v));
        match (ours, answer) {
            (Ok(ours), Ok(sdk)) if json_eq::same(&ours, &sdk) => equal += 1,
            (Ok(ours), Ok(sdk)) => {
                if listed.contains_key(&key) {
                    known += 1;
                    seen_divergent.push(key.clone());
                } else {
                    failures.push(format!(
                        "{} -> {}: differs from the SDK:\n    {}",
                        case.file,
                        case.to,
                        json_eq::diff(&ours, &sdk).join("\n    ")
                    ));
                }
            }
            (Err(e), Ok(_)) => {
                if listed.contains_key(&key) {
                    known += 1;
                    seen_divergent.push(key.clone());
                } else {
                    failures.push(format!(
                        "{} -> {}: we fail ({e}) where the SDK converts",
                        case.file, case.to
                    ));
                }
            }
            (_, Err(_)) => sdk_refused += 1,
        }
    }
    for key in listed.keys() {
        let covered = cases
            .iter()
            .any(|c| c.file == key.0 && c.to.as_str() == key.1);
        if covered && !seen_divergent.contains(key) {
            failures.push(format!(
                "{} -> {}: listed in divergences.txt but no longer differs (or the SDK refuses it)",
                key.0, key.1
            ));
        }
    }
    println!(
        "sdk oracle: {} cases, {equal} equal, {known} listed divergences, {sdk_refused} refused by the SDK",
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} unexpected differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
