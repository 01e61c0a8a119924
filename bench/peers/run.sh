#!/usr/bin/env bash
# Our translator next to @a2a-js/sdk 1.3.0's v0.3 compat converters, bytes in
# -> bytes out, on one payload set (a ~20 KB Task in a GetTask answer, a full
# agent card, a message/send request, a status-update stream event), both
# directions. Contenders run interleaved round by round in this one run;
# the table gives the medians over the rounds and the ratios (a2a-js time /
# our time: above 1 means we are faster). Then big artifact-update events
# (1, 4, 16 MiB), which must take time linear in their size. The document
# API (`document::translate`, transcoder first) and the typed path it took
# before (`document::translate_typed`) are timed too. Then the translator's
# layers on inputs the transcoder declines (`peers-bench layers`).
#
# usage: bench/peers/run.sh [ROUNDS=7] [MS_PER_OP_PER_ROUND=300]
# Not part of `cargo test`. Needs node >= 20 and npm (the SDK is installed
# here, into bench/peers/node_modules).
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS=${1:-7}
MS=${2:-300}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$(pwd)/../../rel-target}

if [ ! -f node_modules/@a2a-js/sdk/package.json ] ||
  ! grep -q '"version": "1.3.0"' node_modules/@a2a-js/sdk/package.json; then
  npm install --no-audit --no-fund >&2
fi
cargo build --release --quiet >&2
BIN="$CARGO_TARGET_DIR/release/peers-bench"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$BIN" write "$WORK/payloads"

echo "# $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), node $(node --version), $ROUNDS rounds, ${MS} ms per op and contender per round"
for r in $(seq 1 "$ROUNDS"); do
  # Alternate which side goes first.
  if [ $((r % 2)) -eq 1 ]; then
    "$BIN" run "$WORK/payloads" "$MS" >>"$WORK/lines"
    node a2a-js.mjs "$WORK/payloads" "$MS" >>"$WORK/lines"
  else
    node a2a-js.mjs "$WORK/payloads" "$MS" >>"$WORK/lines"
    "$BIN" run "$WORK/payloads" "$MS" >>"$WORK/lines"
  fi
  echo "round $r done" >&2
done

python3 - "$WORK/lines" <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(list)
size, path = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    op, who, ns, n = f[0], f[1], float(f[2]), int(f[3])
    rows[(op, who)].append(ns)
    size[op] = n
    if who == "rust":
        path[op] = f[4]
names = {"task": "Task (GetTask answer)", "card": "agent card", "send": "SendMessage request",
         "status": "status-update event"}
print()
print("| op | bytes in | ours ns/op (path) | main's onepass ns/op | a2a-js ns/op | a2a-js / ours | a2a-js / main's | a2a-js without codec / ours | document API ns/op | a2a-js / document API | document API before (typed path) ns/op | a2a-js / document API before |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for op in ["task.v03", "task.v10", "card.v03", "card.v10", "send.v03", "send.v10", "status.v03", "status.v10"]:
    base, frm = op.split(".")
    d = "v0.3->v1.0" if frm == "v03" else "v1.0->v0.3"
    m = {w: statistics.median(rows[(op, w)]) for w in ["rust", "rust-main", "a2a-js", "rust-doc", "rust-doc-typed"]}
    bare = rows.get((op, "a2a-js-bare"))
    bare = f"{statistics.median(bare)/m['rust']:.2f}x" if bare else "-"
    print(f"| {names[base]} {d} | {size[op]} | {m['rust']:.0f} ({path[op]}) | {m['rust-main']:.0f} | "
          f"{m['a2a-js']:.0f} | **{m['a2a-js']/m['rust']:.2f}x** | {m['a2a-js']/m['rust-main']:.2f}x | {bare} | "
          f"{m['rust-doc']:.0f} | **{m['a2a-js']/m['rust-doc']:.2f}x** | {m['rust-doc-typed']:.0f} | {m['a2a-js']/m['rust-doc-typed']:.2f}x |")
PY
echo
"$BIN" big
echo
"$BIN" layers "$WORK/payloads" "$MS" "$ROUNDS"
