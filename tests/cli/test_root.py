"""--root DIR (issue 48): another system read from a directory. Every path the run reads is read
inside the root (absolute symbolic links and '..' stay in it), nothing of this machine's files
leaks in, --ld-so-cache names a file inside the root, --env-file / --env replace the caller's
environment, --python is refused, and nothing is loaded."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import clean_env, component, describe, parse_report, run
from image_builder import nostdlib_library

TARGET = "targets/x86_64-linux/lib" if os.uname().machine != "aarch64" else "targets/sbsa-linux/lib"


def report_under(root: Path, *args, env=None, allowed=(0, 1)) -> dict:
    result = run(["--json", "--root", root, *args], env=env or clean_env())
    assert result.returncode in allowed, describe(result)
    return parse_report(result)


def every_path(doc: dict) -> list[str]:
    """Every string in the report's components and findings that looks like an absolute path."""
    found = []

    def walk(value):
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and value.startswith("/"):
            found.append(value)

    walk(doc["components"])
    walk(doc["linkage"])
    return found


def make_ld_so_cache(root: Path) -> None:
    """The root's own /etc/ld.so.cache, as ldconfig -r writes it (chroot: root, or a user namespace)."""
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not Path(ldconfig).exists():
        pytest.skip("no ldconfig on this machine")
    command = [ldconfig, "-r", str(root)]
    if os.geteuid() != 0:
        if not shutil.which("unshare"):
            pytest.skip("ldconfig -r needs root or unshare -r")
        command = ["unshare", "-r", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0 or not (root / "etc/ld.so.cache").is_file():
        pytest.skip(f"ldconfig -r {root} failed here: {done.stderr.strip()[:300]}")


def toolkit_root(base: Path) -> Path:
    """A system with CUDA 12.8 at /usr/local/cuda-12.8, /usr/local/cuda an ABSOLUTE link to it,
    the toolkit's lib directory in ld.so.conf.d and the root's own ld.so.cache."""
    root = base / "root"
    lib = root / "usr/local/cuda-12.8" / TARGET
    if nostdlib_library(lib, "libcudart.so.12") is None:
        pytest.skip("no C compiler builds a -nostdlib shared object here")
    (lib / "libcudart.so.12").rename(lib / "libcudart.so.12.8.90")
    (lib / "libcudart.so.12").symlink_to("libcudart.so.12.8.90")
    (root / "usr/local/cuda-12.8/lib64").symlink_to(TARGET)
    (root / "usr/local/cuda").symlink_to("/usr/local/cuda-12.8")  # absolute: resolved inside the root
    (root / "usr/local/cuda-12.8/version.json").write_text(json.dumps({"cuda": {"version": "12.8.1"}}))
    conf = root / "etc/ld.so.conf.d"
    conf.mkdir(parents=True)
    (root / "etc/ld.so.conf").write_text("include /etc/ld.so.conf.d/*.conf\n")
    (conf / "000_cuda.conf").write_text(f"/usr/local/cuda/{TARGET}\n")
    make_ld_so_cache(root)
    return root


def test_empty_root_gets_no_file_of_this_machine(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    # The caller's environment names this machine's toolkit: under the root it names nothing there.
    env = clean_env(CUDA_HOME="/usr/local/cuda", LD_LIBRARY_PATH="/usr/local/cuda/lib64")
    doc = report_under(empty, env=env)
    assert doc["environment"]["root"] == str(empty.resolve())
    assert doc["environment"]["ld_so_cache"]["path"] == "/etc/ld.so.cache"
    assert doc["environment"]["ld_so_cache"]["status"] == "error", doc["environment"]["ld_so_cache"]
    found = [c["name"] + "/" + c["kind"] for c in doc["components"] if c["status"] != "not_found"]
    assert found == [], f"found on an empty root: {found}"
    assert all(c["candidates"] == [] for c in doc["components"])
    assert doc["environment"]["python_environments"] == [], doc["environment"]["python_environments"]
    assert "--root" in doc["verification"]["skipped_reason"], doc["verification"]
    assert doc["verification"]["ran"] is False
    # Nothing of the root was loaded: no worker, no self-test.
    assert doc["selftest"] is None or doc["selftest"]["ran"] is False


def test_root_with_a_toolkit_gives_the_roots_answers(tmp_path):
    root = toolkit_root(tmp_path)
    doc = report_under(root)
    cudart = component(doc, "cudart")
    assert cudart["status"] == "found", cudart
    loader = cudart["loader"]
    assert loader["found_via"] == "ld.so.cache", loader
    # Paths are the root's own names for its files, resolved inside it (the absolute /usr/local/cuda
    # link), never this machine's.
    assert loader["path"] == f"/usr/local/cuda/{TARGET}/libcudart.so.12", loader
    assert loader["realpath"] == f"/usr/local/cuda-12.8/{TARGET}/libcudart.so.12.8.90", loader
    assert loader["version"].startswith("12.8"), loader
    # This machine's toolkit (CUDA 13 at /usr/local/cuda on the CI machine) is not seen.
    nvrtc = component(doc, "nvrtc")
    assert nvrtc["status"] == "not_found", nvrtc
    for path in every_path(doc):
        assert not path.startswith(str(root)), f"a host path of the root's file leaked into the report: {path}"


def test_links_and_dotdot_stay_inside_the_root(tmp_path):
    root = toolkit_root(tmp_path)
    # A relative link climbing above the root and an LD_LIBRARY_PATH with '..' past '/': both end in
    # the root's /usr/local/cuda, as they would after chroot.
    (root / "opt").mkdir()
    (root / "opt/escape").symlink_to("../../../../../../../../usr/local/cuda")
    env = clean_env(LD_LIBRARY_PATH="/opt/escape/lib64:/../../../../usr/local/cuda/lib64")
    doc = report_under(root, "--env", f"LD_LIBRARY_PATH={env['LD_LIBRARY_PATH']}", "--env", "PATH=/usr/bin:/bin")
    cudart = component(doc, "cudart")
    assert cudart["loader"]["found_via"] == "LD_LIBRARY_PATH", cudart["loader"]
    assert cudart["loader"]["realpath"] == f"/usr/local/cuda-12.8/{TARGET}/libcudart.so.12.8.90", cudart["loader"]


def test_ld_so_cache_names_a_file_inside_the_root(tmp_path):
    root = toolkit_root(tmp_path)
    (root / "etc/ld.so.cache").rename(root / "etc/other.cache")
    doc = report_under(root, "--ld-so-cache", "/etc/other.cache")
    assert doc["environment"]["ld_so_cache"]["path"] == "/etc/other.cache"
    assert doc["environment"]["ld_so_cache"]["status"] == "ok", doc["environment"]["ld_so_cache"]
    assert component(doc, "cudart")["loader"]["found_via"] == "ld.so.cache"
    # Not this machine's file of that name: the path is looked up in the root only.
    result = run(["--json", "--root", root, "--ld-so-cache", "/etc/ld.so.cache"], env=clean_env())
    assert result.returncode == 2, describe(result)


def test_env_file_and_env_replace_the_callers_environment(tmp_path):
    root = toolkit_root(tmp_path)
    env_file = tmp_path / "env"
    env_file.write_text("# the container's environment\nCUDA_HOME=/usr/local/cuda-12.8\n\nNVIDIA_VISIBLE_DEVICES=all\n")
    caller = clean_env(CUDA_PATH="/usr/local/cuda", CUDA_VISIBLE_DEVICES="0")
    doc = report_under(root, "--env-file", env_file, "--env", "CUDA_MODULE_LOADING=LAZY", env=caller)
    variables = doc["environment"]["variables"]
    assert variables["CUDA_HOME"] == "/usr/local/cuda-12.8"
    assert variables["CUDA_PATH"] is None and variables["CUDA_VISIBLE_DEVICES"] is None, variables
    assert variables["CUDA_MODULE_LOADING"] == "LAZY"
    bad = tmp_path / "bad-env"
    bad.write_text("CUDA_HOME\n")
    result = run(["--json", "--root", root, "--env-file", bad], env=caller)
    assert result.returncode == 2 and b"KEY=VALUE" in result.stderr, describe(result)


def test_python_with_root_is_refused(tmp_path):
    result = run(["--json", "--root", tmp_path, "--python", "/usr/bin/python3"], env=clean_env())
    assert result.returncode == 2, describe(result)
    assert b"root" in result.stderr, describe(result)
