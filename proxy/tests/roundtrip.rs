//! `a2a-compat-proxy roundtrip`: generated documents of the lossless
//! domain come back exact; those of the full domain differ only where a
//! declared lossy mapping says; `--against` runs an external converter in
//! place of one translation, and a converter that is wrong, slow, silent
//! or broken is reported line by line, within the time allowed.

mod oracle_support;

use std::time::{Duration, Instant};

use oracle_support::{gen, methods, run};
use serde_json::Value;

/// `roundtrip` over `docs`; its report lines and exit code.
fn roundtrip(args: &[&str], docs: &[String]) -> (Vec<Value>, Option<i32>, String) {
    let mut all = vec!["roundtrip"];
    all.extend_from_slice(args);
    let out = run(&all, (docs.join("\n") + "\n").as_bytes());
    let reports = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("report lines are JSON"))
        .collect();
    (
        reports,
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn statuses(r: &[Value]) -> std::collections::BTreeMap<String, usize> {
    let mut m = std::collections::BTreeMap::new();
    for x in r {
        *m.entry(x["status"].as_str().unwrap_or("?").to_string())
            .or_default() += 1;
    }
    m
}

/// Every (kind, version, method) sample.
fn cases(domain: &str) -> Vec<(&'static str, &'static str, Option<&'static str>)> {
    let mut out = Vec::new();
    for v in ["0.3", "1.0"] {
        for k in [
            "task",
            "message",
            "card",
            "push-body",
            "push-config",
            "request",
            "event",
        ] {
            out.push((k, v, None));
        }
        for m in methods(v) {
            if m != "ListTasks" || domain == "full" {
                out.push(("response", v, Some(m)));
            }
        }
    }
    out
}

fn docs(kind: &str, version: &str, domain: &str, method: Option<&str>, n: &str) -> Vec<String> {
    let mut g = vec![
        "--kind",
        kind,
        "--version",
        version,
        "--domain",
        domain,
        "--count",
        n,
    ];
    if let Some(m) = method {
        g.extend(["--method", m]);
    }
    gen(&g)
}

fn rt_flags<'a>(kind: &'a str, version: &'a str, method: Option<&'a str>) -> Vec<&'a str> {
    let mut f = vec!["--kind", kind, "--from", version];
    if let Some(m) = method {
        f.extend(["--method", m]);
    }
    f
}

#[test]
fn the_lossless_domain_comes_back_exact() {
    for (kind, version, method) in cases("lossless") {
        let d = docs(kind, version, "lossless", method, "40");
        let (r, code, err) = roundtrip(&rt_flags(kind, version, method), &d);
        assert_eq!(r.len(), d.len());
        let s = statuses(&r);
        assert_eq!(
            s.get("exact"),
            Some(&d.len()),
            "{kind} {version} {method:?}: {s:?} {err}"
        );
        assert_eq!(code, Some(0));
    }
}

#[test]
fn the_full_domain_differs_only_where_declared() {
    let mut lossy = 0;
    for (kind, version, method) in cases("full") {
        let d = docs(kind, version, "full", method, "40");
        let (r, code, _) = roundtrip(&rt_flags(kind, version, method), &d);
        for x in &r {
            let st = x["status"].as_str().unwrap_or_default();
            assert!(
                st == "exact" || st == "lossy",
                "{kind} {version} {method:?}: {x}"
            );
            if st == "lossy" {
                lossy += 1;
                for dif in x["round_trip"].as_array().into_iter().flatten() {
                    assert!(dif["lossy"].is_string(), "{x}");
                    assert!(dif["path"].as_str().is_some_and(|p| p.starts_with('$')));
                }
            }
        }
        assert_eq!(code, Some(0), "{kind} {version} {method:?}");
    }
    assert!(
        lossy > 300,
        "only {lossy} lines had declared lossy differences"
    );
}

/// `translate --jsonl` itself as the external converter, told what to do by
/// the environment `roundtrip` gives it.
fn ourselves() -> String {
    format!(
        "{} translate --jsonl --to \"$A2A_TO\" --kind \"$A2A_KIND\" ${{A2A_METHOD_V10:+--method \"$A2A_METHOD_V10\"}}",
        env!("CARGO_BIN_EXE_a2a-compat-proxy")
    )
}

