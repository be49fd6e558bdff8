#!/usr/bin/env python3
"""Builds a synthetic layout holding every component cuda-pathfinder knows, from cuda-pathfinder's
own descriptors (so the tree says what cuda-pathfinder expects, not what cudadiag expects).

    <venv>/bin/python tests/real_layouts/synthetic_layouts.py LAYOUT DEST

LAYOUT is one of:
  wheels-cu13  a fresh venv at DEST/venv (cuda-pathfinder copied in) with every library, header
               set, binary, static and bitcode library at its first (CUDA 13) wheel directory,
               libraries under their newest SONAME, with dist-info metadata
  wheels-cu12  the same at each component's last (CUDA 12 per-component) wheel directory, libraries
               under their oldest SONAME
  conda        DEST/conda as $CONDA_PREFIX: lib/ (nvvm/lib64, extras/CUPTI/lib64 where that is the
               anchor), targets/<triple>/include for toolkit headers, include/ for the others, bin/,
               nvvm/libdevice
  cuda-path    DEST/ctk as $CUDA_PATH (CUDA_HOME removed): lib64/, include/, bin/, nvvm/...

Libraries are real shared objects (cc -shared) with the declared SONAME, so cuda-pathfinder's
dlopen of each succeeds, and every dependency is planted beside its dependents. Prints one JSON
object: {"python": the interpreter to ask, "venv": its root or null, "env": variables to set,
"unset": variables to remove, "planted": {"<kind>/<name>": path}}.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import stat
import subprocess
import sys
from pathlib import Path

TRIPLE = "sbsa-linux" if platform.machine() == "aarch64" else "x86_64-linux"
BITCODE = b"BC\xc0\xde" + b"\0" * 60
ARCHIVE = b"!<arch>\n"
_built: dict[str, Path] = {}


def shared_object(cache: Path, soname: str) -> Path:
    """A loadable shared object with SONAME `soname`, compiled once per name."""
    if soname not in _built:
        cache.mkdir(parents=True, exist_ok=True)
        source = cache / "placeholder.c"
        source.write_text("int cudadiag_synthetic_placeholder(void) { return 0; }\n")
        output = cache / soname
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if not compiler:
            sys.exit("no C compiler")
        subprocess.run([compiler, "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(output), str(source)],
                       check=True, capture_output=True)
        _built[soname] = output
    return _built[soname]


def plant(path: Path, content: bytes | Path, executable: bool = False) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, Path):
        shutil.copyfile(content, path)
    else:
        path.write_bytes(content)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return str(path)


def descriptors():
    from cuda.pathfinder._binaries.supported_nvidia_binaries import SITE_PACKAGES_BINDIRS
    from cuda.pathfinder._dynamic_libs.lib_descriptor import LIB_DESCRIPTORS
    from cuda.pathfinder._headers.header_descriptor import HEADER_DESCRIPTORS
    from cuda.pathfinder._static_libs import find_bitcode_lib, find_static_lib

    libs = {name: d for name, d in LIB_DESCRIPTORS.items() if d.packaged_with != "driver" and d.linux_sonames}
    headers = {name: d for name, d in HEADER_DESCRIPTORS.items() if d.available_on_linux}
    static = find_static_lib._SUPPORTED_STATIC_LIBS_INFO
    bitcode = find_bitcode_lib._SUPPORTED_BITCODE_LIBS_INFO
    return libs, headers, SITE_PACKAGES_BINDIRS, static, bitcode


def make_venv(dest: Path) -> tuple[Path, Path]:
    """A venv without pip at dest/venv with this interpreter's cuda.pathfinder copied into it."""
    import cuda.pathfinder

    root = dest / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    site = next(root.glob("lib/python3*/site-packages"))
    source = Path(cuda.pathfinder.__file__).resolve().parent
    shutil.copytree(source, site / "cuda" / "pathfinder", ignore=shutil.ignore_patterns("__pycache__"))
    for info in source.parent.parent.glob("cuda_pathfinder-*.dist-info"):
        shutil.copytree(info, site / info.name)
    return root, site


def dist_info(site: Path, distribution: str, version: str) -> None:
    directory = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")


