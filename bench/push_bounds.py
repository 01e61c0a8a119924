#!/usr/bin/env python3
"""Push callback and outbox figures of issue #41 (items 2 and 3), for one or
more proxy binaries side by side.

    python3 bench/push_bounds.py BINARY [BINARY ...] [--raised BINARY]

For each binary, on 127.0.0.1 only, with a fake v0.3 agent of its own:
  item 2: 150 connections at once, each POSTing a 4 MiB body to the push
          callback of an unknown id, with --max-connections 16: statuses,
          the proxy's RSS before, at its peak and after;
  item 3: a v1.0 client registers a webhook whose subscriber is down (a
          closed port); then 220 (and, on a fresh proxy, 600) notifications
          of 1 MiB (v0.3 Tasks) are POSTed to its callback, 8 at a time:
          statuses, RSS before, peak and 3 s after, the push data dir's size
          after. `--raised BINARY` also runs BINARY with the outbox bounds
          raised (push.outbox_* in a config file) so that every notification
          is accepted: what a backlog of that size costs.
Every wait is bounded; the proxies are killed at the end. BENCH_SETTLE
(seconds, default 3) is the wait before the "after" figures.
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

MIB = 1024 * 1024
ITEM2_CONNECTIONS = 150
ITEM2_BODY = 4 * MIB
ITEM2_MAX_CONNECTIONS = 16
ITEM3_BODY = 1 * MIB
ITEM3_RUNS = (220, 600)
ITEM3_PARALLEL = 8


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def read_request(conn):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return None, None
        buf += chunk
    head, rest = buf.split(b"\r\n\r\n", 1)
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head, rest


def agent_conn(conn, seen):
    """A v0.3 agent: message/send answers task t1 and keeps the push config."""
    conn.settimeout(30)
    try:
        while True:
            head, body = read_request(conn)
            if head is None:
                return
            req = json.loads(body or b"{}")
            rid = req.get("id")
            if req.get("method") == "message/send":
                cfg = req["params"].get("configuration", {}).get("pushNotificationConfig")
                if cfg:
                    seen["cfg"] = cfg
                result = {
                    "kind": "task",
                    "id": "t1",
                    "contextId": "c1",
                    "status": {"state": "submitted", "timestamp": "2024-03-15T18:30:00Z"},
                }
            else:
                result = {}
            out = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
            conn.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                % len(out)
                + out
            )
    except OSError:
        return


def start_agent():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    seen = {}

    def loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=agent_conn, args=(conn, seen), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return srv, srv.getsockname()[1], seen


def status_kib(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def rss_mib(pid):
    return status_kib(pid, "VmRSS") / 1024


def peak_mib(pid):
    return status_kib(pid, "VmHWM") / 1024


def dir_mib(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total / MIB


def exchange(port, path, headers, body, timeout=60, barrier=None):
    """One POST on its own connection: the response status (0: none). With
    `barrier`, the body's last byte waits until every connection of the
    barrier has sent the rest (so the proxy could hold them all at once)."""
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return 0
    head = "POST %s HTTP/1.1\r\nHost: p\r\nContent-Type: application/json\r\n" % path
    for k, v in headers.items():
        head += "%s: %s\r\n" % (k, v)
    head += "Content-Length: %d\r\n\r\n" % len(body)
    got = b""
    try:
        s.sendall(head.encode())
        # The body in pieces, reading whatever answer comes meanwhile (a
        # proxy may answer from the head and close).
        s.setblocking(False)
        sent = 0
        deadline = time.time() + timeout
        last = len(body) - 1 if barrier else len(body)
        while sent < last and time.time() < deadline and b"\r\n\r\n" not in got:
            try:
                sent += s.send(body[sent : min(last, sent + 65536)])
            except BlockingIOError:
                time.sleep(0.001)
            except OSError:
                break
            try:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            except BlockingIOError:
                pass
            except OSError:
                break
        if barrier:
            try:
                barrier.wait(max(0.1, deadline - time.time()))
            except threading.BrokenBarrierError:
                pass
            if b"\r\n\r\n" not in got:
                try:
                    s.send(body[last:])
                except OSError:
                    pass
        s.setblocking(True)
        s.settimeout(max(0.1, deadline - time.time()))
        while b"\r\n\r\n" not in got:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except OSError:
        pass
    finally:
        s.close()
    try:
        return int(got.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def start_proxy(binary, agent_port, data_dir, extra):
    os.makedirs(data_dir, exist_ok=True)
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "serve",
            "--listen",
            "127.0.0.1:%d" % port,
            "--upstream",
            "http://127.0.0.1:%d" % agent_port,
            "--upstream-version",
            "0.3",
            "--push-data-dir",
            data_dir,
            "--allow-private-webhooks",
        ]
        + extra,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=data_dir,
    )
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("proxy %s did not listen" % binary)


def counted(statuses):
    out = {}
    for s in statuses:
        out[s] = out.get(s, 0) + 1
    return " ".join("%s:%d" % (k, out[k]) for k in sorted(out))


def item2(binary):
    agent, agent_port, _ = start_agent()
    data_dir = tempfile.mkdtemp(prefix="a2a-push-bounds-")
    proc, port = start_proxy(binary, agent_port, data_dir, ["--max-connections", str(ITEM2_MAX_CONNECTIONS)])
    try:
        time.sleep(0.5)
        before = rss_mib(proc.pid)
        body = b"x" * ITEM2_BODY
        statuses = []
        lock = threading.Lock()

        barrier = threading.Barrier(ITEM2_CONNECTIONS)

        def one(n):
            path = "/a2a-proxy/push/unknown%03d" % n
            s = exchange(port, path, {"Authorization": "Bearer nope"}, body, timeout=90, barrier=barrier)
            with lock:
                statuses.append(s)

        t0 = time.time()
        threads = [threading.Thread(target=one, args=(n,)) for n in range(ITEM2_CONNECTIONS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        took = time.time() - t0
        peak = peak_mib(proc.pid)
        time.sleep(2)
        return {
            "rss_before": before,
            "rss_peak": peak,
            "rss_after": rss_mib(proc.pid),
            "statuses": counted(statuses),
            "seconds": took,
        }
    finally:
        proc.kill()
        proc.wait()
        agent.close()
        shutil.rmtree(data_dir, ignore_errors=True)


def notification(n):
    text = "n%06d " % n
    text += "y" * (ITEM3_BODY - 400 - len(text))
    return json.dumps(
        {
            "kind": "task",
            "id": "t1",
            "contextId": "c1",
            "status": {"state": "working", "timestamp": "2024-03-15T18:30:00Z"},
            "artifacts": [{"artifactId": "a%d" % n, "parts": [{"kind": "text", "text": text}]}],
        }
    ).encode()


RAISED = """[push]
outbox_max_items = 1000000
outbox_max_bytes = 4294967296
outbox_config_max_items = 1000000
outbox_config_max_bytes = 4294967296
"""


def item3(binary, count, raised=False):
    agent, agent_port, seen = start_agent()
    data_dir = tempfile.mkdtemp(prefix="a2a-push-bounds-")
    extra = []
    if raised:
        path = os.path.join(data_dir, "raised.toml")
        with open(path, "w") as f:
            f.write(RAISED)
        extra = ["--config", path]
    proc, port = start_proxy(binary, agent_port, os.path.join(data_dir, "push"), extra)
    down = free_port()  # nothing listens: the subscriber is down
    try:
        send = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendMessage",
                "params": {
                    "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]},
                    "configuration": {
                        "taskPushNotificationConfig": {"url": "http://127.0.0.1:%d/h" % down, "token": "sub-tok"}
                    },
                },
            }
        ).encode()
        if exchange(port, "/", {"A2A-Version": "1.0"}, send, timeout=30) != 200 or "cfg" not in seen:
            raise SystemExit("registration failed on %s" % binary)
        url = seen["cfg"]["url"]
        path = url[url.index("/a2a-proxy/push/") :]
        token = seen["cfg"]["token"]
        time.sleep(0.5)
        before = rss_mib(proc.pid)
        bodies = [notification(n) for n in range(ITEM3_PARALLEL)]
        statuses = []
        lock = threading.Lock()
        next_n = [0]

        def worker():
            while True:
                with lock:
                    n = next_n[0]
                    if n >= count:
                        return
                    next_n[0] += 1
                s = exchange(port, path, {"X-A2A-Notification-Token": token}, bodies[n % len(bodies)], timeout=60)
                with lock:
                    statuses.append(s)

        t0 = time.time()
        threads = [threading.Thread(target=worker) for _ in range(ITEM3_PARALLEL)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(600)
        took = time.time() - t0
        time.sleep(float(os.environ.get("BENCH_SETTLE", "3")))
        return {
            "rss_before": before,
            "rss_peak": peak_mib(proc.pid),
            "rss_after": rss_mib(proc.pid),
            "data_mib": dir_mib(data_dir),
            "statuses": counted(statuses),
            "seconds": took,
        }
    finally:
        proc.kill()
        proc.wait()
        agent.close()
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    args = sys.argv[1:]
    raised = None
    if "--raised" in args:
        i = args.index("--raised")
        raised = os.path.abspath(args[i + 1])
        del args[i : i + 2]
    binaries = [os.path.abspath(b) for b in args]
    runs = [(b, False) for b in binaries] + ([(raised, True)] if raised else [])
    print(
        "item 2: %d connections, each a %d MiB body to an unknown callback id, --max-connections %d"
        % (ITEM2_CONNECTIONS, ITEM2_BODY // MIB, ITEM2_MAX_CONNECTIONS)
    )
    print("%-28s %9s %9s %9s %7s  %s" % ("binary", "RSS MiB", "peak", "after", "secs", "statuses"))
    for b in binaries:
        r = item2(b)
        print(
            "%-28s %9.1f %9.1f %9.1f %7.1f  %s"
            % (os.path.basename(b)[-28:], r["rss_before"], r["rss_peak"], r["rss_after"], r["seconds"], r["statuses"])
        )
    for count in ITEM3_RUNS:
        print()
        print(
            "item 3: %d notifications of %d MiB to one config whose subscriber is down, %d at a time"
            % (count, ITEM3_BODY // MIB, ITEM3_PARALLEL)
        )
        print(
            "%-28s %9s %9s %9s %9s %7s  %s"
            % ("binary", "RSS MiB", "peak", "after", "data MiB", "secs", "statuses")
        )
        for b, up in runs:
            r = item3(b, count, up)
            name = os.path.basename(b) + (" (raised)" if up else "")
            print(
                "%-28s %9.1f %9.1f %9.1f %9.1f %7.1f  %s"
                % (
                    name[-28:],
                    r["rss_before"],
                    r["rss_peak"],
                    r["rss_after"],
                    r["data_mib"],
                    r["seconds"],
                    r["statuses"],
                )
            )


if __name__ == "__main__":
    main()
