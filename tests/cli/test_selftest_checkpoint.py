"""The checkpoint self-test through the real binary with the fake driver's device and its process
checkpoint calls (tests/fixtures/fake_libcuda_device.c: each process's checkpoint state in a file of
the test's own directory, shared by the controller's and the target's fake driver). Every branch:

- unsupported: a driver older than CUDA 12.8, a checkpoint entry point missing, CUDA_ERROR_NOT_SUPPORTED
  (checkpoint.unsupported, info; the test skips);
- each step failing (checkpoint.failed naming the step, the code and what it means; no selftest.failed),
  a lock that times out on a busy target, a restore that is never retried;
- a call that succeeds but leaves the wrong state (checkpoint.failed at that step);
- a target that cannot prepare its memory or ends before it is ready (checkpoint.failed at 'target');
- corrupt after restore: a flipped word, a changed context, a kernel that writes wrong after the
  restore, a restored context that fails its first call (checkpoint.corrupt, error); a target that
  ends before it answers (checkpoint.failed at 'verify');
- a target that hangs after the restore, and a controller killed mid-cycle: bounded, and no process
  of the run is left behind;
- success: each step's ms, the GiB/s figures, and the target parked (checkpointed) before it ended;
- NVML still listing the checkpointed target's memory (the fake NVML lists what the fake driver
  records as checkpointed): checkpoint.failed at 'release', nothing restored; listed without a
  figure, or NVML unable to say: no failure;
- the quick level: skipped unless named, with its reason, a skip in the JUnit too.

Every JSON validates against the schema (parse_report)."""

from __future__ import annotations

import os
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from cudadiag_harness import SYSTEM_CTK, clean_env, finding_ids, parse_report, run

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
FAKE_DRIVER = FIXTURES / "fake-driver"
FAKE_NVML = FIXTURES / "fake-nvml"
STEPS = ["get_state", "lock", "checkpoint", "restore", "unlock"]


@pytest.fixture
def run_env(tmp_path):
    """The fake driver with a 1 GiB device, the fake NVML, a 4 MiB target, the checkpoint state in
    tmp_path, and a marker that every process of the run inherits (to find any left behind)."""
    if not (FAKE_DRIVER.is_dir() and FAKE_NVML.is_dir()):
        pytest.skip(f"fixtures not built: {FAKE_DRIVER}, {FAKE_NVML}")
    state = tmp_path / "checkpoint-state"
    state.mkdir()
    marker = f"CUDADIAG_TEST_MARK={uuid.uuid4()}"

    def make(**extra: str) -> dict:
        name, value = marker.split("=")
        settings = {"CUDADIAG_FAKE_CUDA": "ok", "CUDADIAG_FAKE_CUDA_GPU_MB": "1024",
                    "CUDADIAG_FAKE_CUDA_CHECKPOINT_DIR": str(state), "CUDADIAG_CHECKPOINT_MIB": "4", name: value}
        settings.update(extra)  # a test's own settings replace the defaults
        return clean_env(LD_LIBRARY_PATH=f"{FAKE_DRIVER}:{FAKE_NVML}", CUDA_HOME=str(SYSTEM_CTK), **settings)

    make.marker = marker
    make.state = state
    return make


def left_behind(marker: str) -> list[int]:
    """The live processes (not zombies) whose environment holds `marker`."""
    found = []
    needle = marker.encode() + b"\0"
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if (needle in environ or environ.endswith(marker.encode())) and stat[stat.rfind(")") + 2] not in "ZX":
            found.append(int(entry.name))
    return found


def checkpoint(env: dict, *extra: str, allowed=(0, 1)) -> tuple[dict, dict]:
    result = run(["selftest", "--json", "--only", "checkpoint", *extra], env=env, timeout=240)
    assert result.returncode in allowed, result.stderr[-3000:]
    doc = parse_report(result)
    (test,) = doc["selftest"]["tests"]
    return doc, test


def findings_with(doc: dict, finding_id: str) -> list[dict]:
    return [f for f in doc["findings"] if f["id"] == finding_id]


def metric(test: dict, name: str) -> dict:
    (found,) = [m for m in test["metrics"] if m["name"] == name]
    return found


def final_states(state_dir: Path) -> dict[int, int]:
    """pid -> the checkpoint state the fake driver last recorded (0 running ... 3 failed)."""
    return {int(p.name): int(p.read_text().split()[0]) for p in state_dir.iterdir() if p.name.isdigit()}


