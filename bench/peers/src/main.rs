//! Our translator, bytes in -> bytes out through the entry points the
//! proxy uses, on the fixed payload set that `run.sh` also gives to
//! @a2a-js/sdk's converters.
//!
//! - `peers-bench write DIR`: writes the payloads (`<op>.<version>.json`).
//! - `peers-bench run DIR MS`: one round: every op, each contender for
//!   about MS milliseconds; prints `op contender ns_per_op` lines.
//! - `peers-bench big`: time per MiB of big artifact-update events.
//! - `peers-bench layers DIR MS ROUNDS`: on the payloads made into inputs
//!   the transcoder declines (a `\u00e9` escape in one string, as Python's
//!   `json.dumps` writes non-ASCII text), the typed single pass
//!   (`onepass::typed_*`) next to the general typed path
//!   (`document::translate_typed`), interleaved round by round; prints the
//!   medians and their ratio.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use translate::document::{self, translate, Kind};
use translate::method::Method;
use translate::{onepass, transcode, Version};

/// The allocator of the proxy binary (proxy/src/main.rs), so the
/// translator is measured as it runs there.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A v0.3 Task of about 20 KB: 10 history messages, 3 artifacts with text,
/// data and file parts.
fn task_v03() -> Value {
    let history: Vec<Value> = (0..10)
        .map(|i| {
            json!({
                "kind": "message",
                "messageId": format!("msg-{i:04}-6f1c2a9e"),
                "contextId": "ctx-3b1f0c7a",
                "taskId": "task-8d2e4f10",
                "role": if i % 2 == 0 { "user" } else { "agent" },
                "parts": [
                    {"kind": "text", "text": format!("Step {i}: please summarise the quarterly figures for region {} and list the three largest deviations from plan, with the reasons the regional leads gave for each of them and what they propose to do next quarter.", i % 5)},
                    {"kind": "data", "data": {"region": i % 5, "quarter": "Q3", "figures": [1.5, 2.25, 3.125, i], "approved": i % 3 == 0, "owner": {"name": "Jane Roe", "team": "finance"}}}
                ],
                "metadata": {"trace": format!("tr-{i}"), "lang": "en"}
            })
        })
        .collect();
    let artifacts: Vec<Value> = (0..3)
        .map(|i| {
            json!({
                "artifactId": format!("art-{i}"),
                "name": format!("report-{i}.md"),
                "description": "Generated report section",
                "parts": [
                    {"kind": "text", "text": "## Summary\nRevenue grew in every region; costs stayed flat.\n".repeat(62)},
                    {"kind": "data", "data": {"rows": [[1, "north", 12.5], [2, "south", 7.25], [3, "east", 3.5]], "unit": "MEUR"}},
                    {"kind": "file", "file": {"bytes": "SGVsbG8sIEEyQSB3b3JsZCEgVGhpcyBpcyBhIHNtYWxsIGZpbGUu".repeat(12), "name": "chart.png", "mimeType": "image/png"}},
                    {"kind": "file", "file": {"uri": "https://files.example.com/reports/q3.pdf", "mimeType": "application/pdf"}}
                ],
                "metadata": {"section": i}
            })
        })
        .collect();
    json!({
        "id": "task-8d2e4f10",
        "contextId": "ctx-3b1f0c7a",
        "status": {
            "state": "completed",
            "timestamp": "2025-04-02T16:59:25.331Z",
            "message": {"kind": "message", "messageId": "final-1", "role": "agent", "parts": [{"kind": "text", "text": "Done."}]}
        },
        "history": history,
        "artifacts": artifacts,
        "metadata": {"priority": "high"},
        "kind": "task"
    })
}

/// A full v0.3 agent card.
fn card_v03() -> Value {
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
    json!({
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
    })
}

