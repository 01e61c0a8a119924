//! OpenTelemetry export (issue #39 item 1), off unless `[telemetry]
//! otlp_endpoint` is set: the proxy's `tracing` spans become OTel spans
//! (`tracing-opentelemetry`) sent over OTLP, gRPC (tonic) or HTTP/protobuf
//! (hyper), and the request metrics `/metrics` shows are also exported
//! there, as OTel instruments of the same names.
//!
//! The spans are those of target `a2a_call`: each HTTP and gRPC call the
//! proxy serves is a server span (`front/agents.rs`, `grpc/authority.rs`;
//! the caller's `traceparent` as its parent, [`adopt_parent`]), its
//! children the upstream call (`upstream/`), the translation
//! ([`translation`], in the codecs) and the card fetch (`card/cache.rs`);
//! each webhook delivery (`push/webhook.rs`) is a client span whose
//! parent is the agent's trace context stored with the notification.
//! Attributes: the HTTP and RPC semantic conventions and `a2a.method`,
//! `a2a.client_version`, `a2a.agent_version`, `a2a.translated`,
//! `a2a.agent` ([`note_call`]); nothing else leaves ([`export`]), never a
//! header value or a body.
//!
//! Everything runs on a runtime of its own (one thread); a request only
//! queues its finished spans without waiting ([`export::Bounded`]), and
//! spans that do not fit or whose export fails are dropped and counted
//! (`a2a_proxy_telemetry_spans_dropped_total`, [`render`]).

pub mod export;

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::metrics::{Counter, Histogram, UpDownCounter};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use opentelemetry::KeyValue;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use opentelemetry_sdk::Resource;
use tracing_subscriber::filter::{Filtered, Targets};
use tracing_subscriber::Layer as _;

use crate::config::{OtlpProtocol, TelemetrySettings};
use crate::metrics::RequestLabels;
use crate::tracectx::TraceContext;
use crate::version::Version;

/// The `tracing` target of every span exported.
pub const TARGET: &str = "a2a_call";

/// The layer the subscriber gets: OTel spans of [`TARGET`], whatever
/// `RUST_LOG` says.
pub type Layer = Filtered<
    tracing_opentelemetry::OpenTelemetryLayer<
        tracing_subscriber::Registry,
        opentelemetry_sdk::trace::Tracer,
    >,
    Targets,
    tracing_subscriber::Registry,
>;

/// The export counters (process-wide).
pub static STATS: export::Stats = export::Stats {
    exported: std::sync::atomic::AtomicU64::new(0),
    dropped_queue_full: std::sync::atomic::AtomicU64::new(0),
    dropped_export_failed: std::sync::atomic::AtomicU64::new(0),
    exports_failed: std::sync::atomic::AtomicU64::new(0),
};

/// The OTel instruments, once export is on.
struct Instruments {
    requests: Counter<u64>,
    duration: Histogram<f64>,
    streams: UpDownCounter<i64>,
}

static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

/// The running export: stopped by [`Telemetry::stop`].
pub struct Telemetry {
    tracer: SdkTracerProvider,
    meter: SdkMeterProvider,
    runtime: Option<tokio::runtime::Runtime>,
}

fn endpoint_url(s: &TelemetrySettings, signal: &str) -> String {
    let base = s.endpoint.as_string();
    match s.protocol {
        OtlpProtocol::Grpc => base,
        OtlpProtocol::HttpProtobuf => format!("{base}/v1/{signal}"),
    }
}

fn resource(s: &TelemetrySettings) -> Resource {
    Resource::builder_empty()
        .with_service_name(s.service_name.clone())
        .with_attributes(
            s.resource_attributes
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        )
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build()
}

