"""Fault injection: the real `cudadiag --json` against hostile driver stand-ins (tests/fixtures/
fake_libcuda.c modes) that crash, hang, fork daemons, flood and lie on the worker protocol, report
a thousand devices or hostile names. Each run must finish within its deadline with one valid JSON
report and a documented exit code, leave no process behind (every process the run started carries
a marker in its environment and is looked for afterwards) and keep the parent's memory bounded."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cudadiag_harness import describe, fake_driver_env, parse_report, require_binary

# (mode, extra environment, arguments, the wall-clock bound in seconds)
CASES = [
    ("crash", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("hang", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("crash-on-load", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("hang-on-load", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("fork-and-hang", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("fork-and-return", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("daemon", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("noisy", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("protocol-deep", {}, ["--no-selftest", "--timeout", "5"], 15),
    ("protocol-deadline", {}, ["--no-selftest", "--timeout", "2"], 10),
    ("protocol-flood", {}, ["--no-selftest", "--timeout", "5"], 15),
    # A driver that takes all the memory it can: the worker's RLIMIT_DATA stops it (cuInit then
    # says out of memory) long before the machine's memory; the parent is untouched.
    ("hog", {"CUDADIAG_WORKER_MEMORY_MB": "256"}, ["--no-selftest", "--timeout", "5"], 15),
    ("ok", {"CUDADIAG_FAKE_CUDA_DEVICES": "1000", "CUDADIAG_SELFTEST_BUDGET_S": "5"}, ["--timeout", "5"], 60),
    ("ok", {"CUDADIAG_FAKE_CUDA_NAME": "H200 \x1b]0;owned\x07\x1b[2J\x1b[31mred"}, ["--no-selftest"], 15),
]
PARENT_RSS_LIMIT_KIB = 512 * 1024


def marked_processes(marker: str) -> list[int]:
    """Processes whose environment holds CUDADIAG_TEST_MARKER=<marker> (only this user's are readable)."""
    needle = f"CUDADIAG_TEST_MARKER={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("mode,extra,args,bound", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_hostile_driver_cannot_break_the_report(mode, extra, args, bound, tmp_path):
    marker = uuid.uuid4().hex
    env = fake_driver_env(tmp_path / "driver")
    env.update({"CUDADIAG_FAKE_CUDA": mode, "CUDADIAG_TEST_MARKER": marker, **extra})
    start = time.monotonic()
    # Through a small Python parent, so that the rusage of children is this run's alone.
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, capture_output=True, timeout=120)\n"
        "sys.stdout.buffer.write(done.stdout)\n"
        "sys.stderr.buffer.write(done.stderr)\n"
        "sys.stderr.write('\\nMAXRSS_KIB=%d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "sys.exit(done.returncode)\n")
    result = subprocess.run([sys.executable, "-c", probe, str(require_binary()), "--json", *args], env=env,
                            capture_output=True, timeout=bound + 60, check=False)
    wall = time.monotonic() - start
    assert wall < bound, f"{mode}: took {wall:.1f} s (bound {bound} s)\n{describe(result)}"
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result)  # one JSON document, valid against the schema, exit code consistent
    assert doc["summary"]["exit_code"] == result.returncode
    rss = [line for line in result.stderr.decode(errors="replace").splitlines() if line.startswith("MAXRSS_KIB=")]
    assert rss and int(rss[-1].split("=")[1]) < PARENT_RSS_LIMIT_KIB, f"{mode}: {rss}"
    # The driver's worker may take a moment to be reaped by the kernel after SIGKILL.
    deadline = time.monotonic() + 3
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not marked_processes(marker), f"{mode}: processes left behind: {marked_processes(marker)}"
    if extra.get("CUDADIAG_FAKE_CUDA_DEVICES") == "1000":
        selftest = doc["selftest"]
        assert selftest["max_workers"] <= max(1, (os.cpu_count() or 2) // 2), selftest["max_workers"]
        late = [t for t in selftest["tests"] if "overall budget" in (t["reason"] or "")]
        assert late and all(t["status"] == "skip" for t in late), "the budget cut no device"
    if mode == "hog":
        driver = next(s for s in doc["verification"]["steps"] if s["kind"] == "driver")
        assert driver["result"]["init"]["code"] == 2, driver  # CUDA_ERROR_OUT_OF_MEMORY: malloc failed
    text = result.stdout.decode(errors="replace")
    assert "\x1b" not in text and "\x07" not in text, f"{mode}: raw terminal escapes in the JSON"
