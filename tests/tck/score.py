"""Scores of a tests/tck/run.sh run: per transport, native, through the
proxy to the same agent (passthrough) and through the proxy to an agent of
the other version, pass/fail/skip counts, and every test that passed
natively but not through the proxy.

    python score.py v10|v03 OUT_DIR TRANSPORT...
"""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def junit(path):
    """{test id: outcome} of a junit XML report."""
    out = {}
    if not path.exists():
        return None
    for case in ET.parse(path).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        outcome = "passed"
        for child in case:
            tag = child.tag
            if tag in ("failure", "error"):
                outcome = "failed" if tag == "failure" else "error"
            elif tag == "skipped":
                kind = (child.get("type") or "") + (child.get("message") or "")
                outcome = "xfailed" if "xfail" in kind.lower() else "skipped"
        out[tid] = outcome
    return out


def json_reports(folder):
    """{test id: outcome} of pytest-json-report files."""
    if not folder.exists():
        return None
    out = {}
    for f in sorted(folder.glob("*_results.json")):
        data = json.loads(f.read_text())
        for t in data.get("tests", []):
            out[t["nodeid"]] = t.get("outcome", "?")
    return out


def counts(results):
    c = {}
    for o in results.values():
        c[o] = c.get(o, 0) + 1
    return c


def fmt(c):
    if c is None:
        return "no report"
    keys = ["passed", "failed", "error", "skipped", "xfailed", "xpassed"]
    return " ".join(f"{k[0] if k != 'xpassed' else 'X'}:{c.get(k, 0)}" for k in keys)


def main():
    suite, out, transports = sys.argv[1], Path(sys.argv[2]), sys.argv[3:]
    print(f"suite {suite}  (p passed, f failed, e error, s skipped, x xfailed, X xpassed)")
    for t in transports:
        runs = {}
        for label in ("native", "passthrough", "proxy"):
            if suite == "v10":
                runs[label] = junit(out / f"{label}-{t}.xml")
            else:
                runs[label] = json_reports(out / f"{label}-{t}")
        for i, (label, res) in enumerate(runs.items()):
            print(f"{t if i == 0 else '':10} {label + ':':12} {fmt(counts(res) if res is not None else None)}")
        native = runs["native"]
        for label in ("passthrough", "proxy"):
            other = runs[label]
            if native and other:
                lost = [k for k, v in native.items() if v == "passed" and other.get(k) != "passed"]
                for k in lost:
                    print(f"{'':10}   passes natively, not {label} ({other.get(k)}): {k}")


if __name__ == "__main__":
    main()