/// A v0.3 message/send request.
fn send_v03() -> Value {
    json!({
        "jsonrpc": "2.0", "id": "req-7f3a", "method": "message/send",
        "params": {
            "message": {
                "kind": "message", "messageId": "msg-5e1d", "contextId": "ctx-3b1f0c7a",
                "role": "user",
                "parts": [
                    {"kind": "text", "text": "Please summarise the Q3 figures for the north region and compare them with plan."},
                    {"kind": "data", "data": {"region": "north", "quarter": "Q3"}}
                ],
                "metadata": {"client": "web", "trace": "tr-91"}
            },
            "configuration": {"acceptedOutputModes": ["text/plain", "text/markdown"], "historyLength": 5, "blocking": true},
            "metadata": {"tenantHint": "acme"}
        }
    })
}

/// A v0.3 status-update stream event.
fn status_v03() -> Value {
    json!({
        "jsonrpc": "2.0", "id": "req-7f3a",
        "result": {
            "kind": "status-update", "taskId": "task-8d2e4f10", "contextId": "ctx-3b1f0c7a",
            "status": {
                "state": "working", "timestamp": "2025-04-02T16:59:25.331Z",
                "message": {"kind": "message", "messageId": "st-3", "role": "agent",
                    "parts": [{"kind": "text", "text": "Reading the regional reports (3 of 5)."}]}
            },
            "final": false,
            "metadata": {"progress": 0.6}
        }
    })
}

/// What an op is, and how the proxy translates it.
#[derive(Clone, Copy)]
enum Op {
    Task,
    Card,
    Send,
    Status,
}

const OPS: [(Op, &str); 4] = [
    (Op::Task, "task"),
    (Op::Card, "card"),
    (Op::Send, "send"),
    (Op::Status, "status"),
];

/// The proxy's path: the single pass (transcoder first), else the general
/// path. `typed`: main's single pass (typed structs only) instead.
fn ours(op: Op, to: Version, input: &[u8], typed: bool) -> Vec<u8> {
    let fast = match (op, typed) {
        // The proxy's card entry point: the card transcoder, else the typed path.
        (Op::Card, false) => return document::card(to, input).expect("translates"),
        (Op::Card, true) => None,
        (Op::Task, false) => onepass::response(to, Method::GetTask, input),
        (Op::Task, true) => onepass::typed_response(to, Method::GetTask, input),
        (Op::Status, false) => onepass::response(to, Method::SendStreamingMessage, input),
        (Op::Status, true) => onepass::typed_response(to, Method::SendStreamingMessage, input),
        (Op::Send, false) => onepass::request(to, name_from(to), input),
        (Op::Send, true) => onepass::typed_request(to, name_from(to), input),
    };
    match fast {
        Some(out) => out,
        None => {
            let (kind, method) = match op {
                Op::Card => (Kind::Card, None),
                Op::Task => (Kind::Response, Some("GetTask")),
                Op::Status => (Kind::Response, Some("SendStreamingMessage")),
                Op::Send => (Kind::Request, None),
            };
            translate(kind, to, method, input).expect("translates")
        }
    }
}

/// The method name of the send request in the version it is written in.
fn name_from(to: Version) -> &'static str {
    match to {
        Version::V10 => "message/send",
        Version::V03 => "SendMessage",
    }
}

fn envelope_of_task(t: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": "req-g", "result": t})
}

fn write(dir: &Path) {
    std::fs::create_dir_all(dir).expect("dir");
    let compact = |v: &Value| serde_json::to_vec(v).expect("json");
    let put = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).expect("write");
    let task03 = compact(&envelope_of_task(task_v03()));
    let card03 = compact(&card_v03());
    let send03 = compact(&send_v03());
    let status03 = compact(&status_v03());
    for (op, name, v03) in [
        (Op::Task, "task", &task03),
        (Op::Card, "card", &card03),
        (Op::Send, "send", &send03),
        (Op::Status, "status", &status03),
    ] {
        let v10 = ours(op, Version::V10, v03, true);
        put(&format!("{name}.v03.json"), v03);
        put(&format!("{name}.v10.json"), &v10);
    }
}

