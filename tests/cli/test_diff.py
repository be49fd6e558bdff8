"""`cudadiag diff A B` through the real binary, over pairs of reports the tests make: a changed
driver, NVRTC shadowed by an older copy on LD_LIBRARY_PATH, one finding added; reports against
bundles; and every kind of bad input (exit 2 with a message naming the file)."""

from __future__ import annotations

import gzip
import io
import json
import os
import shutil
import tarfile
from collections import Counter
from pathlib import Path

import pytest

from cudadiag_harness import (SOURCE_DIR, SYSTEM_CTK, clean_env, compile_shared_library, describe, other_schema_errors,
                              parse_report, run)

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or SOURCE_DIR / "build" / "tests" / "fixtures")
H200_REPORT = SOURCE_DIR / "docs" / "examples" / "h200-host-report.json"
AREAS = ["driver", "devices", "components", "verification", "environment", "host", "findings", "selftest"]
#: The variables that steer where libraries come from: a change of one is listed first, as the likely cause.
SEARCH_VARIABLES = {"LD_LIBRARY_PATH", "LD_PRELOAD", "CUDA_PATH", "CUDA_HOME", "CONDA_PREFIX", "VIRTUAL_ENV",
                    "PYTHONPATH", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "PATH"}


def fake_driver(tmp_path: Path, version: str) -> Path:
    """A directory with the fake driver as libcuda.so.<version> and libcuda.so.1 pointing at it."""
    source = FIXTURES / "fake-driver" / "libcuda.so.1"
    if not source.is_file():
        pytest.skip(f"fixture not built: {source}")
    directory = tmp_path / f"driver-{version}"
    directory.mkdir()
    shutil.copy2(source, directory / f"libcuda.so.{version}")
    (directory / "libcuda.so.1").symlink_to(f"libcuda.so.{version}")
    return directory


def make_report(path: Path, env: dict, *args: str) -> dict:
    """Runs `cudadiag --json` (no self-test: it would run on the fake driver's "GPU"), keeps stdout in `path`."""
    result = run(["--json", "--no-selftest", *args], env=env, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result)
    path.write_bytes(result.stdout)
    return doc


def diff(a: Path, b: Path, *args: str):
    return run(["diff", str(a), str(b), *args], timeout=30)


def is_cause(difference: dict) -> bool:
    return difference["area"] == "environment" and difference["subject"] in SEARCH_VARIABLES


def effects(doc: dict) -> list[dict]:
    """The differences after the likely causes (the search variables), which come first."""
    differences = doc["differences"]
    causes = 0
    while causes < len(differences) and is_cause(differences[causes]):
        causes += 1
    return differences[causes:]


def diff_json(a: Path, b: Path) -> dict:
    result = run(["--json", "diff", str(a), str(b)], timeout=30)
    assert result.returncode in (0, 1), describe(result)
    doc = json.loads(result.stdout)
    assert not other_schema_errors("diff.schema.json", doc), other_schema_errors("diff.schema.json", doc)
    assert doc["schema_version"] == 1
    assert result.returncode == (0 if doc["equivalent"] else 1)
    rest = effects(doc)
    assert not any(is_cause(d) for d in rest), \
        f"a search variable after the first difference of another kind: {doc['differences']}"
    ranks = [AREAS.index(d["area"]) for d in rest]
    assert ranks == sorted(ranks), f"areas out of order: {[d['area'] for d in rest]}"
    return doc


def position(doc: dict, area: str, subject: str, aspect_part: str) -> int:
    """The index of the first difference of `area` whose subject is `subject` (for findings: whose
    id is, ignoring the components in brackets) and whose aspect contains `aspect_part`."""
    for index, difference in enumerate(doc["differences"]):
        named = difference["subject"].split(" [")[0] if area == "findings" else difference["subject"]
        if difference["area"] == area and named == subject and aspect_part in difference["aspect"]:
            return index
    pytest.fail(f"no {area}/{subject}/{aspect_part} difference in {json.dumps(doc['differences'], indent=1)[:3000]}")


def base_env(tmp_path: Path, **extra) -> dict:
    return clean_env(CUDA_HOME=str(SYSTEM_CTK), LD_LIBRARY_PATH=str(fake_driver(tmp_path, "580.95.05")),
                     CUDADIAG_FAKE_CUDA="ok", **extra)


