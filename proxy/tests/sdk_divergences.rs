//! The worked examples of `roundtrip --against`: the a2a-sdk 1.3 Python
//! compat converters (`examples/a2a_python_compat.py`, in `.venv-v10`) and
//! the @a2a-js/sdk 1.3 compat converters (`examples/a2a_js_compat.mjs`,
//! installed into `examples/node_modules` by `tests/sdk/setup.sh`), each
//! run over 1,000 generated documents of every kind, both versions, both
//! domains. The test asserts that the harness works (one report per
//! document, no line lost to the harness) and that every divergence found
//! is classified by a rule of `sdk_divergences/rules.rs` (theirs, ours or a
//! spec ambiguity); the report is `docs/sdk-divergences.md`, checked to be
//! current. Regenerate it with
//! `BLESS=1 cargo test -p a2a-compat-proxy --test sdk_divergences`.

mod oracle_support;
#[path = "sdk_divergences/rules.rs"]
mod rules;

use std::collections::{BTreeMap, BTreeSet};

use oracle_support::{gen, methods, python_v10, root, run, venvs};
use rules::{Class, Rule, RULES};
use serde_json::Value;

/// Documents of each kind, version and domain.
const PER_KIND: usize = 1000;
const SEED: &str = "40";

struct Sdk {
    name: &'static str,
    title: &'static str,
    command: String,
}

fn sdks() -> Vec<Sdk> {
    venvs();
    let js = root().join("examples/node_modules/@a2a-js/sdk/package.json");
    if !js.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "@a2a-js/sdk is not installed in examples/ (tests/sdk/setup.sh installs it with npm)"
        );
        eprintln!("skipped: @a2a-js/sdk is not in examples/node_modules (needs npm); the JS example does not run");
    }
    let mut out = vec![Sdk {
        name: "python",
        title: "a2a-sdk 1.3.0 (Python), `a2a.compat.v0_3.conversions`",
        command: format!(
            "{} {}",
            python_v10().display(),
            root().join("examples/a2a_python_compat.py").display()
        ),
    }];
    if js.exists() {
        out.push(Sdk {
            name: "js",
            title: "@a2a-js/sdk 1.3.0 (TypeScript), the compat client's and server's converters",
            command: format!(
                "node {}",
                root().join("examples/a2a_js_compat.mjs").display()
            ),
        });
    }
    out
}

/// One run: a kind (and method), a version, a domain, how many documents.
struct Batch {
    kind: &'static str,
    method: Option<&'static str>,
    version: &'static str,
    domain: &'static str,
    count: usize,
}

fn batches() -> Vec<Batch> {
    let mut out = Vec::new();
    for domain in ["lossless", "full"] {
        for version in ["0.3", "1.0"] {
            for kind in [
                "task",
                "message",
                "card",
                "push-body",
                "push-config",
                "request",
                "event",
            ] {
                out.push(Batch {
                    kind,
                    method: None,
                    version,
                    domain,
                    count: PER_KIND,
                });
            }
            let ms: Vec<&'static str> = methods(version)
                .into_iter()
                .filter(|m| *m != "ListTasks" || domain == "full")
                .collect();
            let each = PER_KIND.div_ceil(ms.len());
            for m in ms {
                out.push(Batch {
                    kind: "response",
                    method: Some(m),
                    version,
                    domain,
                    count: each,
                });
            }
        }
    }
    out
}

/// The path with indices as `[]`, cut after a free-form member (what
/// differs inside `metadata`, `data` or extension `params` is one thing).
fn template(path: &str) -> String {
    let mut out = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '[' && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars.next().is_some_and(|d| d != ']') {}
            out.push_str("[]");
            continue;
        }
        out.push(c);
    }
    // The first free-form member (a whole member name), if any.
    let mut first: Option<usize> = None;
    for cut in [".metadata", ".data", "extensions[].params"] {
        let mut from = 0;
        while let Some(at) = out[from..].find(cut) {
            let end = from + at + cut.len();
            if matches!(out[end..].chars().next(), None | Some('.') | Some('[')) {
                first = Some(first.map_or(end, |f| f.min(end)));
                break;
            }
            from = end;
        }
    }
    if let Some(end) = first {
        if end < out.len() {
            out.truncate(end);
            out.push_str(".…");
        }
    }
    out
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty() || s.ends_with("_UNSPECIFIED"),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        _ => false,
    }
}

