"""Verification through the real binary: libraries loaded in isolated workers, with a fake driver
(tests/fixtures/fake_libcuda.c, behaviour chosen by CUDADIAG_FAKE_CUDA), the toolkit's real stub,
real NVRTC/nvJitLink from the toolkit and from pip wheels. Every run must finish inside its
timeout with a schema-valid report, whatever the driver does."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from cudadiag_harness import (
    SYSTEM_CTK,
    clean_env,
    component,
    finding_ids,
    parse_report,
    run,
    venv,
)

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
FAKE_DRIVER = FIXTURES / "fake-driver"
FAKE_DRIVER_NOPROC = FIXTURES / "fake-driver-noproc"
FAKE_NVML = FIXTURES / "fake-nvml"


def require(path: Path) -> Path:
    if not path.is_dir():
        pytest.skip(f"fixture not built: {path}")
    return path


def report_with(behaviour: str | None, *args, ld_path: list[Path] | None = None, timeout_s: float = 30, **env) -> tuple[dict, float]:
    dirs = ld_path if ld_path is not None else [require(FAKE_DRIVER)]
    environment = clean_env(LD_LIBRARY_PATH=":".join(str(d) for d in dirs), CUDA_HOME=str(SYSTEM_CTK), **env)
    if behaviour is not None:
        environment["CUDADIAG_FAKE_CUDA"] = behaviour
    started = time.monotonic()
    # The report's quick self-test would run on the fake driver's "GPU"; it has its own tests
    # (test_selftest.py), so these stay about verification.
    result = run(["--json", "--no-selftest", *args], env=environment, timeout=timeout_s)
    elapsed = time.monotonic() - started
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return parse_report(result), elapsed


def step(doc: dict, name: str) -> dict:
    for entry in doc["verification"]["steps"]:
        if entry["component"] == name:
            return entry
    pytest.fail(f"no verification step for {name}: {[s['component'] for s in doc['verification']['steps']]}")


def finding(doc: dict, finding_id: str) -> dict:
    for entry in doc["findings"]:
        if entry["id"] == finding_id:
            return entry
    pytest.fail(f"no finding {finding_id}; have {finding_ids(doc)}")


def test_a_working_driver_lists_its_devices_with_peak_bandwidth():
    doc, _ = report_with("ok")
    driver = step(doc, "cuda")
    assert driver["status"] == "ok"
    assert driver["result"]["init"]["code"] == 0
    assert len(doc["devices"]) == 1
    device = doc["devices"][0]
    assert device["sm_count"] == 132
    assert abs(device["peak_bandwidth_gbps"] - 4814) < 5
    ids = finding_ids(doc)
    assert not {"driver.missing", "driver.stub", "driver.init_failed", "verify.crashed"} & set(ids), ids


@pytest.mark.parametrize("behaviour,phase", [("crash", "cuInit"), ("crash-on-load", "dlopen")])
def test_a_crashing_driver_yields_a_finished_report(behaviour, phase):
    doc, elapsed = report_with(behaviour)
    driver = step(doc, "cuda")
    assert driver["status"] == "crashed"
    assert driver["signal"] == 11
    crashed = finding(doc, "verify.crashed")
    assert "cuda" in crashed["components"]
    assert crashed["evidence"]["phase"] == phase
    assert doc["summary"]["exit_code"] == 1
    # Every other library still has its own outcome (NVRTC and nvJitLink call into the driver, so
    # a driver that crashes may take their workers down too: each is reported, none is lost).
    assert {s["component"] for s in doc["verification"]["steps"]} >= {"cuda", "cudart", "nvrtc", "nvJitLink"}
    assert elapsed < 20


@pytest.mark.parametrize("behaviour", ["hang", "hang-on-load"])
def test_a_hanging_driver_is_killed_at_the_timeout(behaviour):
    doc, elapsed = report_with(behaviour, "--timeout", "2")
    assert step(doc, "cuda")["status"] == "timeout"
    assert "cuda" in finding(doc, "verify.timeout")["components"]
    assert elapsed < 12, f"took {elapsed:.1f}s with --timeout 2"


@pytest.mark.parametrize("code,name", [(35, "cudaErrorInsufficientDriver"), (100, "CUDA_ERROR_NO_DEVICE"),
                                       (803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
                                       (804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"), (999, "CUDA_ERROR_UNKNOWN")])
def test_cuinit_errors_are_decoded(code, name):
    doc, _ = report_with(f"error:{code}")
    failed = finding(doc, "driver.init_failed")
    assert failed["evidence"]["code"] == code
    assert failed["evidence"]["name"] == name
    assert doc["devices"] == []


def test_every_cuinit_error_code_gives_a_finished_report():
    for code in (1, 2, 3, 4, 34, 46, 101, 200, 222, 304, 500, 801, 12345):
        doc, _ = report_with(f"error:{code}")
        ids = finding_ids(doc)
        assert "driver.init_failed" in ids or "driver.stub" in ids, (code, ids)


def test_the_toolkit_stub_as_libcuda_so_1_is_driver_stub(tmp_path):
    stub = next((p for p in (SYSTEM_CTK / "lib64/stubs/libcuda.so", SYSTEM_CTK / "lib/stubs/libcuda.so") if p.is_file()), None)
    if stub is None:
        pytest.skip("no toolkit stub libcuda on this machine")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    (stubs / "libcuda.so.1").symlink_to(stub)
    doc, _ = report_with(None, ld_path=[stubs])
    stub_finding = finding(doc, "driver.stub")
    assert stub_finding["severity"] == "error"
    assert step(doc, "cuda")["result"]["init"]["code"] == 34


def test_an_old_driver_gives_too_old_and_ptx_newer_than_driver():
    doc, _ = report_with("ok", CUDADIAG_FAKE_CUDA_VERSION="12080")
    ids = finding_ids(doc)
    assert "driver.too_old" in ids
    ptx = finding(doc, "nvrtc.ptx_newer_than_driver")
    assert ptx["evidence"]["driver_ptx_isa"] == "8.7"


def test_a_driver_without_cuGetProcAddress_is_reported():
    doc, _ = report_with("ok", ld_path=[require(FAKE_DRIVER_NOPROC)])
    missing = finding(doc, "verify.missing_symbols")
    assert "cuGetProcAddress_v2" in " ".join(missing["evidence"]["missing_symbols"])


def test_no_load_runs_no_worker():
    doc, _ = report_with("crash", "--no-load")
    assert doc["verification"]["ran"] is False
    assert doc["verification"]["steps"] == []
    assert "verify.crashed" not in finding_ids(doc)


def test_nvml_health_is_merged_into_devices():
    doc, _ = report_with("ok", ld_path=[require(FAKE_DRIVER), require(FAKE_NVML)])
    assert step(doc, "nvml")["status"] == "ok"
    device = doc["devices"][0]
    assert "nvml" in device, device


def test_api_versions_match_file_versions_for_the_toolkit():
    doc, _ = report_with("ok")
    for name in ("nvrtc", "nvJitLink"):
        result = step(doc, name)["result"]
        selected = component(doc, name)["selected"]
        assert selected["version"].startswith(result["version"] + "."), (name, result["version"], selected["version"])
    assert "lib.version_disagrees" not in finding_ids(doc)


def test_api_versions_match_wheel_metadata_in_the_wheels_venv():
    wheels = venv("wheels")
    environment = wheels.activated_env(clean_env(LD_LIBRARY_PATH=str(require(FAKE_DRIVER)), CUDADIAG_FAKE_CUDA="ok"))
    doc = parse_report(run(["--json"], env=environment))
    for name in ("nvrtc", "nvJitLink"):
        result = step(doc, name)["result"]
        selected = component(doc, name)["selected"]
        assert selected["version_source"] == "wheel_metadata"
        assert selected["version"].startswith(result["version"] + "."), (name, result, selected["version"])
    assert "nvjitlink.version_mismatch" not in finding_ids(doc)
    assert step(doc, "nvrtc")["result"]["builtins"]["loadable"] is True


def test_an_older_nvjitlink_wheel_next_to_nvrtc_13_is_a_mismatch():
    mismatch = venv("mismatch")
    environment = mismatch.activated_env(clean_env(LD_LIBRARY_PATH=str(require(FAKE_DRIVER)), CUDADIAG_FAKE_CUDA="ok"))
    doc = parse_report(run(["--json"], env=environment))
    assert component(doc, "nvJitLink")["selected"]["version"].startswith("12.")
    found = finding(doc, "nvjitlink.version_mismatch")
    assert found["evidence"]["nvjitlink"].startswith("12.")
    assert found["evidence"]["nvrtc"].startswith("13.")


def test_an_nvrtc_without_its_builtins_is_reported(tmp_path):
    real = SYSTEM_CTK / "lib64" / "libnvrtc.so.13"
    if not real.exists():
        pytest.skip("no toolkit nvrtc")
    lonely = tmp_path / "lib"
    lonely.mkdir()
    target = lonely / "libnvrtc.so.13"
    try:
        os.link(os.path.realpath(real), target)
    except OSError:
        shutil.copyfile(os.path.realpath(real), target)
    environment = clean_env(LD_LIBRARY_PATH=f"{lonely}:{require(FAKE_DRIVER)}", CUDADIAG_FAKE_CUDA="ok")
    doc = parse_report(run(["--json"], env=environment))
    assert step(doc, "nvrtc")["path"] == str(target)
    found = finding(doc, "nvrtc.builtins_missing")
    assert found["evidence"]["builtins"]["loadable"] is False
