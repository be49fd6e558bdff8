#!/usr/bin/env python3
"""GPU-host check of the self-test on a GPU another process is using (ctest label `gpu`; exit 77 =
skipped without a GPU).

    check_gpu_contention.py CUDADIAG COMPETITOR PTX_DIR [--runs N] [--levels quick,full] [--out DIR]

COMPETITOR (tests/gpu/contention_competitor.cpp) keeps the GPU busy with the bundled copy and FMA
kernels through the driver API. With it running, `cudadiag selftest --level L --json` runs N times
per level; then the same N times with the GPU idle. Under load every run must show:

- no wrong data: no test failed with a wrong result ("wrong data", words read back wrong, a different
  FMA result, copies that came back different), and the memory test (full level) found no wrong word;
- gpu.busy naming the competitor's pid;
- no gpu.throttled and no selftest.slow (the figures taken while busy are not the GPU's fault), and
  every score component taken while busy is marked busy.

At the full level, while the competitor still runs, `selftest --only memory --level full` runs
--inject-runs times more with CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS=--inject (the memory test's own
corrupting kernel, on its stream): each run must fail with exactly that many wrong words, all
injected, transient, and a gpu.memory_errors finding - the test still catches an error on a busy GPU.

Idle, every run must pass with no gpu.busy. A test that fails under load for another reason than
wrong data is printed as a note. The summary (every run's status, score, and each
benchmark's median busy and idle figure with their ratio) is printed and written, with every JSON,
under --out.
"""
import argparse
import glob
import json
import os
import signal
import statistics
import subprocess
import sys
import time

WRONG = ("wrote wrong data", "read back wrong", "different FMA chain result", "differ from IEEE",
         "came back different", "summed to", "unsorted", "checksum")


def run_selftest(cudadiag, level, path, extra=(), env=None):
    started = time.monotonic()
    done = subprocess.run([cudadiag, "selftest", "--level", level, "--json", *extra], capture_output=True,
                          timeout=900, env=env)
    wall = time.monotonic() - started
    with open(path, "wb") as out:
        out.write(done.stdout)
    with open(path + ".stderr", "wb") as out:
        out.write(done.stderr)
    return json.loads(done.stdout), done.returncode, wall


def problems_of(doc, busy_pid):
    """What is wrong with one run's report: [] when it is right."""
    found = []
    tests = doc["selftest"]["tests"]
    for test in tests:
        reason = test["reason"] or ""
        if test["status"] in ("fail", "error") and any(word in reason for word in WRONG):
            found.append(f'{test["key"]}: wrong data: {reason}')
        memory = test["details"].get("memory") or {}
        if memory.get("wrong_words"):
            found.append(f'memory: {memory["wrong_words"]} wrong words')
    busy = [f for f in doc["findings"] if f["id"] == "gpu.busy"]
    if busy_pid is not None:
        pids = {p["pid"] for f in busy for p in f["evidence"]["processes"]}
        if busy_pid not in pids:
            found.append(f"gpu.busy does not name the competitor (pid {busy_pid}): {[f['message'] for f in busy]}")
        for blamed in ("gpu.throttled", "selftest.slow"):
            for finding in doc["findings"]:
                if finding["id"] == blamed:
                    found.append(f"{blamed} blamed on the GPU while busy: {finding['message']}")
        unmarked = [c["benchmark"] for c in doc["selftest"]["score"]["components"] if not c.get("busy")]
        if unmarked:
            found.append(f"score components not marked busy: {unmarked}")
    else:
        if busy:
            found.append(f"gpu.busy on an idle GPU: {busy[0]['message']}")
        for test in tests:
            if test["status"] in ("fail", "error"):
                found.append(f'{test["key"]} {test["status"]} on an idle GPU: {test["reason"]}')
    return found


def injection_problems(doc, injected):
    """What is wrong with a run that injected `injected` memory errors: [] when the test caught them."""
    found = []
    (test,) = doc["selftest"]["tests"]
    memory = test["details"].get("memory") or {}
    if test["status"] != "fail":
        found.append(f'memory test {test["status"]} with {injected} injected errors: {test["reason"]}')
    if memory.get("wrong_words") != injected or memory.get("injected_words") != injected:
        found.append(f'wrong_words {memory.get("wrong_words")}, injected_words {memory.get("injected_words")}, '
                     f'expected {injected} each')
    if (memory.get("repeat") or {}).get("persistent") is not False:
        found.append(f'the repeat pass should find none (transient): {memory.get("repeat")}')
    if not any(f["id"] == "gpu.memory_errors" for f in doc["findings"]):
        found.append("no gpu.memory_errors finding")
    return found


def notes_of(doc):
    """Tests that failed under load for a reason other than wrong data: printed, not a failure here."""
    return [f'{t["key"]} {t["status"]}: {t["reason"]}' for t in doc["selftest"]["tests"]
            if t["status"] in ("fail", "error") and not any(word in (t["reason"] or "") for word in WRONG)]


def figures(doc):
    return {f'{c["benchmark"]}': c["measured"] for c in doc["selftest"]["score"]["components"]}


