#!/usr/bin/env python3
"""Hostile-agent figures of issue #20, for one or more proxy binaries side by side.

    python3 bench/hostile.py BINARY [BINARY ...]

For each binary, on 127.0.0.1 only, with a fake v0.3 agent of its own:
  item 4: proxy CPU seconds to carry one 12 MiB SSE event (sent in 16 KiB
          writes) to a v1.0 client (translated) and to a v0.3 client
          (passed through), and their ratio;
  item 2: proxy RSS and push data-dir size after 120 SendMessage calls whose
          answers are 3 MiB tasks, and the size and time of one ListTasks
          (pageSize 100).
Every wait is bounded; the proxies are killed at the end.
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

EVENT_BYTES = 12 * 1024 * 1024
TASK_BYTES = 3 * 1024 * 1024
CALLS = 120


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
    chunked = False
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v.strip())
        if k.strip().lower() == b"transfer-encoding" and b"chunked" in v.lower():
            chunked = True
    if chunked:
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = conn.recv(65536)
            if not chunk:
                break
            rest += chunk
        body, data = b"", rest
        while True:
            size_line, _, data = data.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0:
                break
            body += data[:size]
            data = data[size + 2 :]
        return head, body
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head, rest


def task(task_id, text):
    return {
        "kind": "task",
        "id": task_id,
        "contextId": "c-" + task_id,
        "status": {"state": "completed", "timestamp": "2024-03-15T18:30:00Z"},
        "artifacts": [{"artifactId": "a1", "parts": [{"kind": "text", "text": text}]}],
        "history": [],
    }


def agent_conn(conn, counter):
    try:
        while True:
            head, body = read_request(conn)
            if head is None:
                return
            req = json.loads(body or b"{}")
            method = req.get("method")
            rid = req.get("id")
            if method == "message/stream":
                text = "x" * EVENT_BYTES
                event = {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "kind": "status-update",
                        "taskId": "s1",
                        "contextId": "c1",
                        "final": True,
                        "status": {
                            "state": "completed",
                            "message": {
                                "kind": "message",
                                "messageId": "m",
                                "role": "agent",
                                "parts": [{"kind": "text", "text": text}],
                            },
                        },
                    },
                }
                data = b"data: " + json.dumps(event).encode() + b"\n\n"
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    b"Connection: close\r\n\r\n"
                )
                for i in range(0, len(data), 16 * 1024):
                    conn.sendall(data[i : i + 16 * 1024])
                conn.close()
                return
            if method == "message/send":
                with counter["lock"]:
                    counter["n"] += 1
                    n = counter["n"]
                result = task("t%d" % n, "y" * TASK_BYTES)
            elif method == "tasks/get":
                result = task(req["params"]["id"], "small")
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
    counter = {"n": 0, "lock": threading.Lock()}

    def loop():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=agent_conn, args=(conn, counter), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return srv, srv.getsockname()[1]


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def dir_mib(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total / (1024 * 1024)


def post(port, body, headers, timeout=60):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    head = "POST / HTTP/1.1\r\nHost: p\r\nConnection: close\r\nContent-Type: application/json\r\n"
    for k, v in headers.items():
        head += "%s: %s\r\n" % (k, v)
    head += "Content-Length: %d\r\n\r\n" % len(body)
    s.sendall(head.encode() + body)
    got = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            chunk = s.recv(1 << 20)
        except socket.timeout:
            break
        if not chunk:
            break
        got += chunk
    s.close()
    return got


def start_proxy(binary, agent_port, data_dir):
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
        ],
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


def measure(binary):
    agent, agent_port = start_agent()
    data_dir = tempfile.mkdtemp(prefix="a2a-hostile-bench-")
    proc, port = start_proxy(binary, agent_port, data_dir)
    out = {}
    try:
        stream_v10 = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "SendStreamingMessage",
                "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
            }
        ).encode()
        stream_v03 = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "message/stream",
                "params": {
                    "message": {"kind": "message", "messageId": "m", "role": "user", "parts": [{"kind": "text", "text": "hi"}]}
                },
            }
        ).encode()
        for name, body, headers in [
            ("translated", stream_v10, {"A2A-Version": "1.0", "Accept": "text/event-stream"}),
            ("passthrough", stream_v03, {"Accept": "text/event-stream"}),
        ]:
            before = cpu_seconds(proc.pid)
            t0 = time.time()
            got = post(port, body, headers, timeout=90)
            out["cpu_" + name] = cpu_seconds(proc.pid) - before
            out["wall_" + name] = time.time() - t0
            out["bytes_" + name] = len(got)
        send = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "SendMessage",
                "params": {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
            }
        ).encode()
        for _ in range(CALLS):
            post(port, send, {"A2A-Version": "1.0"}, timeout=30)
        time.sleep(1.5)
        out["rss_mib"] = rss_mib(proc.pid)
        out["data_mib"] = dir_mib(data_dir)
        lst = json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "ListTasks", "params": {"pageSize": 100, "includeArtifacts": True}}
        ).encode()
        t0 = time.time()
        got = post(port, lst, {"A2A-Version": "1.0"}, timeout=30)
        out["list_s"] = time.time() - t0
        out["list_kib"] = len(got) / 1024
    finally:
        proc.kill()
        proc.wait()
        agent.close()
        shutil.rmtree(data_dir, ignore_errors=True)
    return out


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    rows = [(b, measure(os.path.abspath(b))) for b in sys.argv[1:]]
    print("item 4: one %d MiB SSE event, proxy CPU seconds" % (EVENT_BYTES >> 20))
    print("%-40s %12s %12s %8s" % ("binary", "translated", "passthrough", "ratio"))
    for b, r in rows:
        ratio = r["cpu_translated"] / max(r["cpu_passthrough"], 0.01)
        print("%-40s %12.2f %12.2f %8.1f" % (b[-40:], r["cpu_translated"], r["cpu_passthrough"], ratio))
    print()
    print("item 2: %d SendMessage answers of %d MiB, then ListTasks pageSize 100 with artifacts" % (CALLS, TASK_BYTES >> 20))
    print("%-40s %10s %12s %12s %10s" % ("binary", "RSS MiB", "data dir MiB", "list KiB", "list s"))
    for b, r in rows:
        print(
            "%-40s %10.1f %12.1f %12.1f %10.2f"
            % (b[-40:], r["rss_mib"], r["data_mib"], r["list_kib"], r["list_s"])
        )


if __name__ == "__main__":
    main()
