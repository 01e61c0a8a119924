#!/usr/bin/env bash
# Interop of the proxy's gRPC listener with the real a2a-sdk gRPC clients
# (tests/sdk/grpc_client.py: the SDK 1.x GrpcTransport for v1.0, its bundled
# v0.3 stub for v0.3), in front of each real echo agent (agent_v03.py on
# a2a-sdk 0.3, agent_v10.py on a2a-sdk 1.x, both JSON-RPC: binding bridge),
# then in front of the real a2a-sdk 1.x gRPC *servers* (grpc_agent.py:
# GrpcHandler for 1.0, CompatGrpcHandler for 0.3) through upstream.grpc_url
# (same version: raw passthrough; other version: translated over gRPC).
# Makes tests/sdk/setup.sh's venvs (.venv-grpc: a2a-sdk[grpc]) when missing;
# needs the proxy binary. Exit 1 if any step fails.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
bash tests/sdk/setup.sh
venv="$root/.venv-grpc"
bin="${A2A_PROXY_BIN:-$root/target/debug/a2a-compat-proxy}"
[ -x "$bin" ] || cargo build -p a2a-compat-proxy --bin a2a-compat-proxy
free_port() { python3 -c "import socket;s=socket.socket();s.bind(('127.0.0.1',0));print(s.getsockname()[1])"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
rc=0
for v in v03 v10; do
  log="$(mktemp)"
  "$root/.venv-$v/bin/python" tests/sdk/agent_$v.py --port 0 >"$log" 2>&1 &
  pids+=($!)
  port=""
  for _ in $(seq 1 100); do
    port="$(grep -o 'PORT [0-9]*' "$log" | grep -o '[0-9]*' || true)"
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { echo "agent_$v did not start"; cat "$log"; exit 1; }
  hp="$(free_port)" gp="$(free_port)"
  "$bin" serve --listen "127.0.0.1:$hp" --upstream "http://127.0.0.1:$port" \
    --grpc-listen "127.0.0.1:$gp" --no-push >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$gp") 2>/dev/null && break
    sleep 0.1
  done
  echo "== gRPC clients -> proxy -> a2a-sdk $v agent"
  timeout 120 "$venv/bin/python" tests/sdk/grpc_client.py "127.0.0.1:$gp" || rc=1
done
for v in 0.3 1.0; do
  log="$(mktemp)"
  "$venv/bin/python" tests/sdk/grpc_agent.py --version "$v" >"$log" 2>&1 &
  pids+=($!)
  ports=""
  for _ in $(seq 1 100); do
    ports="$(grep -o 'PORT [0-9]* CARD [0-9]*' "$log" || true)"
    [ -n "$ports" ] && break
    sleep 0.1
  done
  [ -n "$ports" ] || { echo "grpc_agent $v did not start"; cat "$log"; exit 1; }
  gport="$(echo "$ports" | cut -d' ' -f2)" cport="$(echo "$ports" | cut -d' ' -f4)"
  conf="$(mktemp --suffix=.toml)"
  printf '[upstream]\ngrpc_url = "http://127.0.0.1:%s"\n' "$gport" >"$conf"
  hp="$(free_port)" gp="$(free_port)"
  "$bin" serve --config "$conf" --listen "127.0.0.1:$hp" --upstream "http://127.0.0.1:$cport" \
    --upstream-version "$v" --grpc-listen "127.0.0.1:$gp" --no-push >/dev/null 2>&1 &
  pids+=($!)
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$gp") 2>/dev/null && break
    sleep 0.1
  done
  echo "== gRPC clients -> proxy -> a2a-sdk gRPC server $v (upstream.grpc_url)"
  timeout 120 "$venv/bin/python" tests/sdk/grpc_client.py "127.0.0.1:$gp" || rc=1
done
exit $rc