def test_a_full_cycle_passes_with_each_step_timed_and_the_target_parked_before_it_ends(run_env):
    env = run_env()
    doc, test = checkpoint(env, allowed=(0,))
    assert test["status"] == "pass", test
    facts = test["details"]["checkpoint"]
    assert facts["outcome"] == "restored" and facts["step"] is None
    assert facts["target_ended_checkpointed"] is True
    for step in STEPS:
        assert metric(test, f"{step}_ms")["unit"] == "ms"
    assert [s["step"] for s in test["details"]["steps"]] == STEPS
    assert [s["state_after"] for s in test["details"]["steps"]] == ["running", "locked", "checkpointed", "locked",
                                                                      "running"]
    assert test["primary"]["name"] == "checkpoint_restore_gibps" and test["primary"]["unit"] == "GiB/s"
    assert test["primary"]["value"] > 0
    verify = test["details"]["verify"]
    assert verify["context_same"] and verify["pointer_context_same"]
    assert verify["wrong_words"] == 0 and verify["wrong_words_again"] == 0
    assert test["details"]["target"]["bytes"] == 4 << 20
    assert test["details"]["release"] == {"known": True, "held_bytes": 0}  # NVML does not list the target
    assert test["details"]["end"]["status"] == "ok" and "killed" not in test["details"]["end"]
    assert not [f for f in finding_ids(doc) if f.startswith("checkpoint.")]
    # The target ended checkpointed (the fake driver's record of its state), and nothing is left.
    target_pid = test["details"]["target"]["pid"]
    assert final_states(run_env.state)[target_pid] == 2
    assert left_behind(run_env.marker) == []


@pytest.mark.parametrize("extra, words", [
    ({"CUDADIAG_FAKE_CUDA_VERSION": "12060"}, ["CUDA 12.6", "12.8", "R570"]),
    ({"CUDADIAG_FAKE_CUDA_MISSING": "cuCheckpointProcessRestore"}, ["cuCheckpointProcessRestore", "R570"]),
    ({"CUDADIAG_FAKE_CUDA_CHECKPOINT": "not-supported"}, ["CUDA_ERROR_NOT_SUPPORTED", "801"]),
], ids=["old-driver", "missing-symbol", "not-supported"])
def test_a_driver_that_cannot_checkpoint_is_a_skip_and_an_info_naming_the_driver_needed(run_env, extra, words):
    doc, test = checkpoint(run_env(**extra))  # an old driver also meets the toolkit's findings
    assert test["status"] == "skip"
    (finding,) = findings_with(doc, "checkpoint.unsupported")
    assert finding["severity"] == "info"
    assert "R570 (CUDA 12.8)" in finding["message"]
    for word in words:
        assert word in test["reason"] + finding["message"], (word, test["reason"])
    assert "selftest.failed" not in finding_ids(doc)
    assert left_behind(run_env.marker) == []


@pytest.mark.parametrize("step", STEPS)
def test_each_failing_step_is_named_with_its_code_and_ends_the_target_safely(run_env, step):
    env = run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT=f"fail:{step}")
    doc, test = checkpoint(env, allowed=(0, 1))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["severity"] == "warning"
    assert finding["evidence"]["step"] == step and finding["evidence"]["code"] == 999
    assert f"failed at '{step}'" in finding["message"] and "CRIU" in finding["message"]
    assert "selftest.failed" not in finding_ids(doc)
    attempted = [s["step"] for s in test["details"]["steps"]]
    assert attempted == STEPS[:STEPS.index(step) + 1]  # nothing after the failed step; restore never retried
    # Parked before it ended, where the forced failure leaves the driver able to (fail:lock and
    # fail:checkpoint fail the parking's own lock and checkpoint too; fail:get_state its state reads).
    assert finding["evidence"]["target_ended_checkpointed"] is (step in ("restore", "unlock"))
    assert test["details"]["end"]["status"] == "ok"
    assert left_behind(run_env.marker) == []


def test_not_supported_after_a_successful_lock_is_a_failure_of_what_the_process_holds(run_env):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="fail:checkpoint:801"))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "checkpoint" and finding["evidence"]["code"] == 801
    assert "managed/UVM memory" in finding["message"]
    assert "checkpoint.unsupported" not in finding_ids(doc)


def test_operation_not_permitted_names_persistence_mode_and_privileges(run_env):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="fail:lock:800"))
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["code"] == 800
    assert "persistence mode" in finding["message"]


def test_a_lock_that_times_out_on_a_busy_target_is_the_lock_step_and_the_target_is_parked_after(run_env):
    env = run_env(CUDADIAG_CHECKPOINT_TARGET="busy", CUDADIAG_CHECKPOINT_LOCK_MS="1", CUDADIAG_FAKE_CUDA_BUSY_MS="1500")
    doc, test = checkpoint(env)
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "lock" and finding["evidence"]["code"] == 600  # as on the H200
    assert "did not finish within the lock's timeoutMs 1" in finding["message"]
    assert finding["evidence"]["target_ended_checkpointed"] is True
    assert left_behind(run_env.marker) == []