/// What one difference or refusal is, for the rules.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    pub sdk: &'static str,
    /// "0.3" or "1.0": the version their converter wrote.
    pub to: &'static str,
    pub path: String,
    /// `missing` (ours has it, theirs not), `added`, `changed`, `refused`
    /// (theirs gave an error where ours answered) or `ours-refused`.
    pub change: String,
    /// `default` (the value present is a proto3 default), `number`,
    /// `value`; the refusal's message for refusals.
    pub values: String,
}

fn findings(sdk: &'static str, to: &'static str, report: &Value) -> Vec<(Finding, String)> {
    let mut out = Vec::new();
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 70 {
            format!("{}…", s.chars().take(70).collect::<String>())
        } else {
            s
        }
    };
    for d in report["compare"].as_array().into_iter().flatten() {
        let (e, g) = (&d["expected"], &d["got"]);
        let change = d["change"].as_str().unwrap_or_default().to_string();
        let values = match change.as_str() {
            "changed" if e.is_number() && g.is_number() => "number",
            "changed" => "value",
            "missing" if is_default(e) => "default",
            "added" if is_default(g) => "default",
            _ => "value",
        };
        let example = format!(
            "`{}`: ours {}, theirs {}",
            d["path"].as_str().unwrap_or_default(),
            short(e),
            short(g)
        );
        out.push((
            Finding {
                sdk,
                to,
                path: template(d["path"].as_str().unwrap_or_default()),
                change,
                values: values.into(),
            },
            example,
        ));
    }
    for e in report["errors"].as_array().into_iter().flatten() {
        let change = match e["by"].as_str() {
            Some("theirs") => "refused",
            Some("ours") => "ours-refused",
            _ => continue,
        };
        let message = e["message"].as_str().unwrap_or_default().to_string();
        out.push((
            Finding {
                sdk,
                to,
                path: String::new(),
                change: change.into(),
                values: message.clone(),
            },
            short(&Value::from(message)),
        ));
    }
    out
}

/// What one rule found: in how many documents, in which batches, an example.
#[derive(Default)]
struct Group {
    documents: usize,
    batches: BTreeSet<String>,
    example: String,
}

#[derive(Default)]
struct Tally {
    documents: usize,
    identical: usize,
    harness: Vec<String>,
}

