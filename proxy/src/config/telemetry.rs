//! `[telemetry]`: OpenTelemetry export over OTLP (crate::telemetry), off
//! unless `otlp_endpoint` is set. Listener-level: top-level only.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{bad, ConfigError, HttpUrl};

/// `[telemetry]` of the file.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawTelemetry {
    /// The collector: `http://host:4317` (OTLP/gRPC) or `http://host:4318`
    /// (OTLP/HTTP protobuf); off when absent.
    pub otlp_endpoint: Option<String>,
    /// `grpc` or `http/protobuf`; default: `http/protobuf` on port 4318,
    /// else `grpc`.
    pub protocol: Option<String>,
    /// `service.name` [default: a2a-compat-proxy].
    pub service_name: Option<String>,
    /// More resource attributes (`deployment.environment = "prod"`).
    pub resource_attributes: Option<BTreeMap<String, String>>,
    /// Share of new traces recorded, 0.0..=1.0 [default: 1.0]; a caller's
    /// sampled flag decides for its own trace.
    pub sampling_ratio: Option<f64>,
    /// Longest export of one batch, ms [default: 10000].
    pub export_timeout_ms: Option<u64>,
    /// Spans waiting for export at most; beyond, new ones are dropped and
    /// counted [default: 2048].
    pub max_queue_spans: Option<u64>,
    /// How often the metrics are exported, ms [default: 60000].
    pub metrics_interval_ms: Option<u64>,
}

/// The OTLP transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    Grpc,
    HttpProtobuf,
}

/// `[telemetry]` resolved: `None` when export is off.
#[derive(Debug, Clone, PartialEq)]
pub struct TelemetrySettings {
    pub endpoint: HttpUrl,
    pub protocol: OtlpProtocol,
    pub service_name: String,
    pub resource_attributes: BTreeMap<String, String>,
    pub sampling_ratio: f64,
    pub export_timeout: Duration,
    pub max_queue_spans: usize,
    pub metrics_interval: Duration,
}

/// The bound of `max_queue_spans`.
const MAX_QUEUE: u64 = 1 << 20;