@pytest.mark.parametrize("mode, words", [
    ("corrupt", "1 of 1048576 words differ after restore (first at word 0)"),
    ("context", "context changed"),
    ("corrupt-again", "a kernel launched after restore wrote 1 wrong words"),
    ("fault-target", "the restored context failed: cuCtxGetCurrent"),
])
def test_wrong_data_or_context_after_a_successful_restore_is_checkpoint_corrupt(run_env, mode, words):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT=mode), allowed=(1,))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.corrupt")
    assert finding["severity"] == "error" and finding["evidence"]["step"] == "verify"
    assert words in finding["message"], finding["message"]
    assert "checkpoint.failed" not in finding_ids(doc) and "selftest.failed" not in finding_ids(doc)
    assert left_behind(run_env.marker) == []


def test_a_target_that_hangs_after_restore_is_the_verify_step_and_is_ended_leaving_nothing(run_env):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="hang-target"))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "verify" and "hangs" in finding["message"]
    end = test["details"]["end"]
    assert end["killed"] is True  # parking failed (its work never finishes); a kill is all that is left
    assert "lock" in end["park"] and end["park"]["state_after"] == "running"
    assert left_behind(run_env.marker) == []


def test_a_controller_killed_mid_cycle_leaves_a_target_that_ends_checkpointed_and_nothing_behind(run_env):
    # The controller's restore never returns; the self-test's budget kills its worker. The target,
    # checkpointed at that point, sees its controller gone and ends; the sweeps leave nothing.
    env = run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="hang:restore", CUDADIAG_SELFTEST_BUDGET_S="8")
    result = run(["selftest", "--json", "--only", "checkpoint"], env=env, timeout=240)
    doc = parse_report(result)
    (test,) = doc["selftest"]["tests"]
    assert test["status"] in ("error", "skip") and "cut while running" in test["reason"], test
    assert left_behind(run_env.marker) == []
    # The fake driver's records: the controller's own (running) and the target's (checkpointed).
    assert sorted(final_states(run_env.state).values()) == [0, 2]


def test_a_hung_target_whose_controller_was_cut_is_found_by_the_outer_sweep_and_ended(run_env):
    # The target hangs after its restore and its controller (the self-test worker) is killed at the
    # budget: nothing of the worker's own run is left to end it. cudadiag's sweep must find it (it
    # carries the worker's run among CUDADIAG_WORKER_OUTER_SESSIONS), send SIGTERM, and SIGKILL it
    # when it does not end within the grace.
    env = run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="hang-target", CUDADIAG_SELFTEST_BUDGET_S="6")
    result = run(["selftest", "--json", "--only", "checkpoint"], env=env, timeout=240)
    doc = parse_report(result)
    (test,) = doc["selftest"]["tests"]
    assert "cut while running" in test["reason"], test
    assert left_behind(run_env.marker) == []


def test_nvml_still_listing_the_checkpointed_targets_memory_is_the_release_step_and_nothing_is_restored(run_env):
    # The fake NVML lists every live process the fake driver records as checkpointed, here with the
    # target's 4 MiB: a driver that did not release the GPU memory at checkpoint.
    env = run_env(CUDADIAG_FAKE_NVML_PROCESSES="self:512,checkpointed:4")
    doc, test = checkpoint(env)
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert (finding["severity"], finding["repair"]) == ("warning", "restart_process")
    evidence = finding["evidence"]
    assert evidence["step"] == "release" and evidence["code"] is None and evidence["driver_words"] is None
    assert "failed at 'release'" in finding["message"] and "CRIU" in finding["message"]
    assert "NVML still lists the target with 4 MiB of device memory: the GPU was not released" in finding["message"]
    target_pid = test["details"]["target"]["pid"]
    assert test["details"]["release"] == {"known": True, "listed": True, "held_bytes": 4 << 20}
    # Checkpointed, never restored (a restore is not tried on a target whose GPU state was not
    # released), and so parked as it was: checkpointed, not killed.
    assert [s["step"] for s in test["details"]["steps"]] == ["get_state", "lock", "checkpoint"]
    names = {m["name"] for m in test["metrics"]}
    assert "checkpoint_gibps" in names and "restore_ms" not in names and "checkpoint_restore_gibps" not in names
    assert evidence["target_ended_checkpointed"] is True
    assert test["details"]["end"]["park"]["state_before"] == "checkpointed"
    assert "lock" not in test["details"]["end"]["park"] and "killed" not in test["details"]["end"]
    assert final_states(run_env.state)[target_pid] == 2
    assert "selftest.failed" not in finding_ids(doc) and "checkpoint.corrupt" not in finding_ids(doc)
    assert left_behind(run_env.marker) == []


