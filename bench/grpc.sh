#!/usr/bin/env bash
# gRPC throughput / latency in one run (release build): direct JSON-RPC to
# the demo echo agent vs v0.3 gRPC bridged through the proxy (same version)
# vs v1.0 gRPC translated through the proxy. Prints RPC/s, p50/p99, ratios.
#   bench/grpc.sh [seconds per workload = 3] [concurrency = 16]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p a2a-compat-proxy --example grpc_bench -- "${1:-3}" "${2:-16}"
