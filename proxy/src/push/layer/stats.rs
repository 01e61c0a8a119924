//! The push layer's counters, rendered on `/metrics`.

use super::*;

/// Counters of the push layer (rendered on `/metrics`).
#[derive(Debug, Default)]
pub struct PushStats {
    pub registered: AtomicU64,
    pub accepted: AtomicU64,
    pub rejected: AtomicU64,
    pub delivered: AtomicU64,
    pub failed_attempts: AtomicU64,
    pub dead_letters: AtomicU64,
    /// Accept to successful delivery, summed, in microseconds.
    pub latency_sum_micros: AtomicU64,
    /// Delivery latency histogram (same bounds as the request histogram).
    pub latency_buckets: [AtomicU64; 12],
    /// Outbox length seen by the worker's last round.
    pub queue_depth: AtomicU64,
    /// Bytes of the waiting notifications' bodies, as the bounds count
    /// them, seen by the worker's last round.
    pub queue_bytes: AtomicU64,
    /// Callbacks refused because the outbox was at a bound (also counted
    /// as rejected).
    pub outbox_full: AtomicU64,
    /// The callbacks' read budget and its size (`push.callback_read_bytes`):
    /// what is reserved of it now is rendered.
    pub reading: Option<(Arc<tokio::sync::Semaphore>, usize)>,
}

impl PushStats {
    pub fn delivered_after(&self, accepted_ms: i64) {
        let ms = (crate::push::now_ms() - accepted_ms).max(0) as u64;
        self.delivered.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_micros
            .fetch_add(ms * 1000, Ordering::Relaxed);
        let secs = ms as f64 / 1000.0;
        for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
            if secs <= *b {
                self.latency_buckets[i].fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Prometheus text of the push families.
    pub fn render(&self, out: &mut String) {
        use std::fmt::Write as _;
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let _ = writeln!(out, "# HELP a2a_proxy_push_registrations_total Push configs intercepted.\n# TYPE a2a_proxy_push_registrations_total counter\na2a_proxy_push_registrations_total {}", g(&self.registered));
        let _ = writeln!(out, "# HELP a2a_proxy_push_callbacks_total Agent callbacks by outcome.\n# TYPE a2a_proxy_push_callbacks_total counter\na2a_proxy_push_callbacks_total{{outcome=\"accepted\"}} {}\na2a_proxy_push_callbacks_total{{outcome=\"rejected\"}} {}", g(&self.accepted), g(&self.rejected));
        let _ = writeln!(out, "# HELP a2a_proxy_push_deliveries_total Webhook delivery attempts by outcome.\n# TYPE a2a_proxy_push_deliveries_total counter\na2a_proxy_push_deliveries_total{{outcome=\"delivered\"}} {}\na2a_proxy_push_deliveries_total{{outcome=\"failed\"}} {}\na2a_proxy_push_deliveries_total{{outcome=\"dead_letter\"}} {}", g(&self.delivered), g(&self.failed_attempts), g(&self.dead_letters));
        let _ = writeln!(out, "# HELP a2a_proxy_push_queue_depth Notifications waiting in the outbox.\n# TYPE a2a_proxy_push_queue_depth gauge\na2a_proxy_push_queue_depth {}", g(&self.queue_depth));
        let _ = writeln!(out, "# HELP a2a_proxy_push_queue_bytes Body bytes of the notifications waiting in the outbox.\n# TYPE a2a_proxy_push_queue_bytes gauge\na2a_proxy_push_queue_bytes {}", g(&self.queue_bytes));
        if let Some((sem, size)) = &self.reading {
            let held = size.saturating_sub(sem.available_permits());
            let _ = writeln!(out, "# HELP a2a_proxy_push_callback_read_bytes Bytes of callback bodies being read and accepted now.\n# TYPE a2a_proxy_push_callback_read_bytes gauge\na2a_proxy_push_callback_read_bytes {held}");
        }
        let _ = writeln!(out, "# HELP a2a_proxy_push_outbox_refusals_total Agent callbacks refused at an outbox bound.\n# TYPE a2a_proxy_push_outbox_refusals_total counter\na2a_proxy_push_outbox_refusals_total {}", g(&self.outbox_full));
        let _ = writeln!(out, "# HELP a2a_proxy_push_delivery_seconds Accept to delivery.\n# TYPE a2a_proxy_push_delivery_seconds histogram");
        for (i, b) in LATENCY_BUCKETS.iter().enumerate() {
            let _ = writeln!(
                out,
                "a2a_proxy_push_delivery_seconds_bucket{{le=\"{b}\"}} {}",
                g(&self.latency_buckets[i])
            );
        }
        let n = g(&self.delivered);
        let _ = writeln!(
            out,
            "a2a_proxy_push_delivery_seconds_bucket{{le=\"+Inf\"}} {n}"
        );
        let _ = writeln!(
            out,
            "a2a_proxy_push_delivery_seconds_sum {}",
            g(&self.latency_sum_micros) as f64 / 1e6
        );
        let _ = writeln!(out, "a2a_proxy_push_delivery_seconds_count {n}");
    }
}