impl Telemetry {
    /// Starts the export for `s`: its runtime, the span queue and the
    /// periodic metrics export; the layer to add to the subscriber.
    pub fn start(s: &TelemetrySettings) -> Result<(Telemetry, Layer), String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("a2a-telemetry")
            .enable_all()
            .build()
            .map_err(|e| format!("telemetry runtime: {e}"))?;
        let _in = rt.enter();
        let resource = resource(s);
        let bad =
            |e: opentelemetry_otlp::ExporterBuildError| format!("telemetry.otlp_endpoint: {e}");
        let mut spans = match s.protocol {
            OtlpProtocol::Grpc => opentelemetry_otlp::SpanExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint_url(s, "traces"))
                .with_timeout(s.export_timeout)
                .build(),
            OtlpProtocol::HttpProtobuf => opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(endpoint_url(s, "traces"))
                .with_timeout(s.export_timeout)
                .build(),
        }
        .map_err(bad)?;
        opentelemetry_sdk::trace::SpanExporter::set_resource(&mut spans, &resource);
        let metrics = match s.protocol {
            OtlpProtocol::Grpc => opentelemetry_otlp::MetricExporter::builder()
                .with_tonic()
                .with_endpoint(endpoint_url(s, "metrics"))
                .with_timeout(s.export_timeout)
                .build(),
            OtlpProtocol::HttpProtobuf => opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_endpoint(endpoint_url(s, "metrics"))
                .with_timeout(s.export_timeout)
                .build(),
        }
        .map_err(bad)?;
        let processor = export::Bounded::start(
            spans,
            s.max_queue_spans,
            s.export_timeout,
            rt.handle().clone(),
            &STATS,
        );
        let sampler = Sampler::ParentBased(Box::new(Sampler::TraceIdRatioBased(s.sampling_ratio)));
        let tracer = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_sampler(sampler)
            .with_resource(resource.clone())
            .build();
        let reader = opentelemetry_sdk::metrics::periodic_reader_with_async_runtime::PeriodicReader::builder(
            metrics,
            opentelemetry_sdk::runtime::Tokio,
        )
        .with_interval(s.metrics_interval)
        .build();
        let meter = SdkMeterProvider::builder()
            .with_reader(reader)
            .with_resource(resource)
            .build();
        let m = opentelemetry::metrics::MeterProvider::meter(&meter, "a2a-compat-proxy");
        let _ = INSTRUMENTS.set(Instruments {
            requests: m
                .u64_counter("a2a_proxy_requests_total")
                .with_description(
                    "Requests handled, by A2A method, direction, binding and outcome.",
                )
                .build(),
            duration: m
                .f64_histogram("a2a_proxy_request_duration_seconds")
                .with_description("Time from request to end of response.")
                .with_unit("s")
                .with_boundaries(crate::metrics::BUCKETS.to_vec())
                .build(),
            streams: m
                .i64_up_down_counter("a2a_proxy_open_streams")
                .with_description("SSE streams currently open.")
                .build(),
        });
        let layer = tracing_opentelemetry::layer()
            .with_tracer(tracer.tracer("a2a-compat-proxy"))
            .with_location(false)
            .with_threads(false)
            .with_tracked_inactivity(false)
            .with_level(false)
            .with_target(false)
            .with_filter(Targets::new().with_target(TARGET, tracing::Level::TRACE));
        drop(_in);
        Ok((
            Telemetry {
                tracer,
                meter,
                runtime: Some(rt),
            },
            layer,
        ))
    }

    /// Sends what is queued (within 5 s) and stops.
    pub fn stop(&mut self) {
        let _ = self.tracer.shutdown_with_timeout(Duration::from_secs(5));
        let _ = self.meter.shutdown_with_timeout(Duration::from_secs(5));
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether export is on (the instruments exist).
pub fn enabled() -> bool {
    INSTRUMENTS.get().is_some()
}

/// Makes `span` a child of the caller's trace (`tc`), when both exist.
pub fn adopt_parent(span: &tracing::Span, tc: &TraceContext) {
    if !enabled() || span.is_disabled() {
        return;
    }
    if let Some(cx) = remote_context(tc) {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let _ = span.set_parent(cx);
    }
}

/// A served path as spans export it: a push callback's id (what lets an
/// agent post notifications) is left out.
pub fn exported_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.find(crate::ids::CALLBACK_PREFIX) {
        Some(at) => format!("{}{}{{id}}", &path[..at], crate::ids::CALLBACK_PREFIX).into(),
        None => path.into(),
    }
}

/// Names `span` `name` (the OTel span's name; a started span keeps the
/// name it started with otherwise).
pub fn rename(span: &tracing::Span, name: String) {
    if !enabled() || span.is_disabled() {
        return;
    }
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    span.context().span().update_name(name);
}

/// The OTel context of a checked W3C trace context.
fn remote_context(tc: &TraceContext) -> Option<opentelemetry::Context> {
    let p = &tc.traceparent;
    let trace = TraceId::from_hex(p.get(3..35)?).ok()?;
    let span = SpanId::from_hex(p.get(36..52)?).ok()?;
    let flags = u8::from_str_radix(p.get(53..55)?, 16).ok()?;
    let state = tc.tracestate.parse::<TraceState>().unwrap_or_default();
    let sc = SpanContext::new(trace, span, TraceFlags::new(flags), true, state);
    Some(opentelemetry::Context::new().with_remote_span_context(sc))
}

