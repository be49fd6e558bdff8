"""`cudadiag find --for FRAMEWORK NAME`: the copy of a library a framework's own CUDA library binds.

A synthetic torch in a venv: torch/lib/libtorch_cuda.so (built by the C compiler) needs
libcudnn.so.9 and finds it through DT_RUNPATH $ORIGIN/../../nvidia/cudnn/lib, as torch's wheels do;
torch/lib/libtorch_global_deps.so is opened first. LD_LIBRARY_PATH comes before DT_RUNPATH in glibc's
search, so a cuDNN on LD_LIBRARY_PATH is the one torch binds while CUDA Python (cuda-pathfinder)
still picks the wheel's: the trap --for exists to show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cudadiag_harness import clean_env, compile_shared_library, describe, run

WIDE = "--width=1000"  # one line per fact, whatever the tmp paths' length


def real_python3() -> tuple[Path, str]:
    """The interpreter `python3` on PATH runs (the system's, or the one behind a pyenv shim) and its
    X.Y version: the venv's base, whose site-packages directory carries that version."""
    done = subprocess.run(["python3", "-c", "import sys; print(sys.executable); print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, check=False)
    lines = done.stdout.split()
    if done.returncode != 0 or len(lines) != 2:
        return Path("/usr/bin/python3"), "3"
    return Path(os.path.realpath(lines[0])), lines[1]


SYSTEM_PYTHON, PYTHON_VERSION = real_python3()


def link_library(directory: Path, soname: str, needed: list[Path], runpath: str, code: str = "") -> Path:
    """`directory/soname` with DT_NEEDED on each of `needed` (by SONAME) and a DT_RUNPATH."""
    directory.mkdir(parents=True, exist_ok=True)
    source = directory / f".{soname}.c"
    source.write_text(code or "int cudadiag_test_framework(void) { return 0; }\n")
    compiler = next((c for c in ("cc", "gcc", "clang") if shutil.which(c)), None)
    if compiler is None:
        pytest.skip("no C compiler on PATH")
    command = [compiler, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-Wl,--enable-new-dtags",
               f"-Wl,-rpath,{runpath}", "-Wl,--no-as-needed", "-o", str(directory / soname), "-x", "c", str(source)]
    for library in needed:
        command += [f"-L{library.parent}", f"-l:{library.name}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    source.unlink(missing_ok=True)
    if done.returncode != 0:
        pytest.skip(f"cannot link a test library: {done.stderr[-300:]}")
    return directory / soname


@pytest.fixture
def torch_venv(tmp_path: Path) -> dict:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    if not SYSTEM_PYTHON.exists():
        pytest.skip("no python3 on PATH for the venv to point at")
    for name in ("python", "python3"):
        (venv / "bin" / name).symlink_to(SYSTEM_PYTHON)
    (venv / "pyvenv.cfg").write_text(f"home = {SYSTEM_PYTHON.parent}\ninclude-system-site-packages = false\n"
                                     f"version = {PYTHON_VERSION}\n")
    site = venv / "lib" / f"python{PYTHON_VERSION}" / "site-packages"
    wheel_cudnn = compile_shared_library(site / "nvidia" / "cudnn" / "lib", "libcudnn.so.9")
    (site / "nvidia_cudnn_cu12-9.10.2.21.dist-info").mkdir(parents=True)
    (site / "nvidia_cudnn_cu12-9.10.2.21.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: nvidia-cudnn-cu12\nVersion: 9.10.2.21\n")
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "version.py").write_text("__version__ = '2.8.0+cu128'\ncuda: Optional[str] = '12.8'\n")
    (site / "torch-2.8.0.dist-info").mkdir()
    (site / "torch-2.8.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\n")
    lib = site / "torch" / "lib"
    link_library(lib, "libtorch_global_deps.so", [], "$ORIGIN")
    link_library(lib, "libtorch_cuda.so", [wheel_cudnn], "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN")
    other = compile_shared_library(tmp_path / "elsewhere", "libcudnn.so.9")
    env = clean_env(VIRTUAL_ENV=str(venv), PATH=f"{venv / 'bin'}:/usr/bin:/bin")
    return {"env": env, "wheel": wheel_cudnn, "other": other, "lib": lib, "tmp": tmp_path}


def test_torch_binds_the_wheel_through_its_runpath(torch_venv):
    result = run(["find", "--for", "torch", "cudnn"], env=torch_venv["env"])
    assert result.returncode == 0, describe(result)
    assert result.stdout.decode().strip() == str(torch_venv["wheel"])
    explained = run([WIDE, "find", "--for", "torch", "cudnn", "--explain"], env=torch_venv["env"])
    assert explained.returncode == 0, describe(explained)
    text = explained.stdout.decode()
    assert f"torch 2.8.0 opens {torch_venv['lib'] / 'libtorch_global_deps.so'} (RTLD_GLOBAL), then" in text
    assert f"needed by {torch_venv['lib'] / 'libtorch_cuda.so'}, found through DT_RUNPATH" in text
    assert "CUDA Python (cuda-pathfinder) would load" in text and ": the same file." in text


def test_ld_library_path_wins_over_torchs_runpath(torch_venv):
    env = dict(torch_venv["env"], LD_LIBRARY_PATH=str(torch_venv["other"].parent))
    result = run(["find", "--for", "torch", "cudnn"], env=env)
    assert result.returncode == 0, describe(result)
    assert result.stdout.decode().strip() == str(torch_venv["other"])
    explained = run([WIDE, "find", "--for", "torch", "cudnn", "--explain"], env=env)
    assert "found through LD_LIBRARY_PATH" in explained.stdout.decode(), describe(explained)
    assert ": another file." in explained.stdout.decode()
    # What CUDA Python picks is unchanged: the wheel's.
    plain = run(["find", "cudnn"], env=env)
    assert plain.stdout.decode().strip() == str(torch_venv["wheel"]), describe(plain)


def test_what_torch_does_not_load_and_what_is_not_modelled(torch_venv):
    env = torch_venv["env"]
    nccl = run(["find", "--for", "torch", "nccl"], env=env)
    assert nccl.returncode == 1, describe(nccl)
    assert nccl.stdout == b""
    assert "torch 2.8.0 does not load nccl" in nccl.stderr.decode()
    for args, says in ((["find", "--for", "tensorflow", "cudnn"], "--for knows torch and jax"),
                       (["find", "--for", "jax", "cudnn"], "is not installed in the primary Python environment"),
                       (["find", "--for", "torch", "nvcc"], "is not one"),
                       (["--json", "find", "--for", "torch", "cudnn"], "does not combine with --json")):
        result = run(args, env=env)
        assert result.returncode == 2, describe(result)
        assert says in result.stderr.decode(), describe(result)


def test_a_missing_dependency_is_named(torch_venv):
    os.remove(torch_venv["wheel"])
    # An empty loader cache: no cuDNN a toolkit on this machine registered there can stand in.
    empty_cache = torch_venv["tmp"] / "ld.so.cache"
    empty_cache.write_bytes(b"")
    result = run([WIDE, "find", "--for", "torch", "cudnn", "--explain", "--ld-so-cache", str(empty_cache)],
                 env=torch_venv["env"])
    assert result.returncode == 1, describe(result)
    assert f"missing: libcudnn.so.9, needed by {torch_venv['lib'] / 'libtorch_cuda.so'}" in result.stdout.decode()


TORCH_28_FALLBACK_WHEELS = [("cublas", "libcublas.so.12"), ("cudnn", "libcudnn.so.9"), ("cuda_nvrtc", "libnvrtc.so.12"),
                            ("cuda_runtime", "libcudart.so.12"), ("cuda_cupti", "libcupti.so.12"),
                            ("cufft", "libcufft.so.11"), ("curand", "libcurand.so.10"),
                            ("nvjitlink", "libnvJitLink.so.12"), ("cusparse", "libcusparse.so.12"),
                            ("cusparselt", "libcusparseLt.so.0"), ("cusolver", "libcusolver.so.11"),
                            ("nccl", "libnccl.so.2"), ("cufile", "libcufile.so.0")]


def test_torchs_preload_glob_picks_what_pythons_glob_lists_first(torch_venv):
    """pytorch/pytorch#147001: the CUDA 11 and CUDA 12 runtime wheels share nvidia/cuda_runtime/lib, and
    torch's fallback glob libcudart.so.*[0-9] takes the first match in the directory's own order. The
    oracle is Python's glob.glob on the same directory: cudadiag must pick what it lists first."""
    import glob

    tmp = torch_venv["tmp"]
    wheels = tmp / "wheels"  # a sys.path entry torch's RUNPATH does not reach
    for folder, soname in TORCH_28_FALLBACK_WHEELS:
        compile_shared_library(wheels / "nvidia" / folder / "lib", soname)
    runtime = wheels / "nvidia" / "cuda_runtime" / "lib"
    compile_shared_library(runtime, "libcudart.so.11.0")
    (runtime / "libcudart.so.12.8.90").symlink_to("libcudart.so.12")  # another name for CUDA 12's
    # torch's global deps need libcudart.so.12, and their RUNPATH misses the wheels.
    link_library(torch_venv["lib"], "libtorch_global_deps.so", [wheels / "nvidia" / "cuda_runtime" / "lib" / "libcudart.so.12"],
                 "$ORIGIN/../../nvidia/cuda_runtime/lib")
    env = dict(torch_venv["env"], PYTHONPATH=str(wheels))
    empty_cache = tmp / "ld.so.cache"
    empty_cache.write_bytes(b"")
    result = run(["--json", "--no-load", "--ld-so-cache", str(empty_cache)], env=env)
    report = json.loads(result.stdout)
    torch_import = report["linkage"]["frameworks"][0]["import"]
    assert torch_import["model"] == "torch 2.8"
    picked = next(p for p in torch_import["preloads"] if p["pattern"] == "libcudart.so.*[0-9]")
    listed = glob.glob(str(runtime / "libcudart.so.*[0-9]"))
    assert picked["path"] == listed[0]
    assert picked["passed_over"] == listed[1:]
    # Whichever name of CUDA 12's runtime is picked, its SONAME satisfies the retry; CUDA 11's does not.
    fails = report["linkage"]["frameworks"][0]["loads"] is False
    assert fails == (os.path.basename(listed[0]) == "libcudart.so.11.0"), torch_import
    ids = [f["id"] for f in report["findings"]]
    assert ("framework.load_fails" in ids) == fails


def undefined_symbols_in_dynsym_order(library: Path) -> list[str]:
    """The undefined symbols of `library`'s .dynsym, in table order (readelf's listing)."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf on PATH")
    listing = subprocess.run([readelf, "--dyn-syms", "-W", str(library)], capture_output=True, text=True, check=True)
    names = []
    for line in listing.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 8 and fields[0].endswith(":") and fields[6] == "UND":
            names.append(fields[7].split("@")[0])
    return names


def test_thousands_of_references_are_all_checked_in_order(torch_venv):
    """An object with more references than one check task takes (1,024: libtorch_cuda.so has 3,452)
    has them checked in ranges side by side, while the libraries beside it are read ahead: what is
    unresolved still comes in .dynsym order, from every range, and every reference is counted."""
    count = 2600
    absent = {7, 1500, 2599}  # one in the first, second and last range
    lib = torch_venv["lib"]
    provider = compile_shared_library(lib, "libtorch_cpu.so",
                                      "".join(f"void f{i}(void) {{}}\n" for i in range(count) if i not in absent))
    calls = "".join(f"void f{i}(void);\n" for i in range(count))
    calls += "void cudadiag_test_calls(void) {\n" + "".join(f"  f{i}();\n" for i in range(count)) + "}\n"
    cuda = link_library(lib, "libtorch_cuda.so", [torch_venv["wheel"], provider],
                        "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN", calls)
    result = run(["--json", "--no-load"], env=torch_venv["env"])
    report = json.loads(result.stdout)
    torch = next(f for f in report["linkage"]["frameworks"] if f["framework"] == "torch")
    closure = torch["closure"]
    objects = [o["path"] for o in closure["objects"]]
    needing = objects.index(str(cuda))
    wanted = [name for name in undefined_symbols_in_dynsym_order(cuda) if name in {f"f{i}" for i in absent}]
    assert wanted == [u["symbol"] for u in closure["unresolved"]], describe(result)
    assert all(u["needed_by"] == needing for u in closure["unresolved"])
    assert not torch["loads"]
    # Every reference of libtorch_cuda.so is counted once, whatever range it was checked in.
    assert closure["references_checked"] >= count

