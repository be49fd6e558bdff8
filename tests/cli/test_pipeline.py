"""One pipeline: discovery is prepared once per run, and the inputs it is given are checked.

Runs the real binary under strace where strace is installed (skipped honestly where it is not):
`cudadiag --json --no-load` reads /etc/ld.so.cache once (beyond the dynamic loader's own lookup
when the process starts), and `--python X` runs X once. Then the usage errors for inputs that name
nothing usable (exit 2, `cudadiag: error: ...` naming the input), and the one place that decides
which interpreter `python3` runs (a VIRTUAL_ENV that PATH does not follow).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cudadiag_harness import TIMEOUT_S, clean_env, describe, finding_ids, require_binary, run, run_report

LD_SO_CACHE = "/etc/ld.so.cache"
LINE = re.compile(r"^(?P<pid>\d+)\s+(?P<call>\w+)\((?P<args>.*)$")
RESUMED = re.compile(r"^(?P<pid>\d+)\s+<\.\.\. \w+ resumed>(?P<rest>.*)$")
UNFINISHED = " <unfinished ...>"


def strace() -> str:
    found = shutil.which("strace")
    if found is None:
        pytest.skip("strace is not installed")
    return found


def traced(args, tmp_path: Path, env=None) -> list[tuple[int, str, str]]:
    """Runs cudadiag ARGS under `strace -f`; returns (pid, syscall, arguments) for openat, execve and the
    clone calls (a call strace split over two lines is joined: its arguments, then its result)."""
    log = tmp_path / "strace.log"
    command = [strace(), "-f", "-qq", "-s", "4096", "-e", "trace=openat,execve,clone,clone3", "-o", str(log),
               str(require_binary()), *args]
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, timeout=TIMEOUT_S * 2,
                            stdin=subprocess.DEVNULL, check=False)
    if not log.exists() or "PTRACE_TRACEME" in result.stderr.decode(errors="replace") or \
            "Operation not permitted" in result.stderr.decode(errors="replace")[:500] and not log.stat().st_size:
        pytest.skip(f"strace cannot trace here: {result.stderr.decode(errors='replace')[:300]}")
    assert result.returncode in (0, 1), describe(result)
    calls = []
    unfinished = {}  # pid -> (call, arguments so far)
    for line in log.read_text(errors="replace").splitlines():
        if resumed := RESUMED.match(line):
            pid = int(resumed["pid"])
            if pid in unfinished:
                call, start = unfinished.pop(pid)
                calls.append((pid, call, start + resumed["rest"]))
            continue
        match = LINE.match(line)
        if not match:
            continue
        if match["args"].endswith(UNFINISHED):
            unfinished[int(match["pid"])] = (match["call"], match["args"][: -len(UNFINISHED)])
        else:
            calls.append((int(match["pid"]), match["call"], match["args"]))
    assert calls, "strace logged nothing"
    return calls


def cudadiag_reads_of_ld_so_cache(calls) -> int:
    """Opens of /etc/ld.so.cache by the cudadiag process itself (any of its threads: a run reads on
    helper threads too), after the dynamic loader's.

    The loader opens the cache while it maps the executable's libraries, before main() runs; that
    open comes before the process opens anything that is not a shared library. Every later open
    is cudadiag's own reading of the cache. The workers are processes of their own (a clone without
    CLONE_THREAD) and are not counted."""
    process = {calls[0][0]}
    started = False
    reads = 0
    for pid, call, args in calls:
        if call in ("clone", "clone3") and pid in process and "CLONE_THREAD" in args:
            result = re.search(r"=\s*(\d+)\s*$", args)
            if result:
                process.add(int(result[1]))
            continue
        if pid not in process or call != "openat":
            continue
        path = args.split('"')[1] if '"' in args else ""
        if path == LD_SO_CACHE:
            reads += started
        elif not re.search(r"\.so(\.[0-9.]+)?$", path) and "glibc-hwcaps" not in path:
            started = True
    return reads


def test_no_load_report_reads_ld_so_cache_once(tmp_path):
    if not Path(LD_SO_CACHE).is_file():
        pytest.skip(f"{LD_SO_CACHE} does not exist here")
    calls = traced(["--json", "--no-load"], tmp_path, env=clean_env())
    assert cudadiag_reads_of_ld_so_cache(calls) == 1


def test_full_report_reads_ld_so_cache_once(tmp_path):
    # With verification the workers start while the rest of the catalog is resolved: still one read
    # in the parent (each worker is a process of its own and is not counted).
    if not Path(LD_SO_CACHE).is_file():
        pytest.skip(f"{LD_SO_CACHE} does not exist here")
    calls = traced(["--json", "--no-selftest"], tmp_path, env=clean_env())
    assert cudadiag_reads_of_ld_so_cache(calls) == 1


def test_python_option_runs_the_interpreter_once(tmp_path):
    python = Path(sys.executable).resolve()
    calls = traced(["--json", "--no-load", "--python", str(python)], tmp_path, env=clean_env())
    runs = [args for _, call, args in calls if call == "execve" and args.startswith(f'"{python}"')]
    assert len(runs) == 1, runs


# ---------------------------------------------------------------------------------------------
# Inputs that name nothing usable are usage errors
# ---------------------------------------------------------------------------------------------


def assert_usage_error(result, *names: str):
    assert result.returncode == 2, describe(result)
    stderr = result.stderr.decode(errors="replace")
    assert "cudadiag: error: " in stderr, describe(result)
    for name in names:
        assert name in stderr, describe(result)
    assert result.stdout == b"", describe(result)


@pytest.mark.parametrize("args", [[], ["--no-load"], ["find", "nvrtc"]])
def test_python_that_does_not_exist_is_a_usage_error(args, tmp_path):
    result = run(["--python", "/nope/python", *args], env=clean_env(), cwd=tmp_path)
    assert_usage_error(result, "--python /nope/python", "does not exist")


def test_python_that_fails_is_a_usage_error(tmp_path):
    result = run(["--no-load", "--python", "/bin/false"], env=clean_env(), cwd=tmp_path)
    assert_usage_error(result, "--python /bin/false", "exited with status 1")


@pytest.mark.parametrize("args", [["--no-load"], ["find", "nvrtc"]])
def test_ld_so_cache_that_does_not_exist_is_a_usage_error(args, tmp_path):
    result = run(["--ld-so-cache", "/nope", *args], env=clean_env(), cwd=tmp_path)
    assert_usage_error(result, "--ld-so-cache /nope", "does not exist")


def test_ld_so_cache_that_is_a_directory_is_a_usage_error(tmp_path):
    result = run(["--no-load", "--ld-so-cache", str(tmp_path)], env=clean_env(), cwd=tmp_path)
    assert_usage_error(result, f"--ld-so-cache {tmp_path}", "not a regular file")


# ---------------------------------------------------------------------------------------------
# Which interpreter `python3` runs
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def system_venv(tmp_path) -> Path:
    base = Path("/usr/bin/python3")
    if not base.exists():
        pytest.skip("no /usr/bin/python3 to make a venv from")
    root = tmp_path / "venv"
    made = subprocess.run([str(base), "-m", "venv", "--without-pip", str(root)], capture_output=True, timeout=60)
    if made.returncode != 0:
        pytest.skip(f"python3 -m venv failed: {made.stderr.decode(errors='replace')[:300]}")
    return root


def primary(doc: dict) -> dict:
    (lead,) = [environment for environment in doc["environment"]["python_environments"] if environment["primary"]]
    assert doc["environment"]["python_environments"][0] is lead
    return lead


def test_virtual_env_that_path_does_not_follow_is_reported(system_venv, tmp_path):
    env = clean_env(VIRTUAL_ENV=str(system_venv))  # PATH=/usr/bin:/bin: a stale shell
    doc = run_report(["--no-load"], env=env, cwd=tmp_path)
    lead = primary(doc)
    assert lead["label"] == "python3 on PATH"
    assert Path(lead["interpreter"]).resolve() == Path("/usr/bin/python3").resolve()
    (finding,) = [f for f in doc["findings"] if f["id"] == "python.virtual_env_inactive"]
    assert finding["severity"] == "warning"
    assert finding["evidence"]["virtual_env"] == str(system_venv)
    assert Path(finding["evidence"]["python3"]).resolve() == Path("/usr/bin/python3").resolve()
    # The venv is still listed, but not searched for CUDA Python's answer.
    venv_entries = [e for e in doc["environment"]["python_environments"] if e["label"] == "VIRTUAL_ENV"]
    assert venv_entries and not venv_entries[0]["primary"]
    text = run(["--no-load", "--no-color"], env=env, cwd=tmp_path)
    assert b"answers for " in text.stdout and b"(what python3 runs here)" in text.stdout, describe(text)


def test_activated_virtual_env_leads_with_no_finding(system_venv, tmp_path):
    env = clean_env(VIRTUAL_ENV=str(system_venv), PATH=f"{system_venv / 'bin'}:/usr/bin:/bin")
    doc = run_report(["--no-load"], env=env, cwd=tmp_path)
    lead = primary(doc)
    assert lead["label"] == "VIRTUAL_ENV"
    assert lead["prefix"] == str(system_venv)
    assert "python.virtual_env_inactive" not in finding_ids(doc)


def test_named_interpreter_is_the_answer_and_virtual_env_is_not_judged(system_venv, tmp_path):
    env = clean_env(VIRTUAL_ENV=str(system_venv))
    doc = run_report(["--no-load", "--python", str(system_venv / "bin" / "python3")], env=env, cwd=tmp_path)
    lead = primary(doc)
    assert lead["label"] == "--python"
    assert lead["prefix"] == str(system_venv)
    assert "python.virtual_env_inactive" not in finding_ids(doc)
