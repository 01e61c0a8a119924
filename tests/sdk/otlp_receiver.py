"""A small OTLP receiver for the proxy's telemetry tests, on the official
OpenTelemetry protobuf definitions (the `opentelemetry-proto` package) and
grpcio: OTLP/gRPC (TraceService, MetricsService) on one port, OTLP/HTTP
protobuf (POST /v1/traces, /v1/metrics) on another. What it received is
served back as JSON on the HTTP port: GET /spans (every span, flattened:
ids in hex, attributes as a map, its resource's attributes) and GET
/metrics (every data point: name, attributes, value or count). Prints
`PORTS <grpc> <http>` once listening. Binds 127.0.0.1 only.

    python otlp_receiver.py [--stall-secs S]

With --stall-secs each export is answered only after S seconds (a slow
collector).
"""

import argparse
import json
import threading
import time
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import grpc
from opentelemetry.proto.collector.metrics.v1 import (
    metrics_service_pb2,
    metrics_service_pb2_grpc,
)
from opentelemetry.proto.collector.trace.v1 import (
    trace_service_pb2,
    trace_service_pb2_grpc,
)
from opentelemetry.proto.trace.v1 import trace_pb2

LOCK = threading.Lock()
SPANS = []
POINTS = []
EXPORTS = {"traces": 0, "metrics": 0}
STALL = 0.0


def value(v):
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind is None:
        return None
    return getattr(v, kind)


def attrs(kvs):
    return {kv.key: value(kv.value) for kv in kvs}


def take_spans(req, via):
    out = []
    for rs in req.resource_spans:
        resource = attrs(rs.resource.attributes)
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(
                    {
                        "via": via,
                        "traceId": s.trace_id.hex(),
                        "spanId": s.span_id.hex(),
                        "parentSpanId": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": trace_pb2.Span.SpanKind.Name(s.kind),
                        "attributes": attrs(s.attributes),
                        "status": s.status.code,
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "resource": resource,
                    }
                )
    with LOCK:
        SPANS.extend(out)
        EXPORTS["traces"] += 1


def take_metrics(req, via):
    out = []
    for rm in req.resource_metrics:
        resource = attrs(rm.resource.attributes)
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                kind = m.WhichOneof("data")
                data = getattr(m, kind)
                for p in data.data_points:
                    point = {
                        "via": via,
                        "name": m.name,
                        "kind": kind,
                        "attributes": attrs(p.attributes),
                        "resource": resource,
                    }
                    if kind == "histogram":
                        point["count"] = p.count
                        point["sum"] = p.sum
                        point["bounds"] = list(p.explicit_bounds)
                    else:
                        point["value"] = p.as_int if p.HasField("as_int") else p.as_double
                    out.append(point)
    with LOCK:
        POINTS.extend(out)
        EXPORTS["metrics"] += 1


class Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def Export(self, request, context):
        time.sleep(STALL)
        take_spans(request, "grpc")
        return trace_service_pb2.ExportTraceServiceResponse()


class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
    def Export(self, request, context):
        time.sleep(STALL)
        take_metrics(request, "grpc")
        return metrics_service_pb2.ExportMetricsServiceResponse()


class Http(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n)
        time.sleep(STALL)
        if self.path == "/v1/traces":
            req = trace_service_pb2.ExportTraceServiceRequest()
            req.ParseFromString(body)
            take_spans(req, "http")
            out = trace_service_pb2.ExportTraceServiceResponse()
        elif self.path == "/v1/metrics":
            req = metrics_service_pb2.ExportMetricsServiceRequest()
            req.ParseFromString(body)
            take_metrics(req, "http")
            out = metrics_service_pb2.ExportMetricsServiceResponse()
        else:
            return self.reply(404, b"{}", "application/json")
        self.reply(200, out.SerializeToString(), "application/x-protobuf")

    def do_GET(self):
        with LOCK:
            doc = {"/spans": SPANS, "/metrics": POINTS, "/exports": EXPORTS}.get(self.path)
            body = json.dumps(doc).encode() if doc is not None else None
        if body is None:
            return self.reply(404, b"{}", "application/json")
        self.reply(200, body, "application/json")


def main():
    global STALL
    ap = argparse.ArgumentParser()
    ap.add_argument("--stall-secs", type=float, default=0.0)
    args = ap.parse_args()
    STALL = args.stall_secs
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
    grpc_port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    web = ThreadingHTTPServer(("127.0.0.1", 0), Http)
    print(f"PORTS {grpc_port} {web.server_address[1]}", flush=True)
    web.serve_forever()


if __name__ == "__main__":
    main()
