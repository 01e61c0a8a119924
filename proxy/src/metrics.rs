//! Prometheus text exposition, hand-rolled (three metric families).

use crate::version::Version;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
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
    /// Counts one finished request and its latency.
    pub fn record(&self, labels: RequestLabels, latency: Duration) {
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

    pub fn stream_opened(&self) {
        self.open_streams.fetch_add(1, Ordering::Relaxed);
    }

    pub fn stream_closed(&self) {
        self.open_streams.fetch_sub(1, Ordering::Relaxed);
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
}