def build(layout: str, dest: Path) -> dict:
    libs, headers, bindirs, static, bitcode = descriptors()
    cache = dest / ".so-cache"
    planted: dict[str, str] = {}
    out = {"python": sys.executable, "venv": None, "env": {}, "unset": [], "planted": planted}

    if layout in ("wheels-cu13", "wheels-cu12"):
        newest = layout == "wheels-cu13"
        pick = (lambda seq: seq[0]) if newest else (lambda seq: seq[-1])
        root, site = make_venv(dest)
        out["python"] = str(root / "bin" / "python")
        out["venv"] = str(root)
        for name, desc in libs.items():
            if desc.site_packages_linux:
                soname = pick(desc.linux_sonames)
                planted[f"dynamic_lib/{name}"] = plant(site / pick(desc.site_packages_linux) / soname,
                                                       shared_object(cache, soname))
        for name, desc in headers.items():
            if desc.site_packages_dirs:
                planted[f"headers/{name}"] = plant(site / pick(desc.site_packages_dirs) / desc.header_basename,
                                                   b"/* synthetic */\n")
        for name, dirs in bindirs.items():
            planted[f"binary/{name}"] = plant(site / pick(dirs) / name, b"#!/bin/sh\nexit 0\n", executable=True)
        for name, info in static.items():
            planted[f"static_lib/{name}"] = plant(site / pick(info["site_packages_dirs"]) / info["filename"], ARCHIVE)
        for name, info in bitcode.items():
            planted[f"bitcode_lib/{name}"] = plant(site / pick(info["site_packages_dirs"]) / info["filename"], BITCODE)
        dist_info(site, "nvidia-cuda-nvrtc" if newest else "nvidia-cuda-nvrtc-cu12", "13.0.88" if newest else "12.9.86")
        return out

    if layout == "conda":
        root = dest / "conda"
        out["env"]["CONDA_PREFIX"] = str(root)
        for name, desc in libs.items():
            anchors = desc.anchor_rel_dirs_linux
            rel = "lib" if "lib" in anchors else anchors[0]
            soname = desc.linux_sonames[0]
            planted[f"dynamic_lib/{name}"] = plant(root / rel / soname, shared_object(cache, soname))
        for name, desc in headers.items():
            base = root / "targets" / TRIPLE if desc.conda_targets_layout else root
            rel = Path(desc.anchor_include_rel_dirs[0], *desc.include_subdirs[:1])
            planted[f"headers/{name}"] = plant(base / rel / desc.header_basename, b"/* synthetic */\n")
        for name in bindirs:
            planted[f"binary/{name}"] = plant(root / "bin" / name, b"#!/bin/sh\nexit 0\n", executable=True)
        for name, info in static.items():
            planted[f"static_lib/{name}"] = plant(root / info["conda_rel_paths"][0] / info["filename"], ARCHIVE)
        for name, info in bitcode.items():
            planted[f"bitcode_lib/{name}"] = plant(root / info["rel_path"] / info["filename"], BITCODE)
        return out

    if layout == "cuda-path":
        root = dest / "ctk"
        out["env"]["CUDA_PATH"] = str(root)
        out["unset"].append("CUDA_HOME")
        for name, desc in libs.items():
            soname = desc.linux_sonames[0]
            planted[f"dynamic_lib/{name}"] = plant(root / desc.anchor_rel_dirs_linux[0] / soname,
                                                   shared_object(cache, soname))
        for name, desc in headers.items():
            rel = Path(desc.anchor_include_rel_dirs[0], *desc.include_subdirs[:1])
            planted[f"headers/{name}"] = plant(root / rel / desc.header_basename, b"/* synthetic */\n")
        for name in bindirs:
            planted[f"binary/{name}"] = plant(root / "bin" / name, b"#!/bin/sh\nexit 0\n", executable=True)
        for name, info in static.items():
            planted[f"static_lib/{name}"] = plant(root / info["ctk_rel_paths"][0] / info["filename"], ARCHIVE)
        for name, info in bitcode.items():
            planted[f"bitcode_lib/{name}"] = plant(root / info["rel_path"] / info["filename"], BITCODE)
        return out

    sys.exit(f"unknown layout {layout!r}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    json.dump(build(sys.argv[1], Path(sys.argv[2]).resolve()), sys.stdout, indent=2)
    sys.stdout.write("\n")
