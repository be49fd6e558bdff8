"""The Python API of the installed wheel (`import cudadiag`), run by check_wheel.sh with the fresh
venv's interpreter: what importing costs and loads, quick_check(), report(), find() against the
CLI's `find`, require() in a broken and a healthy layout, errors, threads, and `python -m cudadiag`."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading

import pytest

import cudadiag
from cudadiag._find import find_cudadiag_bin

CUDA_LIBRARY_NAMES = ("libcuda.so", "libnvrtc", "libcudart", "libnvJitLink", "libnvidia-ml", "libcublas")


def mapped_paths():
    with open("/proc/self/maps") as maps:
        return {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}


def run_python(code, env=None):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=120)


def test_import_loads_neither_the_library_nor_ctypes():
    result = run_python("""
        import sys, cudadiag
        maps = open("/proc/self/maps").read()
        print("ctypes" in sys.modules, "libcudadiag" in maps, cudadiag.__version__)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[:2] == ["False", "False"]


def test_versions_agree():
    executable = find_cudadiag_bin()
    cli = subprocess.run([executable, "--version"], capture_output=True, text=True, check=True).stdout
    assert cli.split()[:2] == ["cudadiag", cudadiag.__version__]
    assert cudadiag.library_version() == cudadiag.__version__


def test_the_executable_is_in_the_scripts_directory_and_the_library_in_the_package():
    import sysconfig

    assert find_cudadiag_bin() == os.path.join(sysconfig.get_path("scripts"), "cudadiag")
    from cudadiag import _native

    assert os.path.dirname(_native.library_path()) == os.path.dirname(cudadiag.__file__)


def test_quick_check_loads_the_library_locally_and_no_cuda_library():
    result = cudadiag.quick_check()
    assert result.verdict in ("ok", "warning", "error")
    assert isinstance(result.exit_code, int)
    assert bool(result) == (result.verdict != "error")
    assert all(f.severity in ("warning", "error") for f in result.findings)
    assert str(result).startswith("cudadiag: " + result.verdict)
    document = result.json()
    assert document["schema_version"] == 1
    assert [f["id"] for f in document["findings"]] == [f.id for f in result.findings]
    mapped = mapped_paths()
    assert any(path.endswith("/cudadiag/libcudadiag.so") for path in mapped)
    loaded_cuda = [p for p in mapped if any(os.path.basename(p).startswith(n) for n in CUDA_LIBRARY_NAMES)]
    assert loaded_cuda == []
    # RTLD_LOCAL: the library's symbols are not in the process's global namespace.
    import ctypes

    with pytest.raises(AttributeError):
        ctypes.CDLL(None).cudadiag_version


def test_report_is_the_cli_document():
    document = cudadiag.report(components=["nvrtc", "cccl"])
    assert document["schema_version"] == 1
    assert {c["name"] for c in document["components"]} <= {"nvrtc", "cccl"}
    assert document["verification"]["ran"] is False


def test_invalid_options_raise_a_value_error_naming_the_key():
    with pytest.raises(cudadiag.Error) as raised:
        cudadiag.report(no_such_option=1)
    assert isinstance(raised.value, ValueError)
    assert "no_such_option" in str(raised.value)
    with pytest.raises(ValueError, match="nvrtc>>13"):
        cudadiag.require("nvrtc>>13")


@pytest.mark.parametrize("name", ["nvrtc", "cudart", "cccl", "nvcc", "no-such-component"])
def test_find_agrees_with_the_cli(name):
    cli = subprocess.run([find_cudadiag_bin(), "find", name], capture_output=True, text=True, timeout=60)
    try:
        found = cudadiag.find(name)
    except ValueError:
        assert cli.returncode == 2, cli.stderr  # an unknown name is a usage error for both
        return
    if found is None:
        assert cli.stdout == ""
    else:
        assert cli.stdout.strip() == found


def fake_library(directory, soname, version):
    """A small shared library `soname` (file name carrying `version`) with the SONAME link beside it."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in library")
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / "stand_in.c"
    source.write_text("int cudadiag_stand_in(void) { return 0; }\n")
    path = directory / (soname + version[len(soname.split(".so.")[1]):])
    subprocess.run([compiler, "-shared", "-fPIC", "-Wl,-soname," + soname, "-o", str(path), str(source)],
                   check=True)
    (directory / soname).symlink_to(path.name)
    return path


def layout_options(tmp_path, lib_dir):
    """Options that show discovery only `lib_dir` on LD_LIBRARY_PATH (no loader cache, no CUDA_HOME)."""
    cache = tmp_path / "empty-ld.so.cache"
    cache.write_bytes(b"")
    return {"components": ["nvrtc"], "ld_so_cache": str(cache),
            "environment": {"LD_LIBRARY_PATH": str(lib_dir), "CUDA_HOME": None, "CUDA_PATH": None}}


def test_require_raises_with_the_finding_in_a_broken_layout(tmp_path):
    old = fake_library(tmp_path / "cuda12" / "lib", "libnvrtc.so.12", "12.4.127")
    with pytest.raises(cudadiag.RequirementError) as raised:
        cudadiag.require("nvrtc>=13", **layout_options(tmp_path, old.parent))
    error = raised.value
    assert [f.id for f in error.findings][0] == "policy.unmet"
    assert "nvrtc>=13" in str(error) and "12.4.127" in str(error)
    assert "remedy:" in str(error)
    assert error.result.verdict == "error"


def test_require_returns_in_a_healthy_layout(tmp_path):
    new = fake_library(tmp_path / "cuda13" / "lib", "libnvrtc.so.13", "13.0.88")
    assert cudadiag.require("nvrtc>=13", "nvrtc<14", **layout_options(tmp_path, new.parent)) is None
    assert cudadiag.require() is None  # nothing required


def test_calls_from_many_threads_at_once():
    results, errors = [], []

    def worker():
        try:
            for _ in range(3):
                results.append(cudadiag.quick_check().verdict)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(set(results)) == 1 and len(results) == 24


def test_python_m_cudadiag_runs_the_executable():
    result = subprocess.run([sys.executable, "-m", "cudadiag", "--json", "--no-load"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["schema_version"] == 1
    version = subprocess.run([sys.executable, "-m", "cudadiag", "--version"], capture_output=True, text=True)
    assert version.stdout.split()[:2] == ["cudadiag", cudadiag.__version__]


def test_the_stub_names_the_public_api():
    import ast

    stub = os.path.join(os.path.dirname(cudadiag.__file__), "__init__.pyi")
    tree = ast.parse(open(stub).read())
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    names |= {target.id for node in tree.body if isinstance(node, ast.AnnAssign) for target in [node.target]}
    assert set(cudadiag.__all__) <= names