/// What the finished call's metrics say of it, on its span (the current
/// one): the A2A method, both versions, whether it was translated. Called
/// with each call's metrics ([`crate::metrics::Metrics::record`]).
pub fn note_call(agent: &str, l: &RequestLabels, latency: Duration) {
    let Some(i) = INSTRUMENTS.get() else {
        return;
    };
    let attrs = [
        KeyValue::new("agent", agent.to_string()),
        KeyValue::new("method", l.method.clone()),
        KeyValue::new("direction", l.direction),
        KeyValue::new("binding", l.binding),
        KeyValue::new("outcome", l.outcome.clone()),
    ];
    i.requests.add(1, &attrs);
    i.duration.record(latency.as_secs_f64(), &attrs[..1]);
    let span = tracing::Span::current();
    if span.is_disabled() {
        return;
    }
    span.record("a2a.method", l.method.as_str());
    if let Some((client, agent)) = versions(l.direction) {
        span.record("a2a.client_version", client.as_str());
        span.record("a2a.agent_version", agent.as_str());
        span.record("a2a.translated", client != agent);
    }
}

/// The versions a metrics `direction` names.
fn versions(direction: &str) -> Option<(Version, Version)> {
    let v = |s: &str| match s {
        "v03" => Some(Version::V03),
        "v10" => Some(Version::V10),
        _ => None,
    };
    let (c, a) = direction.split_once('_')?;
    Some((v(c)?, v(a)?))
}

/// An SSE stream of `agent` opened (`1`) or closed (`-1`).
pub fn stream_delta(agent: &str, d: i64) {
    if let Some(i) = INSTRUMENTS.get() {
        i.streams
            .add(d, &[KeyValue::new("agent", agent.to_string())]);
    }
}

/// The span of one translation step (`what`: `translate request`,
/// `translate answer`) from `from` to `to`, a child of the current span.
pub fn translation(what: &'static str, from: Version, to: Version) -> tracing::Span {
    if from == to {
        // Not a translation (a same-version call the push layer reads).
        return tracing::Span::none();
    }
    tracing::debug_span!(
        target: TARGET,
        "translate",
        otel.name = what,
        otel.kind = "internal",
        a2a.from_version = from.as_str(),
        a2a.to_version = to.as_str(),
    )
}

/// The export counters, Prometheus text, when export is on.
pub fn render(out: &mut String) {
    if !enabled() {
        return;
    }
    use std::fmt::Write as _;
    use std::sync::atomic::Ordering::Relaxed;
    let s = &STATS;
    out.push_str(
        "# HELP a2a_proxy_telemetry_spans_exported_total Spans sent to the OTLP collector.\n",
    );
    out.push_str("# TYPE a2a_proxy_telemetry_spans_exported_total counter\n");
    let _ = writeln!(
        out,
        "a2a_proxy_telemetry_spans_exported_total {}",
        s.exported.load(Relaxed)
    );
    out.push_str("# HELP a2a_proxy_telemetry_spans_dropped_total Spans not exported: the queue was full, or their export failed.\n");
    out.push_str("# TYPE a2a_proxy_telemetry_spans_dropped_total counter\n");
    let _ = writeln!(
        out,
        "a2a_proxy_telemetry_spans_dropped_total{{reason=\"queue_full\"}} {}",
        s.dropped_queue_full.load(Relaxed)
    );
    let _ = writeln!(
        out,
        "a2a_proxy_telemetry_spans_dropped_total{{reason=\"export_failed\"}} {}",
        s.dropped_export_failed.load(Relaxed)
    );
    out.push_str(
        "# HELP a2a_proxy_telemetry_exports_failed_total Span exports that failed or timed out.\n",
    );
    out.push_str("# TYPE a2a_proxy_telemetry_exports_failed_total counter\n");
    let _ = writeln!(
        out,
        "a2a_proxy_telemetry_exports_failed_total {}",
        s.exports_failed.load(Relaxed)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_callers_context_is_read_whole() {
        let tc = TraceContext {
            traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".into(),
            tracestate: "k=v".into(),
        };
        let cx = remote_context(&tc).unwrap();
        let sc = cx.span().span_context().clone();
        assert_eq!(
            sc.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert_eq!(sc.span_id().to_string(), "00f067aa0ba902b7");
        assert!(sc.is_sampled() && sc.is_remote());
        assert_eq!(sc.trace_state().get("k"), Some("v"));
        assert_eq!(versions("v10_v03"), Some((Version::V10, Version::V03)));
        assert_eq!(versions("local"), None);
        assert_eq!(
            exported_path("/p/a2a-proxy/push/abc"),
            "/p/a2a-proxy/push/{id}"
        );
        assert_eq!(exported_path("/v1/tasks/x"), "/v1/tasks/x");
    }
}
