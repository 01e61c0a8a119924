//! `a2a-compat-proxy translate --jsonl`: one document per line in, one
//! result per line out, in order; a bad line is an error object on its own
//! line and does not stop the others; the exit status says whether any
//! line failed.

mod oracle_support;

use oracle_support::{gen, run};
use serde_json::Value;

fn lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every output line is JSON"))
        .collect()
}

#[test]
fn each_line_is_translated_as_alone_in_order() {
    for (kind, version, to, method) in [
        ("task", "0.3", "1.0", None),
        ("task", "1.0", "0.3", None),
        ("card", "0.3", "1.0", None),
        ("push-config", "1.0", "0.3", None),
        ("request", "0.3", "1.0", None),
        ("response", "1.0", "0.3", Some("SendMessage")),
        ("event", "0.3", "1.0", None),
    ] {
        let mut g = vec![
            "--kind",
            kind,
            "--version",
            version,
            "--count",
            "40",
            "--domain",
            "full",
        ];
        let mut t = vec!["translate", "--jsonl", "--to", to, "--kind", kind];
        if let Some(m) = method {
            g.extend(["--method", m]);
            t.extend(["--method", m]);
        }
        let docs = gen(&g);
        let input = docs.join("\n") + "\n";
        let out = run(&t, input.as_bytes());
        let got = lines(&out.stdout);
        assert_eq!(got.len(), docs.len(), "{kind}: one line out per line in");
        let mut one = t.clone();
        one.retain(|a| *a != "--jsonl");
        let mut failed = false;
        for (doc, line) in docs.iter().zip(&got) {
            let alone = run(&one, doc.as_bytes());
            if alone.status.success() {
                let want: Value = serde_json::from_slice(&alone.stdout).expect("json");
                assert_eq!(line, &want, "{kind}: {doc}");
            } else {
                failed = true;
                assert!(line["error"]["code"].is_i64(), "{kind}: {line}");
            }
        }
        assert_eq!(
            out.status.code(),
            Some(if failed { 1 } else { 0 }),
            "{kind}"
        );
    }
}

#[test]
fn a_bad_line_fails_alone() {
    let good = gen(&["--kind", "task", "--version", "0.3", "--count", "3"]);
    let deep = "[".repeat(100_000);
    let input = [
        good[0].as_bytes(),
        b"",
        b"not json",
        b"{\"kind\":\"task\"}",
        &[0xff, 0xfe, b'{'],
        deep.as_bytes(),
        good[1].as_bytes(),
        b"   ",
        format!("{}\r", good[2]).as_bytes(),
    ]
    .join(&b'\n');
    let out = run(
        &["translate", "--jsonl", "--to", "1.0", "--kind", "task"],
        &input,
    );
    assert_eq!(out.status.code(), Some(1), "some lines failed");
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 9, "{}", String::from_utf8_lossy(&out.stdout));
    for i in [0, 6, 8] {
        assert!(got[i].get("error").is_none(), "line {i}: {}", got[i]);
        assert!(got[i]["status"]["state"]
            .as_str()
            .is_some_and(|s| s.starts_with("TASK_STATE_")));
    }
    let codes: Vec<i64> = [1, 2, 3, 4, 5, 7]
        .iter()
        .map(|&i| got[i]["error"]["code"].as_i64().unwrap_or(0))
        .collect();
    assert_eq!(codes, vec![-32700, -32700, -32602, -32700, -32602, -32700]);
    assert!(got[3]["error"]["message"]
        .as_str()
        .unwrap_or("")
        .contains("id"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("9 lines, 6 failed"));
}

#[test]
fn all_good_lines_exit_zero_and_usage_errors_exit_two() {
    let docs = gen(&["--kind", "message", "--version", "1.0", "--count", "20"]);
    let out = run(
        &["translate", "--jsonl", "--to", "0.3", "--kind", "message"],
        (docs.join("\n") + "\n").as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(lines(&out.stdout).len(), 20);
    let out = run(
        &["translate", "--jsonl", "--to", "0.3", "--kind", "message"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    // A response needs its method; an unknown method is no method.
    for args in [
        vec!["translate", "--jsonl", "--to", "0.3", "--kind", "response"],
        vec![
            "translate",
            "--jsonl",
            "--to",
            "0.3",
            "--kind",
            "response",
            "--method",
            "x",
        ],
    ] {
        let out = run(&args, docs[0].as_bytes());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

/// Numbers cross exactly, on the transcoder's path and on the typed path
/// (a `\u00e9` escape sends a line there): the a2a-python SDK writes every
/// `google.protobuf.Struct` number as a double (`8729470021900460.0`),
/// which serde_json's default parser (one unit in the last place off)
/// turned into `8729470021900461.0`.
#[test]
fn numbers_cross_exactly() {
    let numbers = r#"{"a":8729470021900460.0,"b":-1818499682706560.8,"c":0.1,"d":5e-324}"#;
    let want: Value = serde_json::from_str(numbers).expect("json");
    let mut input = String::new();
    for text in ["x", "\\u00e9"] {
        input.push_str(&format!(
            r#"{{"id":"t","status":{{"state":"TASK_STATE_WORKING"}},"metadata":{numbers},"history":[{{"messageId":"m","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}]}}"#
        ));
        input.push('\n');
    }
    let out = run(
        &["translate", "--jsonl", "--to", "0.3", "--kind", "task"],
        input.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 2);
    for t in &got {
        assert_eq!(t["metadata"], want, "{t}");
        let text = serde_json::to_string(&t["metadata"]).expect("json");
        assert!(text.contains("8729470021900460.0"), "{text}");
    }
}