def test_two_runs_of_one_machine_are_equivalent(tmp_path):
    env = base_env(tmp_path)
    make_report(tmp_path / "a.json", env)
    make_report(tmp_path / "b.json", env)
    result = diff(tmp_path / "a.json", tmp_path / "b.json")
    assert result.returncode == 0, describe(result)
    assert b"equivalent" in result.stdout
    doc = diff_json(tmp_path / "a.json", tmp_path / "b.json")
    assert doc["equivalent"] is True and doc["differences"] == []


def test_a_changed_driver_is_the_first_difference(tmp_path):
    make_report(tmp_path / "a.json", base_env(tmp_path, CUDADIAG_FAKE_CUDA_VERSION="13000"))
    old = clean_env(CUDA_HOME=str(SYSTEM_CTK), LD_LIBRARY_PATH=str(fake_driver(tmp_path, "575.51.03")),
                    CUDADIAG_FAKE_CUDA="ok", CUDADIAG_FAKE_CUDA_VERSION="12080")
    doc_b = make_report(tmp_path / "b.json", old)
    assert "driver.too_old" in [f["id"] for f in doc_b["findings"]]

    result = diff(tmp_path / "a.json", tmp_path / "b.json")
    assert result.returncode == 1, describe(result)
    text = result.stdout.decode()
    body = text.split("most likely cause first:\n", 1)[1]
    # The variable that points at the other driver is the likely cause; the driver comes next.
    assert body.lstrip().startswith("Likely cause: Environment\n  LD_LIBRARY_PATH"), text
    sections = [line for line in body.splitlines() if line and not line.startswith(" ")]
    assert sections[:2] == ["Likely cause: Environment", "Driver"], sections
    assert "580.95.05 -> 575.51.03" in text
    assert "13.0 -> 12.8" in text

    doc = diff_json(tmp_path / "a.json", tmp_path / "b.json")
    first = effects(doc)[0]
    assert (first["area"], first["subject"], first["aspect"]) == ("driver", "driver", "version")
    assert (first["a"], first["b"]) == ("580.95.05", "575.51.03")
    assert position(doc, "driver", "driver", "CUDA version") < position(doc, "findings", "driver.too_old", "only in B")


def test_nvrtc_shadowed_by_an_older_copy_on_ld_library_path(tmp_path):
    old = tmp_path / "old-nvrtc"
    library = compile_shared_library(old, "libnvrtc.so.13")
    library.rename(old / "libnvrtc.so.13.0.10")
    (old / "libnvrtc.so.13").symlink_to("libnvrtc.so.13.0.10")
    env = base_env(tmp_path)
    make_report(tmp_path / "a.json", env, "--no-load")
    shadowed = dict(env, LD_LIBRARY_PATH=f"{old}:{env['LD_LIBRARY_PATH']}")
    make_report(tmp_path / "b.json", shadowed, "--no-load")

    doc = diff_json(tmp_path / "a.json", tmp_path / "b.json")
    nvrtc = [d for d in doc["differences"] if d["area"] == "components" and d["subject"] == "nvrtc"]
    assert nvrtc, doc["differences"]
    assert any(d["b"] and "13.0.10" in d["b"] for d in nvrtc), nvrtc
    assert any(d["b"] and d["b"].startswith(f"LD_LIBRARY_PATH ({old}/libnvrtc.so.13.0.10)") for d in nvrtc), nvrtc
    # The variable that caused it comes first, entry by entry; then the component difference it causes.
    added = [d for d in doc["differences"] if d["subject"] == "LD_LIBRARY_PATH"]
    assert [(d["aspect"], d["a"], d["b"]) for d in added] == [("entry added", None, str(old))], added
    assert doc["differences"].index(added[0]) == 0 < doc["differences"].index(nvrtc[0])
    text = diff(tmp_path / "a.json", tmp_path / "b.json").stdout.decode()
    assert "nvrtc · " in text and "13.0.10" in text


