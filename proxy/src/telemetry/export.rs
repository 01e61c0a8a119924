//! The span processor between the tracer and the OTLP exporter: finished
//! spans go into a bounded queue without waiting (a full queue drops the
//! span and counts it), and one task on the telemetry runtime sends them
//! in batches, each export bounded by `telemetry.export_timeout_ms`. A
//! request never waits for the collector: `on_end` only tries to queue.
//! Attributes other than the ones the proxy sets on purpose (the HTTP and
//! RPC semantic conventions, `a2a.*`) are left out, so nothing a span
//! happens to carry (a `tracing` field, a file name) leaves the process.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use opentelemetry::Context;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter, SpanProcessor};
use tokio::sync::mpsc;

/// The most spans one export carries.
const MAX_BATCH: usize = 512;
/// How long a batch waits for more spans after its first.
const LINGER: Duration = Duration::from_millis(200);

/// The export counters `/metrics` shows.
#[derive(Debug, Default)]
pub struct Stats {
    pub exported: AtomicU64,
    /// Dropped because the queue was full (the collector slow or away).
    pub dropped_queue_full: AtomicU64,
    /// Dropped with a batch whose export failed or timed out.
    pub dropped_export_failed: AtomicU64,
    pub exports_failed: AtomicU64,
}

/// Attribute keys a span may carry out of the process: by prefix.
const KEPT: [&str; 7] = [
    "http.", "url.", "rpc.", "server.", "network.", "error.", "a2a.",
];

fn kept(key: &str) -> bool {
    KEPT.iter().any(|p| key.starts_with(p))
}

/// The bounded queue in front of `exporter`.
#[derive(Debug)]
pub struct Bounded {
    tx: Mutex<Option<mpsc::Sender<SpanData>>>,
    worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
    handle: tokio::runtime::Handle,
    stats: &'static Stats,
}

impl Bounded {
    /// Starts the export task on `handle` (the telemetry runtime).
    pub fn start<E: SpanExporter + 'static>(
        exporter: E,
        queue: usize,
        timeout: Duration,
        handle: tokio::runtime::Handle,
        stats: &'static Stats,
    ) -> Bounded {
        let (tx, rx) = mpsc::channel(queue.max(1));
        let worker = handle.spawn(run(rx, exporter, timeout, stats));
        Bounded {
            tx: Mutex::new(Some(tx)),
            worker: Mutex::new(Some(worker)),
            handle,
            stats,
        }
    }
}

impl SpanProcessor for Bounded {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, mut span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        span.attributes.retain(|kv| kept(kv.key.as_str()));

        let tx = self.tx.lock().ok().and_then(|t| t.clone());
        let queued = tx.is_some_and(|tx| tx.try_send(span).is_ok());
        if !queued {
            self.stats
                .dropped_queue_full
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    /// Closes the queue and waits (at most `timeout`) for what is in it to
    /// be sent.
    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        drop(self.tx.lock().ok().and_then(|mut t| t.take()));
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        if let Some(w) = worker {
            let waited = std::thread::scope(|s| {
                s.spawn(|| {
                    self.handle
                        .block_on(async { tokio::time::timeout(timeout, w).await.is_ok() })
                })
                .join()
                .unwrap_or(false)
            });
            if !waited {
                return Err(opentelemetry_sdk::error::OTelSdkError::Timeout(timeout));
            }
        }
        Ok(())
    }
}

/// The export task: a batch of up to [`MAX_BATCH`] spans (those that come
/// within [`LINGER`] of its first), exported within `timeout`; until the
/// queue is closed and empty.
async fn run<E: SpanExporter>(
    mut rx: mpsc::Receiver<SpanData>,
    exporter: E,
    timeout: Duration,
    stats: &'static Stats,
) {
    let mut failing = false;
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        let until = tokio::time::Instant::now() + LINGER;
        while batch.len() < MAX_BATCH {
            match tokio::time::timeout_at(until, rx.recv()).await {
                Ok(Some(s)) => batch.push(s),
                _ => break,
            }
        }
        let n = batch.len() as u64;
        let sent = tokio::time::timeout(timeout, exporter.export(batch)).await;
        match sent {
            Ok(Ok(())) => {
                stats.exported.fetch_add(n, Ordering::Relaxed);
                if failing {
                    failing = false;
                    tracing::info!("telemetry: spans are exported again");
                }
            }
            Ok(Err(e)) => failed(stats, n, &mut failing, &e.to_string()),
            Err(_) => failed(stats, n, &mut failing, "timed out"),
        }
    }
    let _ = exporter.shutdown();
}

fn failed(stats: &Stats, n: u64, failing: &mut bool, why: &str) {
    stats.exports_failed.fetch_add(1, Ordering::Relaxed);
    stats.dropped_export_failed.fetch_add(n, Ordering::Relaxed);
    if !*failing {
        *failing = true;
        let why = crate::agents::echo(why);
        tracing::warn!(error = %why, "telemetry: span export failed, spans dropped (counted in /metrics)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_proxys_own_attributes_leave() {
        for k in [
            "http.request.method",
            "url.path",
            "rpc.method",
            "a2a.agent",
            "server.address",
        ] {
            assert!(kept(k), "{k}");
        }
        for k in [
            "trace_id",
            "agent",
            "code.filepath",
            "thread.id",
            "busy_ns",
            "authorization",
        ] {
            assert!(!kept(k), "{k}");
        }
    }
}