fn time(budget: Duration, mut f: impl FnMut() -> usize) -> f64 {
    // Warm-up.
    let warm = Instant::now();
    while warm.elapsed() < budget / 10 {
        black_box(f());
    }
    let start = Instant::now();
    let mut n = 0u64;
    while start.elapsed() < budget {
        for _ in 0..16 {
            black_box(f());
        }
        n += 16;
    }
    start.elapsed().as_nanos() as f64 / n as f64
}

fn run(dir: &Path, ms: u64) {
    let budget = Duration::from_millis(ms);
    for (op, name) in OPS {
        for (from, to) in [("v03", Version::V10), ("v10", Version::V03)] {
            let input = std::fs::read(dir.join(format!("{name}.{from}.json"))).expect("payload");
            let label = format!("{name}.{from}");
            // Which path answers (the transcoder, or the typed path).
            let path = match op {
                Op::Card => transcode::card(to, &input).map_or("general", |_| "transcode"),
                Op::Task => transcode::response(to, Method::GetTask, &input)
                    .map_or("typed", |_| "transcode"),
                Op::Status => transcode::response(to, Method::SendStreamingMessage, &input)
                    .map_or("typed", |_| "transcode"),
                Op::Send => {
                    transcode::request(to, name_from(to), &input).map_or("typed", |_| "transcode")
                }
            };
            let now = time(budget, || ours(op, to, &input, false).len());
            let main = time(budget, || ours(op, to, &input, true).len());
            println!("{label} rust {now:.0} {} {path}", input.len());
            println!("{label} rust-main {main:.0} {} typed", input.len());
            // The crate's document API (what SDK authors and the CLI
            // call), and the typed path it took before it tried the
            // transcoder first.
            let (kind, method) = match op {
                Op::Card => (Kind::Card, None),
                Op::Task => (Kind::Response, Method::GetTask.name(to.other())),
                Op::Status => (Kind::Event, Method::SendStreamingMessage.name(to.other())),
                Op::Send => (Kind::Request, None),
            };
            let doc = time(budget, || translate(kind, to, method, &input).expect("doc").len());
            let typed = time(budget, || {
                document::translate_typed(kind, to, method, &input).expect("typed").len()
            });
            println!("{label} rust-doc {doc:.0} {}", input.len());
            println!("{label} rust-doc-typed {typed:.0} {}", input.len());
        }
    }
}

/// An artifact-update event with one text part of `size` bytes.
fn big(size: usize) -> Vec<u8> {
    let line = "The quick brown fox jumps over the lazy dog; \"quoted\" and\ttabbed.\n";
    let text: String = line.repeat(size / line.len() + 1)[..size].to_string();
    let ev = json!({
        "jsonrpc": "2.0", "id": 1,
        "result": {
            "kind": "artifact-update", "taskId": "t-1", "contextId": "c-1",
            "artifact": {"artifactId": "a-1", "parts": [{"kind": "text", "text": text}]},
            "append": true, "lastChunk": false
        }
    });
    serde_json::to_vec(&ev).expect("json")
}

fn bigs() {
    for mib in [1usize, 4, 16] {
        let v03 = big(mib << 20);
        let v10 = onepass::typed_response(Version::V10, Method::SendStreamingMessage, &v03)
            .expect("typed");
        for (label, to, input) in [
            ("v03->v10", Version::V10, &v03),
            ("v10->v03", Version::V03, &v10),
        ] {
            let m = Method::SendStreamingMessage;
            let taken = transcode::response(to, m, input).is_some();
            let reps = (64 / mib).max(2);
            let t = Instant::now();
            for _ in 0..reps {
                black_box(onepass::response(to, m, input).expect("translates").len());
            }
            let per = t.elapsed().as_secs_f64() / reps as f64;
            let t = Instant::now();
            for _ in 0..reps {
                black_box(
                    onepass::typed_response(to, m, input)
                        .expect("translates")
                        .len(),
                );
            }
            let typed = t.elapsed().as_secs_f64() / reps as f64;
            println!(
                "big artifact-update {mib:>2} MiB {label}: {:.2} ms ({:.2} ms/MiB, transcoder {}), typed path {:.2} ms ({:.2} ms/MiB)",
                per * 1e3,
                per * 1e3 / mib as f64,
                if taken { "answered" } else { "declined" },
                typed * 1e3,
                typed * 1e3 / mib as f64
            );
        }
    }
}

