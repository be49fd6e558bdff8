"""--junit FILE: JUnit XML that a real JUnit consumer (junitparser, from PyPI) reads, with one
testcase per component, finding, self-test result and requirement."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudadiag_harness import describe, fake_driver_env, parse_report, run

junitparser = pytest.importorskip("junitparser")



@pytest.fixture
def env(tmp_path) -> dict:
    return fake_driver_env(tmp_path / "driver")


def suites(path: Path) -> dict:
    xml = junitparser.JUnitXml.fromfile(str(path))
    return {suite.name: suite for suite in xml}


def outcome(case) -> str:
    if not case.result:
        return "passed"
    kinds = {type(result).__name__ for result in case.result}
    return "failure" if "Failure" in kinds else "error" if "Error" in kinds else "skipped"


def test_junit_is_read_by_junitparser_with_a_case_per_component_finding_and_requirement(env, tmp_path):
    out = tmp_path / "report.xml"
    result = run(["--json", "--no-selftest", "--junit", str(out), "--require", "cccl", "--require", "nvrtc>=99"],
                 env=env, timeout=60)
    assert result.returncode == 1, describe(result)
    doc = parse_report(result)
    by_name = suites(out)
    assert set(by_name) == {"cudadiag.components", "cudadiag.findings", "cudadiag.selftest", "cudadiag.policy"}

    components = by_name["cudadiag.components"]
    assert components.tests == len(doc["components"])
    cases = {case.name: case for case in components}
    assert outcome(cases["nvrtc"]) == "failure"  # policy.unmet names it
    assert outcome(cases["cuda"]) == "passed"

    findings = by_name["cudadiag.findings"]
    assert findings.tests == len(doc["findings"])
    assert findings.failures == doc["summary"]["counts"]["error"]

    policy = {case.name: outcome(case) for case in by_name["cudadiag.policy"]}
    assert policy == {"cccl": "passed", "nvrtc>=99": "failure"}

    selftest = list(by_name["cudadiag.selftest"])
    assert [outcome(case) for case in selftest] == ["skipped"]

    xml = junitparser.JUnitXml.fromfile(str(out))
    total = sum(suite.tests for suite in xml)
    assert total == len(doc["components"]) + len(doc["findings"]) + 1 + 2


def test_warnings_fail_their_testcases_only_under_fail_on_warning(env, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    warned = dict(env, CUDA_PATH=str(other))
    lenient, strict = tmp_path / "lenient.xml", tmp_path / "strict.xml"
    assert run(["--no-selftest", "--junit", str(lenient)], env=warned, timeout=60).returncode == 0
    assert run(["--no-selftest", "--fail-on", "warning", "--junit", str(strict)], env=warned, timeout=60).returncode == 1
    assert suites(lenient)["cudadiag.findings"].failures == 0
    assert suites(strict)["cudadiag.findings"].failures >= 1


def test_an_unwritable_junit_path_is_a_usage_error(env, tmp_path):
    result = run(["--no-selftest", "--junit", str(tmp_path / "missing" / "x.xml")], env=env, timeout=60)
    assert result.returncode == 2, describe(result)
    assert b"missing/x.xml" in result.stderr
    assert result.stdout == b""
