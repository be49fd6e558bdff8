#!/usr/bin/env python3
"""GPU-host check of the checkpoint self-test (exit 77 = skipped without a GPU).

    check_gpu_checkpoint.py CUDADIAG [--cases ok256,ok4096,managed,busy_lock] [--out DIR]

Each case runs `cudadiag selftest --only checkpoint --json` under a time bound (a self-test budget
of 60 s, killed at 80 s: a hang fails the case) with a marker variable that every process of the run inherits:

- ok256, ok4096: a 256 MiB / 4 GiB target must pass: outcome restored, each step's ms, the
  checkpoint, restore and checkpoint+restore GiB/s, the target parked (checkpointed) before it ended;
- managed: a target holding managed (UVM) memory: checkpoint.failed expected (the driver cannot
  checkpoint UVM), the target ended;
- busy_lock: a target with a kernel spinning 10 s, locked with timeoutMs 1: checkpoint.failed at the
  lock step expected, the target parked after its kernel ended.

After every case no live process may carry its marker (one that does is listed, never killed here: a
restored target must not be killed). The summary (each case's result, figures and findings) is
printed and written with every JSON under --out; the exit status is 1 when a case is wrong.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import uuid

CASES = {
    "ok256": ({"CUDADIAG_CHECKPOINT_MIB": "256"}, "pass", None),
    "ok4096": ({"CUDADIAG_CHECKPOINT_MIB": "4096"}, "pass", None),
    "managed": ({"CUDADIAG_CHECKPOINT_MIB": "256", "CUDADIAG_CHECKPOINT_TARGET": "managed"}, "fail", None),
    "busy_lock": ({"CUDADIAG_CHECKPOINT_MIB": "256", "CUDADIAG_CHECKPOINT_TARGET": "busy",
                   "CUDADIAG_CHECKPOINT_LOCK_MS": "1"}, "fail", "lock"),
}
# Each run is cut by cudadiag itself at its self-test budget (BUDGET_S), and killed here at BOUND_S:
# four cases stay under 8 minutes with the build even if every one of them hung.
BUDGET_S = 60
BOUND_S = 80


def left_behind(marker):
    found = []
    needle = marker.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                environ = f.read()
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        if needle + b"\0" in environ or environ.endswith(needle):
            if stat[stat.rfind(")") + 2] not in "ZX":
                found.append(int(name))
    return found


def run_case(cudadiag, name, out):
    extra, want_status, want_step = CASES[name]
    marker = f"CUDADIAG_CHECKPOINT_CHECK_MARK={uuid.uuid4()}"
    env = dict(os.environ, CUDADIAG_SELFTEST_BUDGET_S=str(BUDGET_S), **extra)
    env[marker.split("=")[0]] = marker.split("=")[1]
    started = time.monotonic()
    problems = []
    try:
        done = subprocess.run([cudadiag, "selftest", "--only", "checkpoint", "--json"], env=env,
                              capture_output=True, timeout=BOUND_S)
        hung = False
    except subprocess.TimeoutExpired as expired:
        done = None
        hung = True
        problems.append(f"no answer within {BOUND_S} s")
        stdout = expired.stdout or b""
    wall = time.monotonic() - started
    stdout = done.stdout if done else stdout
    with open(os.path.join(out, f"{name}.json"), "wb") as f:
        f.write(stdout)
    if done:
        with open(os.path.join(out, f"{name}.stderr"), "wb") as f:
            f.write(done.stderr)
    time.sleep(1)
    left = left_behind(marker)
    if left:
        problems.append(f"processes left behind: {left}")
    row = {"case": name, "wall_s": round(wall, 1), "exit": None if hung else done.returncode,
           "left_behind": left}
    if hung:
        row["problems"] = problems
        return row
    doc = json.loads(stdout)
    (test,) = doc["selftest"]["tests"]
    facts = test["details"].get("checkpoint") or {}
    row.update(status=test["status"], reason=test["reason"], outcome=facts.get("outcome"), step=facts.get("step"),
               code=facts.get("code"), driver_words=facts.get("driver_words"),
               driver_version=facts.get("driver_version"), persistence_mode=facts.get("persistence_mode"),
               target_ended_checkpointed=facts.get("target_ended_checkpointed"),
               metrics={m["name"]: round(m["value"], 3) for m in test["metrics"]},
               findings=[f'{f["id"]} ({f["severity"]}): {f["message"]}' for f in doc["findings"]
                         if f["id"].startswith("checkpoint.") or f["id"] == "selftest.failed"],
               steps=test["details"].get("steps"), end=test["details"].get("end"),
               release=test["details"].get("release"))
    if test["status"] != want_status:
        problems.append(f'status {test["status"]}, expected {want_status}: {test["reason"]}')
    if want_status == "pass":
        for metric in ("get_state_ms", "lock_ms", "checkpoint_ms", "restore_ms", "unlock_ms",
                       "checkpoint_gibps", "restore_gibps", "checkpoint_restore_gibps"):
            if metric not in row["metrics"]:
                problems.append(f"no {metric}")
        if not facts.get("target_ended_checkpointed"):
            problems.append("the target was not parked before it ended")
    else:
        ids = [f["id"] for f in doc["findings"]]
        if "checkpoint.failed" not in ids:
            problems.append(f"no checkpoint.failed (findings: {ids})")
        if want_step and facts.get("step") != want_step:
            problems.append(f'failed at {facts.get("step")}, expected {want_step}')
    row["problems"] = problems
    return row


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("cudadiag")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--out", default="out/checkpoint")
    args = parser.parse_args()
    if shutil.which("nvidia-smi") is None or subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode != 0:
        print("no GPU: skipped")
        return 77
    os.makedirs(args.out, exist_ok=True)
    rows = [run_case(args.cudadiag, name, args.out) for name in args.cases.split(",")]
    lines = []
    for row in rows:
        lines.append(f'{row["case"]}: {row.get("status")} outcome={row.get("outcome")} step={row.get("step")} '
                     f'code={row.get("code")} words={row.get("driver_words")!r} wall={row["wall_s"]} s '
                     f'left={row["left_behind"]} parked={row.get("target_ended_checkpointed")}')
        metrics = row.get("metrics") or {}
        if metrics:
            lines.append("  " + ", ".join(f"{k}={v}" for k, v in sorted(metrics.items())))
        for finding in row.get("findings") or []:
            lines.append("  " + finding)
        for problem in row["problems"]:
            lines.append("  PROBLEM: " + problem)
    if rows and "driver_version" in rows[0]:
        lines.append(f'driver_version={rows[0].get("driver_version")} persistence_mode={rows[0].get("persistence_mode")}')
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(rows, f, indent=1)
    return 1 if any(row["problems"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
