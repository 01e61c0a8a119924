#!/usr/bin/env bash
# Creates the Python venvs of the real A2A SDK peers (idempotent: a venv whose
# stamp equals its requirements file is left alone).
#   .venv-v10: a2a-sdk 1.x with its HTTP server (the translation oracle's
#              v0.3 compat converters; the v1.0 interop agent and client)
#   .venv-v03: a2a-sdk 0.3.x with its HTTP server (the v0.3 interop agent and client)
#   .venv-grpc: a2a-sdk 1.x with its grpc extra (the gRPC interop clients)
#   .venv-otel: opentelemetry-proto and grpcio (the OTLP receiver of the
#               proxy's telemetry tests, otlp_receiver.py)
#   .venv-v03-grpc: a2a-sdk 0.3.x with its grpc extra (its own gRPC client)
# and, when npm is there, @a2a-js/sdk 1.3 into examples/node_modules (the
# compat converters of examples/a2a_js_compat.mjs).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
# One installer at a time (parallel test binaries may all call this).
exec 9>"$root/.venv-setup.lock"
flock -w 600 9

make_venv() {
  local venv="$root/$1" req="$root/tests/sdk/$2"
  local stamp="$venv/.installed"
  if [ -f "$stamp" ] && cmp -s "$stamp" "$req"; then
    return 0
  fi
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
}

make_venv .venv-v10 requirements-v10.txt
make_venv .venv-v03 requirements-v03.txt
make_venv .venv-grpc requirements-grpc.txt
make_venv .venv-otel requirements-otel.txt
make_venv .venv-v03-grpc requirements-v03-grpc.txt

# The @a2a-js/sdk compat converters wrapped by examples/a2a_js_compat.mjs.
if command -v npm >/dev/null 2>&1; then
  js="$root/examples"
  if ! grep -qs '"version": "1.3.0"' "$js/node_modules/@a2a-js/sdk/package.json"; then
    (cd "$js" && npm install --no-audit --no-fund --silent)
  fi
fi
