#!/usr/bin/env bash
# Proxy benchmark (loopback only, bounded): throughput and latency of a
# SendMessage returning a Task, direct to a fake agent vs through the proxy
# passing through vs translating; SSE events/s; proxy RSS with open streams.
# All numbers come from one run of one load client (bench/proxyload), with
# the paths interleaved round by round; ratios are what to compare.
#   bench/proxy.sh [proxyload flags, e.g. --rounds 3 --seconds 2 --streams 1000]
set -euo pipefail
cd "$(dirname "$0")/.."

# 1,000 streams need ~2,000 sockets in the proxy and ~2,000 in the load process.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" -lt 8192 ]; then
  echo "warning: open-file limit $(ulimit -n); the RSS run may fail to open every stream" >&2
fi

cargo build --release -q -p a2a-compat-proxy -p proxyload
exec target/release/proxyload --proxy-bin target/release/a2a-compat-proxy "$@"
