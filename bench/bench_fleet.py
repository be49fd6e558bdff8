#!/usr/bin/env python3
"""`cudadiag fleet` over N generated node reports: wall time and peak RSS (target for 10,000
reports: <= 2 s and <= 1 GiB, grouping O(N)).

    python3 bench/bench_fleet.py --cudadiag build-release/cli/cudadiag [-n 10000] [--input stdin|file|dir]

The reports are the H200 host's real report (docs/examples/h200-selftest-quick.json, ~120 KiB
pretty-printed, with its quick self-test), one per node with its own hostname, self-test figures
scattered by +-3 %, and a realistic mix of odd nodes: 1 % on another driver, 1 % with a CUDA 12
nvJitLink found through LD_LIBRARY_PATH, 0.5 % with an error finding, 0.2 % with a GPU 30 % slow.
They are written as `srun --label` would deliver them (every line prefixed "TASK: ", pretty-printed)
for --input stdin and file; as one file per node for --input dir. The generated input is cached
next to --workdir and reused when it exists. The time is the whole process: reading, parsing,
grouping, the diffs of each odd group against the majority, and printing --json.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1]
EXAMPLE = SOURCE / "docs" / "examples" / "h200-selftest-quick.json"


def variant(base: dict, kind: str) -> dict:
    """The base report changed as one kind of odd node is ("healthy", "driver", "nvjitlink", "error")."""
    doc = copy.deepcopy(base)
    if kind == "driver":
        for step in doc["verification"]["steps"]:
            if step["component"] == "nvml":
                step["result"]["driver_version"] = "575.57.08"
    elif kind == "nvjitlink":
        for component in doc["components"]:
            if component["name"] == "nvJitLink" and component["selected"]:
                component["selected"]["version"] = "12.4.127"
                component["selected"]["found_via"] = "LD_LIBRARY_PATH"
    elif kind == "error":
        doc["findings"].append({"id": "driver.init_failed", "severity": "error", "message": "cuInit failed",
                                "remedy": "", "components": ["cuda"], "evidence": {}})
        doc["summary"]["status"] = "error"
    return doc


class Templates:
    """Each variant's pretty-printed text with placeholders for the hostname and the self-test
    figures, so that a node costs a few string replacements instead of a deep copy and a dump."""

    def __init__(self, base: dict):
        self.figures = [test["primary"]["value"] for test in (base.get("selftest") or {}).get("tests", [])
                        if test.get("primary")]
        self.texts = {}
        for kind in ("healthy", "driver", "nvjitlink", "error"):
            doc = variant(base, kind)
            doc["host"]["hostname"] = "@@HOST@@"
            index = 0
            for test in (doc.get("selftest") or {}).get("tests", []):
                if test.get("primary"):
                    test["primary"]["value"] = f"@@V{index}@@"
                    index += 1
            self.texts[kind] = json.dumps(doc, indent=2)

    def node(self, index: int, rng: random.Random) -> str:
        roll = rng.random()
        kind = "driver" if roll < 0.01 else "nvjitlink" if roll < 0.02 else "error" if roll < 0.025 else "healthy"
        slow = rng.random() < 0.002
        text = self.texts[kind].replace('"@@HOST@@"', json.dumps(f"gpu{index:05d}"))
        for position, value in enumerate(self.figures):
            factor = rng.uniform(0.97, 1.03) * (0.7 if slow else 1.0)
            text = text.replace(f'"@@V{position}@@"', repr(value * factor))
        return text


def generate(count: int, mode: str, workdir: Path) -> Path:
    target = workdir / (f"fleet-{count}.labelled" if mode != "dir" else f"fleet-{count}.d")
    if target.exists():
        return target
    templates = Templates(json.loads(EXAMPLE.read_text()))
    rng = random.Random(15)
    workdir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    line_start = re.compile(r"^", re.MULTILINE)
    if mode == "dir":
        partial.mkdir()
        for i in range(count):
            (partial / f"gpu{i:05d}.json").write_text(templates.node(i, rng))
    else:
        with open(partial, "w") as out:
            for i in range(count):
                out.write(line_start.sub(f"{i}: ", templates.node(i, rng)) + "\n")
    partial.rename(target)
    return target


def run(cudadiag: str, mode: str, data: Path) -> tuple[float, float, int, dict]:
    args = [cudadiag, "--json", "fleet", "-" if mode == "stdin" else str(data)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    if mode == "stdin":
        with open(data, "rb") as stdin:
            done = subprocess.run(args, stdin=stdin, capture_output=True, check=False)
    else:
        done = subprocess.run(args, capture_output=True, check=False)
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode not in (0, 1):
        sys.exit(f"cudadiag fleet failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    doc = json.loads(done.stdout)
    return wall, max(peak_kib, before) / 1024, done.returncode, doc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cudadiag", default=str(SOURCE / "build" / "cli" / "cudadiag"))
    parser.add_argument("-n", "--nodes", type=int, default=10000)
    parser.add_argument("--input", choices=["stdin", "file", "dir"], default="stdin")
    parser.add_argument("--workdir", default=os.environ.get("TMPDIR", "/tmp") + "/cudadiag-bench-fleet")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    started = time.perf_counter()
    data = generate(args.nodes, args.input, Path(args.workdir))
    size = sum(p.stat().st_size for p in data.iterdir()) if data.is_dir() else data.stat().st_size
    print(f"input: {args.nodes} node reports, {size / 2**20:.0f} MiB ({args.input}; generated or reused in "
          f"{time.perf_counter() - started:.1f} s)")
    walls = []
    for _ in range(args.runs):
        wall, peak_mib, code, doc = run(args.cudadiag, args.input, data)
        walls.append(wall)
        counts = doc["counts"]
        print(f"  {wall:.2f} s, peak RSS {peak_mib:.0f} MiB: {counts['nodes']} nodes, {counts['groups']} groups, "
              f"{counts['differing_nodes']} differing, {counts['error_nodes']} with errors, exit {code}")
    best = min(walls)
    print(f"best {best:.2f} s (target <= 2 s), peak RSS {peak_mib:.0f} MiB (target <= 1024 MiB); "
          f"{size / 2**20 / best:.0f} MiB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
