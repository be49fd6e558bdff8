"""Every CLI message clear: parse errors that name the real problem, `find` names that are
ambiguous, the Python environment named as the user knows it, `--json` kept by every command,
completions of option values, fleet counting hosts, diff putting causes first, inputs that are no
inputs, the status line, and stdout that cannot be written even for --help."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cudadiag_harness import (SYSTEM_CTK, clean_env, describe, other_schema_errors, parse_report, require_binary,
                              run)
from test_help import bash_complete

FIXTURES = Path(os.environ.get("CUDADIAG_FIXTURES_DIR") or Path(__file__).resolve().parents[2] / "build" / "tests" / "fixtures")
PYTHON2 = Path("/root/.pyenv/versions/2.7.18/bin/python2.7")


def usage_error(args, env=None) -> str:
    """stderr of a command that must be a usage error (exit 2, nothing on stdout)."""
    result = run(args, env=env or clean_env())
    assert result.returncode == 2, describe(result)
    assert result.stdout == b"", describe(result)
    return result.stderr.decode()


# ---- Parse errors

def test_a_width_out_of_range_names_the_range_not_a_subcommand():
    message = usage_error(["--width", "10"])
    assert "--width" in message and "`10` is not a width in columns from 20 to 1000" in message, message
    assert "subcommand" not in message, message


@pytest.mark.parametrize("pid", ["abc", "4294967297", "0", "-5"])
def test_a_bad_pid_says_what_a_pid_is(pid):
    message = usage_error(["inspect", "--pid", pid])
    assert f"`{pid}` is not a process id from 1 to 2147483647" in message, message
    assert "did you mean" not in message, message
    assert not re.search(r"\d{20,}", message), message  # no floating-point range of 309 digits


def test_unexpected_words_are_listed_as_typed_with_the_likely_command():
    message = usage_error(["fnd", "nvrtc"])
    assert "unexpected arguments: fnd nvrtc;" in message, message
    assert "did you mean `find`?" in message, message
    assert "nvrtc fnd" not in message, message


def test_a_misspelt_option_still_gets_its_guess():
    message = usage_error(["--jsn"])
    assert "unexpected argument: --jsn; did you mean `--json`?" in message, message


# ---- find: a name that is a header set and, case aside, a library

def test_find_nvjitlink_asks_which_one_was_meant():
    message = usage_error(["find", "nvjitlink"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK)))
    assert "did you mean nvJitLink (library) or --headers nvjitlink" in message, message


def test_find_headers_nvjitlink_prints_the_header_directory():
    result = run(["find", "--headers", "nvjitlink"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK)))
    if result.returncode == 1:
        pytest.skip(f"no nvJitLink headers under {SYSTEM_CTK}")
    assert result.returncode == 0, describe(result)
    path = Path(result.stdout.decode().strip())
    assert path.is_dir() and (path / "nvJitLink.h").is_file(), path


def test_find_nvJitLink_is_the_library():
    result = run(["find", "nvJitLink"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK)))
    assert result.returncode in (0, 1), describe(result)
    if result.returncode == 0:
        assert Path(result.stdout.decode().strip()).name.startswith("libnvJitLink.so"), describe(result)


# ---- The Python environment, named as the user knows it

@pytest.fixture
def plain_venv(tmp_path) -> Path:
    root = tmp_path / "project-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    return root


def test_an_active_venv_is_named_by_its_prefix(plain_venv):
    env = clean_env(VIRTUAL_ENV=str(plain_venv), PATH=f"{plain_venv / 'bin'}:/usr/bin:/bin")
    text = run(["--no-load", "--width", "200"], env=env).stdout.decode()
    assert f"answers for the venv {plain_venv}, Python " in text and "(what python3 runs here)" in text, text


def test_python_naming_a_venv_interpreter_names_the_venv(plain_venv):
    text = run(["--no-load", "--width", "200", "--python", str(plain_venv / "bin" / "python")], env=clean_env()).stdout.decode()
    assert f"answers for the venv {plain_venv}, Python " in text and "(--python)" in text, text


def test_an_empty_python_is_a_usage_error():
    message = usage_error(["--python", "", "--no-load"])
    assert "--python" in message and "not an empty string" in message, message


@pytest.mark.skipif(not PYTHON2.exists(), reason=f"no Python 2 at {PYTHON2}")
def test_a_python_2_interpreter_needs_python_3():
    message = usage_error(["--python", str(PYTHON2), "--no-load"])
    assert "is Python 2.7; cudadiag needs Python 3" in message, message
    assert "Traceback" not in message, message


def test_ld_so_cache_naming_a_file_that_is_no_cache_is_a_usage_error(tmp_path):
    passwd_like = tmp_path / "passwd"
    passwd_like.write_text("root:x:0:0:root:/root:/bin/bash\n")
    message = usage_error(["--no-load", "--ld-so-cache", str(passwd_like)])
    assert f"--ld-so-cache {passwd_like}: not a loader cache" in message, message


# ---- The self-test when nothing ran on a GPU

@pytest.mark.skipif(not (SYSTEM_CTK / "include" / "cccl").is_dir(), reason="needs the CUDA 13 toolkit's NVRTC and CCCL")
def test_a_selftest_where_nothing_ran_on_a_gpu_is_no_pass():
    env = clean_env(CUDA_HOME=str(SYSTEM_CTK), LD_LIBRARY_PATH=str(SYSTEM_CTK / "lib64"))
    doc = parse_report(run(["--json", "selftest", "--only", "jit"], env=env, timeout=120), check_exit_code=False)
    [jit] = doc["selftest"]["tests"]
    if jit["status"] != "pass":
        pytest.skip(f"the jit tier does not pass with this toolkit: {jit['reason']}")
    assert jit["device"] is None
    assert doc["selftest"]["status"] == "skip", doc["selftest"]["status"]
    text = run(["--no-color", "selftest", "--only", "jit"], env=env, timeout=120).stdout.decode()
    assert "skip — 0 of 1 ran on a GPU (1 passed without one)" in text, text
    assert "pass —" not in text, text


# ---- --json everywhere

def test_explain_json_prints_the_reference():
    result = run(["explain", "driver.stub", "--json"])
    assert result.returncode == 0, describe(result)
    doc = json.loads(result.stdout)
    assert not other_schema_errors("explain.schema.json", doc), other_schema_errors("explain.schema.json", doc)
    assert doc["id"] == "driver.stub" and doc["severity"] == "error"
    assert doc["reference"].startswith("driver.stub\n") and "Remedy" in doc["reference"], doc["reference"]
    unknown = run(["--json", "explain", "driver.stubb"])
    assert unknown.returncode == 2
    assert json.loads(unknown.stdout)["error"]["kind"] == "usage"


def test_version_json():
    result = run(["--version", "--json"])
    assert result.returncode == 0, describe(result)
    doc = json.loads(result.stdout)
    assert not other_schema_errors("version.schema.json", doc), other_schema_errors("version.schema.json", doc)
    assert doc["name"] == "cudadiag" and doc["schema_version"] == 1
    assert run(["--version"]).stdout.decode() == f"cudadiag {doc['version']}\n"


def test_completion_refuses_json():
    result = run(["--json", "completion", "bash"])
    assert result.returncode == 2, describe(result)
    assert b"does not combine with --json" in result.stderr
    assert json.loads(result.stdout)["error"]["exit_code"] == 2  # still one JSON document on stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["find", "--help"]])
def test_help_and_version_to_a_full_stdout_fail(args):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([str(require_binary()), *args], env=clean_env(), stdout=full, stderr=subprocess.PIPE,
                                timeout=30)
    assert result.returncode == 3, result
    assert b"cudadiag: error: cannot write to stdout" in result.stderr


# ---- Completion of option values

def test_completion_offers_test_keys_and_frameworks(tmp_path):
    script = tmp_path / "cudadiag.bash"
    script.write_bytes(run(["completion", "bash"]).stdout)
    keys = bash_complete(script, "cudadiag selftest --only ")
    assert {"jit", "ptx", "reduce", "sort", "libs"} <= set(keys), keys
    assert not any("/" in key or "." in key for key in keys), keys  # not file names
    assert bash_complete(script, "cudadiag find --for ") == ["torch", "jax"]


# ---- Fleet: one report per host

def base_report(tmp_path: Path) -> dict:
    result = run(["--json", "--no-load"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK)))
    return parse_report(result, check_exit_code=False)


def fleet_doc(*paths: Path) -> tuple[subprocess.CompletedProcess, dict]:
    result = run(["--json", "fleet", *map(str, paths)], timeout=60)
    doc = json.loads(result.stdout)
    assert not other_schema_errors("fleet.schema.json", doc), other_schema_errors("fleet.schema.json", doc)
    return result, doc


def test_fleet_counts_the_newest_report_per_host_and_lists_the_older(tmp_path):
    doc = base_report(tmp_path)
    doc["host"]["hostname"] = "gpu-a"
    paths = []
    for i, stamp in enumerate((1_700_000_300, 1_700_000_100, 1_700_000_200)):  # the first is the newest
        path = tmp_path / f"run{i}.json"
        path.write_text(json.dumps(doc))
        os.utime(path, (stamp, stamp))
        paths.append(path)
    _, fleet = fleet_doc(*paths)
    assert fleet["counts"]["nodes"] == 1, fleet["counts"]
    assert [node["source"] for node in fleet["nodes"]] == [str(paths[0])]
    assert sorted(o["source"] for o in fleet["older_reports"]) == sorted(map(str, paths[1:]))
    text = run(["fleet", *map(str, paths)], timeout=60).stdout.decode()
    assert "1 node in 1 group" in text and "2 older reports of the same hosts not counted" in text, text


def test_a_fleet_of_singletons_has_no_majority(tmp_path):
    doc = base_report(tmp_path)
    paths = []
    for i in range(4):
        doc["host"]["hostname"] = f"box{i}"
        doc["devices"] = [{"ordinal": 0, "name": f"GPU model {i}"}]
        path = tmp_path / f"box{i}.json"
        path.write_text(json.dumps(doc))
        paths.append(path)
    _, fleet = fleet_doc(*paths)
    assert fleet["counts"]["groups"] == 4, fleet["counts"]
    text = run(["fleet", *map(str, paths)], timeout=60).stdout.decode()
    assert "Majority" not in text and "no majority" in text, text


# ---- diff: causes first, PATH as entries

def test_diff_lists_the_variable_before_its_effects_and_path_by_entry(tmp_path):
    a = base_report(tmp_path)
    b = json.loads(json.dumps(a))
    variables = b["environment"]["variables"]
    variables["VIRTUAL_ENV"] = "/opt/torch/.venv"
    a["environment"]["variables"]["PATH"] = "/usr/bin:/bin"
    variables["PATH"] = "/opt/torch/.venv/bin:/usr/bin:/bin"
    for component in b["components"]:  # an effect: a library found elsewhere
        if component["selected"]:
            component["selected"]["found_via"] = "site-packages"
            break
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    result = run(["--json", "diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert result.returncode == 1, describe(result)
    differences = json.loads(result.stdout)["differences"]
    subjects = [d["subject"] for d in differences]
    assert set(subjects[:2]) == {"VIRTUAL_ENV", "PATH"}, subjects
    [path] = [d for d in differences if d["subject"] == "PATH"]
    assert path["aspect"] == "entry added" and path["a"] is None and path["b"] == "/opt/torch/.venv/bin", path
    text = run(["diff", str(tmp_path / "a.json"), str(tmp_path / "b.json")]).stdout.decode()
    assert "Likely cause: Environment" in text, text


# ---- The status line

def test_the_nagios_line_names_each_id_once_with_its_components(tmp_path):
    # Three entries of LD_LIBRARY_PATH that do not exist: one warning; a stub libcuda: an error.
    env = clean_env(LD_LIBRARY_PATH=f"{tmp_path}/a:{tmp_path}/b:{tmp_path}/c", CUDA_HOME=str(SYSTEM_CTK))
    result = run(["--no-load", "--exit-style", "nagios"], env=env)
    line = result.stdout.decode()
    assert line.count("\n") == 1 and " | errors=" in line, line
    named = line.split(" | ")[0]
    ids = re.findall(r"[a-z_]+\.[a-z_]+", named)
    assert len(ids) == len(set(ids)), line


def test_an_empty_search_path_entry_is_shown(tmp_path):
    env = clean_env(LD_LIBRARY_PATH=f"{SYSTEM_CTK / 'lib64'}::{tmp_path}", CUDA_HOME=str(SYSTEM_CTK))
    doc = parse_report(run(["--json", "--no-load"], env=env), check_exit_code=False)
    [finding] = [f for f in doc["findings"] if f["id"] == "env.bad_search_path"]
    assert 'first: entry 2: "" — empty' in finding["message"], finding["message"]


# ---- Units

def test_device_memory_is_in_the_same_units_in_text_and_markdown(tmp_path):
    from cudadiag_harness import fake_driver_env

    env = fake_driver_env(tmp_path / "driver")
    markdown = tmp_path / "report.md"
    result = run(["--no-color", "--full", "--no-selftest", "--markdown", str(markdown)], env=env, timeout=120)
    assert result.returncode in (0, 1), describe(result)
    sizes = re.compile(r"\b\d+(?:\.\d+)? Gi?B\b(?!/s)")  # memory, not bandwidth (GB/s)
    text_sizes = sizes.findall(result.stdout.decode())
    markdown_sizes = sizes.findall(markdown.read_text())
    if not text_sizes:
        pytest.skip("the fake driver reports no device memory")
    assert all(size.endswith("GiB") for size in text_sizes + markdown_sizes), (text_sizes, markdown_sizes)
    assert set(text_sizes) <= set(markdown_sizes) or set(markdown_sizes) <= set(text_sizes), (text_sizes, markdown_sizes)


def test_v_gives_the_details_layer():
    result = run(["-v", "--no-load", "--no-color"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK)))
    text = result.stdout.decode()
    assert "\nComponents" in text and "\nStack" not in text, text[:2000]
    summary = run(["--no-load", "--no-color"], env=clean_env(CUDA_HOME=str(SYSTEM_CTK))).stdout.decode()
    assert "\nStack" in summary and "\nComponents" not in summary, summary