def start_competitor(competitor, ptx_dir):
    process = subprocess.Popen([competitor, ptx_dir, "--seconds", "3600"], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    if not line.startswith("ready pid="):
        process.kill()
        raise RuntimeError(f"the competitor did not start: {line!r} (exit {process.wait()})")
    return process


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cudadiag")
    parser.add_argument("competitor")
    parser.add_argument("ptx_dir")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--levels", default="quick,full")
    parser.add_argument("--out", default=os.environ.get("OUT", "contention-out"))
    parser.add_argument("--inject", type=int, default=64, help="memory errors injected per run (full level)")
    parser.add_argument("--inject-runs", type=int, default=3)
    args = parser.parse_args()
    if not glob.glob("/dev/nvidia[0-9]*"):
        print("SKIP: no NVIDIA GPU device nodes on this machine")
        return 77
    os.makedirs(args.out, exist_ok=True)
    summary = {"runs": args.runs, "levels": {}}
    lines = []
    failed = False
    for level in args.levels.split(","):
        per_level = {"busy": [], "idle": []}
        busy_figures, idle_figures = {}, {}
        competitor = start_competitor(args.competitor, args.ptx_dir)
        try:
            for i in range(args.runs):
                doc, code, wall = run_selftest(args.cudadiag, level, f"{args.out}/busy-{level}-{i}.json")
                found = problems_of(doc, competitor.pid)
                per_level["busy"].append({"run": i, "exit": code, "wall_s": round(wall, 2),
                                          "status": doc["selftest"]["status"], "score": doc["selftest"]["score"]["value"],
                                          "busy_excluded": doc["selftest"]["score"].get("busy_excluded"),
                                          "problems": found, "notes": notes_of(doc)})
                for name, value in figures(doc).items():
                    busy_figures.setdefault(name, []).append(value)
                failed |= bool(found)
            if level == "full":
                per_level["injected"] = []
                env = dict(os.environ, CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS=str(args.inject))
                for i in range(args.inject_runs):
                    doc, code, wall = run_selftest(args.cudadiag, level, f"{args.out}/inject-{i}.json",
                                                   ("--only", "memory"), env)
                    found = injection_problems(doc, args.inject)
                    memory = doc["selftest"]["tests"][0]["details"].get("memory") or {}
                    per_level["injected"].append({"run": i, "exit": code, "wall_s": round(wall, 2),
                                                  "wrong_words": memory.get("wrong_words"),
                                                  "tested_gib": round(memory.get("bytes_tested", 0) / 2**30, 1),
                                                  "busy": any(f["id"] == "gpu.busy" for f in doc["findings"]),
                                                  "problems": found})
                    failed |= bool(found)
        finally:
            competitor.send_signal(signal.SIGTERM)
            competitor.wait(timeout=60)
        time.sleep(2)  # the competitor's context is gone
        for i in range(args.runs):
            doc, code, wall = run_selftest(args.cudadiag, level, f"{args.out}/idle-{level}-{i}.json")
            found = problems_of(doc, None)
            per_level["idle"].append({"run": i, "exit": code, "wall_s": round(wall, 2),
                                      "status": doc["selftest"]["status"], "score": doc["selftest"]["score"]["value"],
                                      "problems": found})
            for name, value in figures(doc).items():
                idle_figures.setdefault(name, []).append(value)
            failed |= bool(found)
        ratios = {}
        for name in sorted(set(busy_figures) | set(idle_figures)):
            busy = statistics.median(busy_figures[name]) if name in busy_figures else None
            idle = statistics.median(idle_figures[name]) if name in idle_figures else None
            ratios[name] = {"busy_median": busy, "idle_median": idle,
                            "busy_over_idle": busy / idle if busy and idle else None}
        per_level["figures"] = ratios
        summary["levels"][level] = per_level
        for r in per_level.get("injected", []):
            lines.append(f"{level} busy, {args.inject} memory errors injected, run {r['run']}: "
                         f"{'caught' if not r['problems'] else 'NOT RIGHT'} ({r['wrong_words']} wrong words "
                         f"in {r['tested_gib']} GiB, gpu.busy {r['busy']}, exit {r['exit']})")
            for problem in r["problems"]:
                lines.append(f"  {problem}")
        for kind in ("busy", "idle"):
            good = sum(1 for r in per_level[kind] if not r["problems"])
            lines.append(f"{level} {kind}: {good}/{len(per_level[kind])} runs right; "
                         f"statuses {[r['status'] for r in per_level[kind]]}, scores {[r['score'] for r in per_level[kind]]}")
            for r in per_level[kind]:
                for problem in r["problems"]:
                    lines.append(f"  run {r['run']}: {problem}")
                for note in r.get("notes", []):
                    lines.append(f"  run {r['run']} (note, not wrong data): {note}")
        for name, row in ratios.items():
            ratio = row["busy_over_idle"]
            lines.append(f"  {name}: busy {row['busy_median']}, idle {row['idle_median']}"
                         + (f", busy/idle {ratio:.2f}" if ratio else ""))
    lines.append("FAIL" if failed else "PASS")
    text = "\n".join(lines)
    print(text)
    with open(f"{args.out}/summary.txt", "w") as out:
        out.write(text + "\n")
    with open(f"{args.out}/summary.json", "w") as out:
        json.dump(summary, out, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
