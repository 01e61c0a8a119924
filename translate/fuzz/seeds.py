#!/usr/bin/env python3
"""Writes the fixtures as seeds of the `transcode` fuzz target: one selector
byte (see fuzz_targets/transcode.rs) then the body, compact and as written;
payload fixtures are wrapped in the response envelope that carries them."""
import json, os, sys, pathlib

out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "corpus/transcode")
out.mkdir(parents=True, exist_ok=True)
fx = pathlib.Path(__file__).resolve().parent.parent.parent / "fixtures"
RESP = ["SendMessage", "SendStreamingMessage", "SubscribeToTask", "GetTask", "CancelTask"]
n = 0

def put(sel, body):
    global n
    (out / f"seed-{n:05d}").write_bytes(bytes([sel]) + body)
    n += 1

def version(name):
    return "v03" if name.endswith(".v03.json") else "v10" if name.endswith(".v10.json") else None

for d in ["response", "event", "request"]:
    for f in sorted((fx / d).glob("*.json")):
        v = version(f.name)
        if not v:
            continue
        to_bit = 0 if v == "v03" else 1  # translate to the other version
        raw = f.read_bytes()
        doc = json.loads(raw)
        bodies = [raw, json.dumps(doc, separators=(",", ":")).encode()]
        method = f.name.split(".")[0]
        if d == "request":
            sels = [to_bit | 2, to_bit | 2 | 4]
        elif method in RESP:
            sels = [to_bit | (RESP.index(method) << 2)]
        else:
            continue
        for s in sels:
            for b in bodies:
                put(s, b)

def wrap(kind, v, x):
    if kind == "task":
        return "GetTask", x
    if kind == "message":
        return "SendMessage", (x if v == "v03" else {"message": x})
    if kind in ("status-update", "artifact-update"):
        if v == "v03":
            return "SendStreamingMessage", x
        return "SendStreamingMessage", {("statusUpdate" if kind == "status-update" else "artifactUpdate"): x}
    if kind == "stream-response":
        return "SendStreamingMessage", x
    return None

for kind in ["task", "message", "status-update", "artifact-update", "stream-response"]:
    for base in [fx / kind, fx / "rejected" / kind]:
        if not base.is_dir():
            continue
        for f in sorted(base.glob("*.json")):
            v = version(f.name)
            if not v:
                continue
            w = wrap(kind, v, json.loads(f.read_bytes()))
            if not w:
                continue
            m, x = w
            env = {"jsonrpc": "2.0", "id": 1, "result": x}
            put((0 if v == "v03" else 1) | (RESP.index(m) << 2), json.dumps(env, separators=(",", ":")).encode())
# Agent cards (selector 0x80 | direction): every card of the fixtures, on
# its own and as the result of a GetExtendedAgentCard answer.
def card_like(x):
    return isinstance(x, dict) and any(k in x for k in ("skills", "capabilities", "supportedInterfaces", "defaultInputModes"))

for f in sorted(fx.rglob("*.json")):
    try:
        doc = json.loads(f.read_bytes())
    except ValueError:
        continue
    for x in [doc, doc.get("result") if isinstance(doc, dict) else None]:
        if not card_like(x):
            continue
        v10ish = "supportedInterfaces" in x or "url" not in x
        to_bit = 0 if not v10ish else 1
        for body in [json.dumps(x, separators=(",", ":")).encode(), json.dumps(x, indent=1).encode()]:
            put(0x80 | to_bit, body)
# Whole documents (selector 0x40 | index << 2 | direction, the index into
# DOCUMENTS of fuzz_targets/transcode.rs): every fixture of those kinds,
# and the bare params / results of the envelope fixtures.
DOCS = {"part": 0, "message": 1, "task": 2, "task-status": 3, "artifact": 4,
        "status-update": 5, "artifact-update": 6, "stream-response": 7, "push-body": 8}
for kind, i in DOCS.items():
    for base in [fx / kind, fx / "rejected" / kind]:
        for f in sorted(base.glob("*.json")) if base.is_dir() else []:
            v = version(f.name)
            if v:
                put(0x40 | (i << 2) | (0 if v == "v03" else 1), f.read_bytes())
def doc_index(d, name):
    """(envelope index, bare index) in DOCUMENTS for an envelope fixture."""
    if d == "request":
        return 9, 10
    if d == "event":
        return 13, 13
    if name.startswith("GetTask."):
        return 12, 12
    if name.startswith("SendMessage."):
        return 11, 11
    return None

for d in ["request", "response", "event"]:
    for f in sorted((fx / d).glob("*.json")):
        v = version(f.name)
        ix = doc_index(d, f.name)
        if not v or not ix:
            continue
        to_bit = 0 if v == "v03" else 1
        doc = json.loads(f.read_bytes())
        put(0x40 | (ix[0] << 2) | to_bit, f.read_bytes())
        body = doc.get("params") if d == "request" else doc.get("result")
        if body is not None and (d != "request" or doc.get("method") in ("message/send", "SendMessage")):
            put(0x40 | (ix[1] << 2) | to_bit, json.dumps(body).encode())
print(f"{n} seeds in {out}")
