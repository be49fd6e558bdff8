"""CI policy gates through the real binary: --require (repeatable), --policy FILE (JSON and TOML),
--fail-on from the policy; unmet requirements are policy.unmet findings that set the exit code;
malformed specs and policy files are usage errors naming the bad token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cudadiag_harness import describe, fake_driver_env, parse_report, run, SYSTEM_CTK



@pytest.fixture
def env(tmp_path) -> dict:
    """A machine with the fake driver (as driver 580.95.05, CUDA 13.0) and the system toolkit: no findings."""
    if not (SYSTEM_CTK / "include" / "cccl").is_dir() and not (SYSTEM_CTK / "include" / "cuda" / "std").is_dir():
        pytest.skip(f"no CCCL headers under {SYSTEM_CTK}")
    return fake_driver_env(tmp_path / "driver", "libcuda.so.580.95.05")


def report(env: dict, *args: str, allowed=(0, 1)) -> tuple[dict, int]:
    result = run(["--json", "--no-selftest", *args], env=env, timeout=60)
    assert result.returncode in allowed, describe(result)
    return parse_report(result), result.returncode


def unmet(doc: dict) -> list[str]:
    return [f["evidence"]["requirement"] for f in doc["findings"] if f["id"] == "policy.unmet"]


def test_met_requirements_keep_exit_0_and_are_listed(env):
    doc, code = report(env, "--require", "nvrtc>=12.4", "--require", "cccl", "--require", "driver>=580",
                       "--require", "driver.cuda>=13.0", "--require", "no-errors")
    assert code == 0, doc["findings"]
    assert unmet(doc) == []
    requirements = doc["policy"]["requirements"]
    assert [r["spec"] for r in requirements] == ["nvrtc>=12.4", "cccl", "driver>=580", "driver.cuda>=13.0", "no-errors"]
    assert all(r["met"] for r in requirements), requirements
    assert doc["policy"]["sources"] == ["--require"]
    assert "580.95.05" in requirements[2]["detail"]


def test_unmet_requirements_are_error_findings_and_exit_1(env):
    doc, code = report(env, "--require", "nvrtc>=99", "--require", "driver>=590", "--require", "cccl",
                       "--require", "selftest.sort>=30Gkeys")
    assert code == 1
    assert unmet(doc) == ["nvrtc>=99", "driver>=590", "selftest.sort>=30Gkeys"]
    finding = next(f for f in doc["findings"] if f["id"] == "policy.unmet" and f["evidence"]["requirement"] == "nvrtc>=99")
    assert finding["severity"] == "error" and finding["components"] == ["nvrtc"]
    assert "does not satisfy >= 99" in finding["message"]
    selftest = next(f for f in doc["findings"] if f["id"] == "policy.unmet" and f["evidence"]["requirement"] == "selftest.sort>=30Gkeys")
    assert "did not run" in selftest["message"]
    assert doc["summary"]["counts"]["error"] == 3


def test_without_verification_the_driver_version_comes_from_the_file_name(env):
    doc, code = report(env, "--no-load", "--require", "driver>=580", "--require", "driver.cuda>=13")
    assert unmet(doc) == ["driver.cuda>=13"]
    assert "unknown" in doc["policy"]["requirements"][1]["detail"]
    assert code == 1


def test_the_text_report_shows_the_unmet_requirement_and_exits_1(env):
    result = run(["--no-selftest", "--require", "nvrtc>=99"], env=env, timeout=60)
    assert result.returncode == 1, describe(result)
    assert b"policy.unmet" in result.stdout and b"nvrtc>=99" in result.stdout


@pytest.mark.parametrize("name, content", [
    ("gate.json", '{"require": ["nvrtc>=12.4", "cccl", "driver>=599"], "fail_on": "error"}'),
    ("gate.toml", '# CI gate\nrequire = [\n  "nvrtc>=12.4",\n  "cccl",\n  "driver>=599",  # new driver\n]\n'),
])
def test_policy_files_in_json_and_toml(name, content, env, tmp_path):
    policy = tmp_path / name
    policy.write_text(content)
    doc, code = report(env, "--policy", str(policy), "--require", "nvJitLink>=13")
    assert code == 1
    assert unmet(doc) == ["driver>=599"]
    assert [r["spec"] for r in doc["policy"]["requirements"]] == ["nvrtc>=12.4", "cccl", "driver>=599", "nvJitLink>=13"]
    assert doc["policy"]["sources"] == [f"policy file {policy}", "--require"]


def test_fail_on_warning_from_a_policy_file(env, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    warned = dict(env, CUDA_PATH=str(other))  # env.cuda_path_home_differ: a warning
    _, code = report(warned)
    assert code == 0
    policy = tmp_path / "strict.toml"
    policy.write_text('fail_on = "warning"\n')
    doc, code = report(warned, "--policy", str(policy))
    assert code == 1
    assert doc["summary"]["status"] == "warning" and doc["summary"]["exit_code"] == 1


@pytest.mark.parametrize("spec, token", [
    ("nvrtc>>12", "'>12'"),
    ("nvrtcc>=12.4", "'nvrtcc'"),
    ("nvrtc>=twelve", "'twelve'"),
    ("selftest.sortt>=1", "'sortt'"),
    ("selftest.sort>=30Gbananas", "'Gbananas'"),
    ("", "empty requirement"),
])
def test_malformed_specs_are_usage_errors_naming_the_token(spec, token, env):
    result = run(["--json", "--require", spec], env=env, timeout=30)
    assert result.returncode == 2, describe(result)
    assert token.encode() in result.stderr, result.stderr
    # --json: the error document (docs/schema/error.schema.json) instead of a report.
    error = json.loads(result.stdout)["error"]
    assert error["kind"] == "usage" and error["exit_code"] == 2 and token in error["message"], error


@pytest.mark.parametrize("content, message", [
    ('{"require": ["cccl"], "failon": "warning"}', 'unknown key "failon"'),
    ('require = ["cccl"]\n[extra]\n', "line 2: tables"),
    ('{"require": ["cccl"', "not valid JSON"),
    ('{"require": ["nvrtc>>1"]}', "bad requirement 'nvrtc>>1'"),
])
def test_bad_policy_files_are_usage_errors(content, message, env, tmp_path):
    policy = tmp_path / ("p.json" if content.startswith("{") else "p.toml")
    policy.write_text(content)
    result = run(["--policy", str(policy)], env=env, timeout=30)
    assert result.returncode == 2, describe(result)
    assert message.encode() in result.stderr, result.stderr
    assert str(policy).encode() in result.stderr


def test_a_missing_policy_file_is_a_usage_error(tmp_path, env):
    result = run(["--policy", str(tmp_path / "nope.toml")], env=env, timeout=30)
    assert result.returncode == 2, describe(result)
    assert b"nope.toml" in result.stderr


@pytest.mark.parametrize("command", [["find", "nvrtc"], ["inspect", "--pid", "1"], ["diff", "a", "b"]])
def test_policy_options_with_other_commands_are_usage_errors(command, env):
    result = run(["--require", "cccl", *command], env=env, timeout=30)
    assert result.returncode == 2, describe(result)
    assert b"apply to the report" in result.stderr
