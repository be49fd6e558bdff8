"""A remedy is a tested claim: for every scenario of the corpus whose report has a finding with a plan
(`findings[].fix`, docs/findings.md "Remedies as plans"), each plan is applied to the scenario's model
and cudadiag runs again. The finding must be gone (one fewer of its id and components) and no error
or warning may appear that was not there before. Plans that cannot be simulated (a driver install)
must say so (`simulable: false`), and only those may.

The model a plan changes: the scenario's environment variables (set, unset, a search-path entry
removed or put first), the Python environments it built (pip install: the distribution's files and
dist-info reconstructed from the RECORD of a wheel the tests already have, the test venv's or the
toolkit's, as scenario_runner.install_wheel does; pip uninstall: the files its RECORD lists removed)
and its loader cache (an ld.so.conf line removed or added, then "ldconfig": the synthetic cache
rebuilt without, or with, that directory's libraries). Nothing outside the scenario's temp dir is
touched.

    build/test-venvs/bare/bin/python -m pytest tests/scenarios/test_fix_simulation.py -q

The last test prints the counts: plans verified, plans that say they cannot be simulated.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import re
import shutil
import struct
import tempfile
from pathlib import Path

import pytest

import scenario_runner
from cudadiag_harness import venvs_root

SCENARIOS = scenario_runner.scenario_files()
# This machine's loader cache is read once (ldconfig -p), not once per simulated plan.
scenario_runner.system_cache_entries = functools.lru_cache(maxsize=1)(scenario_runner.system_cache_entries)
COUNTS: collections.Counter = collections.Counter()


# ---------------------------------------------------------------------------------------------
# The model: environment, Python environments, loader cache
# ---------------------------------------------------------------------------------------------


def read_ld_so_cache(path: Path) -> list[tuple[str, str, int]]:
    """The entries of a cache scenario_runner.build_ld_so_cache wrote (glibc's new format)."""
    data = path.read_bytes()
    count = struct.unpack_from("<I", data, 20)[0]

    def string_at(offset: int) -> str:
        return data[offset:data.index(b"\0", offset)].decode()

    entries = []
    for i in range(count):
        flags, key, value, _, _ = struct.unpack_from("<iIIIQ", data, 48 + 24 * i)
        entries.append((string_at(key), string_at(value), flags))
    return entries


def cache_path(built: scenario_runner.Built) -> Path:
    """The scenario's synthetic loader cache; one made from this machine's when it used the real one."""
    if "--ld-so-cache" in built.args:
        return Path(built.args[built.args.index("--ld-so-cache") + 1])
    path = built.root / "ld.so.cache"
    path.write_bytes(scenario_runner.build_ld_so_cache(scenario_runner.system_cache_entries()))
    built.args += ["--ld-so-cache", str(path)]
    return path


def same_dir(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def release(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version)[:4])


def satisfies(version: str, specifier: str) -> bool:
    """`specifier` (">=13.5", "==13.0.2", "" for any) of a requirement, on a release number."""
    for clause in filter(None, (c.strip() for c in specifier.split(","))):
        match = re.match(r"(>=|<=|==|!=|>|<|~=)\s*(.+)", clause)
        if not match:
            raise ValueError(f"specifier {clause!r}")
        op, wanted = match.group(1), release(match.group(2))
        have = release(version)[:len(wanted)] if op in ("==", "!=") else release(version)
        ok = {">=": have >= wanted, "<=": have <= wanted, "==": have == wanted, "!=": have != wanted,
              ">": have > wanted, "<": have < wanted, "~=": have >= wanted}[op]
        if not ok:
            return False
    return True


def wheel_sources() -> list[tuple[str, Path]]:
    """Where installed wheels can be reconstructed from: the test venv's, this machine's toolkit's."""
    sources = []
    found = sorted((venvs_root() / "wheels").glob("lib/python3*/site-packages"))
    if found:
        sources.append(("wheels", found[0]))
    if (scenario_runner.CTK / "dist-info").is_dir():
        sources.append(("toolkit", scenario_runner.CTK / "dist-info"))
    return sources


def dist_version(dist_info: Path) -> str:
    match = re.search(r"(?m)^Version: *(\S+)", (dist_info / "METADATA").read_text(errors="replace"))
    return match.group(1) if match else ""


def installed(site: Path, distribution: str) -> list[Path]:
    return [d for d in site.glob("*.dist-info")
            if normal(d.name.removesuffix(".dist-info").rsplit("-", 1)[0]) == normal(distribution)]


def pip_uninstall(site: Path, distribution: str) -> None:
    for dist_info in installed(site, distribution):
        for line in (dist_info / "RECORD").read_text().splitlines():
            target = site / line.split(",", 1)[0]
            if target.is_symlink() or target.is_file():
                target.unlink()
        shutil.rmtree(dist_info, ignore_errors=True)


class NoFixture(Exception):
    """The plan installs a distribution no wheel of the tests provides."""


# Hand-built wheels for distributions no test venv holds: name -> (version, {file: SONAME}). The
# library is a test-built ELF with the release's SONAME; the version comes from the dist-info, as
# for a real wheel.
FIXTURE_WHEELS = {
    "nvidia-nvjitlink-cu12": ("12.9.86", {"nvidia/nvjitlink/lib/libnvJitLink.so.12": "libnvJitLink.so.12"}),
}


def install_fixture_wheel(site: Path, name: str, specifier: str, factory) -> bool:
    if name not in FIXTURE_WHEELS or not satisfies(FIXTURE_WHEELS[name][0], specifier):
        return False
    version, files = FIXTURE_WHEELS[name]
    pip_uninstall(site, name)
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for relative, soname in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(factory.get(soname), site / relative)
    (dist_info / "RECORD").write_text("".join(f"{r},,\n" for r in files) + f"{dist_info.name}/METADATA,,\n")
    return True


def pip_install(site: Path, spec: str, factory) -> None:
    match = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*(\[[^\]]*\])?\s*(.*)$", spec)
    name, specifier = match.group(1), match.group(3).strip()
    if install_fixture_wheel(site, normal(name), specifier, factory):
        return
    for source, base in wheel_sources():
        for dist_info in installed(base, name):
            if satisfies(dist_version(dist_info), specifier):
                pip_uninstall(site, name)  # pip replaces the installed release
                scenario_runner.install_wheel({"dist": name, "from": source}, site, factory)
                return
    raise NoFixture(f"no wheel of the tests satisfies {spec!r}")


