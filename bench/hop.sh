#!/usr/bin/env bash
# One reverse-proxy hop, side by side (loopback only, bounded): the same
# fake v0.3 agent reached directly, through nginx (1 worker, keep-alive
# upstream pool of 32, access log off) and through the proxy (1 thread)
# passing through (v0.3 client) and translating (v1.0 client), and through
# pingora's proxy with no hooks (bare_hop: the floor), with the same
# load client (bench/proxyload --hop), the paths interleaved round by round.
# Prints req/s, p50/p99, each hop's CPU us per request and the ratios to
# nginx; with strace present, a separate short run counts system calls per
# request of each hop. Installs nginx with apt-get when it is missing.
#   bench/hop.sh [proxyload flags, e.g. --rounds 7 --seconds 3 --conns 16]
set -euo pipefail
cd "$(dirname "$0")/.."

find_nginx() {
  command -v nginx 2>/dev/null || { [ -x /usr/sbin/nginx ] && echo /usr/sbin/nginx; } || true
}

NGINX="$(find_nginx)"
if [ -z "$NGINX" ]; then
  if [ "$(id -u)" = 0 ]; then
    SUDO=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
  else
    echo "hop.sh: nginx is missing and apt-get cannot be run (not root, no sudo)" >&2
    exit 1
  fi
  echo "hop.sh: installing nginx" >&2
  "${SUDO[@]}" apt-get install -y -q nginx-light >/dev/null ||
    { "${SUDO[@]}" apt-get update -q >/dev/null && "${SUDO[@]}" apt-get install -y -q nginx-light >/dev/null; } ||
    "${SUDO[@]}" apt-get install -y -q nginx >/dev/null
  NGINX="$(find_nginx)"
  [ -n "$NGINX" ] || { echo "hop.sh: nginx not found after apt-get install" >&2; exit 1; }
fi

STRACE=()
if command -v strace >/dev/null; then
  STRACE=(--strace)
fi

cargo build --release -q -p a2a-compat-proxy -p proxyload
BIN="${CARGO_TARGET_DIR:-target}/release"
exec "$BIN/proxyload" --hop --nginx-bin "$NGINX" --proxy-bin "$BIN/a2a-compat-proxy" \
  --bare-bin "$BIN/bare_hop" "${STRACE[@]}" "$@"
