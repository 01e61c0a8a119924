#!/usr/bin/env python3
"""Per-event counts of the SSE runs (issue #24): CPU time, context switches
and system calls per event of the proxy, and CPU time and system calls per
event of the load process (its agents and client), for each of the four SSE
paths of `proxyload --only sse`.

Wall-clock events/s move with the machine's load; these counts move much
less, and say where a difference between two builds comes from (more work
per event, or more reads, writes and waits per event). Software events and
tracepoints of `perf stat` only (no hardware counters needed), attached to
each process for a window inside each measured run.

usage: bench/ssecounts.py PROXYLOAD PROXY_BIN [--seconds 3] [--streams 4]
                          [--log FILE]
Runs `PROXYLOAD --proxy-bin PROXY_BIN --only sse --rounds 2`; round 0 gives
the translated paths, round 1 the passthrough ones (the runs that start
right after a line proxyload prints). Needs `perf` with tracepoints
readable (root, or perf_event_paranoid <= -1). `--log` appends one JSON
line per path and run. Compare builds by alternating them (A, B, A, B).
"""
import argparse
import json
import os
import re
import subprocess
import threading
import time

PROXY_EVENTS = {
    "task-clock": "cpu_us",
    "context-switches": "cs",
    "raw_syscalls:sys_enter": "sys",
    "syscalls:sys_enter_recvfrom": "recvfrom",
    "syscalls:sys_enter_writev": "writev",
    "syscalls:sys_enter_sendto": "sendto",
    "syscalls:sys_enter_epoll_wait": "epoll_wait",
}
LOAD_EVENTS = {
    "task-clock": "load_cpu_us",
    "context-switches": "load_cs",
    "raw_syscalls:sys_enter": "load_sys",
}
# A line proxyload prints -> (the path whose run starts then, the proxy).
TRIGGERS = {
    "round 0 passthrough v0.3": ("translated  v1.0 -> proxy -> v0.3", "0.3", 0),
    "round 0 passthrough v1.0": ("translated  v0.3 -> proxy -> v1.0", "1.0", 0),
    "round 1 translated  v1.0 -> proxy -> v0.3": ("passthrough v1.0 -> proxy -> v1.0", "1.0", 1),
    "round 1 translated  v0.3 -> proxy -> v1.0": ("passthrough v0.3 -> proxy -> v0.3", "0.3", 1),
}


def perf_stat(pid, events, seconds):
    """Counts of `events` (perf's names) for process `pid` over `seconds`."""
    r = subprocess.run(
        ["perf", "stat", "-x,", "-e", ",".join(events), "-p", str(pid), "--", "sleep", str(seconds)],
        capture_output=True, text=True)
    counts = {}
    for line in r.stderr.splitlines():
        f = line.split(",")
        if len(f) > 3:
            try:
                counts[f[2]] = float(f[0])
            except ValueError:
                pass
    return counts


def proxies(parent):
    """The proxies `parent` started, by the agent version they front."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            if ppid != parent:
                continue
            with open(f"/proc/{d}/cmdline") as fh:
                cmd = fh.read().split("\0")
        except (OSError, ValueError, IndexError):
            continue
        if "--upstream-version" in cmd:
            out[cmd[cmd.index("--upstream-version") + 1]] = int(d)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("proxyload")
    ap.add_argument("proxy_bin")
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--streams", type=int, default=0, help="proxyload --sse-streams (0: its default)")
    ap.add_argument("--log")
    a = ap.parse_args()
    window = a.seconds - 0.7
    cmd = [a.proxyload, "--proxy-bin", a.proxy_bin, "--only", "sse", "--rounds", "2",
           "--seconds", str(a.seconds), "--proxy-log", "/dev/null"]
    if a.streams:
        cmd += ["--sse-streams", str(a.streams)]
    load = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    counts, rates, threads, pids = {}, {}, [], {}

    def measure(path, pid):
        time.sleep(0.3)
        got = {}
        t = threading.Thread(target=lambda: got.update(perf_stat(load.pid, list(LOAD_EVENTS), window)))
        t.start()
        c = perf_stat(pid, list(PROXY_EVENTS), window)
        t.join()
        c.update({"load:" + k: v for k, v in got.items()})
        counts[path] = c

    for line in load.stdout:
        if len(pids) < 2:
            pids = proxies(load.pid)
        m = re.match(r"round (\d) (.{33})\s+(\d+) events/s", line)
        if m:
            rates[(int(m.group(1)), m.group(2).strip())] = float(m.group(3))
        for start, (path, version, _) in TRIGGERS.items():
            if line.startswith(start) and version in pids:
                th = threading.Thread(target=measure, args=(path, pids[version]))
                th.start()
                threads.append(th)
        if line.startswith("translated/passthrough"):
            print(line.rstrip())
    for th in threads:
        th.join()
    load.wait()
    rounds = {path: rnd for path, _, rnd in TRIGGERS.values()}
    for path, c in sorted(counts.items()):
        rate = rates.get((rounds[path], path), float("nan"))
        events = rate * window
        per = {}
        for name, short in list(PROXY_EVENTS.items()) + [("load:" + k, v) for k, v in LOAD_EVENTS.items()]:
            v = c.get(name, float("nan")) / events
            # task-clock is in ms: us per event.
            per[short] = v * 1000 if name.endswith("task-clock") else v
        print(f"{path}  {rate:>8.0f} ev/s  " + "  ".join(f"{k} {v:.3f}" for k, v in per.items()))
        if a.log:
            with open(a.log, "a") as fh:
                fh.write(json.dumps({"proxy": os.path.basename(a.proxy_bin), "path": path, "events_per_s": rate,
                                     "per_event": per, "load": os.getloadavg()[0], "at": time.time()}) + "\n")


if __name__ == "__main__":
    main()
