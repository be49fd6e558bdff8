#!/usr/bin/env python3
"""Asks NVIDIA's cuda-pathfinder where it finds each CUDA component, for comparison with cudadiag.

Run it with the interpreter whose environment you want to ask about (a venv's python sees that
venv's site-packages), under the environment variables you want to test:

    <venv>/bin/python tests/real_layouts/pathfinder_oracle.py [--all-supported] [--system-search] [NAME ...]

Prints one JSON object on stdout, keyed "<kind>/<name>" (for example "dynamic_lib/nvrtc",
"headers/cccl", "binary/nvcc", "static_lib/cudadevrt", "bitcode_lib/device"; a bare name would be
ambiguous because cudart and nvrtc are both a library and a header set):

    {"dynamic_lib/nvrtc": {"name": "nvrtc", "kind": "dynamic_lib", "abs_path": str|null,
                           "realpath": str|null, "found_via": str|null, "error": str|null}, ...}

Each library is loaded in a fresh child process of this interpreter, so one load (and the
dependencies it pulls in) cannot change where the next one is found. "Not found" is
abs_path null with the error text; a name this cuda-pathfinder does not support is reported
with error "unsupported". The cuda-pathfinder version and interpreter go to stderr.

--system-search answers a different question for the dynamic libraries: what a plain
dlopen(SONAME) resolves to (cuda-pathfinder's declared SONAMEs, newest first, RTLD_LAZY), which is
what cudadiag reports as "loader". found_via is then "system-search"; a failed dlopen gives
abs_path null and glibc's message in "error" (it names the file it rejected, if any).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import ctypes
import json
import os
import subprocess
import sys

# cudadiag's catalog is cuda-pathfinder 1.9.1's: every (kind, name) this cuda-pathfinder knows
# (all_supported_components) is asked about by default.

_CHILD_TIMEOUT_S = 60


def _result(name: str, kind: str, abs_path: str | None, found_via: str | None, error: str | None) -> dict:
    return {
        "name": name,
        "kind": kind,
        "abs_path": abs_path,
        "realpath": os.path.realpath(abs_path) if abs_path else None,
        "found_via": found_via,
        "error": error,
    }


def ask_here(kind: str, name: str) -> dict:
    """Asks cuda-pathfinder in this process. Never raises for a lookup failure."""
    import cuda.pathfinder as pathfinder

    try:
        if kind == "dynamic_lib":
            if name not in _all_known_libnames(pathfinder):
                return _result(name, kind, None, None, "unsupported")
            loaded = pathfinder.load_nvidia_dynamic_lib(name)
            return _result(name, kind, loaded.abs_path, loaded.found_via, None)
        if kind == "headers":
            located = pathfinder.locate_nvidia_header_directory(name)
            if located is None:
                return _result(name, kind, None, None, "not found")
            return _result(name, kind, located.abs_path, located.found_via, None)
        if kind == "binary":
            if name not in pathfinder.SUPPORTED_BINARY_UTILITIES:
                return _result(name, kind, None, None, "unsupported")
            path = pathfinder.find_nvidia_binary_utility(name)
            # find_nvidia_binary_utility does not say where it looked; report None for found_via.
            return _result(name, kind, path, None, None if path else "not found")
        if kind in ("static_lib", "bitcode_lib"):
            static = kind == "static_lib"
            supported = getattr(pathfinder, "SUPPORTED_STATIC_LIBS" if static else "SUPPORTED_BITCODE_LIBS", ())
            if name not in supported:
                return _result(name, kind, None, None, "unsupported")
            try:
                located = (pathfinder.locate_static_lib if static else pathfinder.locate_bitcode_lib)(name)
            except (getattr(pathfinder, "StaticLibNotFoundError", LookupError),
                    getattr(pathfinder, "BitcodeLibNotFoundError", LookupError)) as error:
                return _result(name, kind, None, None, f"{type(error).__name__}: {str(error)[:300]}")
            return _result(name, kind, located.abs_path, located.found_via, None)
    except Exception as error:  # every failure mode is data for the comparison
        message = f"{type(error).__name__}: {error}".strip()
        if kind == "headers" and message.startswith("RuntimeError: UNKNOWN"):
            message = "unsupported"
        return _result(name, kind, None, None, message[:2000])
    raise ValueError(f"unknown kind {kind!r}")


class _LinkMap(ctypes.Structure):
    _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]


def _loaded_path(handle: int) -> str | None:
    libdl = ctypes.CDLL(None)
    libdl.dlinfo.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    link_map = ctypes.POINTER(_LinkMap)()
    if libdl.dlinfo(ctypes.c_void_p(handle), 2, ctypes.byref(link_map)) != 0 or not link_map:  # RTLD_DI_LINKMAP
        return None
    return os.fsdecode(link_map.contents.l_name) or None


def system_search_here(name: str) -> dict:
    """What dlopen(SONAME) resolves to for the declared SONAMEs, newest first (no CUDA Python logic)."""
    kind = "dynamic_lib"
    try:
        from cuda.pathfinder._dynamic_libs.lib_descriptor import LIB_DESCRIPTORS

        sonames = tuple(LIB_DESCRIPTORS[name].linux_sonames) if name in LIB_DESCRIPTORS else ()
    except ImportError:
        sonames = ()
    if not sonames:
        return _result(name, kind, None, None, "unsupported")
    errors = []
    for soname in sonames:
        try:
            handle = ctypes.CDLL(soname, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
        except OSError as error:
            errors.append(str(error))
            continue
        return _result(name, kind, _loaded_path(handle._handle), "system-search", None)
    return _result(name, kind, None, None, "; ".join(errors)[:2000])


def _all_known_libnames(pathfinder) -> frozenset[str]:
    try:
        from cuda.pathfinder._dynamic_libs.lib_descriptor import LIB_DESCRIPTORS

        return frozenset(LIB_DESCRIPTORS)
    except ImportError:  # older releases: the public tuple (no driver libraries)
        return frozenset(pathfinder.SUPPORTED_NVIDIA_LIBNAMES)


def ask_in_child(kind: str, name: str, system_search: bool = False) -> dict:
    """Asks cuda-pathfinder in a fresh child of this interpreter (same environment)."""
    mode = "--child-system-search" if system_search else "--child"
    command = [sys.executable, os.path.abspath(__file__), mode, kind, name]
    try:
        done = subprocess.run(command, capture_output=True, timeout=_CHILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return _result(name, kind, None, None, f"child timed out after {_CHILD_TIMEOUT_S}s")
    try:
        return json.loads(done.stdout)
    except ValueError:
        stderr = done.stderr.decode(errors="replace").strip()[-2000:]
        return _result(name, kind, None, None, f"child exited {done.returncode}: {stderr}")


def _all_header_names(pathfinder) -> list[str]:
    try:  # 1.9: the descriptor registry (toolkit and other header sets)
        from cuda.pathfinder._headers.header_descriptor import HEADER_DESCRIPTORS

        return sorted(name for name, desc in HEADER_DESCRIPTORS.items() if desc.available_on_linux)
    except ImportError:
        names = set(pathfinder.SUPPORTED_HEADERS_CTK)
        try:
            from cuda.pathfinder._headers.supported_nvidia_headers import SUPPORTED_HEADERS_NON_CTK

            names |= set(SUPPORTED_HEADERS_NON_CTK)
        except ImportError:
            pass
        return sorted(names)


def all_supported_components() -> list[tuple[str, str]]:
    """Every (kind, name) this cuda-pathfinder knows on Linux: 101 for 1.9.1."""
    import cuda.pathfinder as pathfinder

    return (
        [("dynamic_lib", name) for name in sorted(_all_known_libnames(pathfinder))]
        + [("headers", name) for name in _all_header_names(pathfinder)]
        + [("binary", name) for name in pathfinder.SUPPORTED_BINARY_UTILITIES]
        + [("static_lib", name) for name in getattr(pathfinder, "SUPPORTED_STATIC_LIBS", ())]
        + [("bitcode_lib", name) for name in getattr(pathfinder, "SUPPORTED_BITCODE_LIBS", ())]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="restrict to these names (any kind)")
    parser.add_argument("--all-supported", action="store_true",
                        help="the default (kept for scripts): everything this cuda-pathfinder supports")
    parser.add_argument("--list", action="store_true",
                        help="print the supported (kind, name) pairs as JSON and exit (no lookups)")
    parser.add_argument("--system-search", action="store_true",
                        help="dynamic libraries only: report what plain dlopen(SONAME) resolves to")
    parser.add_argument("--child", nargs=2, metavar=("KIND", "NAME"), help=argparse.SUPPRESS)
    parser.add_argument("--child-system-search", nargs=2, metavar=("KIND", "NAME"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        json.dump(ask_here(*args.child), sys.stdout)
        return 0
    if args.child_system_search:
        json.dump(system_search_here(args.child_system_search[1]), sys.stdout)
        return 0

    import cuda.pathfinder as pathfinder

    if args.list:
        json.dump([list(pair) for pair in all_supported_components()], sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(f"cuda-pathfinder {pathfinder.__version__} in {sys.executable} (prefix {sys.prefix})", file=sys.stderr)
    components = all_supported_components()
    if args.names:
        components = [(kind, name) for kind, name in components if name in args.names]
    if args.system_search:
        components = [(kind, name) for kind, name in components if kind == "dynamic_lib"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        results = list(pool.map(lambda component: ask_in_child(*component, args.system_search), components))
    json.dump({f"{r['kind']}/{r['name']}": r for r in results}, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
