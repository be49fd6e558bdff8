#!/usr/bin/env python3
"""The bundled PTX assembles for today's GPUs and keeps its conservative ISA (ctest kernels.ptx_assembles).

    check_ptx.py PTX_DIR [--ptxas PATH]      exit 77 when no ptxas is found

For each file under kernels/ptx/: the header is `.version 7.0`, `.target sm_70`, `.address_size 64`
(drivers from CUDA 11.0 on can JIT it); every entry point the self-test launches is there with its
parameter list; and ptxas assembles the file for sm_80 and sm_90, which also proves that nothing in
the body needs a newer ISA or target than the header declares.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

# file -> {entry: number of .u64 parameters}; the self-test's cuLaunchKernel calls rely on these.
ENTRIES = {
    "copy.ptx": {"cudadiag_copy_u32x4": 3},          # (dst, src, count of 16-byte elements)
    "smid.ptx": {"cudadiag_smid_probe": 2,           # (u32 bitmap, spin_ns)
                 "cudadiag_nsmid": 1},               # (u32 out)
    "fma.ptx": {"cudadiag_fma_f32": 2},             # (f32 out per thread, rounds)
    "memtest.ptx": {"cudadiag_mem_fill": 4,          # (buffer, elements, mode, arg)
                    "cudadiag_mem_check": 5,         # (buffer, elements, mode, arg, errors)
                    "cudadiag_mem_check_write": 7,   # (..., next_mode, next_arg, errors)
                    "cudadiag_mem_corrupt": 3},      # (buffer, elements, count): fault injection
}
HEADER = [".version 7.0", ".target sm_70", ".address_size 64"]
ARCHS = ["sm_80", "sm_90"]


def find_ptxas(explicit):
    if explicit:
        return explicit if os.path.isfile(explicit) else None
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root and os.path.isfile(os.path.join(root, "bin", "ptxas")):
            return os.path.join(root, "bin", "ptxas")
    return shutil.which("ptxas") or (
        "/usr/local/cuda/bin/ptxas" if os.path.isfile("/usr/local/cuda/bin/ptxas") else None)


def declared_entries(text):
    entries = {}
    for match in re.finditer(r"\.visible\s+\.entry\s+(\w+)\s*\(([^)]*)\)", text):
        params = [p.strip() for p in match.group(2).split(",") if p.strip()]
        entries[match.group(1)] = params
    return entries


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ptx_dir")
    parser.add_argument("--ptxas")
    args = parser.parse_args()
    ptxas = find_ptxas(args.ptxas)
    problems = []
    for name, expected in ENTRIES.items():
        path = os.path.join(args.ptx_dir, name)
        if not os.path.isfile(path):
            problems.append(f"{name}: missing")
            continue
        text = open(path, encoding="ascii").read()
        directives = [line.strip() for line in text.splitlines() if line.strip().startswith((".version", ".target",
                                                                                            ".address_size"))]
        if directives != HEADER:
            problems.append(f"{name}: header {directives}, expected {HEADER}")
        entries = declared_entries(text)
        for entry, count in expected.items():
            params = entries.get(entry)
            if params is None:
                problems.append(f"{name}: no entry {entry}")
            elif len(params) != count or not all(p.startswith(".param .u64") for p in params):
                problems.append(f"{name}: {entry} takes {params}, expected {count} x .param .u64")
        if not ptxas:
            continue
        for arch in ARCHS:
            done = subprocess.run([ptxas, f"-arch={arch}", "--verbose", "-o", os.devnull, path],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                problems.append(f"{name}: ptxas -arch={arch} failed: {done.stderr.strip()}")
                continue
            compiled = set(re.findall(r"Compiling entry function '(\w+)' for '" + arch + "'", done.stdout + done.stderr))
            if compiled != set(expected):
                problems.append(f"{name}: ptxas -arch={arch} compiled entries {sorted(compiled)}")
            else:
                print(f"ok: {name} assembles for {arch}: {', '.join(sorted(compiled))}")
    for problem in problems:
        print(f"FAIL: {problem}")
    if problems:
        return 1
    if not ptxas:
        print("SKIP: no ptxas found (set CUDA_HOME); headers and entry lists checked only")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
