//! `cargo bench -p translate --bench translate`
//!
//! Throughput of whole-document translation for a realistic Task (history and
//! artifacts, about 20 KB) and a full agent card, in both directions, plus the
//! ratio translate / (serde_json parse + serialize of the same bytes), measured
//! interleaved in this one run so machine noise hits both sides alike.

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use serde_json::{json, Value};
use translate::document::{translate, Kind};
use translate::Version;

/// A v0.3 Task of about 20 KB: 40 history messages, 4 artifacts with text, data and file parts.
fn task_v03() -> Vec<u8> {
    let history: Vec<Value> = (0..40)
        .map(|i| {
            json!({
                "kind": "message",
                "messageId": format!("msg-{i:04}-6f1c2a9e"),
                "contextId": "ctx-3b1f0c7a",
                "taskId": "task-8d2e4f10",
                "role": if i % 2 == 0 { "user" } else { "agent" },
                "parts": [
                    {"kind": "text", "text": format!("Step {i}: please summarise the quarterly figures for region {} and list the three largest deviations from plan.", i % 5)},
                    {"kind": "data", "data": {"region": i % 5, "quarter": "Q3", "figures": [1.5, 2.25, 3.125, i], "approved": i % 3 == 0}}
                ],
                "metadata": {"trace": format!("tr-{i}"), "lang": "en"}
            })
        })
        .collect();
    let artifacts: Vec<Value> = (0..4)
        .map(|i| {
            json!({
                "artifactId": format!("art-{i}"),
                "name": format!("report-{i}.md"),
                "description": "Generated report section",
                "parts": [
                    {"kind": "text", "text": "## Summary\n".repeat(20)},
                    {"kind": "file", "file": {"bytes": "SGVsbG8sIEEyQSB3b3JsZCEgVGhpcyBpcyBhIHNtYWxsIGZpbGUu".repeat(8), "name": "chart.png", "mimeType": "image/png"}},
                    {"kind": "file", "file": {"uri": "https://files.example.com/reports/q3.pdf", "mimeType": "application/pdf"}}
                ],
                "metadata": {"section": i}
            })
        })
        .collect();
    let task = json!({
        "kind": "task",
        "id": "task-8d2e4f10",
        "contextId": "ctx-3b1f0c7a",
        "status": {
            "state": "completed",
            "timestamp": "2025-04-02T16:59:25.331Z",
            "message": {"kind": "message", "messageId": "final-1", "role": "agent", "parts": [{"kind": "text", "text": "Done."}]}
        },
        "history": history,
        "artifacts": artifacts,
        "metadata": {"priority": "high"}
    });
    serde_json::to_vec(&task).expect("task")
}

/// A v0.3 card with every kind of sub-object.
fn card_v03() -> Vec<u8> {
    let skills: Vec<Value> = (0..8)
        .map(|i| {
            json!({
                "id": format!("skill-{i}"), "name": format!("Skill {i}"),
                "description": "Answers questions about quarterly reports and plans.",
                "tags": ["finance", "reports", "planning"],
                "examples": ["Summarise Q3", "Compare Q2 and Q3"],
                "inputModes": ["text/plain", "application/json"], "outputModes": ["text/markdown"],
                "security": [{"oauth": ["reports.read"]}]
            })
        })
        .collect();
    let card = json!({
        "protocolVersion": "0.3.0",
        "name": "Report Agent",
        "description": "Builds financial reports.",
        "url": "https://agent.example.com/a2a/v1",
        "preferredTransport": "JSONRPC",
        "additionalInterfaces": [
            {"url": "https://agent.example.com/a2a/v1", "transport": "JSONRPC"},
            {"url": "https://agent.example.com/a2a/rest", "transport": "HTTP+JSON"},
            {"url": "https://agent.example.com:8443", "transport": "GRPC"}
        ],
        "provider": {"organization": "Example Corp", "url": "https://example.com"},
        "version": "2.4.1",
        "documentationUrl": "https://docs.example.com/agent",
        "capabilities": {"streaming": true, "pushNotifications": true,
            "extensions": [{"uri": "https://example.com/ext/trace/v1", "description": "tracing", "required": false, "params": {"level": "info"}}]},
        "securitySchemes": {
            "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            "bearer": {"type": "http", "scheme": "Bearer", "bearerFormat": "JWT"},
            "oauth": {"type": "oauth2", "flows": {"authorizationCode": {"authorizationUrl": "https://auth.example.com/authorize", "tokenUrl": "https://auth.example.com/token", "scopes": {"reports.read": "Read reports", "reports.write": "Write reports"}}}},
            "oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"},
            "mtls": {"type": "mutualTLS", "description": "client certificates"}
        },
        "security": [{"oauth": ["reports.read"]}, {"apiKey": []}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "text/markdown"],
        "skills": skills,
        "supportsAuthenticatedExtendedCard": true
    });
    serde_json::to_vec(&card).expect("card")
}

struct Case {
    name: &'static str,
    kind: Kind,
    to: Version,
    input: Vec<u8>,
}

fn cases() -> Vec<Case> {
    let task03 = task_v03();
    let card03 = card_v03();
    let task10 = translate(Kind::Task, Version::V10, None, &task03).expect("task to v1.0");
    let card10 = translate(Kind::Card, Version::V10, None, &card03).expect("card to v1.0");
    vec![
        Case {
            name: "task v0.3->v1.0",
            kind: Kind::Task,
            to: Version::V10,
            input: task03,
        },
        Case {
            name: "task v1.0->v0.3",
            kind: Kind::Task,
            to: Version::V03,
            input: task10,
        },
        Case {
            name: "card v0.3->v1.0",
            kind: Kind::Card,
            to: Version::V10,
            input: card03,
        },
        Case {
            name: "card v1.0->v0.3",
            kind: Kind::Card,
            to: Version::V03,
            input: card10,
        },
    ]
}

fn baseline(input: &[u8]) -> Vec<u8> {
    let v: Value = serde_json::from_slice(input).expect("json");
    serde_json::to_vec(&v).expect("json")
}

fn criterion_benches(c: &mut Criterion, cases: &[Case]) {
    for case in cases {
        let mut g = c.benchmark_group(case.name);
        g.throughput(Throughput::Bytes(case.input.len() as u64));
        g.bench_function("translate", |b| {
            b.iter(|| translate(case.kind, case.to, None, black_box(&case.input)).expect("ok"))
        });
        g.bench_function("serde_json parse+serialize", |b| {
            b.iter(|| baseline(black_box(&case.input)))
        });
        g.finish();
    }
}

/// Median over rounds of (time of N translations) / (time of N baselines),
/// the two batches alternating within each round.
fn ratio(case: &Case) -> f64 {
    const ROUNDS: usize = 31;
    const N: usize = 200;
    let mut ratios = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let t0 = Instant::now();
        for _ in 0..N {
            black_box(translate(case.kind, case.to, None, black_box(&case.input)).expect("ok"));
        }
        let t = t0.elapsed().as_secs_f64();
        let b0 = Instant::now();
        for _ in 0..N {
            black_box(baseline(black_box(&case.input)));
        }
        let b = b0.elapsed().as_secs_f64();
        ratios.push(t / b);
    }
    ratios.sort_by(f64::total_cmp);
    ratios[ROUNDS / 2]
}

fn main() {
    let cases = cases();
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c, &cases);
    c.final_summary();
    println!("\nratio translate / (serde_json parse + serialize), median of 31 interleaved rounds (target <= 1.5):");
    for case in &cases {
        println!(
            "  {:<18} {:>7} bytes  ratio {:.2}",
            case.name,
            case.input.len(),
            ratio(case)
        );
    }
}
