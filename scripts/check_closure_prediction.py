#!/usr/bin/env python3
"""Checks the closure stage's prediction against the real loader.

For every closure in a cudadiag JSON report (`cudadiag --json --no-load`), a fresh Python process
loads it as the answer says (its preloads, then the root, each by path with RTLD_NOW|RTLD_GLOBAL,
as ctypes and cuda-pathfinder do; for the "loader" answer the root by its path too) and reports
dlerror and the real paths of every object it then has mapped (/proc/self/maps). The prediction is
right when the load succeeds exactly when predicted and every predicted object is mapped.

Usage: check_closure_prediction.py REPORT.json [--python PY]
Prints one line per closure and a summary; exit status 1 when any prediction is wrong.
"""
import argparse
import json
import subprocess
import sys

CHILD = r"""
import ctypes, json, os, sys
paths = json.loads(sys.argv[1])
error = None
for path in paths:
    try:
        ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except OSError as e:
        error = str(e)
        break
mapped = set()
with open("/proc/self/maps") as maps:
    for line in maps:
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            mapped.add(os.path.realpath(parts[5].strip()))
print(json.dumps({"error": error, "mapped": sorted(mapped)}))
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    report = json.load(open(args.report))
    wrong = checked = 0
    for component in report["linkage"]["components"]:
        for closure in component["closures"]:
            objects = closure["objects"]
            if closure["root"] is None:
                continue
            order = [o["path"] for o in objects if o["found_via"] == "preloaded"] + [objects[closure["root"]]["path"]]
            out = subprocess.run([args.python, "-c", CHILD, json.dumps(order)], capture_output=True, text=True,
                                 timeout=120)
            try:
                real = json.loads(out.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                real = {"error": "child failed: " + out.stderr[-300:], "mapped": []}
            checked += 1
            loads = real["error"] is None
            problems = []
            if loads != closure["loads"]:
                problems.append("predicted loads=%s, real: %s" % (closure["loads"], real["error"] or "loads"))
            if loads:
                missing = [o["realpath"] for o in objects if o["realpath"] not in real["mapped"]]
                if missing:
                    problems.append("predicted but not mapped: " + ", ".join(missing))
            status = "OK " if not problems else "BAD"
            wrong += bool(problems)
            print("%s %-12s %-22s %2d objects%s%s" % (status, component["name"], "+".join(closure["answers"]),
                                                     len(objects), "" if loads else " (fails: %s)" % real["error"],
                                                     "" if not problems else ": " + "; ".join(problems)))
    print("closure prediction: %d closures checked, %d wrong" % (checked, wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
