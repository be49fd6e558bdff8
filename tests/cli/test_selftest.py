"""`cudadiag selftest` through the real binary on a machine without a GPU: the jit tier compiles and
links with the real NVRTC and nvJitLink against the real CCCL headers; everything that needs a GPU
is skipped with its reason (or failed, when a driver claims a device it cannot use); bad arguments
are usage errors; a hung driver costs at most the timeout. Every JSON validates against the schema.
On the GPU host the same command is checked by tests/gpu (label gpu)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, describe, finding_ids, parse_report, run

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
FAKE_DRIVER = FIXTURES / "fake-driver"
GPU_TESTS = {"ptx", "reduce", "sort", "pcie", "compute", "memory", "ipc", "green_ctx", "libs", "checkpoint"}


def selftest_doc(*args, env=None, timeout_s=120, allowed=(0, 1)) -> dict:
    result = run(["selftest", "--json", *args], env=env, timeout=timeout_s)
    assert result.returncode in allowed, result.stderr[-2000:]
    return parse_report(result)


def by_key(doc: dict) -> dict[str, dict]:
    return {test["key"]: test for test in doc["selftest"]["tests"]}


def fake_driver_env(behaviour: str) -> dict:
    if not FAKE_DRIVER.is_dir():
        pytest.skip(f"fixture not built: {FAKE_DRIVER}")
    return clean_env(LD_LIBRARY_PATH=str(FAKE_DRIVER), CUDA_HOME=str(SYSTEM_CTK), CUDADIAG_FAKE_CUDA=behaviour)


def builtins_reach_nvrtc(nvrtc: str, builtins: str, env: dict) -> bool:
    """Whether NVRTC at `nvrtc`, loaded by CUDA Python, finds `builtins` (libnvrtc-builtins.so.X.Y):
    cuda-pathfinder 1.9+ preloads the sibling named from NVRTC's real file (libnvrtc.so.X.Y.Z), or
    else the loader finds it by name (ld.so.cache, LD_LIBRARY_PATH, the default directories)."""
    real = Path(os.path.realpath(nvrtc))
    parts = real.name.removeprefix("libnvrtc.so.").split(".")
    if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit() and \
            (real.parent / f"libnvrtc-builtins.so.{parts[0]}.{parts[1]}").is_file():
        return True
    probe = subprocess.run([sys.executable, "-c", f"import ctypes; ctypes.CDLL({builtins!r})"], env=env,
                           capture_output=True, timeout=60, check=False)
    return probe.returncode == 0


@pytest.mark.skipif(not (SYSTEM_CTK / "include" / "cccl").is_dir(), reason="needs the CUDA 13 toolkit's NVRTC and CCCL")
def test_without_a_gpu_the_jit_tier_compiles_and_links_with_the_real_toolkit():
    env = clean_env(CUDA_HOME=str(SYSTEM_CTK))
    doc = selftest_doc("--only", "jit", env=env)
    selftest = doc["selftest"]
    assert selftest["ran"] is True
    jit = by_key(doc)["jit"]
    builtins = f"libnvrtc-builtins.so.{jit['details']['nvrtc_version']}"
    nvrtc = next(c for c in doc["components"] if c["kind"] == "dynamic_lib" and c["name"] == "nvrtc")["selected"]["path"]
    if not builtins_reach_nvrtc(nvrtc, builtins, env):
        # A toolkit whose NVRTC is named libnvrtc.so.13 (no X.Y.Z) off the loader's path: CUDA
        # Python's compiles fail too, and the report says why, as an error.
        assert jit["status"] == "fail", jit
        assert "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE" in jit["reason"] and builtins in jit["reason"], jit
        [finding] = [f for f in doc["findings"] if f["id"] == "nvrtc.builtins_not_on_search_path"]
        assert finding["severity"] == "error" and finding["evidence"]["cuda_python_preload"] is None, finding
        return
    assert jit["status"] == "pass", jit
    assert jit["device"] is None
    assert "compile and link verified" in jit["reason"]
    routes = jit["details"]["routes"]
    assert {name: route["status"] for name, route in routes.items()} == {"ptx": "built", "cubin": "built", "lto": "built"}
    assert routes["ptx"]["ptx_version"].startswith(("9.", "8."))
    assert "include" in jit["details"]["cccl_include"]
    metrics = {m["name"]: m["value"] for m in jit["metrics"]}
    assert set(metrics) == {"nvrtc_compile_ms", "nvrtc_lto_compile_ms", "nvjitlink_ms"}
    assert all(value > 0 for value in metrics.values()), metrics
    assert selftest["score"]["value"] is None and selftest["score"]["correctness_passed"] is True


def test_without_a_gpu_every_gpu_test_is_skipped_with_its_reason():
    doc = selftest_doc("--only", ",".join(sorted(GPU_TESTS)), env=clean_env())
    tests = by_key(doc)
    assert set(tests) == GPU_TESTS
    for key, test in tests.items():
        assert test["status"] == "skip", (key, test)
        assert test["reason"].startswith("no GPU"), (key, test["reason"])
    assert doc["selftest"]["status"] == "skip"
    assert "selftest.failed" not in finding_ids(doc)


def test_the_default_report_runs_no_selftest_without_a_gpu_and_says_why():
    result = run(["--json"], env=clean_env(), timeout=60)
    doc = parse_report(result)
    assert doc["selftest"]["ran"] is False
    assert doc["selftest"]["skipped_reason"].startswith("no GPU")
    assert run(["--json", "--no-load"], env=clean_env()).returncode in (0, 1)
    assert parse_report(run(["--json", "--no-load"], env=clean_env()))["selftest"] is None


def test_a_driver_that_claims_a_device_it_cannot_use_fails_the_gpu_tests():
    # The fake driver initialises and lists one GPU but has no context or module entry points.
    doc = selftest_doc("--only", "ptx,green_ctx", env=fake_driver_env("ok"), allowed=(1,))
    for key, test in by_key(doc).items():
        assert test["status"] == "fail", (key, test)
        assert "cannot use device 0" in test["reason"]
    assert doc["selftest"]["status"] == "fail"
    assert doc["selftest"]["score"]["correctness_passed"] is False
    assert "selftest.failed" in finding_ids(doc)
    assert doc["summary"]["exit_code"] == 1


def test_a_device_that_does_not_exist_is_a_usage_error_naming_it():
    """`--device N` names an input; a GPU the driver does not report is exit 2, not a report."""
    result = run(["selftest", "--json", "--device", "5", "--only", "ptx"], env=fake_driver_env("ok"))
    assert result.returncode == 2, describe(result)
    assert b"cudadiag: error: --device 5: there is no GPU 5 (the driver reports 1 GPU" in result.stderr


def test_a_driver_that_hangs_in_cuinit_costs_the_timeout_and_nothing_runs_on_it():
    started = time.monotonic()
    doc = selftest_doc("--only", "ptx", "--timeout", "2", env=fake_driver_env("hang"), timeout_s=60)
    elapsed = time.monotonic() - started
    assert elapsed < 10, elapsed
    (test,) = doc["selftest"]["tests"]
    assert test["status"] == "skip"
    assert "timeout" in test["reason"]


@pytest.mark.parametrize("args,message", [
    (["--only", "ptx,warp_drive"], "unknown self-test 'warp_drive'"),
    (["--device", "first"], "--device takes a device ordinal"),
    (["--level", "extreme"], "extreme"),
])
def test_bad_arguments_are_usage_errors_naming_the_bad_token(args, message):
    result = run(["selftest", *args], env=clean_env())
    assert result.returncode == 2
    assert message in result.stderr.decode(errors="replace")


def test_selftest_refuses_no_load():
    result = run(["--no-load", "selftest"], env=clean_env())
    assert result.returncode == 2
    assert b"--no-load" in result.stderr


def test_the_text_output_lists_every_test_with_its_status():
    result = run(["--no-color", "selftest", "--only", "ptx,sort"], env=clean_env(), timeout=60)
    assert result.returncode in (0, 1)
    text = result.stdout.decode()
    assert "GPU self-test (quick)" in text
    for key in ("ptx", "sort"):
        assert f"  {key}" in text
    assert "skip" in text


def test_selftest_takes_the_ci_gates(tmp_path):
    junit = tmp_path / "selftest.xml"
    result = run(["selftest", "--json", "--only", "ptx,sort", "--require", "selftest.sort>=30Gkeys", "--junit", str(junit)],
                 env=clean_env(), timeout=60)
    doc = parse_report(result)
    assert result.returncode == 1
    unmet = [f for f in doc["findings"] if f["id"] == "policy.unmet"]
    assert [f["evidence"]["requirement"] for f in unmet] == ["selftest.sort>=30Gkeys"]
    xml = junit.read_text()
    assert "cudadiag.selftest" in xml and "sort" in xml
