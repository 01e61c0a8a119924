#!/usr/bin/env bash
# gRPC throughput / latency in one run (release build), same load client:
#  1. toward the demo's v0.3 JSON-RPC echo agent: direct JSON-RPC vs v0.3
#     gRPC bridged through the proxy vs v1.0 gRPC translated and bridged;
#  2. toward a v0.3 gRPC echo agent (upstream.grpc_url): direct gRPC vs
#     v0.3 gRPC passed through raw vs v1.0 gRPC translated over gRPC.
#     (interleaved rounds).
# Prints RPC/s, p50/p99 and the ratios (target translated/passthrough >= 0.7,
# the median over the rounds).
#   bench/grpc.sh [seconds per workload = 3] [concurrency = 16] [rounds = 3]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p a2a-compat-proxy --example grpc_bench -- "${1:-3}" "${2:-16}" "${3:-3}"
