//! Prometheus text exposition, hand-rolled (three metric families), and
//! the `agent` label every line carries ([`label_agents`]).

use crate::version::Version;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Latency bucket upper bounds in seconds.
pub const BUCKETS: [f64; 12] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0, 60.0,
];

/// Labels of `a2a_proxy_requests_total`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RequestLabels {
    /// A2A operation (v1.0 name), or `unknown` / `none`.
    pub method: String,
    /// `jsonrpc`, `rest`, `card`, `health`, `ready`, `metrics`, `other`.
    pub binding: &'static str,
    /// Client version -> upstream version: `v03_v03`, `v03_v10`, `v10_v03`,
    /// `v10_v10`, or `local` when no upstream was involved.
    pub direction: &'static str,
    /// `ok`, `client_error`, `upstream_error`, a failure label, …
    pub outcome: String,
}

/// All counters of one proxy instance.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<RequestLabels, u64>>,
    bucket_counts: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_micros: AtomicU64,
    open_streams: AtomicI64,
    /// The proxy's requests of no agent, when these are the first agent's
    /// metrics ([`Metrics::unrouted`]).
    unrouted: OnceLock<Arc<Metrics>>,
    /// The agent these count for (`""`: no agent), for the same counters
    /// exported over OTLP (crate::telemetry).
    agent: String,
}

/// The `direction` label of a request.
pub fn direction(client: Option<Version>, upstream: Option<Version>) -> &'static str {
    match (client, upstream) {
        (Some(Version::V03), Some(Version::V03)) => "v03_v03",
        (Some(Version::V03), Some(Version::V10)) => "v03_v10",
        (Some(Version::V10), Some(Version::V03)) => "v10_v03",
        (Some(Version::V10), Some(Version::V10)) => "v10_v10",
        _ => "local",
    }
}

impl Metrics {
    /// The counters of agent `name`.
    pub fn named(name: &str) -> Metrics {
        Metrics {
            agent: name.to_string(),
            ..Metrics::default()
        }
    }

    /// Counts one finished request and its latency (also exported over
    /// OTLP, and noted on the call's span, when telemetry is on).
    pub fn record(&self, labels: RequestLabels, latency: Duration) {
        crate::telemetry::note_call(&self.agent, &labels, latency);
        if let Ok(mut map) = self.requests.lock() {
            *map.entry(labels).or_insert(0) += 1;
        }
        let secs = latency.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                self.bucket_counts[i].fetch_add(1, Ordering::Relaxed);
            }
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_micros
            .fetch_add(latency.as_micros() as u64, Ordering::Relaxed);
    }

    /// Requests that reached no agent (an HTTP 404 for a host and path
    /// no agent is served at, a gRPC `NOT_FOUND` for an authority),
    /// counted on every listener of one proxy in one place: the first
    /// agent's metrics keep it; `/metrics` renders it with `agent=""`.
    pub fn unrouted(&self) -> Arc<Metrics> {
        self.unrouted.get_or_init(Arc::default).clone()
    }

    pub fn stream_opened(&self) {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
        crate::telemetry::stream_delta(&self.agent, 1);
    }

    pub fn stream_closed(&self) {
        self.open_streams.fetch_sub(1, Ordering::Relaxed);
        crate::telemetry::stream_delta(&self.agent, -1);
    }

    /// The proxy's own counters (of no agent): config reloads, telemetry
    /// export (when on).
    pub fn render_process(out: &mut String) {
        crate::reload::render(out);
        crate::telemetry::render(out);
    }

    pub fn open_streams(&self) -> i64 {
        self.open_streams.load(Ordering::Relaxed)
    }

    /// The text exposition format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        out.push_str("# HELP a2a_proxy_requests_total Requests handled, by A2A method, direction, binding and outcome.\n");
        out.push_str("# TYPE a2a_proxy_requests_total counter\n");
        if let Ok(map) = self.requests.lock() {
            for (l, n) in map.iter() {
                let _ = writeln!(
                    out,
                    "a2a_proxy_requests_total{{method=\"{}\",direction=\"{}\",binding=\"{}\",outcome=\"{}\"}} {n}",
                    escape(&l.method),
                    l.direction,
                    l.binding,
                    escape(&l.outcome)
                );
            }
        }
        out.push_str(
            "# HELP a2a_proxy_request_duration_seconds Time from request to end of response.\n",
        );
        out.push_str("# TYPE a2a_proxy_request_duration_seconds histogram\n");
        for (i, bound) in BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "a2a_proxy_request_duration_seconds_bucket{{le=\"{bound}\"}} {}",
                self.bucket_counts[i].load(Ordering::Relaxed)
            );
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "a2a_proxy_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let sum = self.latency_sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "a2a_proxy_request_duration_seconds_sum {sum}");
        let _ = writeln!(out, "a2a_proxy_request_duration_seconds_count {count}");
        out.push_str("# HELP a2a_proxy_open_streams SSE streams currently open.\n");
        out.push_str("# TYPE a2a_proxy_open_streams gauge\n");
        let _ = writeln!(out, "a2a_proxy_open_streams {}", self.open_streams());
        out
    }
}

