"""cudadiag against real pip wheel layouts and against cuda-pathfinder itself.

Needs the venvs scripts/make_test_venvs.sh builds (skips without them):
  wheels  cuda-pathfinder + nvidia-cuda-nvrtc, nvidia-nvjitlink, nvidia-cuda-cccl (CUDA 13 wheels)
  bare    cuda-pathfinder only (CUDA comes from the system toolkit)

Conformance: in each scenario, for every component both tools know, cudadiag's `selected.realpath`
must equal os.path.realpath() of what cuda-pathfinder (run by pathfinder_oracle.py in a fresh
process of the venv's python, under the same environment) returns; both "not found" agrees.
cudadiag's `loader` is compared the same way with what plain dlopen(SONAME) resolves to.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from cudadiag_harness import (
    EM_386,
    invariant_errors,
    schema_errors,
    SYSTEM_CTK,
    Venv,
    component,
    compile_shared_library,
    describe,
    elf_header,
    parse_report,
    real_system_lib,
    run,
    venv,
)

ORACLE = Path(__file__).resolve().parent / "pathfinder_oracle.py"
NVRTC_SONAME = "libnvrtc.so.13"

# The wheel distribution behind each component the wheels venv provides.
WHEEL_COMPONENTS = [
    ("dynamic_lib", "nvrtc", "nvidia-cuda-nvrtc"),
    ("dynamic_lib", "nvJitLink", "nvidia-nvjitlink"),
    ("headers", "cccl", "nvidia-cuda-cccl"),
]


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Scenario:
    """An environment to run both tools in. `setup` builds trees and returns env changes."""

    id: str
    venv: str
    setup: Callable[[Path], dict] = lambda tmp: {}
    drop: tuple[str, ...] = ()            # variables removed from the inherited environment
    names: tuple[str, ...] = ()           # restrict the comparison (empty: the whole catalog)
    activate: bool = True                 # VIRTUAL_ENV + PATH, as `source bin/activate` does
    notes: str = ""
    cudadiag_args: Callable[[Venv], list[str]] = field(default=lambda v: [])


def _fake_ctk_with_nvfatbin(tmp: Path) -> dict:
    root = tmp / "fake-ctk"
    compile_shared_library(root / "lib64", "libnvfatbin.so.13", "int nvFatbinVersion(unsigned*a,unsigned*b){*a=13;*b=0;return 0;}\n")
    return {"CUDA_PATH": str(root)}


def _conda_prefix(tmp: Path) -> dict:
    conda = tmp / "conda"
    compile_shared_library(conda / "lib", NVRTC_SONAME, "int nvrtcVersion(int*a,int*b){*a=13;*b=0;return 0;}\n")
    include = conda / "targets" / "x86_64-linux" / "include"
    include.mkdir(parents=True)
    (include / "nvrtc.h").write_text("/* test */\n")
    return {"CONDA_PREFIX": str(conda)}


def _bad_file_first(content: bytes) -> Callable[[Path], dict]:
    def setup(tmp: Path) -> dict:
        directory = tmp / "bad-first"
        directory.mkdir()
        (directory / NVRTC_SONAME).write_bytes(content)
        return {"LD_LIBRARY_PATH": str(directory)}

    return setup


def _conda_with(content: bytes) -> Callable[[Path], dict]:
    """$CONDA_PREFIX/lib/libnvrtc.so.13 with `content`: the conda step comes before the system
    search, so cuda-pathfinder takes it (and cudnn, which loads nvrtc first, fails with it)."""
    def setup(tmp: Path) -> dict:
        conda = tmp / "conda"
        (conda / "lib").mkdir(parents=True)
        (conda / "lib" / NVRTC_SONAME).write_bytes(content)
        return {"CONDA_PREFIX": str(conda)}

    return setup


def _cuda_path_nvfatbin(content: bytes) -> Callable[[Path], dict]:
    """CUDA_PATH/lib64/libnvfatbin.so.13 with `content` (the system toolkit has no nvfatbin, so
    cuda-pathfinder reaches CUDA_PATH and takes it)."""
    def setup(tmp: Path) -> dict:
        root = tmp / "broken-ctk"
        (root / "lib64").mkdir(parents=True)
        (root / "lib64" / "libnvfatbin.so.13").write_bytes(content)
        return {"CUDA_PATH": str(root)}

    return setup


def _library_needing(directory: Path, soname: str, needed: str, runpath: str | None = None,
                     keep_needed: bool = False) -> Path:
    """`directory/soname`, a real shared object with DT_NEEDED `needed`; the needed library is built
    beside it only with `keep_needed` (else nothing provides it: dlopen fails on it)."""
    stub_dir = directory if keep_needed else directory / ".stubs"
    stub = compile_shared_library(stub_dir, needed)
    directory.mkdir(parents=True, exist_ok=True)
    c_file = directory / f".{soname}.c"
    c_file.write_text("int cudadiag_test_needing(void) { return 0; }\n")
    command = ["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(directory / soname), "-x", "c", str(c_file),
               "-x", "none", "-Wl,--no-as-needed", str(stub)]
    if runpath is not None:
        command[3:3] = ["-Wl,--enable-new-dtags", f"-Wl,-rpath,{runpath}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    c_file.unlink(missing_ok=True)
    if done.returncode != 0:
        pytest.skip(f"cannot build a test shared library: {done.stderr[-300:]}")
    if not keep_needed:
        shutil.rmtree(stub_dir)
    return directory / soname


def _ld_path_missing_dependency(tmp: Path) -> dict:
    """LD_LIBRARY_PATH/libcufft.so.12 whose DT_NEEDED is nowhere: the system search fails."""
    _library_needing(tmp / "ld-path", "libcufft.so.12", "libcudadiag_gone.so.1")
    return {"LD_LIBRARY_PATH": str(tmp / "ld-path")}


def _ld_path_origin_dependency(tmp: Path) -> dict:
    """The same library, its dependency beside it through DT_RUNPATH $ORIGIN: it loads."""
    _library_needing(tmp / "ld-path", "libcufft.so.12", "libcudadiag_beside.so.1", runpath="$ORIGIN",
                     keep_needed=True)
    return {"LD_LIBRARY_PATH": str(tmp / "ld-path")}


def _ld_path_truncated(size: int) -> Callable[[Path], dict]:
    """The first `size` bytes of the toolkit's libcufft.so.12 on LD_LIBRARY_PATH: 500 bytes fail with
    "cannot read file data"; 100000 bytes (segments past the end) kill the process with SIGBUS."""
    def setup(tmp: Path) -> dict:
        source = real_system_lib("libcufft.so.12")
        (tmp / "ld-path").mkdir()
        (tmp / "ld-path" / "libcufft.so.12").write_bytes(source.read_bytes()[:size])
        return {"LD_LIBRARY_PATH": str(tmp / "ld-path")}

    return setup


def _conda_missing_dependency(tmp: Path) -> dict:
    """$CONDA_PREFIX/lib/libnvrtc.so.13 whose DT_NEEDED is nowhere: found by path, its load fails and
    cuda-pathfinder raises (RuntimeError: Failed to dlopen ...), trying nothing else."""
    _library_needing(tmp / "conda" / "lib", NVRTC_SONAME, "libcudadiag_gone.so.1")
    return {"CONDA_PREFIX": str(tmp / "conda")}


def _versioned_library(directory: Path, soname: str, functions: tuple[str, ...]) -> Path:
    """`directory/soname` defining `functions` under the version node named like the SONAME, as the
    real cuBLAS/cuFFT do (an unversioned definition of a versioned reference makes glibc 2.36 assert)."""
    directory.mkdir(parents=True, exist_ok=True)
    c_file = directory / f".{soname}.c"
    c_file.write_text("".join(f"int {name}(void) {{ return 0; }}\n" for name in functions))
    script = directory / f".{soname}.map"
    script.write_text(f"{soname} {{ global: *; }};\n")
    done = subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", f"-Wl,--version-script={script}",
                           "-o", str(directory / soname), "-x", "c", str(c_file)],
                          capture_output=True, text=True, timeout=60, check=False)
    c_file.unlink(missing_ok=True)
    script.unlink(missing_ok=True)
    if done.returncode != 0:
        pytest.skip(f"cannot build a test shared library: {done.stderr[-300:]}")
    return directory / soname


def _venv_with_wheel_cublas_lacking_symbols(tmp: Path) -> dict:
    """A venv of its own (the bare venv's packages through a .pth file: cuda-pathfinder importable)
    whose nvidia/cu13/lib holds a libcublas.so.13, libcublasLt.so.13 and libcufft.so.12 that load but
    lack what the system's libnvblas.so.13, libcusolverMg.so.12 and libcufftw.so.12 (ld.so.cache)
    need: cuda-pathfinder loads the wheel's files first, its system search's dlopen(SONAME) of the
    cache's file fails with "undefined symbol", and it raises DynamicLibNotFoundError."""
    for soname in ("libnvblas.so.13", "libcusolverMg.so.12", "libcufftw.so.12"):
        real_system_lib(soname)
    base = venv("bare")
    root = tmp / "venv"
    made = subprocess.run([str(base.python), "-m", "venv", "--without-pip", str(root)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert made.returncode == 0, made.stderr
    site = Venv(root).site_packages()
    (site / "cudadiag-bare-venv.pth").write_text(f"{base.site_packages()}\n")
    lib = site / "nvidia" / "cu13" / "lib"
    _versioned_library(lib, "libcublasLt.so.13", ("cublasLtCreate",))
    _versioned_library(lib, "libcublas.so.13", ("cublasCreate_v2",))
    _versioned_library(lib, "libcufft.so.12", ("cufftPlan1d",))
    return {"__VENV__": str(root)}


SCENARIOS = [
    Scenario("wheels", "wheels"),
    Scenario("bare", "bare"),
    Scenario("bare-no-cuda-home", "bare", drop=("CUDA_HOME", "CUDA_PATH"),
             notes="headers come from the CTK root derived from where cudart is loaded"),
    Scenario("wheels-ld-library-path", "wheels",
             setup=lambda tmp: {"LD_LIBRARY_PATH": str(SYSTEM_CTK / "lib64")}),
    Scenario("wheels-not-activated-path-only", "wheels", activate=False, names=("nvrtc", "nvJitLink", "cccl"),
             setup=lambda tmp: {"__PATH_PREFIX__": "1"},
             notes="venv python first on PATH without VIRTUAL_ENV"),
    Scenario("wheels-python-option", "wheels", activate=False, names=("nvrtc", "nvJitLink", "cccl"),
             cudadiag_args=lambda v: ["--python", str(v.python)],
             notes="no VIRTUAL_ENV; the interpreter is named with --python"),
    Scenario("bare-cuda-path-fake-toolkit", "bare", setup=_fake_ctk_with_nvfatbin, names=("nvfatbin", "nvrtc"),
             notes="nvfatbin only under CUDA_PATH; nvrtc still from the loader"),
    Scenario("bare-conda", "bare", setup=_conda_prefix, names=("nvrtc",)),
    Scenario("bare-empty-file-first", "bare", setup=_bad_file_first(b""), names=("nvrtc",),
             notes="glibc stops at 'file too short'; cuda-pathfinder falls through to CUDA_HOME"),
    Scenario("bare-not-elf-first", "bare", setup=_bad_file_first(b"not an ELF file\n" * 100), names=("nvrtc",)),
    Scenario("bare-elf32-first", "bare", setup=_bad_file_first(elf_header(32, EM_386)), names=("nvrtc",),
             notes="glibc skips a wrong-class ELF and keeps searching"),
    Scenario("bare-no-cuda-home-empty-file-first", "bare", setup=_bad_file_first(b""),
             drop=("CUDA_HOME", "CUDA_PATH"), names=("nvrtc",),
             notes="nothing after the loader: cuda-pathfinder finds no nvrtc"),
    # Broken first files where cuda-pathfinder takes them and fails: the answer must be
    # that file with `fails`, and its dependents must fail too.
    Scenario("bare-conda-empty-nvrtc", "bare", setup=_conda_with(b""), names=("nvrtc", "cudnn", "cublas")),
    Scenario("bare-conda-elf32-nvrtc", "bare", setup=_conda_with(elf_header(32, EM_386)), names=("nvrtc", "cudnn")),
    Scenario("bare-cuda-path-empty-nvfatbin", "bare", setup=_cuda_path_nvfatbin(b""), names=("nvfatbin",)),
    Scenario("bare-cuda-path-not-elf-nvfatbin", "bare", setup=_cuda_path_nvfatbin(b"not an ELF\n" * 64),
             names=("nvfatbin",)),
    # Loads that fail beyond the first file (issue 43): a dependency, a truncated file, by path.
    Scenario("bare-missing-dependency-first", "bare", setup=_ld_path_missing_dependency, names=("cufft", "cufftw"),
             notes="the system search fails on the missing DT_NEEDED; cuda-pathfinder goes on to CUDA_HOME"),
    Scenario("bare-no-cuda-home-missing-dependency-first", "bare", setup=_ld_path_missing_dependency,
             drop=("CUDA_HOME", "CUDA_PATH"), names=("cufft", "cufftw"),
             notes="nothing after the failed system search: DynamicLibNotFoundError"),
    Scenario("bare-origin-dependency-first", "bare", setup=_ld_path_origin_dependency, names=("cufft",),
             notes="the dependency is found through $ORIGIN: the system search loads it"),
    Scenario("bare-truncated-program-headers-first", "bare", setup=_ld_path_truncated(500), names=("cufft",),
             notes="'cannot read file data': the system search fails, CUDA_HOME's copy is loaded"),
    Scenario("bare-truncated-segments-first", "bare", setup=_ld_path_truncated(100000), names=("cufft",),
             notes="SIGBUS in the system search's dlopen: the process dies"),
    Scenario("bare-conda-missing-dependency-nvrtc", "bare", setup=_conda_missing_dependency, names=("nvrtc", "cudnn"),
             notes="found by path in conda, its load fails: RuntimeError, no fallback"),
    Scenario("venv-wheel-cublas-breaks-system-nvblas", "bare", setup=_venv_with_wheel_cublas_lacking_symbols,
             drop=("CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH"),
             names=("nvblas", "cusolverMg", "cufftw", "cublas", "cublasLt", "cufft"),
             notes="the cache's nvblas/cusolverMg/cufftw bound to the wheel's cuBLAS/cuFFT fail: not found"),
    Scenario("bare-not-elf-64-bytes-first", "bare", setup=_bad_file_first(b"a" * 64), names=("nvrtc",),
             notes="glibc's 'invalid ELF header' (64 bytes, not ELF); cuda-pathfinder goes on to CUDA_HOME"),
    Scenario("bare-conda-not-elf-64-bytes-nvrtc", "bare", setup=_conda_with(b"a" * 64), names=("nvrtc", "cudnn"),
             notes="found by path in conda: RuntimeError ... invalid ELF header, no fallback"),
]


@dataclass
class ScenarioRun:
    venv: Venv
    env: dict
    report: dict
    oracle: dict
    system_search: dict | None = None


_runs: dict[str, ScenarioRun] = {}


def build_env(scenario: Scenario, chosen: Venv, tmp: Path) -> tuple[dict, Venv]:
    """The scenario's environment, and the venv it runs in (a setup may make one: "__VENV__")."""
    env = {k: v for k, v in os.environ.items() if k not in scenario.drop}
    env.pop("PYTHONPATH", None)
    changes = scenario.setup(tmp)
    if "__VENV__" in changes:
        chosen = Venv(Path(changes.pop("__VENV__")))
    if changes.pop("__PATH_PREFIX__", None):
        env["PATH"] = f"{chosen.bin_dir}:{env.get('PATH', '/usr/bin:/bin')}"
    env.update(changes)
    if scenario.activate:
        env = chosen.activated_env(env)
    else:
        env.pop("VIRTUAL_ENV", None)
    return env, chosen


def run_oracle(python: Path, env: dict, names=(), system_search=False) -> dict:
    command = [str(python), str(ORACLE), *names]
    if system_search:
        command.insert(2, "--system-search")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"oracle failed: {done.stderr}"
    return json.loads(done.stdout)


def scenario_run(scenario: Scenario, tmp_path_factory) -> ScenarioRun:
    if scenario.id not in _runs:
        chosen = venv(scenario.venv)
        real_system_lib(NVRTC_SONAME)
        tmp = tmp_path_factory.mktemp(scenario.id)
        env, chosen = build_env(scenario, chosen, tmp)
        result = run(["--json", *scenario.cudadiag_args(chosen)], env=env, cwd=tmp)
        assert result.returncode in (0, 1), describe(result)
        report = parse_report(result, validate=False)  # validity: test_reports_are_schema_valid
        # The oracle runs the venv's python directly, which sees that venv's site-packages
        # whether or not VIRTUAL_ENV is set, matching what cudadiag is told about.
        oracle = run_oracle(chosen.python, env, scenario.names)
        _runs[scenario.id] = ScenarioRun(chosen, env, report, oracle)
    return _runs[scenario.id]


def cudadiag_entry(report: dict, kind: str, name: str) -> dict | None:
    for entry in report["components"]:
        if entry["kind"] == kind and entry["name"] == name:
            return entry
    return None


def realpath_or_none(path: str | None) -> str | None:
    return os.path.realpath(path) if path else None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_reports_are_schema_valid(scenario, tmp_path_factory):
    outcome = scenario_run(scenario, tmp_path_factory)
    problems = schema_errors(outcome.report) + invariant_errors(outcome.report)
    assert not problems, "\n".join(problems[:40])


# ---------------------------------------------------------------------------------------------
# Wheels are selected from the venv, with their wheel versions
# ---------------------------------------------------------------------------------------------


def pip_show_versions(python: Path, distributions: list[str]) -> dict[str, str]:
    done = subprocess.run([str(python), "-m", "pip", "show", *distributions], capture_output=True, text=True,
                          timeout=120, check=True)
    versions, name = {}, None
    for line in done.stdout.splitlines():
        if line.startswith("Name:"):
            name = line.split(":", 1)[1].strip().lower().replace("_", "-")
        elif line.startswith("Version:") and name:
            versions[name] = line.split(":", 1)[1].strip()
    return versions


def test_wheels_are_selected_from_the_venv_with_wheel_versions(tmp_path_factory):
    scenario = next(s for s in SCENARIOS if s.id == "wheels")
    outcome = scenario_run(scenario, tmp_path_factory)
    site = outcome.venv.site_packages().resolve()
    versions = pip_show_versions(outcome.venv.python, [dist for _, _, dist in WHEEL_COMPONENTS])
    problems = []
    for kind, name, distribution in WHEEL_COMPONENTS:
        entry = component(outcome.report, name, kind)
        selected = entry["selected"]
        if not selected:
            problems.append(f"{kind} {name}: nothing selected")
            continue
        real = Path(selected["realpath"] or selected["path"]).resolve()
        if site not in real.parents:
            problems.append(f"{kind} {name}: selected {selected['path']} is outside {site}")
        if "/nvidia/cu13/" not in str(real) + "/":
            problems.append(f"{kind} {name}: selected {selected['path']} is not in the nvidia/cu13 wheel layout")
        expectations = [("found_via", "site-packages"), ("pathfinder_found_via", "site-packages")]
        if name == "cccl":
            # CCCL reports its own version from <cuda/version> (CCCL 3.5.0 ships in the 13.3.5.0.6
            # wheel; CCCL's major is the CUDA major minus 10), not the wheel's packaging version.
            expectations.append(("version_source", "header_macro"))
            wheel_major = int(versions.get(distribution, "0").split(".")[0])
            cccl_major = int((selected.get("version") or "0").split(".")[0])
            if cccl_major != wheel_major - 10:
                problems.append(f"{kind} {name}: CCCL {selected.get('version')} does not match wheel "
                                f"{versions.get(distribution)}")
        else:
            expectations += [("version_source", "wheel_metadata"), ("version", versions.get(distribution))]
        for key, expected in expectations:
            if selected.get(key) != expected:
                problems.append(f"{kind} {name}: selected {key} = {selected.get(key)!r}, expected {expected!r}")
    assert not problems, "\n".join(problems)


def test_bare_venv_selects_the_system_toolkit(tmp_path_factory):
    outcome = scenario_run(next(s for s in SCENARIOS if s.id == "bare"), tmp_path_factory)
    system_root = os.path.realpath(SYSTEM_CTK)
    for kind, name in (("dynamic_lib", "nvrtc"), ("dynamic_lib", "nvJitLink"), ("headers", "cccl")):
        selected = component(outcome.report, name, kind)["selected"]
        assert selected and (selected["realpath"] or "").startswith(system_root + "/"), (kind, name, selected)


# ---------------------------------------------------------------------------------------------
# Conformance with cuda-pathfinder
# ---------------------------------------------------------------------------------------------


def compare_selection(outcome: ScenarioRun) -> tuple[list[str], list[str], list[str]]:
    """Returns (realpath mismatches, found_via mismatches, compared keys)."""
    realpath_problems, via_problems, compared = [], [], []
    for key, answer in sorted(outcome.oracle.items()):
        if answer["error"] == "unsupported":
            continue
        entry = cudadiag_entry(outcome.report, answer["kind"], answer["name"])
        if entry is None:
            continue  # not in cudadiag's catalog: not supported by both
        compared.append(key)
        selected = entry["selected"]
        # An answer that fails is no library CUDA Python gets (cuda-pathfinder raises):
        # test_failure_class_agrees_with_cuda_pathfinder compares those.
        ours = realpath_or_none(selected and not selected.get("fails") and (selected["realpath"] or selected["path"]))
        theirs = realpath_or_none(answer["abs_path"])
        if ours != theirs:
            realpath_problems.append(
                f"{key}: cudadiag selected {ours} ({selected and selected['found_via']}), "
                f"cuda-pathfinder {theirs} ({answer['found_via'] or (answer['error'] or '')[:160]})")
        elif ours and answer["found_via"] and selected["pathfinder_found_via"] != answer["found_via"]:
            via_problems.append(f"{key}: cudadiag says cuda-pathfinder found it via "
                                f"{selected['pathfinder_found_via']!r}, cuda-pathfinder says {answer['found_via']!r}")
    return realpath_problems, via_problems, compared


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_selected_realpath_agrees_with_cuda_pathfinder(scenario, tmp_path_factory):
    outcome = scenario_run(scenario, tmp_path_factory)
    problems, _, compared = compare_selection(outcome)
    assert compared, "nothing to compare"
    assert not problems, (f"{len(problems)} of {len(compared)} disagree in scenario {scenario.id}"
                          f"{' (' + scenario.notes + ')' if scenario.notes else ''}:\n  " + "\n  ".join(problems))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_pathfinder_found_via_agrees_with_cuda_pathfinder(scenario, tmp_path_factory):
    outcome = scenario_run(scenario, tmp_path_factory)
    _, problems, _ = compare_selection(outcome)
    assert not problems, f"scenario {scenario.id}:\n  " + "\n  ".join(problems)


def outcome_class(entry_or_answer: dict, *, oracle: bool) -> str:
    """"loads", "fails" (found, but dlopen fails: cuda-pathfinder's RuntimeError "Failed to dlopen")
    or "not-found" (DynamicLibNotFoundError, or None for headers and binaries)."""
    if oracle:
        error = entry_or_answer["error"] or ""
        if not error:
            return "loads"
        if re.match(r"child exited -\d+", error):  # killed by a signal (SIGBUS): the load crashed
            return "crashes"
        if "Failed to dlopen" in error:
            return "fails"
        return "not-found" if ("NotFound" in error or error == "not found") else f"other: {error[:80]}"
    selected = entry_or_answer["selected"]
    if selected is None:
        return "not-found"
    if selected.get("outcome") == "crashes":
        return "crashes"
    return "fails" if selected.get("fails") else "loads"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.id)
def test_failure_class_agrees_with_cuda_pathfinder(scenario, tmp_path_factory):
    """Not only the path: whether CUDA Python's answer loads, fails to load, or is not found must
    agree with cuda-pathfinder for every component, broken first files and dependents included."""
    outcome = scenario_run(scenario, tmp_path_factory)
    problems = []
    for key, answer in sorted(outcome.oracle.items()):
        if answer["error"] == "unsupported":
            continue
        entry = cudadiag_entry(outcome.report, answer["kind"], answer["name"])
        if entry is None:
            continue
        theirs = outcome_class(answer, oracle=True)
        ours = outcome_class(entry, oracle=False)
        if theirs != ours:
            problems.append(f"{key}: cudadiag says {ours} ({(entry['selected'] or {}).get('fails')}), "
                            f"cuda-pathfinder {theirs} ({(answer['error'] or '')[:200]})")
        elif theirs == "fails":
            # The file cuda-pathfinder failed on is the one cudadiag names (itself, or the dependency).
            failed = re.search(r"Failed to dlopen (\S+?):", answer["error"])
            said = entry["selected"]["path"] + " " + entry["selected"]["fails"]
            if failed and os.path.realpath(failed.group(1)) not in {os.path.realpath(p) for p in said.split()} \
                    and failed.group(1) not in said:
                problems.append(f"{key}: cuda-pathfinder failed on {failed.group(1)}, cudadiag names {said[:200]}")
    assert not problems, f"scenario {scenario.id}:\n  " + "\n  ".join(problems)


# In cuda-pathfinder's process after its load of NAME raised: dlopen(SONAME) again, its dependencies
# still loaded (RTLD_GLOBAL), as its system search did: the file and glibc's words.
_RETRY_IN_PATHFINDERS_PROCESS = """
import ctypes, json, os, sys
import cuda.pathfinder as pathfinder
name, soname = sys.argv[1], sys.argv[2]
try:
    pathfinder.load_nvidia_dynamic_lib(name)
    raised = None
except Exception as error:
    raised = type(error).__name__
try:
    ctypes.CDLL(soname, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    error = None
except OSError as failure:
    error = str(failure)
print(json.dumps({"raised": raised, "error": error}))
"""

def same_glibc_words(glibc: str, ours: str) -> bool:
    """Whether cudadiag's reason says what dlerror() said: the same text, or for a missing symbol the
    same kind and version (glibc names the first symbol it looks up, cudadiag may list another first)."""
    if glibc in ours or ours in glibc:
        return True
    symbol = re.match(r"undefined symbol: \S+?(, version (\S+))?$", glibc)
    return bool(symbol) and "undefined symbol: " in ours and (symbol.group(2) or "") in ours


PYTHON_FAILED_SCENARIOS = [s for s in SCENARIOS if s.id in {
    "venv-wheel-cublas-breaks-system-nvblas", "bare-no-cuda-home-missing-dependency-first"}]


@pytest.mark.parametrize("scenario", PYTHON_FAILED_SCENARIOS, ids=lambda s: s.id)
def test_python_failed_is_the_file_cuda_pathfinders_load_fails_on(scenario, tmp_path_factory):
    """Where cuda-pathfinder raises DynamicLibNotFoundError after its system search failed, cudadiag's
    `python_failed` names the file: in cuda-pathfinder's own process, dlopen(SONAME) fails at that
    file with glibc's words that cudadiag gives in `fails`; `status` is error."""
    outcome = scenario_run(scenario, tmp_path_factory)
    problems, compared = [], 0
    for key, answer in sorted(outcome.oracle.items()):
        entry = cudadiag_entry(outcome.report, answer["kind"], answer["name"])
        if entry is None or answer["kind"] != "dynamic_lib" or not entry.get("python_failed"):
            continue
        failed = entry["python_failed"]
        compared += 1
        if entry["status"] != "error" or entry["selected"] is not None:
            problems.append(f"{key}: status {entry['status']}, selected {entry['selected']}")
        done = subprocess.run([str(outcome.venv.python), "-c", _RETRY_IN_PATHFINDERS_PROCESS, answer["name"],
                               os.path.basename(failed["path"])], env=outcome.env, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, done.stderr[-500:]
        real = json.loads(done.stdout)
        error = real["error"] or ""
        if real["raised"] != "DynamicLibNotFoundError":
            problems.append(f"{key}: cuda-pathfinder raised {real['raised']}")
        # glibc names the object it stopped at ("PATH: undefined symbol: ..."), or for a missing
        # dependency only that dependency ("NAME: cannot open shared object file: ...").
        names_a_file = error.startswith("/")
        path, words = error.split(": ", 1) if names_a_file else (None, error)
        if not error or (names_a_file and realpath_or_none(path) != realpath_or_none(failed["realpath"] or failed["path"])):
            problems.append(f"{key}: dlopen fails at {error[:200]!r}, cudadiag's python_failed {failed['path']}")
        elif not same_glibc_words(words, failed["fails"]):
            problems.append(f"{key}: glibc says {error[:200]!r}, cudadiag {failed['fails'][:200]!r}")
    assert compared, "no python_failed answer to compare"
    assert not problems, f"scenario {scenario.id}:\n  " + "\n  ".join(problems)


LOADER_SCENARIOS = [s for s in SCENARIOS if s.id in {
    "bare", "wheels-ld-library-path", "bare-empty-file-first", "bare-not-elf-first", "bare-elf32-first",
    "bare-missing-dependency-first", "bare-origin-dependency-first", "bare-truncated-program-headers-first",
    "bare-truncated-segments-first", "bare-not-elf-64-bytes-first"}]


@pytest.mark.parametrize("scenario", LOADER_SCENARIOS, ids=lambda s: s.id)
def test_loader_agrees_with_plain_dlopen(scenario, tmp_path_factory):
    outcome = scenario_run(scenario, tmp_path_factory)
    if outcome.system_search is None:
        outcome.system_search = run_oracle(outcome.venv.python, outcome.env, scenario.names, system_search=True)
    problems, compared = [], 0
    for key, answer in sorted(outcome.system_search.items()):
        entry = cudadiag_entry(outcome.report, "dynamic_lib", answer["name"])
        if entry is None or answer["error"] == "unsupported":
            continue
        error = answer["error"] or ""
        loader = entry["loader"]
        # An answer that fails (glibc stopped at a broken file) is no file dlopen returns.
        ours = realpath_or_none(loader and not loader.get("fails") and (loader["realpath"] or loader["path"]))
        if re.match(r"child exited -\d+", error):
            # dlopen killed the child (SIGBUS): cudadiag's loader answer must say it crashes.
            compared += 1
            if not loader or loader.get("outcome") != "crashes":
                problems.append(f"{key}: dlopen(SONAME) crashed ({error[:80]}), cudadiag loader "
                                f"{loader and loader.get('outcome')}")
            continue
        if answer["abs_path"]:
            expected = realpath_or_none(answer["abs_path"])
        elif all("cannot open shared object file: No such file" in part or part.startswith("/")
                 or "wrong ELF class" in part for part in error.split("; ")):
            # Not there, glibc stopped at a file it cannot load, or it skipped a file of the other
            # ELF class and found no other ("SONAME: wrong ELF class: ELFCLASS32").
            expected = None
        else:
            continue  # dlopen found it but failed for another reason (a dependency): not comparable
        compared += 1
        if ours != expected:
            problems.append(f"{key}: cudadiag loader {ours}, dlopen(SONAME) {expected} ({error[:160]})")
    assert compared, "nothing to compare"
    assert not problems, f"scenario {scenario.id}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------
# Every name, in synthetic layouts built from cuda-pathfinder's own descriptors
# ---------------------------------------------------------------------------------------------

SYNTHETIC = Path(__file__).resolve().parent / "synthetic_layouts.py"
SYNTHETIC_LAYOUTS = ("wheels-cu13", "wheels-cu12", "conda", "cuda-path")
# (layout, "<kind>/<name>") -> why the two tools differ there, for differences that are a
# cuda-pathfinder quirk cudadiag mirrors on purpose or cannot mirror. Empty: none known.
KNOWN_DIFFERENCES: dict[tuple[str, str], str] = {}


def answer_of(entry_or_answer: dict | None, *, oracle: bool) -> tuple[str, str | None]:
    """(outcome class, realpath of the answer when it loads) for either tool."""
    if entry_or_answer is None:
        return "absent", None
    klass = outcome_class(entry_or_answer, oracle=oracle)
    if klass != "loads":
        return klass, None
    if oracle:
        return klass, realpath_or_none(entry_or_answer["abs_path"])
    selected = entry_or_answer["selected"]
    return klass, realpath_or_none(selected["realpath"] or selected["path"])


def synthetic_comparison(layout: str, tmp: Path) -> dict[str, tuple[bool, str]]:
    """{"<kind>/<name>": (agree, detail)} for every name both tools know, in `layout`."""
    base = venv("bare")
    built = subprocess.run([str(base.python), str(SYNTHETIC), layout, str(tmp)], capture_output=True, text=True,
                           timeout=600, check=False)
    assert built.returncode == 0, built.stderr
    spec = json.loads(built.stdout)
    env = {k: v for k, v in os.environ.items() if k not in spec["unset"] and k != "PYTHONPATH"}
    env.update(spec["env"])
    if spec["venv"]:
        env = Venv(Path(spec["venv"])).activated_env(env)
    else:
        env = base.activated_env(env)
    result = run(["--json", "--no-load"], env=env, cwd=tmp)
    assert result.returncode in (0, 1), describe(result)
    report = parse_report(result, validate=False)
    problems = schema_errors(report)
    assert not problems, "\n".join(problems[:20])
    oracle = run_oracle(Path(spec["python"]), env)
    table = {}
    for key, answer in sorted(oracle.items()):
        entry = cudadiag_entry(report, answer["kind"], answer["name"])
        theirs = answer_of(answer, oracle=True)
        ours = answer_of(entry, oracle=False)
        agree = theirs == ours
        detail = theirs[0] if agree else f"cudadiag {ours[0]} {ours[1]}, cuda-pathfinder {theirs[0]} {theirs[1]} " \
                                  f"({(answer['error'] or '')[:160]})"
        table[key] = (agree, detail)
    return table


def test_every_name_agrees_with_cuda_pathfinder_in_synthetic_layouts(tmp_path_factory):
    """Conformance for all 101 names: wheel trees (CUDA 13 and CUDA 12 directories), a conda prefix
    and a CUDA_PATH tree, each built from cuda-pathfinder's descriptors with real shared objects.
    Prints the table name x layout -> agree/differ (run pytest with -s to see it)."""
    columns = {layout: synthetic_comparison(layout, tmp_path_factory.mktemp(layout)) for layout in SYNTHETIC_LAYOUTS}
    keys = sorted(set().union(*columns.values()))
    width = max(len(key) for key in keys)
    lines_out = [f"{'name':<{width}}  " + "  ".join(f"{layout:<11}" for layout in SYNTHETIC_LAYOUTS)]
    problems, agreed, total = [], 0, 0
    outcomes: dict[str, int] = {}
    for key in keys:
        cells = []
        for layout in SYNTHETIC_LAYOUTS:
            agree, detail = columns[layout].get(key, (False, "not asked"))
            known = KNOWN_DIFFERENCES.get((layout, key))
            total += 1
            agreed += agree
            if agree:
                outcomes[detail] = outcomes.get(detail, 0) + 1
            cells.append(f"{'agree' if agree else ('quirk' if known else 'DIFFER'):<11}")
            if not agree and not known:
                problems.append(f"{layout} {key}: {detail}")
        lines_out.append(f"{key:<{width}}  " + "  ".join(cells))
    lines_out.append(f"{agreed}/{total} agree ({len(keys)} names x {len(SYNTHETIC_LAYOUTS)} layouts; agreeing on: "
                     + ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items())) + ")")
    table = "\n".join(lines_out)
    print("\n" + table)
    target = os.environ.get("CUDADIAG_CONFORMANCE_TABLE")
    if target:
        Path(target).write_text(table + "\n")
    assert not problems, f"{len(problems)} differences:\n  " + "\n  ".join(problems) + "\n" + table


def test_catalog_names_are_cuda_pathfinders():
    """`cudadiag --json --no-load` lists every (kind, name) cuda-pathfinder exports, and marks only those
    `cuda_python`: 101 for the pinned 1.9.1 (50 libraries, 31 header sets, 16 binaries, 1 static,
    3 bitcode). The libraries cudadiag adds beyond them (cuDNN's sub-libraries) are `cuda_python: false`
    and never have a `selected` answer."""
    chosen = venv("bare")
    listed = subprocess.run([str(chosen.python), str(ORACLE), "--list"], capture_output=True, text=True,
                            timeout=120, check=True)
    theirs = {tuple(pair) for pair in json.loads(listed.stdout)}
    version = subprocess.run([str(chosen.python), "-c", "import cuda.pathfinder as p; print(p.__version__)"],
                             capture_output=True, text=True, timeout=120, check=True).stdout.strip()
    result = run(["--json", "--no-load"], env=chosen.activated_env())
    assert result.returncode in (0, 1), describe(result)
    components = parse_report(result)["components"]
    ours = {(entry["kind"], entry["name"]) for entry in components if entry["cuda_python"]}
    beyond = [entry for entry in components if not entry["cuda_python"]]
    assert beyond and all(entry["kind"] == "dynamic_lib" and entry["selected"] is None for entry in beyond), beyond
    assert ours == theirs, (f"only cudadiag: {sorted(ours - theirs)}; "
                            f"only cuda-pathfinder {version}: {sorted(theirs - ours)}")
    if version == "1.9.1":
        assert len(ours) == 101


def test_oracle_runs_standalone():
    """pathfinder_oracle.py is also a hand tool (the GPU host): it must run outside pytest."""
    chosen = venv("bare")
    done = subprocess.run([str(chosen.python), str(ORACLE), "--all-supported", "nvrtc", "cccl", "nvcc"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    answers = json.loads(done.stdout)
    assert {"dynamic_lib/nvrtc", "headers/nvrtc", "headers/cccl", "binary/nvcc"} <= set(answers), answers.keys()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, *sys.argv[1:]]))
