#!/usr/bin/env bash
# Creates the Python venvs of the real A2A SDK peers (idempotent).
#   .venv-v10: a2a-sdk 1.x (its v0.3 compat converters are the translation oracle)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv-v10"
req="$root/tests/sdk/requirements-v10.txt"
stamp="$venv/.installed"
if [ -f "$stamp" ] && cmp -s "$stamp" "$req"; then
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
cp "$req" "$stamp"