def site_of(python: str) -> Path:
    prefix = Path(python).parent.parent
    if not str(prefix).startswith("/") or str(prefix).startswith("/usr"):
        raise AssertionError(f"pip through {python}: not an environment of the scenario")
    return scenario_runner.site_dir(prefix)


def apply(action: dict, built: scenario_runner.Built, factory) -> None:
    kind, env = action["action"], built.env
    if kind == "set_variable":
        env[action["variable"]] = action["value"]
    elif kind == "unset_variable":
        env.pop(action["variable"], None)
    elif kind in ("remove_path_entry", "prepend_path_entry"):
        variable = action["variable"]
        entries = env[variable].split(":") if env.get(variable) else []
        entries = [e for e in entries if e != action["value"]]
        if kind == "prepend_path_entry":
            entries.insert(0, action["value"])
        if entries:
            env[variable] = ":".join(entries)
        else:
            env.pop(variable, None)
    elif kind == "pip_install":
        pip_install(site_of(action["target"]), action["spec"], factory)
    elif kind == "pip_uninstall":
        pip_uninstall(site_of(action["target"]), action["spec"])
    elif kind in ("remove_ld_conf_line", "add_ld_conf_line"):
        conf = Path(action["target"])
        if "--ld-so-conf" in built.args and str(conf).startswith(str(built.root)):
            lines = conf.read_text().splitlines()
            lines = [l for l in lines if l.strip() != action["value"]]
            if kind == "add_ld_conf_line":
                lines.append(action["value"])
            conf.write_text("".join(l + "\n" for l in lines))
        path = cache_path(built)  # then ldconfig: the cache without (with) the directory's libraries
        entries = [e for e in read_ld_so_cache(path) if not same_dir(os.path.dirname(e[1]), action["value"])]
        if kind == "add_ld_conf_line":
            for library in sorted(Path(action["value"]).glob("lib*.so*")):
                entries.insert(0, (library.name, str(library), scenario_runner.FLAGS["x86-64"]))
        path.write_bytes(scenario_runner.build_ld_so_cache(entries))
    else:
        raise AssertionError(f"the simulation does not know the action {kind!r}")


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


def report_of(scenario: dict, built: scenario_runner.Built) -> dict:
    mode = ["--json"] + ([] if scenario.get("load") else ["--no-load"])
    done = scenario_runner.run_cudadiag(built, mode + built.args)
    try:
        return json.loads(done.stdout.decode("utf-8"))
    except ValueError as error:
        raise AssertionError(f"not JSON ({error}): {done.stderr[-500:]!r}") from error


