#!/usr/bin/env bash
# Push-notification throughput in one run (release build, loopback only):
# bodies POSTed straight to a webhook vs POSTed to the proxy's callback
# endpoint (authenticated, durable, translated) and delivered by its worker.
# Prints accepts/s, accept p50/p99, delivered/s end to end, ratios to direct;
# with a PostgreSQL URL also two instances on it: delivered/s and duplicates.
#   bench/push.sh [seconds = 3] [connections = 16] [configs = 64] [postgres-url]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p a2a-compat-proxy --example push_bench -- "${1:-3}" "${2:-16}" "${3:-64}" ${4:+"$4"}
