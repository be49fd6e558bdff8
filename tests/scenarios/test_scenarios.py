"""The scenario corpus: every tests/scenarios/cases/*.toml is built in a temp dir and checked against
the real cudadiag binary (see README.md). One test per scenario; each failure lists every
difference between what the scenario states and what cudadiag reported."""

from __future__ import annotations

import collections
import sys
import time

import pytest

import scenario_runner

SCENARIOS = scenario_runner.scenario_files()


@pytest.fixture(scope="session")
def elf_factory(tmp_path_factory):
    return scenario_runner.ElfFactory(tmp_path_factory.mktemp("elf-cache"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path, elf_factory, tmp_path):
    scenario = scenario_runner.load(path)
    try:
        problems = scenario_runner.run_scenario(scenario, tmp_path / "s", elf_factory)
    except scenario_runner.ScenarioSkip as why:
        pytest.skip(str(why))
    assert not problems, f"{path.name}: {scenario.get('description', '')}\n  " + "\n  ".join(problems)


def test_corpus_covers_every_finding_id_both_ways():
    """Every discovery-level finding id appears in some scenario's expected set (positive) and has a
    near-miss scenario that names it in `near_miss` (negative: the id must not be raised there)."""
    positives, negatives = collections.Counter(), collections.Counter()
    for path in SCENARIOS:
        scenario = scenario_runner.load(path)
        for key in scenario.get("expect", {}).get("findings", []):
            positives[key.split(":")[0]] += 1
        for finding_id in scenario.get("near_miss", []):
            negatives[finding_id] += 1
            assert not any(k.startswith(finding_id + ":") for k in scenario.get("expect", {}).get("findings", [])), \
                f"{path.name} lists {finding_id} as a near miss but expects it"
    missing_negative = sorted(set(positives) - set(negatives))
    assert len(SCENARIOS) >= 1
    assert not missing_negative, f"finding ids without a near-miss scenario: {missing_negative}"


if __name__ == "__main__":
    started = time.monotonic()
    code = pytest.main([__file__, *sys.argv[1:]])
    print(f"corpus took {time.monotonic() - started:.1f} s", file=sys.stderr)
    sys.exit(code)
