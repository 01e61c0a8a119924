//! `a2a-compat-proxy gen`: a sample of every kind, in both versions and
//! both domains, checked by readers the generator does not own: v0.3
//! documents against the official v0.3 JSON schema, v1.0 documents as
//! strict ProtoJSON of the v1.0 proto by the a2a-python 1.x SDK's generated
//! module (`tests/sdk/protojson_v10.py`). Same seed, same output; the size
//! bound holds; bad flags are usage errors.

mod oracle_support;

use oracle_support::{gen, methods, pipe, python_v10, run, v03_definitions, v03_schema, validator};
use serde_json::Value;

/// (kind, method) of every sample: each bare kind, requests of any method
/// and of each method, responses of each method, events.
fn samples(version: &str) -> Vec<(&'static str, Option<&'static str>)> {
    let mut out = vec![
        ("task", None),
        ("message", None),
        ("card", None),
        ("push-body", None),
        ("push-config", None),
        ("request", None),
        ("event", None),
        ("event", Some("SubscribeToTask")),
    ];
    for m in methods(version) {
        out.push(("request", Some(m)));
        out.push(("response", Some(m)));
    }
    out
}

fn flags<'a>(
    kind: &'a str,
    version: &'a str,
    domain: &'a str,
    method: Option<&'a str>,
    count: &'a str,
) -> Vec<&'a str> {
    let mut f = vec![
        "--kind",
        kind,
        "--version",
        version,
        "--domain",
        domain,
        "--count",
        count,
        "--seed",
        "7",
    ];
    if let Some(m) = method {
        f.extend(["--method", m]);
    }
    f
}

#[test]
fn v03_documents_validate_against_the_official_schema() {
    let Some(schema) = v03_schema() else {
        return;
    };
    let mut failures = Vec::new();
    let mut checked = 0;
    for domain in ["lossless", "full"] {
        for (kind, method) in samples("0.3") {
            if method == Some("ListTasks") {
                continue;
            }
            for line in gen(&flags(kind, "0.3", domain, method, "60")) {
                let doc: Value = serde_json::from_str(&line).expect("JSON line");
                let v = validator(&schema, &v03_definitions(kind, method, &doc));
                let errors: Vec<String> = v
                    .iter_errors(&doc)
                    .map(|e| format!("{} {e}", e.instance_path))
                    .take(3)
                    .collect();
                checked += 1;
                if !errors.is_empty() && failures.len() < 10 {
                    failures.push(format!("{domain} {kind} {method:?}: {errors:?}\n  {line}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 2000, "only {checked} documents checked");
}

#[test]
fn v10_documents_parse_as_strict_protojson() {
    let python = python_v10();
    let checker = oracle_support::root().join("tests/sdk/protojson_v10.py");
    let checker = checker.to_str().expect("path");
    // The checker is not vacuous: an unknown field and a v0.3 state fail.
    let bad = b"{\"id\":\"t\",\"status\":{\"state\":\"TASK_STATE_WORKING\"},\"x-a\":1}\n{\"id\":\"t\",\"status\":{\"state\":\"working\"}}\n";
    let (ok, out, err) = pipe(&python, &[checker, "task"], bad);
    assert!(ok, "{err}");
    assert!(out.lines().all(|l| l.starts_with("err ")), "{out}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for domain in ["lossless", "full"] {
        for (kind, method) in samples("1.0") {
            if method == Some("ListTasks") && domain == "lossless" {
                continue;
            }
            let lines = gen(&flags(kind, "1.0", domain, method, "60"));
            let input = lines.join("\n") + "\n";
            let mut args = vec![checker, kind];
            if kind == "response" || kind == "event" {
                args.push(method.unwrap_or("SendStreamingMessage"));
            }
            let (ok, out, err) = pipe(&python, &args, input.as_bytes());
            assert!(ok, "{err}");
            let verdicts: Vec<&str> = out.lines().collect();
            assert_eq!(verdicts.len(), lines.len(), "one verdict per line");
            for (verdict, line) in verdicts.iter().zip(&lines) {
                checked += 1;
                if *verdict != "ok" && failures.len() < 10 {
                    failures.push(format!("{domain} {kind} {method:?}: {verdict}\n  {line}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked > 2000, "only {checked} documents checked");
}

#[test]
fn the_same_seed_gives_the_same_documents() {
    let a = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "50",
        "--seed",
        "42",
    ]);
    let b = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "50",
        "--seed",
        "42",
    ]);
    let c = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "50",
        "--seed",
        "43",
    ]);
    let d = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "20",
        "--seed",
        "42",
    ]);
    assert_eq!(a.len(), 50);
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(
        &a[..20],
        &d[..],
        "a shorter run is a prefix of a longer one"
    );
    let distinct: std::collections::BTreeSet<&String> = a.iter().collect();
    assert!(
        distinct.len() > 40,
        "documents repeat: {} distinct",
        distinct.len()
    );
    // The full domain differs from the lossless one (the lossy inputs).
    let full = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "50",
        "--seed",
        "42",
        "--domain",
        "full",
    ]);
    assert_ne!(a, full);
}

#[test]
fn documents_stay_within_max_bytes() {
    let lines = gen(&[
        "--kind",
        "card",
        "--version",
        "1.0",
        "--count",
        "100",
        "--max-bytes",
        "900",
    ]);
    assert_eq!(lines.len(), 100);
    assert!(lines.iter().all(|l| l.len() <= 900));
    // No document that small: a usage error, not a loop.
    let out = run(
        &[
            "gen",
            "--kind",
            "card",
            "--version",
            "1.0",
            "--max-bytes",
            "10",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-bytes"));
}

#[test]
fn v03_documents_keep_unknown_members_only_when_asked() {
    let has = |lines: &[String]| lines.iter().any(|l| l.contains("\"x-"));
    let plain = gen(&["--kind", "task", "--version", "0.3", "--count", "100"]);
    assert!(!has(&plain));
    let kept = gen(&[
        "--kind",
        "task",
        "--version",
        "0.3",
        "--count",
        "100",
        "--extras",
    ]);
    assert!(has(&kept));
    let v10 = gen(&[
        "--kind",
        "task",
        "--version",
        "1.0",
        "--count",
        "100",
        "--extras",
    ]);
    assert!(!has(&v10), "v1.0 documents never carry unknown members");
}

#[test]
fn bad_flags_are_usage_errors() {
    for (args, says) in [
        (
            vec!["gen", "--kind", "response", "--version", "0.3"],
            "needs --method",
        ),
        (
            vec![
                "gen",
                "--kind",
                "request",
                "--version",
                "0.3",
                "--method",
                "ListTasks",
            ],
            "no A2A 0.3 form",
        ),
        (
            vec![
                "gen",
                "--kind",
                "request",
                "--version",
                "1.0",
                "--method",
                "ListTasks",
            ],
            "full domain",
        ),
        (
            vec![
                "gen",
                "--kind",
                "event",
                "--version",
                "1.0",
                "--method",
                "GetTask",
            ],
            "not a streaming method",
        ),
        (
            vec![
                "gen",
                "--kind",
                "task",
                "--version",
                "1.0",
                "--method",
                "GetTask",
            ],
            "not task",
        ),
        (
            vec![
                "gen",
                "--kind",
                "request",
                "--version",
                "1.0",
                "--method",
                "nope",
            ],
            "no A2A method",
        ),
    ] {
        let out = run(&args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}