#[test]
fn against_ourselves_nothing_differs() {
    let me = ourselves();
    for (kind, version, method) in [
        ("task", "1.0", None),
        ("card", "0.3", None),
        ("response", "0.3", Some("GetTask")),
        ("request", "1.0", None),
    ] {
        for dir in ["there", "back"] {
            let d = docs(kind, version, "full", method, "40");
            let mut f = rt_flags(kind, version, method);
            f.extend(["--against", &me, "--direction", dir]);
            let (r, code, err) = roundtrip(&f, &d);
            assert_eq!(code, Some(0), "{kind} {dir}: {err}");
            for x in &r {
                assert_eq!(x["compare"], Value::Array(vec![]), "{x}");
            }
        }
    }
}

#[test]
fn a_wrong_converter_is_reported_at_its_path() {
    // v1.0 -> v0.3 with "working" turned into "failed".
    let cmd = format!("{} | sed 's/\"working\"/\"failed\"/g'", ourselves());
    let d = docs("task", "1.0", "lossless", None, "60");
    let (r, code, err) = roundtrip(&["--kind", "task", "--from", "1.0", "--against", &cmd], &d);
    assert_eq!(code, Some(1), "{err}");
    let wrong: Vec<&Value> = r.iter().filter(|x| x["status"] == "differs").collect();
    assert!(!wrong.is_empty(), "{err}");
    for x in wrong {
        let c = &x["compare"][0];
        assert_eq!(c["path"], "$.status.state");
        assert_eq!(c["expected"], "working");
        assert_eq!(c["got"], "failed");
        assert!(c["lossy"].is_null(), "not a declared mapping: {c}");
        assert_eq!(x["round_trip"][0]["got"], "TASK_STATE_FAILED");
    }
    assert!(err.contains("other differences"));
}

#[test]
fn a_broken_converter_fails_line_by_line_within_the_timeout() {
    let d = docs("message", "0.3", "lossless", None, "6");
    let flags = |cmd: &'static str| {
        vec![
            "--kind",
            "message",
            "--from",
            "0.3",
            "--against",
            cmd,
            "--timeout",
            "3",
        ]
    };
    // Silent after two lines and hanging: the rest time out, in bounded time.
    let start = Instant::now();
    let (r, code, _) = roundtrip(&flags("head -n 2 >/dev/null; echo '{\"error\":{\"code\":-32602,\"message\":\"no\"}}'; sleep 60"), &d);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "the timeout bounds the run"
    );
    assert_eq!(code, Some(1));
    assert_eq!(r.len(), 6);
    assert_eq!(r[0]["errors"][0]["by"], "theirs");
    assert_eq!(r[0]["errors"][0]["code"], -32602);
    assert!(r[5]["errors"][0]["message"]
        .as_str()
        .unwrap_or("")
        .contains("within 3 s"));
    // Garbage, too few lines, a command that does not exist.
    for (cmd, says) in [
        ("echo 'not json'; cat >/dev/null", "not JSON"),
        ("cat >/dev/null", "wrote no line"),
        ("/nonexistent/converter", "wrote no line"),
    ] {
        let (r, code, _) = roundtrip(&flags(cmd), &d);
        assert_eq!(code, Some(1), "{cmd}");
        assert_eq!(r.len(), 6, "{cmd}");
        assert!(r.iter().all(|x| x["status"] == "error"), "{cmd}");
        let m: Vec<String> = r
            .iter()
            .map(|x| x["errors"][0]["message"].to_string())
            .collect();
        assert!(m.iter().any(|m| m.contains(says)), "{cmd}: {m:?}");
    }
}

#[test]
fn a_bad_input_line_is_reported_alone() {
    let mut d = docs("task", "0.3", "lossless", None, "3");
    d.insert(1, "{oops".into());
    d.insert(2, "{\"kind\":\"task\"}".into());
    let (r, code, _) = roundtrip(&["--kind", "task", "--from", "0.3"], &d);
    assert_eq!(code, Some(1));
    let s: Vec<&str> = r
        .iter()
        .map(|x| x["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(s, vec!["exact", "error", "error", "exact", "exact"]);
    assert_eq!(r[2]["errors"][0]["code"], -32602);
    // A declared refusal is not an error: ListTasks has no v0.3 form.
    let lt = docs("request", "1.0", "full", Some("ListTasks"), "3");
    let (r, code, _) = roundtrip(&["--kind", "request", "--from", "1.0"], &lt);
    assert_eq!(code, Some(0));
    assert!(r
        .iter()
        .all(|x| x["status"] == "lossy" && x["errors"][0]["code"] == -32004));
}