// Several agents (area: agents).
/// The `/metrics` answer for exposition `text`.
pub fn exposition(text: String) -> crate::local::LocalResponse {
    crate::local::LocalResponse {
        status: 200,
        headers: vec![(
            "Content-Type",
            "text/plain; version=0.0.4; charset=utf-8".into(),
        )],
        body: bytes::Bytes::from(text),
    }
}

/// Several agents' expositions `(agent name, text)` as one: every sample
/// line gets `agent="NAME"` as its first label, and each family's `# HELP`
/// and `# TYPE` lines appear once, followed by the samples of every agent
/// in the order given.
pub fn label_agents(parts: &[(&str, &str)]) -> String {
    // (family, its comment lines, its samples), in first-seen order.
    let mut families: Vec<(String, Vec<String>, Vec<String>)> = Vec::new();
    for (agent, text) in parts {
        let label = format!("agent=\"{}\"", escape(agent));
        let mut current: Option<usize> = None;
        for line in text.lines() {
            if let Some(rest) = line
                .strip_prefix("# HELP ")
                .or_else(|| line.strip_prefix("# TYPE "))
            {
                let name = rest.split(' ').next().unwrap_or_default();
                let i = match families.iter().position(|f| f.0 == name) {
                    Some(i) => i,
                    None => {
                        families.push((name.to_string(), Vec::new(), Vec::new()));
                        families.len() - 1
                    }
                };
                if !families[i].1.iter().any(|l| l == line) {
                    families[i].1.push(line.to_string());
                }
                current = Some(i);
                continue;
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let labelled = match line.find(['{', ' ']) {
                Some(at) if line[at..].starts_with("{}") => {
                    format!("{}{{{label}}}{}", &line[..at], &line[at + 2..])
                }
                Some(at) if line[at..].starts_with('{') => {
                    format!("{}{{{label},{}", &line[..at], &line[at + 1..])
                }
                Some(at) => format!("{}{{{label}}}{}", &line[..at], &line[at..]),
                None => continue,
            };
            let i = match current {
                Some(i) => i,
                None => {
                    families.push((String::new(), Vec::new(), Vec::new()));
                    let i = families.len() - 1;
                    current = Some(i);
                    i
                }
            };
            families[i].2.push(labelled);
        }
    }
    let mut out = String::new();
    for (_, comments, samples) in families {
        for l in comments.iter().chain(samples.iter()) {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_histogram_gauge() {
        let m = Metrics::default();
        let l = RequestLabels {
            method: "SendMessage".into(),
            binding: "jsonrpc",
            direction: "v10_v03",
            outcome: "ok".into(),
        };
        m.record(l.clone(), Duration::from_millis(3));
        m.record(l, Duration::from_millis(300));
        m.stream_opened();
        let text = m.render();
        assert!(text.contains(
            "a2a_proxy_requests_total{method=\"SendMessage\",direction=\"v10_v03\",binding=\"jsonrpc\",outcome=\"ok\"} 2"
        ));
        assert!(text.contains("a2a_proxy_request_duration_seconds_bucket{le=\"0.005\"} 1"));
        assert!(text.contains("a2a_proxy_request_duration_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("a2a_proxy_open_streams 1"));
    }

    #[test]
    fn every_line_names_its_agent_and_families_appear_once() {
        let (a, b) = (Metrics::default(), Metrics::default());
        let l = RequestLabels {
            method: "GetTask".into(),
            binding: "rest",
            direction: "v03_v10",
            outcome: "ok".into(),
        };
        a.record(l.clone(), Duration::from_millis(3));
        b.record(l.clone(), Duration::from_millis(3));
        b.record(l, Duration::from_millis(3));
        b.stream_opened();
        let (ta, tb) = (a.render(), b.render());
        let text = label_agents(&[("a", &ta), ("b\"x", &tb)]);
        assert!(text.contains("a2a_proxy_requests_total{agent=\"a\",method=\"GetTask\",direction=\"v03_v10\",binding=\"rest\",outcome=\"ok\"} 1\n"));
        assert!(text.contains("a2a_proxy_requests_total{agent=\"b\\\"x\",method=\"GetTask\",direction=\"v03_v10\",binding=\"rest\",outcome=\"ok\"} 2\n"));
        assert!(
            text.contains("a2a_proxy_request_duration_seconds_bucket{agent=\"a\",le=\"+Inf\"} 1\n")
        );
        assert!(text.contains("a2a_proxy_request_duration_seconds_count{agent=\"b\\\"x\"} 2\n"));
        assert!(text.contains("a2a_proxy_open_streams{agent=\"a\"} 0\n"));
        assert!(text.contains("a2a_proxy_open_streams{agent=\"b\\\"x\"} 1\n"));
        assert_eq!(text.matches("# TYPE a2a_proxy_requests_total").count(), 1);
        assert_eq!(text.matches("# HELP a2a_proxy_open_streams").count(), 1);
        // Every sample line is labelled.
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.contains("{agent=\""), "{line}");
        }
        // A family's samples follow its comments.
        let t = text.find("# TYPE a2a_proxy_open_streams").unwrap();
        assert!(text.find("a2a_proxy_open_streams{agent=\"a\"}").unwrap() > t);
    }
}
