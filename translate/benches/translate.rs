//! `cargo bench -p translate --bench translate`
//!
//! Throughput of whole-document translation for a realistic Task (history and
//! artifacts, about 20 KB) and a full agent card, in both directions, plus the
//! ratio translate / (serde_json parse + serialize of the same bytes), measured
//! interleaved in this one run so machine noise hits both sides alike; and
//! the streaming transcoder on SSE stream events (a status update as
//! `bench/proxyload` sends it, an artifact update, a task), both directions.
//!
//! `cargo bench -p translate --bench translate -- --events N [NAME]`: only
//! the stream events (those whose name contains NAME), each translated N
//! times as the proxy does it and nothing else (no timing), for counting
//! instructions per event under `valgrind --tool=callgrind
//! --toggle-collect='*translate_event*'` (the bench binary run directly).

use std::hint::black_box;
use std::time::Instant;

use criterion::{Criterion, Throughput};
use serde_json::{json, Value};
use translate::document::{translate, Kind};
use translate::method::Method;
use translate::{transcode, Version};

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

/// A stream event's `data` (a JSON-RPC response envelope) and the
/// direction it is translated in.
struct Event {
    name: &'static str,
    to: Version,
    data: String,
}

/// The status update `bench/proxyload`'s fake agent sends (event `n`).
fn status_event(v10: bool, n: usize) -> String {
    if v10 {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"statusUpdate":{{"taskId":"task-1","contextId":"ctx-1","status":{{"state":"TASK_STATE_WORKING","message":{{"messageId":"s-{n}","role":"ROLE_AGENT","parts":[{{"text":"step {n}"}}]}},"timestamp":"2026-01-01T00:00:00Z"}}}}}}}}"#
        )
    } else {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"kind":"status-update","taskId":"task-1","contextId":"ctx-1","status":{{"state":"working","message":{{"kind":"message","messageId":"s-{n}","role":"agent","parts":[{{"kind":"text","text":"step {n}"}}]}},"timestamp":"2026-01-01T00:00:00Z"}},"final":false}}}}"#
        )
    }
}

fn events() -> Vec<Event> {
    let artifact03 = r#"{"jsonrpc":"2.0","id":"req-7","result":{"kind":"artifact-update","taskId":"task-1","contextId":"ctx-1","artifact":{"artifactId":"a-1","name":"answer","parts":[{"kind":"text","text":"The quick brown fox jumps over the lazy dog."},{"kind":"data","data":{"score":0.97,"tags":["x","y"]}}]},"append":true,"lastChunk":false}}"#;
    let task03 = r#"{"jsonrpc":"2.0","id":1,"result":{"kind":"task","id":"task-1","contextId":"ctx-1","status":{"state":"submitted","timestamp":"2026-01-01T00:00:00.123Z"},"history":[{"kind":"message","messageId":"m-1","contextId":"ctx-1","taskId":"task-1","role":"user","parts":[{"kind":"text","text":"hello from the benchmark"}],"metadata":{"bench":true}}]}}"#;
    let to10 = |s: &str| {
        let out = transcode::response(Version::V10, Method::SendStreamingMessage, s.as_bytes())
            .expect("the bench event is transcoded");
        String::from_utf8(out).expect("utf-8")
    };
    vec![
        Event {
            name: "status event v0.3->v1.0",
            to: Version::V10,
            data: status_event(false, 17),
        },
        Event {
            name: "status event v1.0->v0.3",
            to: Version::V03,
            data: status_event(true, 17),
        },
        Event {
            name: "artifact event v0.3->v1.0",
            to: Version::V10,
            data: artifact03.to_string(),
        },
        Event {
            name: "artifact event v1.0->v0.3",
            to: Version::V03,
            data: to10(artifact03),
        },
        Event {
            name: "task event v0.3->v1.0",
            to: Version::V10,
            data: task03.to_string(),
        },
        Event {
            name: "task event v1.0->v0.3",
            to: Version::V03,
            data: to10(task03),
        },
    ]
}

/// One event as the proxy translates it: written at the end of the
/// piece's output (`out`, emptied first), to v1.0 with the task facts
/// (its ListTasks index records them), to v0.3 without. Never inlined,
/// so that `--toggle-collect=*translate_event*` counts it alone.
#[inline(never)]
fn translate_event(e: &Event, out: &mut Vec<u8>) -> usize {
    out.clear();
    match e.to {
        Version::V10 => {
            let facts = transcode::response_to_v10_with_facts_into(
                Method::SendStreamingMessage,
                &e.data,
                out,
            )
            .expect("transcoded");
            out.len() + black_box(&facts as *const _ as usize & 1)
        }
        Version::V03 => {
            transcode::response_str_into(Version::V03, Method::SendStreamingMessage, &e.data, out)
                .expect("transcoded");
            out.len()
        }
    }
}

fn event_benches(c: &mut Criterion, events: &[Event]) {
    let mut g = c.benchmark_group("stream events");
    for e in events {
        let mut out = Vec::new();
        g.bench_function(e.name, |b| {
            b.iter(|| translate_event(black_box(e), &mut out))
        });
    }
    g.finish();
}

/// `--events N [NAME]`: each event (whose name contains `NAME`) translated
/// `n` times, nothing else.
fn count_events(n: usize, only: Option<&str>) {
    for e in events()
        .iter()
        .filter(|e| only.is_none_or(|o| e.name.contains(o)))
    {
        let (mut total, mut out) = (0, Vec::new());
        for _ in 0..n {
            total += translate_event(black_box(e), &mut out);
        }
        println!(
            "{:<28} {:>4} bytes in, {n} x, {total} bytes out",
            e.name,
            e.data.len()
        );
    }
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
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--events") {
        let n = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .expect("--events N");
        count_events(n, args.get(at + 2).map(String::as_str));
        return;
    }
    let cases = cases();
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c, &cases);
    event_benches(&mut c, &events());
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