/// `input` with the first occurrence of one of its strings' text
/// rewritten with a `\u00e9` escape (the transcoder leaves escapes other
/// than serde_json's own to the typed path).
fn declined(input: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(input.to_vec()).expect("utf-8");
    for word in ["Done.", "Reading the", "Please summarise", "Builds financial"] {
        if let Some(at) = text.find(word) {
            return format!("{}\\u00e9{}", &text[..at], &text[at..]).into_bytes();
        }
    }
    panic!("no string to escape")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn layers(dir: &Path, ms: u64, rounds: usize) {
    let budget = Duration::from_millis(ms);
    println!("| op | bytes in | typed single pass ns/op | general typed path ns/op | general / single pass | bare result, derived readers from bytes ns/op | derived / single pass |");
    println!("|---|---|---|---|---|---|---|");
    for (op, name) in [(Op::Task, "task"), (Op::Send, "send"), (Op::Status, "status")] {
        for (from, to) in [("v03", Version::V10), ("v10", Version::V03)] {
            let raw = std::fs::read(dir.join(format!("{name}.{from}.json"))).expect("payload");
            let input = declined(&raw);
            let (kind, method, m) = match op {
                Op::Task => (Kind::Response, Some("GetTask"), Method::GetTask),
                Op::Status => (Kind::Response, Some("SendStreamingMessage"), Method::SendStreamingMessage),
                Op::Send => (Kind::Request, None, Method::SendMessage),
                Op::Card => unreachable!(),
            };
            assert!(transcode::document(kind, to, Some(m), &input).is_none(), "taken");
            let single = || match op {
                Op::Send => onepass::typed_request(to, name_from(to), &input),
                _ => onepass::typed_response(to, m, &input),
            };
            let general = || document::translate_typed(kind, to, method, &input).expect("general");
            assert_eq!(single().expect("single pass"), general(), "{name}.{from}");
            // The bare task through the derived readers straight from the
            // bytes (no `Value` of the document), for the task only.
            let bare: Option<Vec<u8>> = matches!(op, Op::Task).then(|| {
                let v: serde_json::Value = serde_json::from_slice(&input).expect("json");
                serde_json::to_vec(&v["result"]).expect("json")
            });
            let derived = |b: &[u8]| document::translate_typed(Kind::Task, to, None, b).expect("derived").len();
            let mut c = Vec::new();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for r in 0..rounds {
                if let Some(bare) = &bare {
                    c.push(time(budget, || derived(bare)));
                }
                let mut one = || a.push(time(budget, || single().map_or(0, |o| o.len())));
                if r % 2 == 0 {
                    one();
                    b.push(time(budget, || general().len()));
                } else {
                    b.push(time(budget, || general().len()));
                    one();
                }
            }
            let (a, b) = (median(a), median(b));
            let (c, cr) = if c.is_empty() {
                ("-".to_string(), "-".to_string())
            } else {
                let c = median(c);
                (format!("{c:.0}"), format!("{:.2}x", c / a))
            };
            println!("| {name}.{from} | {} | {a:.0} | {b:.0} | **{:.2}x** | {c} | {cr} |", input.len(), b / a);
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("write") => write(Path::new(&args[2])),
        Some("run") => run(
            Path::new(&args[2]),
            args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300),
        ),
        Some("big") => bigs(),
        Some("layers") => layers(
            Path::new(&args[2]),
            args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300),
            args.get(4).and_then(|s| s.parse().ok()).unwrap_or(7),
        ),
        _ => eprintln!("usage: peers-bench write DIR | run DIR MS | big | layers DIR MS ROUNDS"),
    }
}