@pytest.mark.parametrize("processes, release", [
    ("self:512,checkpointed", {"known": True, "listed": True, "held_bytes": 0}),  # NVML_VALUE_NOT_AVAILABLE
    ("notsupported", {"known": False,
                      "unknown_reason": "nvmlDeviceGetComputeRunningProcesses_v3 returned NVML_ERROR_NOT_SUPPORTED"}),
], ids=["listed-without-a-figure", "nvml-cannot-say"])
def test_nvml_that_cannot_show_held_memory_fails_nothing(run_env, processes, release):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_NVML_PROCESSES=processes))
    assert test["status"] == "pass", test
    got = test["details"]["release"]
    assert {k: got.get(k) for k in release if k != "unknown_reason"} == \
        {k: v for k, v in release.items() if k != "unknown_reason"}, got
    if "unknown_reason" in release:
        assert got["unknown_reason"].startswith("nvmlDeviceGetComputeRunningProcesses_v3"), got
    assert [s["step"] for s in test["details"]["steps"]] == STEPS
    assert not [f for f in finding_ids(doc) if f.startswith("checkpoint.")]
    assert left_behind(run_env.marker) == []


QUICK_SKIP_REASON = "runs at --level full, or when named (--only checkpoint)"


def test_at_the_quick_level_it_is_skipped_unless_named_and_never_counted_as_passed(run_env, tmp_path):
    env = run_env()
    junit = tmp_path / "selftest.xml"
    result = run(["selftest", "--json", "--level", "quick", "--junit", str(junit)], env=env, timeout=240)
    assert result.returncode in (0, 1), result.stderr[-3000:]
    doc = parse_report(result)
    tests = {t["key"]: t for t in doc["selftest"]["tests"]}
    assert len(tests) > 1, tests  # every test of the level, none named
    test = tests["checkpoint"]
    assert test["status"] == "skip", test
    assert test["reason"].startswith(QUICK_SKIP_REASON), test["reason"]
    assert test["metrics"] == [] and test["primary"] is None
    assert "target" not in test["details"] and "steps" not in test["details"]  # no target was started
    assert not [f for f in finding_ids(doc) if f.startswith("checkpoint.")]
    # The JUnit file counts it as skipped, with the reason, not as a pass.
    (case,) = [c for c in ElementTree.parse(junit).iter("testcase") if c.get("name", "").startswith("checkpoint")]
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("message", "").startswith(QUICK_SKIP_REASON)
    assert case.find("failure") is None and case.find("error") is None

    # Named, at the same level, it runs.
    doc, named = checkpoint(run_env(), "--level", "quick", allowed=(0,))
    assert named["status"] == "pass" and named["primary"]["name"] == "checkpoint_restore_gibps"


def test_a_call_that_succeeds_but_leaves_the_wrong_state_fails_that_step(run_env):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="stale:restore"))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "restore" and finding["evidence"]["code"] is None
    assert "restore succeeded but the target's state is checkpointed, expected locked" in finding["message"]
    assert [s["step"] for s in test["details"]["steps"]] == STEPS[:4]
    assert finding["evidence"]["target_ended_checkpointed"] is True  # it still is
    assert left_behind(run_env.marker) == []


@pytest.mark.parametrize("extra, words, code", [
    ({"CUDADIAG_CHECKPOINT_MIB": "2048"}, "could not prepare its memory: cuMemAlloc (2147483648 bytes)", 2),
    ({"CUDADIAG_FAKE_CUDA_CHECKPOINT": "crash-target"}, "the target process ended before it was ready", None),
], ids=["out-of-memory", "crashed"])
def test_a_target_that_never_gets_ready_is_the_target_step_and_nothing_is_called_on_it(run_env, extra, words, code):
    doc, test = checkpoint(run_env(**extra))  # a 2 GiB target on the fake's 1 GiB device
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "target" and finding["evidence"]["code"] == code
    assert words in finding["message"], finding["message"]
    assert "steps" not in test["details"] or test["details"]["steps"] == []
    assert "park" not in test["details"]["end"]  # no context: nothing to lock or checkpoint
    assert "killed" not in test["details"]["end"]
    assert left_behind(run_env.marker) == []


def test_a_restored_target_that_ends_before_it_answers_is_the_verify_step(run_env):
    doc, test = checkpoint(run_env(CUDADIAG_FAKE_CUDA_CHECKPOINT="exit-target"))
    assert test["status"] == "fail"
    (finding,) = findings_with(doc, "checkpoint.failed")
    assert finding["evidence"]["step"] == "verify"
    assert "the restored target ended before it answered" in finding["message"]
    assert [s["step"] for s in test["details"]["steps"]] == STEPS
    assert "killed" not in test["details"]["end"]
    assert left_behind(run_env.marker) == []
