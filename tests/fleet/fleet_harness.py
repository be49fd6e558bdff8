"""Helpers shared by the fleet tests: node reports made by the real binary on this machine, and the
fleet JSON schema."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cudadiag_harness import FIXTURES, SOURCE_DIR, SYSTEM_CTK, clean_env, describe, parse_report, run

FLEET_SCHEMA = SOURCE_DIR / "docs" / "schema" / "fleet.schema.json"

_fleet_validator = None


def fleet_schema_errors(doc: dict) -> list[str]:
    global _fleet_validator
    if _fleet_validator is None:
        import jsonschema

        schema = json.loads(FLEET_SCHEMA.read_text())
        jsonschema.Draft202012Validator.check_schema(schema)
        _fleet_validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}"
            for e in _fleet_validator.iter_errors(doc)]


def parse_fleet(result) -> dict:
    """stdout of `cudadiag --json fleet ...`: one JSON document, valid against the fleet schema, whose
    summary.exit_code is the process's exit status."""
    try:
        doc = json.loads(result.stdout)
    except ValueError as error:
        pytest.fail(f"fleet --json printed no JSON document ({error})\n{describe(result)}")
    problems = fleet_schema_errors(doc)
    if doc.get("summary", {}).get("exit_code") != result.returncode:
        problems.append(f"summary.exit_code {doc.get('summary', {}).get('exit_code')} != exit {result.returncode}")
    assert not problems, "\n".join(problems[:20]) + "\n" + describe(result)
    return doc


def fake_driver_dir(tmp_path: Path, version: str) -> Path:
    """The fake driver as libcuda.so.<version> with libcuda.so.1 pointing at it (the driver version
    cudadiag reads from the file name)."""
    source = FIXTURES / "fake-driver" / "libcuda.so.1"
    if not source.is_file():
        pytest.skip(f"fixture not built: {source}")
    directory = tmp_path / f"driver-{version}"
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, directory / f"libcuda.so.{version}")
    link = directory / "libcuda.so.1"
    if not link.exists():
        link.symlink_to(f"libcuda.so.{version}")
    return directory


def node_env(tmp_path: Path, driver_version: str = "580.95.05", extra_library_path: Path | None = None, **extra) -> dict:
    """A node's environment: the fake driver (as that version) and the system toolkit as CUDA_HOME;
    `extra_library_path` goes first on LD_LIBRARY_PATH (a shadowing copy)."""
    driver = fake_driver_dir(tmp_path, driver_version)
    path = f"{extra_library_path}:{driver}" if extra_library_path else str(driver)
    return clean_env(**{"CUDA_HOME": str(SYSTEM_CTK), "LD_LIBRARY_PATH": path, "CUDADIAG_FAKE_CUDA": "ok", **extra})


def shadow_nvjitlink_dir(tmp_path: Path) -> Path:
    """An old CUDA 12.2 lib directory as toolkits lay it out: libnvJitLink.so.12.2.140 (the CUDA 12.2
    nvJitLink of tests/fixtures/fake_nvjitlink12.c) with the libnvJitLink.so.12 link to it. Put first
    on LD_LIBRARY_PATH, it shadows the CUDA 13 nvJitLink of a node whose loader cache lacks the toolkit."""
    source = FIXTURES / "fake-nvjitlink12" / "libnvJitLink.so.12"
    if not source.is_file():
        pytest.skip(f"fixture not built: {source}")
    directory = tmp_path / "cuda-12.2-lib"
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(source, directory / "libnvJitLink.so.12.2.140")
    link = directory / "libnvJitLink.so.12"
    if not link.exists():
        link.symlink_to("libnvJitLink.so.12.2.140")
    return directory


def make_node_report(path: Path, env: dict, hostname: str, *args: str) -> dict:
    """`cudadiag --json --no-selftest` on this machine under `env`, saved to `path` with host.hostname
    set to `hostname` (the tests play several nodes on one machine)."""
    result = run(["--json", "--no-selftest", *args], env=env, timeout=60)
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result)
    doc["host"]["hostname"] = hostname
    path.write_text(json.dumps(doc, indent=2))
    return doc
