"""The self-test on a GPU someone else is using, through the real binary with the fake driver's device
(tests/fixtures/fake_libcuda_device.c: memory, streams and the ptx and memory kernels on the CPU) and
the fake NVML's process list:

- contention (the legacy default stream's work runs late, as on a busy GPU) causes no false
  corruption: every copy, fill and read-back is ordered on the test's own stream;
- the memory test still catches an injected error under contention, says persistent or transient;
- another process on the GPU is named by gpu.busy (pid, name, memory), never cudadiag's own
  processes; its severity follows --context (info, warning in ci/fleet) and --exclusive (error);
- figures taken while it ran are not blamed on the GPU (no selftest.slow, no gpu.throttled) and are
  marked busy in the score.

Every JSON validates against the schema (parse_report)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, finding_ids, parse_report, run

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
FAKE_DRIVER = FIXTURES / "fake-driver"
FAKE_NVML = FIXTURES / "fake-nvml"


def device_env(**extra: str) -> dict:
    """The fake driver with a 1 GiB device (768 MiB free) and the fake NVML."""
    if not (FAKE_DRIVER.is_dir() and FAKE_NVML.is_dir()):
        pytest.skip(f"fixtures not built: {FAKE_DRIVER}, {FAKE_NVML}")
    return clean_env(LD_LIBRARY_PATH=f"{FAKE_DRIVER}:{FAKE_NVML}", CUDA_HOME=str(SYSTEM_CTK),
                     CUDADIAG_FAKE_CUDA="ok", CUDADIAG_FAKE_CUDA_GPU_MB="1024", **extra)


def selftest(*args: str, env: dict, allowed=(0, 1)) -> dict:
    result = run(["selftest", "--json", *args], env=env, timeout=300)
    assert result.returncode in allowed, result.stderr[-3000:]
    return parse_report(result)


def only_test(doc: dict) -> dict:
    (test,) = doc["selftest"]["tests"]
    return test


def findings_with(doc: dict, finding_id: str) -> list[dict]:
    return [f for f in doc["findings"] if f["id"] == finding_id]


@pytest.mark.parametrize("contention", ["0", "1"])
def test_the_ptx_copy_check_is_right_on_an_idle_and_on_a_busy_gpu(contention):
    doc = selftest("--only", "ptx", env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION=contention), allowed=(0,))
    test = only_test(doc)
    assert test["status"] == "pass", test
    assert test["details"]["smid_probe"]["sms_touched"] == 132
    assert "copy_check" not in test["details"]
    assert "selftest.failed" not in finding_ids(doc)


def test_a_bad_word_the_copy_writes_is_named_and_called_persistent():
    doc = selftest("--only", "ptx", env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION="1", CUDADIAG_FAKE_CUDA_CORRUPT="77"),
                   allowed=(1,))
    test = only_test(doc)
    assert test["status"] == "fail"
    check = test["details"]["copy_check"]
    assert check["first_index"] == 77 and check["words_differing"] == 1
    assert check["value"] == check["expected"] ^ 1
    assert check["words_checked"] == (1 << 24) * 4
    assert check["persistent"] is True and check["repeat"]["words_differing"] == 1
    assert "word 77 is" in test["reason"] and "1 of 67108864 words differ" in test["reason"]
    assert "persistent" in test["reason"]


def test_a_transient_bad_word_is_reported_as_transient_and_still_fails():
    doc = selftest("--only", "ptx", env=device_env(CUDADIAG_FAKE_CUDA_CORRUPT="5:transient"), allowed=(1,))
    test = only_test(doc)
    assert test["status"] == "fail"
    assert test["details"]["copy_check"]["persistent"] is False
    assert "transient: a repeat on a fresh buffer was right" in test["reason"]
    assert "selftest.failed" in finding_ids(doc)


@pytest.mark.parametrize("contention", ["0", "1"])
def test_the_memory_test_catches_an_injected_error_under_contention(contention):
    doc = selftest("--only", "memory", "--level", "full",
                   env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION=contention, CUDADIAG_FAKE_CUDA_CORRUPT="4097"),
                   allowed=(1,))
    test = only_test(doc)
    assert test["status"] == "fail", test
    memory = test["details"]["memory"]
    # Word 4097 is read wrong by each of the 9 check passes (4 walking ones, 3 moving inversions, 2 random).
    assert memory["wrong_words"] == 9
    assert memory["first_wrong_words"][0]["expected"] != memory["first_wrong_words"][0]["found"]
    assert memory["repeat"] == {"wrong_words": 9, "first_address": memory["first_wrong_words"][0]["address"],
                                "persistent": True}
    assert "persistent" in test["reason"]
    [finding] = findings_with(doc, "gpu.memory_errors")
    assert finding["severity"] == "error" and finding["evidence"]["wrong_words"] == 9


def test_a_transient_memory_error_is_reported_as_transient_and_still_fails():
    doc = selftest("--only", "memory", "--level", "full",
                   env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION="1", CUDADIAG_FAKE_CUDA_CORRUPT="12:transient"),
                   allowed=(1,))
    test = only_test(doc)
    assert test["status"] == "fail"
    assert test["details"]["memory"]["wrong_words"] == 9
    assert test["details"]["memory"]["repeat"] == {"wrong_words": 0, "first_address": None, "persistent": False}
    assert "transient: the patterns run again found none" in test["reason"]
    assert findings_with(doc, "gpu.memory_errors")


@pytest.mark.parametrize("contention", ["0", "1"])
def test_the_memory_tests_own_fault_injection_is_caught_exactly_under_contention(contention):
    """CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS: the corrupting kernel (the same one the GPU run uses)
    flips 7 words after the first fill, on the test's stream: the walking-ones check counts exactly
    7, the repeat pass none (transient), and the result and the finding say they were injected."""
    doc = selftest("--only", "memory", "--level", "full",
                   env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION=contention, CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS="7"),
                   allowed=(1,))
    test = only_test(doc)
    assert test["status"] == "fail", test
    memory = test["details"]["memory"]
    assert memory["wrong_words"] == 7 and memory["injected_words"] == 7
    assert len(memory["first_wrong_words"]) == 7
    assert all(int(w["found"], 16) == int(w["expected"], 16) ^ 1 for w in memory["first_wrong_words"])
    assert memory["repeat"] == {"wrong_words": 0, "first_address": None, "persistent": False}
    assert "7 of them injected on purpose" in test["reason"]
    [finding] = findings_with(doc, "gpu.memory_errors")
    assert finding["evidence"]["injected_words"] == 7
    assert "flipped on purpose by CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS" in finding["message"]


@pytest.mark.parametrize("value", ["0", "-3", "4097", "7x", ""])
def test_an_injection_value_outside_1_to_4096_injects_nothing(value):
    doc = selftest("--only", "memory", "--level", "full",
                   env=device_env(CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS=value), allowed=(0,))
    memory = only_test(doc)["details"]["memory"]
    assert memory["wrong_words"] == 0 and memory["injected_words"] == 0


def test_a_clean_memory_test_under_contention_passes():
    doc = selftest("--only", "memory", "--level", "full", env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION="1"),
                   allowed=(0,))
    test = only_test(doc)
    assert test["status"] == "pass", test
    assert test["details"]["memory"]["wrong_words"] == 0
    assert "repeat" not in test["details"]["memory"]


@pytest.fixture
def competitor():
    """A process of someone else's: NVML lists it on the GPU."""
    process = subprocess.Popen(["sleep", "300"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.parametrize("args,extra,severity,code", [
    ([], {}, "info", 0),
    (["--context", "ci"], {}, "warning", 0),
    ([], {"CI": "true"}, "warning", 0),
    ([], {"SLURM_JOB_ID": "4711"}, "warning", 0),
    (["--context", "fleet"], {}, "warning", 0),
    (["--exclusive"], {}, "error", 1),
    (["--context", "interactive"], {"KUBERNETES_SERVICE_HOST": "10.96.0.1"}, "info", 0),
])
def test_another_process_on_the_gpu_is_named_and_its_figures_not_blamed(competitor, args, extra, severity, code):
    # NVML lists the worker (self), the cudadiag process (parent) and the competitor; under
    # contention the copy runs at 40% of its healthy figure.
    env = device_env(CUDADIAG_FAKE_CUDA_CONTENTION="1",
                     CUDADIAG_FAKE_NVML_PROCESSES=f"self:512,parent:64,{competitor.pid}:2048",
                     CUDADIAG_FAKE_NVML_UTILIZATION="97", **extra)
    doc = selftest("--only", "ptx", *args, env=env, allowed=(code,))
    test = only_test(doc)
    assert test["status"] == "pass", test
    busy = test["details"]["busy"]
    assert busy["known"] is True and busy["utilization_before_pct"] == 97
    assert [p["pid"] for p in busy["others"]] == [competitor.pid]  # never cudadiag's own
    assert busy["others"][0]["name"] == "sleep" and busy["others"][0]["used_memory_bytes"] == 2048 << 20
    [finding] = findings_with(doc, "gpu.busy")
    assert finding["severity"] == severity
    assert f"pid {competitor.pid} (sleep) using 2048 MiB" in finding["message"]
    assert "ptx.copy_gbps 43%" in finding["message"]  # 40% of the healthy 4260 GB/s, against the quick 4000
    assert finding["evidence"]["tests"] == ["ptx"]
    score = doc["selftest"]["score"]
    assert score["busy_excluded"] >= 1 and all(c["busy"] for c in score["components"])
    assert score["value"] is None  # every figure was taken while busy
    assert "selftest.slow" not in finding_ids(doc) and "gpu.throttled" not in finding_ids(doc)
    assert doc["selftest"]["exclusive"] is ("--exclusive" in args)
    assert doc["summary"]["exit_code"] == code


def test_the_same_slow_figure_on_a_gpu_nobody_else_uses_is_selftest_slow():
    """Without another process in NVML's list, a figure at 40% is the GPU's own: selftest.slow."""
    doc = selftest("--only", "ptx", env=device_env(CUDADIAG_FAKE_CUDA_CONTENTION="1"), allowed=(0,))
    assert "gpu.busy" not in finding_ids(doc)
    assert only_test(doc)["details"]["busy"] == {"known": True, "unknown_reason": None, "others": [],
                                                  "utilization_before_pct": 0}
    [slow] = findings_with(doc, "selftest.slow")
    assert "ptx.copy_gbps" in slow["message"]
    assert doc["selftest"]["score"]["busy_excluded"] == 0


def test_when_nvml_cannot_list_processes_busy_is_unknown_not_idle():
    doc = selftest("--only", "ptx", env=device_env(CUDADIAG_FAKE_NVML_PROCESSES="notsupported"), allowed=(0,))
    busy = only_test(doc)["details"]["busy"]
    assert busy["known"] is False and "NVML_ERROR_NOT_SUPPORTED" in busy["unknown_reason"]
    assert "gpu.busy" not in finding_ids(doc)