#[test]
fn sdk_compat_converters_against_ours() {
    let sdks = sdks();
    let mut groups: BTreeMap<(&'static str, usize), Group> = BTreeMap::new();
    let mut unclassified: BTreeMap<Finding, (usize, String)> = BTreeMap::new();
    let mut tallies: BTreeMap<&'static str, Tally> = BTreeMap::new();
    for sdk in &sdks {
        let tally = tallies.entry(sdk.name).or_default();
        for b in batches() {
            let count = b.count.to_string();
            let mut g = vec![
                "--kind",
                b.kind,
                "--version",
                b.version,
                "--domain",
                b.domain,
                "--count",
                &count,
                "--seed",
                SEED,
            ];
            let mut r = vec!["roundtrip", "--kind", b.kind, "--from", b.version];
            if let Some(m) = b.method {
                g.extend(["--method", m]);
                r.extend(["--method", m]);
            }
            r.extend(["--against", &sdk.command, "--timeout", "900"]);
            let docs = gen(&g);
            let out = run(&r, (docs.join("\n") + "\n").as_bytes());
            let reports: Vec<Value> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).expect("report lines are JSON"))
                .collect();
            let label = match b.method {
                Some(m) => format!("{} {m} {} ({})", b.kind, b.version, b.domain),
                None => format!("{} {} ({})", b.kind, b.version, b.domain),
            };
            // The harness works: one report per document, none lost to it.
            assert_eq!(
                reports.len(),
                docs.len(),
                "{} {label}: {}",
                sdk.name,
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                matches!(out.status.code(), Some(0 | 1)),
                "{} {label}: exit {:?}",
                sdk.name,
                out.status
            );
            let to = if b.version == "0.3" { "1.0" } else { "0.3" };
            for rep in &reports {
                tally.documents += 1;
                let errs = rep["errors"].as_array().cloned().unwrap_or_default();
                for e in &errs {
                    let m = e["message"].as_str().unwrap_or_default();
                    if m.contains("wrote no line")
                        || m.contains("did not answer")
                        || m.contains("not JSON")
                    {
                        tally.harness.push(format!("{label}: {m}"));
                    }
                }
                let found = findings(sdk.name, to, rep);
                if found.is_empty() {
                    tally.identical += 1;
                }
                let mut seen = BTreeSet::new();
                for (f, example) in found {
                    match RULES.iter().position(|r| r.matches(&f)) {
                        Some(i) => {
                            let grp = groups.entry((sdk.name, i)).or_default();
                            if seen.insert(i) {
                                grp.documents += 1;
                            }
                            grp.batches.insert(format!("{} → {to}", label));
                            if grp.example.is_empty() {
                                grp.example = example;
                            }
                        }
                        None => {
                            let u = unclassified.entry(f).or_insert((0, example));
                            u.0 += 1;
                        }
                    }
                }
            }
        }
    }
    for (sdk, t) in &tallies {
        assert!(
            t.harness.is_empty(),
            "{sdk}: the harness lost lines:\n{}",
            t.harness.join("\n")
        );
        assert!(
            t.documents >= 30_000,
            "{sdk}: only {} documents",
            t.documents
        );
    }
    let report = render(&sdks, &tallies, &groups, &unclassified);
    let path = root().join("docs/sdk-divergences.md");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &report).expect("write docs/sdk-divergences.md");
    }
    assert!(
        unclassified.is_empty(),
        "divergences no rule of proxy/tests/sdk_divergences/rules.rs classifies:\n{}",
        unclassified
            .iter()
            .map(|(f, (n, ex))| format!("  {n}x {f:?}\n     e.g. {ex}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == report,
        "docs/sdk-divergences.md is stale: run BLESS=1 cargo test -p a2a-compat-proxy --test sdk_divergences"
    );
}

fn render(
    sdks: &[Sdk],
    tallies: &BTreeMap<&'static str, Tally>,
    groups: &BTreeMap<(&'static str, usize), Group>,
    unclassified: &BTreeMap<Finding, (usize, String)>,
) -> String {
    let mut out = String::from(rules::INTRO);
    for sdk in sdks {
        let t = &tallies[sdk.name];
        out.push_str(&format!(
            "\n## {}\n\n{} documents; {} converted exactly as ours converts them (up to member order, numbers by value and proto3 defaults in v1.0 output).\n",
            sdk.title, t.documents, t.identical
        ));
        for class in [Class::Theirs, Class::Ours, Class::Spec] {
            let rows: Vec<(&Rule, &Group)> = groups
                .iter()
                .filter(|((s, _), _)| *s == sdk.name)
                .map(|((_, i), g)| (&RULES[*i], g))
                .filter(|(r, _)| r.class == class)
                .collect();
            if rows.is_empty() {
                continue;
            }
            out.push_str(&format!(
                "\n### {}\n\n| divergence | documents | where | example |\n|---|---|---|---|\n",
                class.title()
            ));
            for (r, g) in rows {
                let batches: Vec<&String> = g.batches.iter().take(4).collect();
                let more = g.batches.len().saturating_sub(4);
                let mut where_ = batches
                    .iter()
                    .map(|b| b.as_str())
                    .collect::<Vec<_>>()
                    .join("; ");
                if more > 0 {
                    where_.push_str(&format!("; and {more} more"));
                }
                out.push_str(&format!(
                    "| **{}** {} | {} | {} | {} |\n",
                    r.title,
                    r.why,
                    g.documents,
                    where_,
                    g.example.replace('|', "\\|")
                ));
            }
        }
    }
    if !unclassified.is_empty() {
        out.push_str("\n## Unclassified\n\n");
        for (f, (n, ex)) in unclassified {
            out.push_str(&format!("- {n}x {f:?}: {ex}\n"));
        }
    }
    out.push_str(rules::FIXED);
    out
}

#[test]
fn templates_cut_free_form_members() {
    assert_eq!(
        template("$.history[3].parts[0].data.a[2]"),
        "$.history[].parts[].data.…"
    );
    assert_eq!(template("$.metadata"), "$.metadata");
    assert_eq!(
        template("$.result.task.metadataX"),
        "$.result.task.metadataX"
    );
    assert_eq!(
        template("$.capabilities.extensions[1].params.x"),
        "$.capabilities.extensions[].params.…"
    );
}
