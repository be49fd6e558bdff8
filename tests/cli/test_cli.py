"""Runs the real cudadiag binary: the CLI contract (DESIGN.md §3), the JSON schema, and a matrix of
bad inputs, each under a controlled environment built in tmp_path.

Every invocation must finish within TIMEOUT_S, exit 0, 1 or 2 as the contract says (never 3 or a
signal), and, with --json, print one schema-valid, strict-UTF-8 JSON document on stdout.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from cudadiag_harness import (
    EM_386,
    EM_AARCH64,
    SOURCE_DIR,
    SYSTEM_CTK,
    all_candidate_paths,
    clean_env,
    compile_shared_library,
    component,
    describe,
    elf_header,
    finding_ids,
    parse_report,
    real_system_lib,
    run,
    run_in_pty,
    run_report,
    venv,
)

NVRTC_SONAME = "libnvrtc.so.13"
ANSI_ESCAPE = b"\x1b["


def project_version() -> str:
    match = re.search(r"project\(cudadiag\s+VERSION\s+([0-9.]+)", (SOURCE_DIR / "CMakeLists.txt").read_text())
    assert match, "no project(cudadiag VERSION ...) in CMakeLists.txt"
    return match.group(1)


def lines(data: bytes) -> list[str]:
    return [line for line in data.decode("utf-8").splitlines() if line.strip()]


@pytest.fixture
def real_nvrtc() -> Path:
    return real_system_lib(NVRTC_SONAME)


# ---------------------------------------------------------------------------------------------
# --version, --help, usage errors
# ---------------------------------------------------------------------------------------------


def test_version():
    result = run(["--version"])
    assert result.returncode == 0, describe(result)
    assert project_version() in result.stdout.decode(), describe(result)


@pytest.mark.parametrize("args, mentions", [
    (["--help"], ["find", "--json", "--version", "--no-color"]),
    (["-h"], ["find", "--json"]),
    (["find", "--help"], ["--all", "--explain", "--headers"]),
], ids=["--help", "-h", "find --help"])
def test_help_goes_to_stdout_and_exits_0(args, mentions):
    result = run(args)
    assert result.returncode == 0, describe(result)
    text = result.stdout.decode()
    for word in mentions:
        assert word in text, f"help should mention {word}\n" + describe(result)


@pytest.mark.parametrize(
    "args",
    [
        ["--no-such-flag"],
        ["no-such-subcommand"],
        ["find"],
        ["find", "no-such-component"],
        ["find", "nvrtc", "extra-argument"],
        ["find", "--no-such-flag", "nvrtc"],
        ["--fail-on", "bogus"],
        ["--log-level", "bogus"],
        ["--ld-so-cache"],
        ["--python"],
    ],
    ids=lambda args: " ".join(args) or "(none)",
)
def test_usage_errors_exit_2_with_nothing_on_stdout(args):
    result = run(args)
    assert result.returncode == 2, describe(result)
    assert result.stdout.strip() == b"", describe(result)
    assert result.stderr.strip() != b"", "a usage error should say what is wrong on stderr\n" + describe(result)


# ---------------------------------------------------------------------------------------------
# The full report
# ---------------------------------------------------------------------------------------------


def test_full_json_report_is_schema_valid_and_exit_code_matches():
    doc = run_report()
    assert doc["tool"] == {"name": "cudadiag", "version": project_version()}
    kinds = {(c["kind"], c["name"]) for c in doc["components"]}
    for expected in [("dynamic_lib", "nvrtc"), ("dynamic_lib", "cuda"), ("headers", "cccl"),
                     ("headers", "cudart"), ("headers", "nvrtc"), ("binary", "nvcc"), ("binary", "ptxas")]:
        assert expected in kinds, f"{expected} missing from components {sorted(kinds)}"
    assert doc["environment"]["uid"] == os.getuid()
    assert doc["environment"]["cwd"] == os.getcwd()


def test_environment_variables_reported_as_seen(tmp_path):
    env = clean_env(CUDA_HOME=str(tmp_path), CUDA_PATH="", LD_LIBRARY_PATH="/a:/b")
    variables = run_report(env=env)["environment"]["variables"]
    assert variables.get("CUDA_HOME") == str(tmp_path)
    assert variables.get("CUDA_PATH") == "", "an empty variable is reported as the empty string"
    assert variables.get("LD_LIBRARY_PATH") == "/a:/b"
    assert "CONDA_PREFIX" in variables and variables["CONDA_PREFIX"] is None, "an unset variable is null"


def test_text_report_exit_code_matches_json():
    text = run([])
    assert text.returncode in (0, 1), describe(text)
    assert b"nvrtc" in text.stdout, describe(text)
    as_json = run_report()
    assert text.returncode == as_json["summary"]["exit_code"]


@pytest.mark.parametrize("verbosity", [["-v"], ["--log-level", "debug"]], ids=["-v", "--log-level=debug"])
def test_stdout_carries_only_the_report_logs_go_to_stderr(verbosity):
    result = run(["--json", *verbosity])
    parse_report(result)  # stdout is exactly one JSON document
    assert result.stderr.strip(), "expected log lines on stderr with " + " ".join(verbosity)


@pytest.mark.parametrize("policy", [None, "error", "warning"])
def test_exit_code_follows_the_fail_on_policy(policy, tmp_path):
    # CUDA_PATH and CUDA_HOME disagreeing is a warning (cuda-pathfinder warns too); on a machine
    # without a driver there is also an error, so check the rule rather than one outcome.
    env = clean_env(CUDA_PATH=str(SYSTEM_CTK), CUDA_HOME=str(tmp_path))
    args = ["--fail-on", policy] if policy else []
    result = run(["--json", *args], env=env)
    doc = parse_report(result)
    counts = doc["summary"]["counts"]
    assert counts["warning"] >= 1, f"expected the CUDA_PATH/CUDA_HOME warning: {doc['findings']}"
    failing = counts["error"] + (counts["warning"] if policy == "warning" else 0)
    assert result.returncode == (1 if failing else 0), f"counts {counts}, --fail-on {policy}: exit {result.returncode}"
    text = run(args, env=env)
    assert text.returncode == result.returncode, describe(text)


# ---------------------------------------------------------------------------------------------
# find
# ---------------------------------------------------------------------------------------------


def test_find_nvrtc_prints_one_existing_path():
    result = run(["find", "nvrtc"])
    assert result.returncode == 0, describe(result)
    found = lines(result.stdout)
    assert len(found) == 1, describe(result)
    path = Path(found[0])
    assert path.is_absolute() and path.is_file(), describe(result)
    assert path.name.startswith("libnvrtc.so"), describe(result)


def test_find_cccl_prints_the_directory_holding_cuda_std_version():
    result = run(["find", "cccl"])
    assert result.returncode == 0, describe(result)
    found = lines(result.stdout)
    assert len(found) == 1 and (Path(found[0]) / "cuda" / "std" / "version").is_file(), describe(result)


def test_find_headers_cudart_prints_the_include_dir():
    result = run(["find", "--headers", "cudart"])
    assert result.returncode == 0, describe(result)
    found = lines(result.stdout)
    assert len(found) == 1 and (Path(found[0]) / "cuda_runtime.h").is_file(), describe(result)


def test_find_cudart_is_the_library_not_the_headers():
    result = run(["find", "cudart"])
    assert result.returncode == 0, describe(result)
    found = lines(result.stdout)
    assert len(found) == 1 and Path(found[0]).name.startswith("libcudart.so"), describe(result)


def test_find_nvcc_prints_an_executable():
    result = run(["find", "nvcc"])
    assert result.returncode == 0, describe(result)
    found = lines(result.stdout)
    assert len(found) == 1 and os.access(found[0], os.X_OK) and Path(found[0]).name == "nvcc", describe(result)


@pytest.mark.parametrize("name, kind, check", [
    ("headers/cudart", "headers", lambda p: (p / "cuda_runtime.h").is_file()),
    ("binary/nvcc", "binary", lambda p: p.name == "nvcc" and os.access(p, os.X_OK)),
    ("headers/nvcc", "headers", lambda p: (p / "fatbinary_section.h").is_file()),
    ("static/cudadevrt", "static_lib", lambda p: p.name == "libcudadevrt.a"),
    ("bitcode/device", "bitcode_lib", lambda p: p.name == "libdevice.10.bc"),
    ("bitcode_lib/device", "bitcode_lib", lambda p: p.name == "libdevice.10.bc"),
])
def test_find_kind_slash_name_picks_one_component(name, kind, check):
    """The system toolkit (CUDA_HOME) has all of these; KIND/NAME names exactly one component."""
    env = {**os.environ, "CUDA_HOME": str(SYSTEM_CTK)}
    result = run(["find", name, "--json"], env=env)
    assert result.returncode == 0, describe(result)
    doc = parse_report(result, check_exit_code=False)
    assert [c["kind"] for c in doc["components"]] == [kind], describe(result)
    text = run(["find", name], env=env)
    found = lines(text.stdout)
    assert len(found) == 1 and check(Path(found[0])), describe(text)


@pytest.mark.parametrize("typo, suggestion", [("nvjitlnk", "nvJitLink"), ("cudrt", "cudart"),
                                              ("headers/cudrt", "cudart"), ("cusparselt", "cusparseLt")])
def test_find_unknown_name_suggests_the_closest(typo, suggestion):
    result = run(["find", typo])
    assert result.returncode == 2, describe(result)
    assert f"did you mean {suggestion}?".encode() in result.stderr, describe(result)
    assert result.stdout == b"", describe(result)


def test_find_unknown_kind_or_far_name_lists_known_names():
    for argument in ("no-such-library", "weird/nvrtc"):
        result = run(["find", argument])
        assert result.returncode == 2, describe(result)
        assert b"unknown component" in result.stderr, describe(result)


def test_find_json_has_only_that_component():
    result = run(["find", "nvrtc", "--json"])
    assert result.returncode == 0, describe(result)
    doc = parse_report(result, check_exit_code=False)
    assert [(c["kind"], c["name"]) for c in doc["components"]] == [("dynamic_lib", "nvrtc")]
    assert doc["components"][0]["status"] == "found"


def test_find_headers_json_has_the_headers_component():
    result = run(["find", "--headers", "nvrtc", "--json"])
    assert result.returncode == 0, describe(result)
    doc = parse_report(result, check_exit_code=False)
    assert [(c["kind"], c["name"]) for c in doc["components"]] == [("headers", "nvrtc")]


def test_find_all_json_lists_every_candidate_with_provenance_and_version():
    result = run(["find", "--all", "nvrtc", "--json"])
    assert result.returncode == 0, describe(result)
    entry = component(parse_report(result, check_exit_code=False), "nvrtc")
    assert entry["candidates"], "expected at least one nvrtc candidate on this machine"
    for candidate in entry["candidates"]:
        for key in ("found_via", "version", "version_source"):
            assert key in candidate, f"candidate {candidate['path']} lacks {key}"
        if not candidate["rejected"]:
            assert candidate["version"], f"usable candidate {candidate['path']} has no version"
            assert candidate["version_source"], f"usable candidate {candidate['path']} has no version_source"
    assert entry["selected"]["realpath"] in {c["realpath"] for c in entry["candidates"]}


def test_find_all_text_prints_one_candidate_per_line_path_first():
    text = run(["find", "--all", "nvrtc"])
    assert text.returncode == 0, describe(text)
    entry = component(parse_report(run(["find", "--all", "nvrtc", "--json"]), check_exit_code=False), "nvrtc")
    printed = lines(text.stdout)
    expected = [c["path"] for c in entry["candidates"]]
    assert len(printed) == len(expected), f"expected one line per candidate:\n{text.stdout.decode()}"
    for line, path in zip(printed, expected):
        assert line.startswith(path), f"line {line!r} should start with {path!r}"


def test_find_explain_prints_the_search_trace():
    result = run(["find", "nvrtc", "--explain"])
    assert result.returncode == 0, describe(result)
    text = result.stdout.decode()
    selected = run(["find", "nvrtc"]).stdout.decode().strip()
    assert len(lines(result.stdout)) >= 3, describe(result)
    assert selected in text, f"the trace should name the selected path {selected}\n{text}"
    trace = component(parse_report(run(["find", "nvrtc", "--json"]), check_exit_code=False), "nvrtc")["trace"]
    assert trace, "the JSON trace is empty"


def test_find_explain_shows_each_answers_closure_with_cuda_pythons_preloads():
    """cuSPARSE's python answer loads the selected nvJitLink first (cuda-pathfinder's dependency),
    even though `find cusparse` asks for one component."""
    document = parse_report(run(["find", "cusparse", "--json"]), check_exit_code=False)
    nvjitlink = run(["find", "nvJitLink"]).stdout.decode().strip()
    if not component(document, "cusparse").get("selected") or not nvjitlink:
        pytest.skip("cuSPARSE or nvJitLink is not installed here")
    [cusparse] = [c for c in document["linkage"]["components"] if c["name"] == "cusparse"]
    [python] = [c for c in cusparse["closures"] if "python" in c["answers"]]
    preloaded = [o["path"] for o in python["objects"] if o["found_via"] == "preloaded"]
    assert preloaded == [nvjitlink], python["objects"]
    assert [c["name"] for c in document["linkage"]["components"]] == ["cusparse"]  # the dependency is not reported
    text = run(["find", "cusparse", "--explain", "--no-color"]).stdout.decode()
    assert "Dependency closures" in text and "(preloaded; the selected nvJitLink)" in text, text


def test_find_not_found_exits_1_with_empty_stdout(tmp_path):
    # nvfatbin is absent from this machine's toolkit; a clean environment and an empty
    # ld.so.cache leave only the loader's default directories.
    empty_cache = tmp_path / "ld.so.cache"
    empty_cache.write_bytes(b"")
    result = run(["--ld-so-cache", str(empty_cache), "find", "nvfatbin"], env=clean_env(), cwd=tmp_path)
    if result.returncode == 0 and Path(result.stdout.decode().strip()).exists():
        pytest.skip(f"nvfatbin really is installed here: {result.stdout.decode().strip()}")
    assert result.returncode == 1, describe(result)
    assert result.stdout.strip() == b"", describe(result)


# ---------------------------------------------------------------------------------------------
# Colour
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [[], ["find", "nvrtc", "--all"], ["find", "nvrtc", "--explain"], ["-v"]],
                         ids=["report", "find --all", "find --explain", "-v"])
def test_no_ansi_escapes_when_not_a_tty(args):
    result = run(args)
    assert result.returncode in (0, 1), describe(result)
    assert ANSI_ESCAPE not in result.stdout, "colour on a pipe (stdout)"
    assert ANSI_ESCAPE not in result.stderr, "colour on a pipe (stderr)"


@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_ansi_escapes_on_a_tty_when_colour_is_off(how):
    env = dict(os.environ, TERM="xterm-256color")
    args = ["-v"]
    if how == "NO_COLOR":
        env["NO_COLOR"] = "1"
    else:
        env.pop("NO_COLOR", None)
        args.append("--no-color")
    code, output = run_in_pty(args, env=env)
    assert code in (0, 1), output.decode(errors="replace")
    assert b"nvrtc" in output
    assert ANSI_ESCAPE not in output, f"colour on a tty with {how}"


# ---------------------------------------------------------------------------------------------
# Bad input matrix: environment variables that name toolkit roots
# ---------------------------------------------------------------------------------------------

ROOT_VARIABLES = ["CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "VIRTUAL_ENV"]


def bad_root_value(kind: str, tmp_path: Path) -> str:
    if kind == "nonexistent":
        return str(tmp_path / "does-not-exist")
    if kind == "empty":
        return ""
    if kind == "relative":
        (tmp_path / "relative-root" / "lib64").mkdir(parents=True)
        return "relative-root"
    if kind == "file":
        (tmp_path / "a-file").write_text("not a directory\n")
        return str(tmp_path / "a-file")
    if kind == "root-dir":
        return "/"
    raise ValueError(kind)


@pytest.mark.parametrize("kind", ["nonexistent", "empty", "relative", "file", "root-dir"])
@pytest.mark.parametrize("variable", ROOT_VARIABLES)
def test_bad_root_variable(variable, kind, tmp_path):
    value = bad_root_value(kind, tmp_path)
    doc = run_report(env=clean_env(**{variable: value}), cwd=tmp_path)
    assert doc["environment"]["variables"].get(variable) == value, \
        f"{variable} should be reported exactly as set: {doc['environment']['variables']}"


def test_relative_cuda_home_is_not_taken_relative_to_somewhere_else(tmp_path, real_nvrtc):
    (tmp_path / "ctk" / "lib64").mkdir(parents=True)
    (tmp_path / "ctk" / "lib64" / NVRTC_SONAME).symlink_to(real_nvrtc)
    doc = run_report(env=clean_env(CUDA_HOME="ctk"), cwd=tmp_path)
    entry = component(doc, "nvrtc")
    for candidate in entry["candidates"]:
        if candidate["found_via"] == "CUDA_HOME":
            resolved = candidate["realpath"] or ""
            assert resolved == str(real_nvrtc.resolve()), candidate


# ---------------------------------------------------------------------------------------------
# Bad input matrix: LD_LIBRARY_PATH
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make_value, bad",
    [
        (lambda tmp: "", False),
        (lambda tmp: ".", True),
        (lambda tmp: "relative/lib", True),
        (lambda tmp: str(tmp / "missing-dir"), True),
        (lambda tmp: f"{tmp}::{tmp}", True),
        (lambda tmp: f":{tmp}", True),
        (lambda tmp: f"{tmp}:", True),
    ],
    ids=["empty", "dot", "relative", "missing", "empty-element", "leading-colon", "trailing-colon"],
)
def test_ld_library_path_bad_entries(make_value, bad, tmp_path):
    value = make_value(tmp_path)
    doc = run_report(env=clean_env(LD_LIBRARY_PATH=value), cwd=tmp_path)
    assert doc["environment"]["variables"].get("LD_LIBRARY_PATH") == value
    if bad:
        assert "env.bad_search_path" in finding_ids(doc), f"LD_LIBRARY_PATH={value!r}: {finding_ids(doc)}"


def test_ld_library_path_with_5000_entries(tmp_path, real_nvrtc):
    good = tmp_path / "good"
    good.mkdir()
    (good / NVRTC_SONAME).symlink_to(real_nvrtc)
    # One environment string may not exceed 128 KiB (MAX_ARG_STRLEN): keep the missing entries short.
    entries = [f"/nonexistent/{i}" for i in range(4999)] + [str(good)]
    doc = run_report(env=clean_env(LD_LIBRARY_PATH=":".join(entries)), cwd=tmp_path)
    paths = all_candidate_paths(component(doc, "nvrtc"))
    assert str(good / NVRTC_SONAME) in paths, "the library in the last of 5000 entries was not found"
    assert "env.bad_search_path" in finding_ids(doc)


# ---------------------------------------------------------------------------------------------
# Bad input matrix: links, permissions, files that only look like libraries
# ---------------------------------------------------------------------------------------------


def assert_never_chosen(doc: dict, bad_paths: list[str], name: str = "nvrtc"):
    """A bad file is never an answer that claims to load: it is either passed over or the answer
    with `fails` set (glibc stops at an empty or non-ELF file; cuda-pathfinder never falls back)."""
    entry = component(doc, name)
    for field in ("selected", "loader"):
        choice = entry[field]
        if choice and choice["path"] in bad_paths:
            assert choice.get("fails"), f"{field} is the bad file {choice['path']} and does not say it fails"


def test_symlink_loops(tmp_path):
    loops = tmp_path / "loops"
    loops.mkdir()
    (loops / NVRTC_SONAME).symlink_to(NVRTC_SONAME)                 # points at itself
    (loops / "libnvJitLink.so.13").symlink_to("ping")               # ping <-> pong
    (loops / "ping").symlink_to("pong")
    (loops / "pong").symlink_to("ping")
    (loops / "subdir-loop").symlink_to(loops)                        # a directory cycle
    (tmp_path / "dir-loop").symlink_to(tmp_path / "dir-loop")        # a search dir that loops
    conda = tmp_path / "conda"
    conda.mkdir()
    (conda / "lib").symlink_to(conda / "lib")
    env = clean_env(LD_LIBRARY_PATH=f"{tmp_path / 'dir-loop'}:{loops}:{loops / 'subdir-loop'}",
                    CUDA_HOME=str(tmp_path / "dir-loop"), CONDA_PREFIX=str(conda))
    doc = run_report(env=env, cwd=tmp_path)
    bad = [str(loops / NVRTC_SONAME), str(loops / "libnvJitLink.so.13")]
    assert_never_chosen(doc, bad, "nvrtc")
    assert_never_chosen(doc, bad, "nvJitLink")
    for name in ("nvrtc", "nvJitLink"):
        for path, candidate in all_candidate_paths(component(doc, name)).items():
            if path in bad:
                assert candidate["realpath"] is None and candidate["rejected"], candidate


def test_broken_symlinks(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / NVRTC_SONAME).symlink_to(tmp_path / "nowhere" / NVRTC_SONAME)
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    env = clean_env(LD_LIBRARY_PATH=f"{broken}:{tmp_path / 'gone'}", CUDA_PATH=str(tmp_path / "gone"))
    doc = run_report(env=env, cwd=tmp_path)
    bad = str(broken / NVRTC_SONAME)
    assert_never_chosen(doc, [bad])
    candidate = all_candidate_paths(component(doc, "nvrtc")).get(bad)
    if candidate is not None:
        assert candidate["realpath"] is None and candidate["rejected"], candidate


def test_directory_without_read_permission_as_current_user(tmp_path, real_nvrtc):
    # Root ignores permission bits (CAP_DAC_OVERRIDE), so as root this only proves nothing breaks;
    # the non-root variant below checks the semantics.
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / NVRTC_SONAME).symlink_to(real_nvrtc)
    locked.chmod(0)
    try:
        run_report(env=clean_env(LD_LIBRARY_PATH=str(locked), CUDA_HOME=str(locked)), cwd=tmp_path)
    finally:
        locked.chmod(0o755)


def _nobody_can_run_cudadiag() -> bool:
    from cudadiag_harness import CUDADIAG_BIN

    if os.geteuid() != 0:
        return False
    try:
        probe = subprocess.run([str(CUDADIAG_BIN), "--version"], capture_output=True, user=65534, check=False,
                               timeout=30)
    except PermissionError:  # a directory above the binary is closed to it (a checkout under /root)
        return False
    return probe.returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch to the nobody user")
def test_directories_without_permissions_as_non_root_user(real_nvrtc):
    if not _nobody_can_run_cudadiag():
        pytest.skip("user nobody (65534) cannot execute the cudadiag binary here")
    world = Path(tempfile.mkdtemp(prefix="cudadiag-perm-"))
    try:
        world.chmod(0o755)
        no_access = world / "mode-000"       # cannot even stat what is inside
        search_only = world / "mode-111"     # cannot list, but can open a known name: dlopen works
        for directory in (no_access, search_only):
            directory.mkdir()
            (directory / NVRTC_SONAME).symlink_to(real_nvrtc)
        no_access.chmod(0)
        search_only.chmod(0o111)
        env = clean_env(LD_LIBRARY_PATH=f"{no_access}:{search_only}", HOME=str(world))
        doc = run_report(env=env, cwd=str(world), user=65534)
        assert doc["environment"]["uid"] == 65534
        paths = all_candidate_paths(component(doc, "nvrtc"))
        assert_never_chosen(doc, [str(no_access / NVRTC_SONAME)])
        found = paths.get(str(search_only / NVRTC_SONAME))
        assert found is not None and not found["rejected"], \
            "a library in an execute-only directory is loadable by SONAME and must be found"
        loader = component(doc, "nvrtc")["loader"]
        assert loader and loader["path"] == str(search_only / NVRTC_SONAME), \
            f"dlopen would load {search_only / NVRTC_SONAME}; loader says {loader and loader['path']}"
    finally:
        for child in world.iterdir():
            child.chmod(0o755)
        shutil.rmtree(world)


def make_bad_library_files(tmp_path: Path, real_nvrtc: Path) -> dict[str, Path]:
    """One directory per kind of bad file, each holding a file named libnvrtc.so.13."""
    contents = {
        "empty": b"",
        "truncated": real_nvrtc.read_bytes()[:4096] if real_nvrtc.stat().st_size > 4096 else b"\x7fELF",
        "short-elf-magic": b"\x7fELF\x02\x01\x01",
        "not-elf": b"this is not an ELF file\n" * 200,
        "elf32-i386": elf_header(32, EM_386),
        "elf64-aarch64": elf_header(64, EM_AARCH64),
    }
    made = {}
    for kind, data in contents.items():
        directory = tmp_path / kind
        directory.mkdir()
        (directory / NVRTC_SONAME).write_bytes(data)
        made[kind] = directory / NVRTC_SONAME
    return made


def test_files_named_like_libraries_are_rejected_and_never_selected(tmp_path, real_nvrtc):
    bad = make_bad_library_files(tmp_path, real_nvrtc)
    env = clean_env(LD_LIBRARY_PATH=":".join(str(p.parent) for p in bad.values()), CUDA_HOME=str(SYSTEM_CTK))
    doc = run_report(env=env, cwd=tmp_path)
    entry = component(doc, "nvrtc")
    paths = all_candidate_paths(entry)
    problems = []
    for kind, path in bad.items():
        candidate = paths.get(str(path))
        if candidate is None:
            problems.append(f"{kind}: {path} is not listed as a candidate")
        elif not candidate["rejected"]:
            problems.append(f"{kind}: {path} is not rejected: {candidate}")
    assert not problems, "\n".join(problems)
    assert_never_chosen(doc, [str(p) for p in bad.values()])
    elf32 = paths[str(bad["elf32-i386"])]["elf"]
    aarch64 = paths[str(bad["elf64-aarch64"])]["elf"]
    assert elf32 and elf32["class"] == "ELF32", elf32
    assert aarch64 and aarch64["class"] == "ELF64", aarch64
    natives = [c["elf"]["machine"] for c in entry["candidates"] if c["elf"] and not c["rejected"]]
    if natives:
        assert aarch64["machine"] != natives[0] and elf32["machine"] != natives[0]
    assert entry["selected"] and entry["selected"]["realpath"] == str(real_nvrtc.resolve()), \
        "the real library (ld.so.cache or CUDA_HOME) should still be selected"


@pytest.mark.parametrize("kind", ["empty", "truncated", "not-elf", "elf32-i386", "elf64-aarch64"])
def test_each_bad_library_file_alone(kind, tmp_path, real_nvrtc):
    bad = make_bad_library_files(tmp_path, real_nvrtc)[kind]
    result = run(["find", "nvrtc", "--all", "--json"],
                 env=clean_env(LD_LIBRARY_PATH=str(bad.parent), CUDA_HOME=str(SYSTEM_CTK)), cwd=tmp_path)
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result, check_exit_code=False)
    assert_never_chosen(doc, [str(bad)])
    candidate = all_candidate_paths(component(doc, "nvrtc")).get(str(bad))
    assert candidate and candidate["rejected"], f"{bad} should be a rejected candidate: {candidate}"


# ---------------------------------------------------------------------------------------------
# Bad input matrix: bytes that are not UTF-8
# ---------------------------------------------------------------------------------------------

ESCAPED_FF = re.compile(r"\\x[fF][fF]")


def test_non_utf8_paths_and_environment_values(tmp_path, real_nvrtc):
    raw_dir = os.fsencode(tmp_path) + b"/lib\xff\xfe"
    os.mkdir(raw_dir)
    os.symlink(os.fsencode(real_nvrtc), raw_dir + b"/" + NVRTC_SONAME.encode())
    env = clean_env()
    env.update({
        "LD_LIBRARY_PATH": raw_dir,
        "CUDA_HOME": b"/nonexistent/\xff\xfe",
        "VIRTUAL_ENV": os.fsencode(tmp_path) + b"/venv\xc3\x28",
        "CUDA_CACHE_PATH": b"\xff",
    })
    result = run(["--json"], env=env, cwd=raw_dir)
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result)  # strict UTF-8 and schema-valid
    variables = doc["environment"]["variables"]
    assert ESCAPED_FF.search(variables["CUDA_HOME"] or ""), variables.get("CUDA_HOME")
    assert ESCAPED_FF.search(variables["LD_LIBRARY_PATH"] or ""), variables.get("LD_LIBRARY_PATH")
    assert ESCAPED_FF.search(doc["environment"]["cwd"]), doc["environment"]["cwd"]
    candidates = [p for p in all_candidate_paths(component(doc, "nvrtc")) if ESCAPED_FF.search(p)]
    assert candidates, "the library in the non-UTF-8 directory should be listed with an escaped path"
    text = run([], env=env, cwd=raw_dir)
    assert text.returncode in (0, 1), describe(text)
    find = run(["find", "nvrtc", "--all"], env=env, cwd=raw_dir)
    assert find.returncode == 0, describe(find)


# ---------------------------------------------------------------------------------------------
# Bad input matrix: interpreters that misbehave
# ---------------------------------------------------------------------------------------------


def write_script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("kind", ["missing", "false", "garbage", "hangs", "not-executable"])
def test_bad_python_option(kind, tmp_path):
    python = {
        "missing": lambda: tmp_path / "no-python",
        "false": lambda: Path("/bin/false"),
        "garbage": lambda: write_script(tmp_path / "python", "echo '{not json'; echo $'\\xff'"),
        "hangs": lambda: write_script(tmp_path / "python", "sleep 300"),
        "not-executable": lambda: (tmp_path / "python").write_text("x") and tmp_path / "python",
    }[kind]()
    # An interpreter that cannot be asked is a usage error naming it, never another environment's report.
    result = run(["--json", "--python", str(python)], env=clean_env(), cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert b"cudadiag: error: --python " in result.stderr, describe(result)
    error = json.loads(result.stdout)["error"]  # --json: the error document, not a report
    assert error["kind"] == "usage" and "--python " in error["message"], error


@pytest.mark.parametrize("where", ["PATH", "VIRTUAL_ENV", "CONDA_PREFIX"])
def test_python_that_hangs_does_not_hang_cudadiag(where, tmp_path):
    root = tmp_path / "env"
    for name in ("python", "python3"):
        write_script(root / "bin" / name, "sleep 300")
    env = clean_env()
    if where == "PATH":
        env["PATH"] = f"{root / 'bin'}:{env['PATH']}"
    else:
        env[where] = str(root)
    run_report(env=env, cwd=tmp_path)


# ---------------------------------------------------------------------------------------------
# Bad input matrix: ld.so.cache
# ---------------------------------------------------------------------------------------------


def corrupt_cache(kind: str, tmp_path: Path) -> Path:
    path = tmp_path / f"ld.so.cache.{kind}"
    real = Path("/etc/ld.so.cache")
    if kind == "missing":
        return path
    if kind == "directory":
        path.mkdir()
        return path
    data = {
        "empty": lambda: b"",
        "garbage": lambda: random.Random(1).randbytes(8192),
        "truncated": lambda: real.read_bytes()[:100] if real.exists() else b"glibc-ld.so.cache1.1" + bytes(30),
        "magic-only": lambda: b"glibc-ld.so.cache1.1",
        "huge-count": lambda: b"glibc-ld.so.cache1.1" + (0xFFFFFFFF).to_bytes(4, "little") + (0xFFFFFFFF).to_bytes(4, "little") + bytes(24),
        "old-format-garbage": lambda: b"ld.so-1.7.0" + random.Random(2).randbytes(4096),
    }[kind]()
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", ["missing", "directory", "garbage"])
def test_ld_so_cache_option_naming_no_file_is_a_usage_error(kind, tmp_path):
    cache = corrupt_cache(kind, tmp_path)
    result = run(["--json", "--ld-so-cache", str(cache)], cwd=tmp_path)
    assert result.returncode == 2, describe(result)
    assert f"cudadiag: error: --ld-so-cache {cache}".encode() in result.stderr, describe(result)
    error = json.loads(result.stdout)["error"]  # --json: the error document, not a report
    assert error["kind"] == "usage" and str(cache) in error["message"], error


# A file with a cache's magic (or none at all) but damaged is a fact about the machine; a file that
# is no cache at all (garbage, /etc/passwd) is a mistake in the command line (above).
@pytest.mark.parametrize("kind", ["empty", "truncated", "magic-only", "huge-count", "old-format-garbage"])
def test_corrupt_ld_so_cache_is_an_error_status_not_a_crash(kind, tmp_path):
    cache = corrupt_cache(kind, tmp_path)
    doc = run_report(["--ld-so-cache", str(cache)], cwd=tmp_path)
    status = doc["environment"]["ld_so_cache"]
    assert status["path"] == str(cache)
    assert status["status"] == "error", status
    assert status["error"], status


def ldconfig() -> str:
    for candidate in ("/sbin/ldconfig", "/usr/sbin/ldconfig", shutil.which("ldconfig")):
        if candidate and os.path.exists(candidate):
            return candidate
    pytest.skip("ldconfig not found")


def test_system_ld_so_cache_entry_count_matches_ldconfig():
    if not Path("/etc/ld.so.cache").exists():
        pytest.skip("no /etc/ld.so.cache")
    listing = subprocess.run([ldconfig(), "-p"], capture_output=True, text=True, check=True, timeout=30).stdout
    match = re.match(r"\s*(\d+) libs found", listing)
    assert match, listing[:200]
    status = run_report(["--ld-so-cache", "/etc/ld.so.cache"])["environment"]["ld_so_cache"]
    assert status["status"] == "ok" and status["error"] is None, status
    assert status["entries"] == int(match.group(1)), f"ldconfig -p says {match.group(1)} entries"


def test_ld_so_cache_option_is_the_cache_that_is_searched(tmp_path):
    libdir = tmp_path / "cachedlib"
    compile_shared_library(libdir, NVRTC_SONAME, "int nvrtcVersion(int*a,int*b){*a=13;*b=9;return 0;}\n")
    conf = tmp_path / "ld.so.conf"
    conf.write_text(f"{libdir}\n")
    cache = tmp_path / "ld.so.cache"
    made = subprocess.run([ldconfig(), "-f", str(conf), "-C", str(cache)], capture_output=True, text=True,
                          timeout=60, check=False)
    if made.returncode != 0 or not cache.exists():
        pytest.skip(f"ldconfig could not write a private cache: {made.stderr}")
    result = run(["--ld-so-cache", str(cache), "find", "nvrtc", "--all", "--json"], env=clean_env(), cwd=tmp_path)
    assert result.returncode in (0, 1), describe(result)
    doc = parse_report(result, check_exit_code=False)
    assert doc["environment"]["ld_so_cache"]["status"] == "ok"
    assert doc["environment"]["ld_so_cache"]["entries"] >= 1
    entry = component(doc, "nvrtc")
    paths = all_candidate_paths(entry)
    ours = paths.get(str(libdir / NVRTC_SONAME))
    assert ours is not None, f"{libdir / NVRTC_SONAME} from the private cache is not a candidate: {list(paths)}"
    assert any(c["found_via"] == "ld.so.cache" for c in entry["candidates"] if c["realpath"] == ours["realpath"])
    assert entry["loader"] and entry["loader"]["realpath"] == str((libdir / NVRTC_SONAME).resolve())


# ---------------------------------------------------------------------------------------------
# Findings
# ---------------------------------------------------------------------------------------------


def test_cuda_path_and_cuda_home_differ(tmp_path):
    other = tmp_path / "other-toolkit"
    other.mkdir()
    doc = run_report(env=clean_env(CUDA_PATH=str(SYSTEM_CTK), CUDA_HOME=str(other)))
    assert "env.cuda_path_home_differ" in finding_ids(doc), finding_ids(doc)


@pytest.mark.parametrize("cuda_path, cuda_home", [
    (str(SYSTEM_CTK), os.path.realpath(SYSTEM_CTK)),  # the same directory through a symlink
    (str(SYSTEM_CTK), str(SYSTEM_CTK) + "/"),        # the same text but for a trailing slash
    ("", "/somewhere/else"),                          # empty counts as unset
])
def test_cuda_path_and_cuda_home_agreeing_is_not_a_finding(cuda_path, cuda_home):
    doc = run_report(env=clean_env(CUDA_PATH=cuda_path, CUDA_HOME=cuda_home))
    assert "env.cuda_path_home_differ" not in finding_ids(doc), doc["findings"]


def make_fake_toolkit(root: Path, nvrtc_version: str = "13.1.80", cuda_version: str = "13.1.0") -> Path:
    """A toolkit tree whose version.json says `cuda_version`, holding a loadable libnvrtc.so.13."""
    major, minor = nvrtc_version.split(".")[:2]
    compile_shared_library(root / "lib64", NVRTC_SONAME,
                           f"int nvrtcVersion(int*a,int*b){{*a={major};*b={minor};return 0;}}\n")
    (root / "version.json").write_text(json.dumps({
        "cuda": {"name": "CUDA SDK", "version": cuda_version},
        "cuda_nvrtc": {"name": "CUDA NVRTC", "version": nvrtc_version},
    }, indent=3))
    return root


def test_two_versions_of_one_library_reachable(tmp_path):
    system_nvrtc = real_system_lib(NVRTC_SONAME)
    toolkit = make_fake_toolkit(tmp_path / "cuda-13.1")
    # The system toolkit's NVRTC is reachable through the loader (LD_LIBRARY_PATH: the same on a
    # machine whose ld.so.cache does not list the toolkit), the fake 13.1 one through CUDA_PATH.
    env = clean_env(CUDA_PATH=str(toolkit), LD_LIBRARY_PATH=str(system_nvrtc.parent))
    doc = run_report(env=env)
    entry = component(doc, "nvrtc")
    ours = all_candidate_paths(entry).get(str(toolkit / "lib64" / NVRTC_SONAME))
    assert ours is not None, f"fake toolkit's nvrtc not a candidate: {[c['path'] for c in entry['candidates']]}"
    assert ours["version"] and ours["version"].startswith("13.1"), ours
    assert ours["version_source"] == "toolkit_version_json", ours
    # Both answers load the system's; the toolkit CUDA_PATH names holds a newer release of the same
    # SONAME: what builds against CUDA_PATH get at run time is older (env.root_release_differs, which
    # owns the CUDA_PATH route lib.multiple_versions counted before).
    roots = [f for f in doc["findings"] if f["id"] == "env.root_release_differs" and "nvrtc" in f["components"]]
    assert roots and roots[0]["severity"] == "warning", finding_ids(doc)
    assert roots[0]["evidence"]["variable"] == "CUDA_PATH", roots[0]
    assert roots[0]["evidence"]["root_version"].startswith("13.1"), roots[0]
    assert "lib.multiple_versions" not in finding_ids(doc), finding_ids(doc)


def test_python_and_native_selection_differ():
    wheels = venv("wheels")
    system_lib64 = SYSTEM_CTK / "lib64"
    real_system_lib(NVRTC_SONAME)
    env = wheels.activated_env(clean_env(LD_LIBRARY_PATH=str(system_lib64)))
    doc = run_report(env=env)
    entry = component(doc, "nvrtc")
    assert entry["selected"] and str(wheels.root) in entry["selected"]["path"], entry["selected"]
    assert entry["loader"] and entry["loader"]["realpath"] == os.path.realpath(system_lib64 / NVRTC_SONAME), \
        entry["loader"]
    differ = [f for f in doc["findings"] if f["id"] == "lib.python_native_differ"]
    assert differ and any("nvrtc" in f["components"] for f in differ), finding_ids(doc)


def test_conda_prefix_layout(tmp_path):
    conda = tmp_path / "conda"
    compile_shared_library(conda / "lib", NVRTC_SONAME, "int nvrtcVersion(int*a,int*b){*a=13;*b=0;return 0;}\n")
    doc = run_report(env=clean_env(CONDA_PREFIX=str(conda)))
    entry = component(doc, "nvrtc")
    assert entry["selected"] and entry["selected"]["path"] == str(conda / "lib" / NVRTC_SONAME), entry["selected"]
    assert entry["selected"]["found_via"] == "conda"
    assert entry["selected"]["pathfinder_found_via"] == "conda"


def test_host_node_name_from_the_cluster_environment():
    # A Kubernetes pod's hostname is the pod's name: the DaemonSet passes spec.nodeName as
    # CUDADIAG_NODE_NAME; a Slurm task has SLURMD_NODENAME. Neither set: null.
    host = run_report(["--no-load"], env=clean_env())["host"]
    assert host["node_name"] is None and host["node_name_source"] is None
    host = run_report(["--no-load"], env=clean_env(SLURMD_NODENAME="gpu017"))["host"]
    assert (host["node_name"], host["node_name_source"]) == ("gpu017", "SLURMD_NODENAME")
    host = run_report(["--no-load"], env=clean_env(SLURMD_NODENAME="gpu017", CUDADIAG_NODE_NAME="k8s-node-3"))["host"]
    assert (host["node_name"], host["node_name_source"]) == ("k8s-node-3", "CUDADIAG_NODE_NAME")
    # Not a node name (control characters, a space, too long, empty): ignored, the next one is used.
    for hostile in ["evil\nname", "two words", "x" * 254, ""]:
        host = run_report(["--no-load"], env=clean_env(CUDADIAG_NODE_NAME=hostile, SLURMD_NODENAME="gpu017"))["host"]
        assert (host["node_name"], host["node_name_source"]) == ("gpu017", "SLURMD_NODENAME"), repr(hostile)
