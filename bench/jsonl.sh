#!/usr/bin/env bash
# `a2a-compat-proxy translate --jsonl` throughput: the ~20 KB Task of
# bench/peers (the GetTask answer's result) repeated LINES times, one per
# line, translated by the release binary to /dev/null. Both directions, as a
# bare Task (`--kind task`) and in its GetTask answer (`--kind response
# --method ...`), and the same Task with one `\u00e9` escape (as Python's
# json.dumps writes non-ASCII), which the transcoder leaves to the typed
# path. Rounds alternate the inputs; the table gives the medians (MB/s of
# input, wall time; and CPU time per line).
#
# usage: bench/jsonl.sh [ROUNDS=5] [LINES=2500]
# Not part of `cargo test`. Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
LINES=${2:-2500}

cargo build --release --quiet -p a2a-compat-proxy --bin a2a-compat-proxy >&2
BIN=$(pwd)/target/release/a2a-compat-proxy
# The payload set of bench/peers (its own workspace and target dir).
(cd bench/peers && CARGO_TARGET_DIR=../../rel-target cargo build --release --quiet >&2)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
rel-target/release/peers-bench write "$WORK/payloads"

echo "# $(date -u +%FT%TZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds, $LINES lines per input"
python3 - "$BIN" "$WORK" "$ROUNDS" "$LINES" <<'PY'
import json, os, resource, statistics, subprocess, sys, time

bin_, work, rounds, lines = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
inputs = []
for v, to in (("v03", "1.0"), ("v10", "0.3")):
    env = json.load(open(f"{work}/payloads/task.{v}.json"))
    task = json.dumps(env["result"], separators=(",", ":"), ensure_ascii=False)
    envelope = json.dumps(env, separators=(",", ":"), ensure_ascii=False)
    escaped = task.replace("Done.", "\\u00e9Done.", 1)
    method = "tasks/get" if v == "v03" else "GetTask"
    for label, doc, flags in (
        (f"Task {v} -> {to}, --kind task", task, ["--kind", "task"]),
        (f"GetTask answer {v} -> {to}, --kind response", envelope,
         ["--kind", "response", "--method", method]),
        (f"Task {v} -> {to} with a \\u00e9 escape (typed path)", escaped, ["--kind", "task"]),
    ):
        path = f"{work}/{len(inputs)}.jsonl"
        with open(path, "w") as f:
            for _ in range(lines):
                f.write(doc + "\n")
        inputs.append((label, path, ["translate", "--jsonl", "--to", to] + flags, len(doc) + 1))

def once(path, args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(path, "rb") as f:
        subprocess.run([bin_] + args, stdin=f, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu

walls = {i: [] for i in range(len(inputs))}
cpus = {i: [] for i in range(len(inputs))}
for r in range(rounds):
    order = list(range(len(inputs)))
    if r % 2:
        order.reverse()
    for i in order:
        w, c = once(inputs[i][1], inputs[i][2])
        walls[i].append(w)
        cpus[i].append(c)
print()
print("| input | bytes per line | MB/s (median wall) | min-max MB/s | CPU us per line |")
print("|---|---|---|---|---|")
for i, (label, path, args, size) in enumerate(inputs):
    total = os.path.getsize(path) / 1e6
    rates = sorted(total / w for w in walls[i])
    med = statistics.median(rates)
    cpu = statistics.median(cpus[i]) / lines * 1e6
    print(f"| {label} | {size} | **{med:.0f}** | {rates[0]:.0f}-{rates[-1]:.0f} | {cpu:.1f} |")
PY