def test_one_finding_added(tmp_path):
    env = base_env(tmp_path)
    doc_a = make_report(tmp_path / "a.json", env, "--no-load")
    other = tmp_path / "other-toolkit"
    other.mkdir()
    doc_b = make_report(tmp_path / "b.json", dict(env, CUDA_PATH=str(other)), "--no-load")
    assert "env.cuda_path_home_differ" in [f["id"] for f in doc_b["findings"]]
    doc = diff_json(tmp_path / "a.json", tmp_path / "b.json")
    added = [d for d in doc["differences"] if d["area"] == "findings"]
    # The diff lists exactly the findings B has and A lacks. Here that is env.cuda_path_home_differ
    # alone; where the toolkit directory is the only home of a header set (cuDNN's, NCCL's headers
    # under /usr/local/cuda/include and nowhere else), B also finds those out of the search's reach.
    only_in_b = Counter(f["id"] for f in doc_b["findings"]) - Counter(f["id"] for f in doc_a["findings"])
    assert Counter(d["subject"].split(" [")[0] for d in added) == only_in_b, added
    assert all(d["aspect"] == "only in B" and d["a"] is None for d in added), added
    cuda_path = next(d for d in added if d["subject"] == "env.cuda_path_home_differ")
    assert cuda_path["b"].startswith("warning: ")
    assert position(doc, "environment", "CUDA_PATH", "value") < doc["differences"].index(cuda_path)


def test_a_bundle_and_a_report_of_the_same_machine_are_equivalent(tmp_path):
    env = base_env(tmp_path)
    make_report(tmp_path / "report.json", env)
    bundle = tmp_path / "support.tar.gz"
    result = run(["--no-selftest", "bundle", "-o", str(bundle)], env=env, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    result = diff(bundle, tmp_path / "report.json")
    assert result.returncode == 0, describe(result)
    assert b"(bundle)" in result.stdout and b"(report)" in result.stdout


def test_the_gpu_host_against_this_machine(tmp_path):
    make_report(tmp_path / "here.json", clean_env(), "--no-load")
    doc = diff_json(H200_REPORT, tmp_path / "here.json")
    assert not doc["equivalent"]
    assert doc["a"]["hostname"] == "vm"
    assert effects(doc)[0]["area"] in ("driver", "devices")


# ---------------------------------------------------------------------------------------------
# Bad input: exit 2, nothing on stdout, a message naming the file and the problem
# ---------------------------------------------------------------------------------------------


def bad_input(kind: str, tmp_path: Path) -> Path:
    text = H200_REPORT.read_text()
    path = tmp_path / f"{kind}.input"
    if kind == "not-json":
        path.write_text("this is a text file\n")
    elif kind == "truncated":
        path.write_text(text[: len(text) // 3])
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "other-json":
        path.write_text(json.dumps({"name": "not a report", "version": 1}))
    elif kind == "non-utf8":
        path.write_bytes(b'{"schema_version": 1, "tool": {"name": "cudadiag\xff"}}')
    elif kind == "damaged-gzip":
        path.write_bytes(gzip.compress(text.encode())[:200])
    elif kind == "tar-without-report":
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            data = b"hello"
            info = tarfile.TarInfo("bundle/notes.txt")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        path.write_bytes(buffer.getvalue())
    elif kind == "directory":
        path.mkdir()
    elif kind == "missing":
        pass
    return path


@pytest.mark.parametrize("kind, message", [
    ("not-json", "is not JSON"),
    ("truncated", "is truncated JSON"),
    ("empty", "is empty"),
    ("other-json", "not a cudadiag report"),
    ("non-utf8", "is not JSON"),
    ("damaged-gzip", "damaged gzip"),
    ("tar-without-report", "without a report.json"),
    ("directory", "is a directory"),
    ("missing", "cannot read B"),
])
def test_bad_inputs_are_usage_errors_naming_the_file(kind, message, tmp_path):
    path = bad_input(kind, tmp_path)
    result = diff(H200_REPORT, path)
    assert result.returncode == 2, describe(result)
    assert result.stdout == b""
    stderr = result.stderr.decode()
    assert message in stderr, stderr
    assert str(path) in stderr, stderr


def test_reports_of_different_schema_versions_are_refused(tmp_path):
    newer = json.loads(H200_REPORT.read_text())
    newer["schema_version"] = 2
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(newer))
    result = diff(H200_REPORT, path)
    assert result.returncode == 2, describe(result)
    stderr = result.stderr.decode()
    assert "has schema_version 1" in stderr and "has schema_version 2" in stderr, stderr
    assert "cannot be compared" in stderr


def test_diff_needs_two_files():
    result = run(["diff", str(H200_REPORT)])
    assert result.returncode == 2, describe(result)