def key(finding: dict) -> tuple:
    return finding["id"], tuple(finding["components"])


def worse(finding: dict) -> bool:
    return finding["severity"] in ("warning", "error")


def simulate(scenario: dict, plan: dict, cleared: list[dict], before: dict, factory, root: Path) -> str:
    """'' when the plan clears every finding of `cleared` (the findings that carry it) and brings
    nothing worse, else what went wrong. The scenario is built again at the same root (the plan
    names its paths)."""
    shutil.rmtree(root)
    built = scenario_runner.build(scenario, root, factory)
    for action in plan["actions"]:
        apply(action, built, factory)
    after = report_of(scenario, built)
    problems = []
    count = collections.Counter(key(f) for f in before["findings"])
    count_after = collections.Counter(key(f) for f in after["findings"])
    for finding_key, wanted_gone in collections.Counter(key(f) for f in cleared).items():
        if count_after[finding_key] > count[finding_key] - wanted_gone:
            still = [f["message"][:200] for f in after["findings"] if key(f) == finding_key]
            problems.append(f"{finding_key[0]} stays: {still}")
    old = collections.Counter((f["id"], f["severity"], tuple(f["components"])) for f in before["findings"] if worse(f))
    new = collections.Counter((f["id"], f["severity"], tuple(f["components"])) for f in after["findings"] if worse(f))
    for extra in (new - old).elements():
        text = next(f["message"][:200] for f in after["findings"]
                    if (f["id"], f["severity"], tuple(f["components"])) == extra)
        problems.append(f"new {extra[0]}:{extra[1]}: {text}")
    return "; ".join(problems)


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_every_plan_clears_its_finding(path, tmp_path):
    factory = scenario_runner.ElfFactory(Path(tempfile.gettempdir()) / "cudadiag-fix-sim-elf")
    scenario = scenario_runner.load(path)
    if scenario.get("run_as") or scenario.get("inspect"):
        pytest.skip("run as another user / a live process: its model is not the report's")
    try:
        built = scenario_runner.build(scenario, tmp_path / "s", factory)
    except scenario_runner.ScenarioSkip as why:
        pytest.skip(str(why))
    before = report_of(scenario, built)
    # One simulation per distinct plan: the findings that carry the same actions are checked together.
    groups: dict[str, tuple[dict, list[dict]]] = {}
    for finding in before["findings"]:
        for plan in finding.get("fix", []):
            simulable = all(a["action"] != "install_driver" for a in plan["actions"])
            assert plan["simulable"] == simulable, f"{finding['id']}: plan says simulable={plan['simulable']}"
            if not simulable:
                assert any(not a["simulable"] for a in plan["actions"])
                COUNTS["not simulable"] += 1
                continue
            COUNTS["plans"] += 1
            identity = json.dumps(plan["actions"], sort_keys=True)
            groups.setdefault(identity, (plan, []))[1].append(finding)
    failures = []
    for plan, cleared in groups.values():
        try:
            problem = simulate(scenario, plan, cleared, before, factory, tmp_path / "s")
        except NoFixture as why:
            COUNTS["no wheel fixture"] += len(cleared)
            failures.append(f"{cleared[0]['id']}: {why}")
            continue
        if problem:
            COUNTS["failed"] += len(cleared)
            failures.append(f"{sorted({f['id'] for f in cleared})} plan '{plan['why']}' "
                            f"{[a['shell'] for a in plan['actions']]}: {problem}")
        else:
            COUNTS["verified"] += len(cleared)
    assert not failures, f"{path.name}:\n  " + "\n  ".join(failures)


def test_counts_of_verified_plans():
    """Runs last (pytest keeps the file's order): the counts the issue asks for, printed and kept in
    $CUDADIAG_FIX_SIMULATION_COUNTS when set."""
    line = (f"fix simulation: {COUNTS['verified']} plans verified, {COUNTS['not simulable']} say they cannot "
            f"be simulated, {COUNTS['failed']} failed, {COUNTS['no wheel fixture']} lack a wheel fixture")
    print(line)
    if os.environ.get("CUDADIAG_FIX_SIMULATION_COUNTS"):
        Path(os.environ["CUDADIAG_FIX_SIMULATION_COUNTS"]).write_text(line + "\n")
    if sum(COUNTS.values()) == 0:
        pytest.skip("no scenario ran (deselected)")
    assert COUNTS["verified"] > 0
