#!/usr/bin/env bash
# Runs the official A2A TCK against a native agent and through the proxy,
# per transport, and prints the scores side by side (see README.md here).
# Not run by CI: it needs a TCK checkout and venvs (see README.md).
#
#   tests/tck/run.sh v10 /path/to/a2a-tck@1.0-dev [OUT_DIR]
#   tests/tck/run.sh v03 /path/to/a2a-tck@0.3.x   [OUT_DIR]
#
# v10: the v1.0 suite against the TCK's own v1.0 agent (its executor in
#      sut/a2a-python/sut_agent.py, served by a2a-sdk 1.x: sut_v10.py here),
#      against the same agent through the proxy (passthrough; its gRPC as
#      upstream.grpc_url), then against tests/tck/sut_v03.py
#      (the same scenarios on a2a-sdk 0.3) through the proxy.
# v03: the v0.3 suite against the TCK's own a2a-sdk 0.3 agent
#      (python-sut/tck_core_agent, JSON-RPC only, port 9999), against the
#      same agent through the proxy (passthrough), then against the v1.0
#      suite's agent (sut_v10.py, needs TCK_V10_DIR: a 1.0-dev checkout)
#      through the proxy.
#
# Environment (defaults in brackets):
#   TCK_PY      python of a venv with the TCK's dependencies     [python3]
#   PY_V03      python with a2a-sdk 0.3                          [.venv-v03/bin/python]
#   PY_V10_SUT  python with a2a-sdk[http-server,grpc] 1.x, uvicorn [.venv-tck-sut/bin/python]
#   TCK_V10_DIR a 1.0-dev checkout (v03 only: its v1.0 agent)
#   PROXY_BIN   the proxy binary                                 [target/debug/a2a-compat-proxy]
#   BASE_PORT   first of the local ports used (8 of them)        [19400]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
suite=${1:?usage: run.sh v10|v03 TCK_DIR [OUT_DIR]}
tck=$(cd "${2:?usage: run.sh v10|v03 TCK_DIR [OUT_DIR]}" && pwd)
out=${3:-$root/target/tck-$suite}
mkdir -p "$out"
out=$(cd "$out" && pwd)
TCK_PY=${TCK_PY:-python3}
PY_V03=${PY_V03:-$root/.venv-v03/bin/python}
PY_V10_SUT=${PY_V10_SUT:-$root/.venv-tck-sut/bin/python}
PROXY_BIN=${PROXY_BIN:-$root/target/debug/a2a-compat-proxy}
port=${BASE_PORT:-19400}
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT

wait_port() { # host:port, seconds
  for _ in $(seq 1 $((2 * $2))); do
    (exec 3<>"/dev/tcp/${1%:*}/${1#*:}") 2>/dev/null && return 0
    sleep 0.5
  done
  echo "nothing listens on $1" >&2
  return 1
}

start_v10_sut() { # http port; gRPC on the next one
  "$PY_V10_SUT" "$here/sut_v10.py" "$tck" "$1" >"$out/sut-v10-$1.log" 2>&1 &
  pids+=($!)
  wait_port 127.0.0.1:$1 60 && wait_port 127.0.0.1:$(($1 + 1)) 30
}

start_v03_sut() { # port
  "$PY_V03" "$here/sut_v03.py" --port "$1" >"$out/sut-v03-$1.log" 2>&1 &
  pids+=($!)
  wait_port 127.0.0.1:$1 60
}

start_proxy() { # upstream port, listen port (gRPC on the next one), [agent's gRPC port]
  RUST_LOG=${RUST_LOG:-info} "$PROXY_BIN" serve --upstream "http://127.0.0.1:$1" \
    ${3:+--upstream-grpc "http://127.0.0.1:$3"} \
    --listen "127.0.0.1:$2" --grpc-listen "127.0.0.1:$(($2 + 1))" --no-push \
    --push-data-dir "$out/proxy-data-$2" >"$out/proxy-$2.log" 2>&1 &
  pids+=($!)
  wait_port 127.0.0.1:$2 30
}

run_v10() { # label, url, transport
  (cd "$tck" && rm -f reports/junitreport.xml &&
    timeout 1200 "$TCK_PY" run_tck.py --sut-host "$2" --transport "$3") >"$out/$1-$3.log" 2>&1
  cp "$tck/reports/junitreport.xml" "$out/$1-$3.xml" 2>/dev/null || echo "no report: $1 $3" >&2
}

run_v03() { # label, url, transport (jsonrpc, rest, grpc)
  rm -f "$tck"/reports/*_results.json
  # A compliance report keeps the per-category JSON reports.
  (cd "$tck" && timeout 1200 "$TCK_PY" run_tck.py --sut-url "$2" --category all \
    --transports "$3" --compliance-report "compliance-$3.json") >"$out/$1-$3.log" 2>&1
  mkdir -p "$out/$1-$3"
  cp "$tck"/reports/*_results.json "$out/$1-$3/" 2>/dev/null || echo "no report: $1 $3" >&2
}

case $suite in
v10)
  start_v10_sut $port || exit 1
  for t in jsonrpc http_json grpc; do run_v10 native "http://127.0.0.1:$port" $t; done
  start_proxy $port $((port + 6)) $((port + 1)) || exit 1
  for t in jsonrpc http_json grpc; do run_v10 passthrough "http://127.0.0.1:$((port + 6))" $t; done
  start_v03_sut $((port + 2)) || exit 1
  start_proxy $((port + 2)) $((port + 4)) || exit 1
  for t in jsonrpc http_json grpc; do run_v10 proxy "http://127.0.0.1:$((port + 4))" $t; done
  transports="jsonrpc http_json grpc"
  ;;
v03)
  (cd "$tck/python-sut/tck_core_agent" && exec "$PY_V03" __main__.py) >"$out/sut-v03-core.log" 2>&1 &
  pids+=($!)
  wait_port 127.0.0.1:9999 60 || exit 1
  for t in jsonrpc rest grpc; do run_v03 native "http://127.0.0.1:9999" $t; done
  start_proxy 9999 $((port + 6)) || exit 1
  for t in jsonrpc rest grpc; do run_v03 passthrough "http://127.0.0.1:$((port + 6))" $t; done
  tck_v03=$tck
  tck=${TCK_V10_DIR:?v03 needs TCK_V10_DIR, a 1.0-dev checkout, for its v1.0 agent}
  start_v10_sut $port || exit 1
  tck=$tck_v03
  start_proxy $port $((port + 4)) || exit 1
  for t in jsonrpc rest grpc; do run_v03 proxy "http://127.0.0.1:$((port + 4))" $t; done
  transports="jsonrpc rest grpc"
  ;;
*)
  echo "suite must be v10 or v03" >&2
  exit 2
  ;;
esac

"$TCK_PY" "$here/score.py" "$suite" "$out" $transports | tee "$out/score.txt"
