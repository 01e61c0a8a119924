#!/usr/bin/env bash
# Several instances vs one (issue #36), loopback only, bounded: one proxy
# instance (embedded store) vs three instances on one PostgreSQL behind nginx
# round-robin, the same fake v0.3 agent and load client, interleaved:
# translated SendMessage req/s, ListTasks p50/p99 with 10,000 entries in the
# caller's index, relayed-event latency across instances p50/p99. Starts a
# private PostgreSQL cluster (initdb, pg_ctl; fsync on) and nginx; needs both.
#   bench/instances.sh [--seconds 5] [--conns 16] [--rounds 3] [--lists 300] [--relays 300]
set -euo pipefail
cd "$(dirname "$0")/.."

NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
[ -x "$NGINX" ] || { echo "nginx not found (apt-get install nginx)" >&2; exit 1; }
BIN="$(pg_config --bindir 2>/dev/null || true)"
[ -x "$BIN/initdb" ] || BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort | tail -1)"
[ -x "$BIN/initdb" ] || BIN="$(dirname "$(command -v initdb)")"

cargo build --release -q -p a2a-compat-proxy --bin a2a-compat-proxy --example instances_bench

DIR="$(mktemp -d /tmp/a2a-bench-pg-XXXXXX)"
PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
[ "$(id -u)" = 0 ] && chown postgres: "$DIR"
cleanup() { as_pg "$BIN/pg_ctl" -D "$DIR/data" -m immediate -w stop >/dev/null 2>&1 || true; rm -rf "$DIR"; }
trap cleanup EXIT
as_pg "$BIN/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_pg "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/log" -w -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200" start >/dev/null

echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
target/release/examples/instances_bench --proxy-bin target/release/a2a-compat-proxy --nginx "$NGINX" \
  --pg "host=127.0.0.1 port=$PORT user=postgres dbname=postgres" "$@"
