"""The scenario corpus: every tests/scenarios/cases/*.toml is built in a temp dir and checked against
the real cudadiag binary (see README.md). One test per scenario; each failure lists every
difference between what the scenario states and what cudadiag reported."""

from __future__ import annotations

import collections
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import scenario_runner

SCENARIOS = scenario_runner.scenario_files()


@pytest.fixture(scope="session")
def elf_factory(tmp_path_factory):
    return scenario_runner.ElfFactory(tmp_path_factory.mktemp("elf-cache"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path, elf_factory, tmp_path):
    scenario = scenario_runner.load(path)
    # A scenario run as nobody needs a tree nobody can reach: pytest's own temp dirs are private.
    shared_root = None
    if scenario.get("run_as") == "nobody":
        shared_root = Path(tempfile.mkdtemp(prefix="cudadiag-scenario-"))
        shared_root.chmod(0o755)
    try:
        problems = scenario_runner.run_scenario(scenario, (shared_root or tmp_path) / "s", elf_factory)
    except scenario_runner.ScenarioSkip as why:
        pytest.skip(str(why))
    finally:
        if shared_root is not None:
            shutil.rmtree(shared_root, ignore_errors=True)
    assert not problems, f"{path.name}: {scenario.get('description', '')}\n  " + "\n  ".join(problems)


# Ids a scenario cannot raise: they need a GPU self-test run (the unit tests of src/findings and the
# GPU host's checks raise them; the checkpoint test's three with the fake driver's device in
# tests/cli/test_selftest_checkpoint.py).
GPU_ONLY_PREFIXES = ("selftest.", "gpu.", "checkpoint.")


def documented_finding_ids() -> set[str]:
    findings_md = Path(__file__).resolve().parents[2] / "docs" / "findings.md"
    return set(re.findall(r"^## `([a-z0-9_.]+)`", findings_md.read_text(), flags=re.MULTILINE))


def test_corpus_covers_every_finding_id_both_ways():
    """At least 80 scenarios; every documented finding id but the GPU-only ones appears in some
    scenario's expected set (positive) and has a near-miss scenario that names it in `near_miss`
    (negative: the id must not be raised there)."""
    assert len(SCENARIOS) >= 80, f"the corpus has {len(SCENARIOS)} scenarios; it must keep at least 80"
    positives, negatives = collections.Counter(), collections.Counter()
    for path in SCENARIOS:
        scenario = scenario_runner.load(path)
        expected = list(scenario.get("expect", {}).get("findings", []))
        expected += scenario.get("inspect", {}).get("findings", [])
        for key in expected:
            positives[key.split(":")[0]] += 1
        for finding_id in scenario.get("near_miss", []):
            negatives[finding_id] += 1
            assert not any(k.startswith(finding_id + ":") for k in scenario.get("expect", {}).get("findings", [])), \
                f"{path.name} lists {finding_id} as a near miss but expects it"
    missing_negative = sorted(set(positives) - set(negatives))
    assert not missing_negative, f"finding ids without a near-miss scenario: {missing_negative}"
    wanted = {i for i in documented_finding_ids() if not i.startswith(GPU_ONLY_PREFIXES)}
    missing_positive = sorted(wanted - set(positives))
    assert not missing_positive, f"documented finding ids no scenario raises: {missing_positive}"


if __name__ == "__main__":
    started = time.monotonic()
    code = pytest.main([__file__, *sys.argv[1:]])
    print(f"corpus took {time.monotonic() - started:.1f} s", file=sys.stderr)
    sys.exit(code)