pub(crate) fn resolve_telemetry(
    raw: &RawTelemetry,
) -> Result<Option<TelemetrySettings>, ConfigError> {
    let Some(url) = raw.otlp_endpoint.as_deref() else {
        for (set, key) in [
            (raw.protocol.is_some(), "telemetry.protocol"),
            (raw.service_name.is_some(), "telemetry.service_name"),
            (raw.sampling_ratio.is_some(), "telemetry.sampling_ratio"),
        ] {
            if set {
                return Err(bad(key, "set", "needs telemetry.otlp_endpoint"));
            }
        }
        return Ok(None);
    };
    let key = "telemetry.otlp_endpoint";
    let endpoint = HttpUrl::parse(key, url)?;
    if endpoint.scheme != "http" {
        return Err(bad(
            key,
            url,
            "TLS to the collector is not built in: use http:// (a collector or agent on a trusted network or this host)",
        ));
    }
    let protocol = match raw.protocol.as_deref() {
        None if endpoint.port == 4318 => OtlpProtocol::HttpProtobuf,
        None => OtlpProtocol::Grpc,
        Some("grpc") => OtlpProtocol::Grpc,
        Some("http/protobuf") => OtlpProtocol::HttpProtobuf,
        Some(p) => {
            return Err(bad(
                "telemetry.protocol",
                p,
                "must be grpc or http/protobuf",
            ))
        }
    };
    if protocol == OtlpProtocol::Grpc && !endpoint.base_path.is_empty() {
        return Err(bad(key, url, "an OTLP/gRPC endpoint has no path"));
    }
    let service_name = raw
        .service_name
        .clone()
        .unwrap_or_else(|| "a2a-compat-proxy".into());
    if service_name.trim().is_empty() || service_name.len() > 255 {
        return Err(bad(
            "telemetry.service_name",
            &service_name,
            "1 to 255 bytes",
        ));
    }
    let resource_attributes = raw.resource_attributes.clone().unwrap_or_default();
    for (k, v) in &resource_attributes {
        if k.is_empty() || k.len() > 255 || v.len() > 4096 {
            return Err(bad(
                "telemetry.resource_attributes",
                k,
                "a key of 1 to 255 bytes, a value of at most 4096",
            ));
        }
    }
    let sampling_ratio = raw.sampling_ratio.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&sampling_ratio) {
        return Err(bad(
            "telemetry.sampling_ratio",
            sampling_ratio,
            "must be between 0.0 and 1.0",
        ));
    }
    let ms = |key: &str, v: Option<u64>, default: u64| match v.unwrap_or(default) {
        0 => Err(bad(key, 0, "must be positive")),
        n => Ok(Duration::from_millis(n)),
    };
    let export_timeout = ms("telemetry.export_timeout_ms", raw.export_timeout_ms, 10_000)?;
    let metrics_interval = ms(
        "telemetry.metrics_interval_ms",
        raw.metrics_interval_ms,
        60_000,
    )?;
    let max_queue_spans = raw.max_queue_spans.unwrap_or(2048);
    if max_queue_spans == 0 || max_queue_spans > MAX_QUEUE {
        return Err(bad(
            "telemetry.max_queue_spans",
            max_queue_spans,
            format!("must be between 1 and {MAX_QUEUE}"),
        ));
    }
    Ok(Some(TelemetrySettings {
        endpoint,
        protocol,
        service_name,
        resource_attributes,
        sampling_ratio,
        export_timeout,
        max_queue_spans: max_queue_spans as usize,
        metrics_interval,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Result<Option<TelemetrySettings>, ConfigError> {
        let raw: RawTelemetry = toml::from_str(text).map_err(|e| ConfigError {
            key: "t".into(),
            message: e.to_string(),
        })?;
        resolve_telemetry(&raw)
    }

    #[test]
    fn off_by_default_and_the_protocol_by_port() {
        assert_eq!(of("").unwrap(), None);
        let g = of("otlp_endpoint = \"http://c:4317\"").unwrap().unwrap();
        assert_eq!(g.protocol, OtlpProtocol::Grpc);
        assert_eq!(g.service_name, "a2a-compat-proxy");
        assert_eq!(g.sampling_ratio, 1.0);
        assert_eq!(g.max_queue_spans, 2048);
        let h = of("otlp_endpoint = \"http://c:4318\"").unwrap().unwrap();
        assert_eq!(h.protocol, OtlpProtocol::HttpProtobuf);
        let h = of("otlp_endpoint = \"http://c:9\"\nprotocol = \"http/protobuf\"\nresource_attributes = { \"deployment.environment\" = \"prod\" }\nsampling_ratio = 0.25")
            .unwrap()
            .unwrap();
        assert_eq!(h.protocol, OtlpProtocol::HttpProtobuf);
        assert_eq!(h.resource_attributes["deployment.environment"], "prod");
        assert_eq!(h.sampling_ratio, 0.25);
    }

    #[test]
    fn bad_values_name_their_key() {
        for (text, key) in [
            (
                "otlp_endpoint = \"https://c:4317\"",
                "telemetry.otlp_endpoint",
            ),
            (
                "otlp_endpoint = \"ftp://c:4317\"",
                "telemetry.otlp_endpoint",
            ),
            (
                "otlp_endpoint = \"http://c:4317/x\"",
                "telemetry.otlp_endpoint",
            ),
            (
                "otlp_endpoint = \"http://c:1\"\nprotocol = \"udp\"",
                "telemetry.protocol",
            ),
            (
                "otlp_endpoint = \"http://c:1\"\nsampling_ratio = 1.5",
                "telemetry.sampling_ratio",
            ),
            (
                "otlp_endpoint = \"http://c:1\"\nmax_queue_spans = 0",
                "telemetry.max_queue_spans",
            ),
            (
                "otlp_endpoint = \"http://c:1\"\nexport_timeout_ms = 0",
                "telemetry.export_timeout_ms",
            ),
            (
                "otlp_endpoint = \"http://c:1\"\nservice_name = \" \"",
                "telemetry.service_name",
            ),
            ("sampling_ratio = 0.5", "telemetry.sampling_ratio"),
        ] {
            assert_eq!(of(text).unwrap_err().key, key, "{text}");
        }
    }
}
