"""`cudadiag inspect --pid PID` through the real binary, against a live process that has two
different copies of one CUDA library mapped (tests/fixtures/two_copies.c)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import other_schema_errors, run

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
PROGRAM = FIXTURES / "cudadiag_two_copies"
LIBRARY = FIXTURES / "libcudadiag_two_copies_lib.so"


@pytest.fixture
def two_copies(tmp_path):
    if not PROGRAM.is_file() or not LIBRARY.is_file():
        pytest.skip(f"fixture not built: {PROGRAM}")
    copies = []
    for version in ("13.0.96", "13.1.80"):
        directory = tmp_path / version
        directory.mkdir()
        copy = directory / f"libcudart.so.{version}"
        shutil.copyfile(LIBRARY, copy)
        copies.append(copy)
    process = subprocess.Popen([str(PROGRAM), *map(str, copies)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert process.stdout.readline().strip() == b"ready"
        yield process.pid, copies
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_two_mapped_copies_of_cudart_are_a_duplicate(two_copies):
    pid, copies = two_copies
    result = run(["inspect", "--pid", str(pid), "--json"])
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert not other_schema_errors("inspect.schema.json", doc), other_schema_errors("inspect.schema.json", doc)
    assert doc["schema_version"] == 1 and doc["tool"]["name"] == "cudadiag"
    assert doc["pid"] == pid
    mapped = {entry["path"] for entry in doc["components"] if entry["name"] == "cudart"}
    assert mapped == {str(copy) for copy in copies}
    duplicate = next(f for f in doc["findings"] if f["id"] == "process.duplicate_lib")
    assert duplicate["severity"] == "error"
    text = run(["inspect", "--pid", str(pid), "--no-color"])
    assert b"process.duplicate_lib" in text.stdout


def test_a_pid_that_does_not_exist_is_a_clear_message():
    pid_max = int(Path("/proc/sys/kernel/pid_max").read_text())
    result = run(["inspect", "--pid", str(pid_max + 1)])
    assert result.returncode == 1
    assert b"no process with PID" in result.stderr
    assert result.stdout == b""


def test_this_shell_has_no_cuda_library_mapped():
    result = run(["inspect", "--pid", str(os.getpid()), "--json"])
    doc = json.loads(result.stdout)
    assert not other_schema_errors("inspect.schema.json", doc), other_schema_errors("inspect.schema.json", doc)
    assert result.returncode == 0
    assert all(f["severity"] != "error" for f in doc["findings"])
