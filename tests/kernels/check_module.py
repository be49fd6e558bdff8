#!/usr/bin/env python3
"""The nvcc-built self-test module, checked on any machine (ctest kernels.module; 77 = skipped).

    check_module.py MODULE --built ON|OFF --archs "sm_80 ... compute_120"

When the build found nvcc: the module exists; its dynamic symbol table defines exactly the C ABI
of kernels/cub_selftest.h; its NEEDED entries are only the C/C++ runtime (no libcuda: the static
cudart dlopens libcuda.so.1 at run time, so the worker's preloaded driver is the one used); and
loaded with ctypes it reports ABI 1, its build facts, and answers info/run with an error code
rather than a crash when there is no driver or no current context (or, with one, a verified run).
"""
import argparse
import ctypes
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cub_module_abi as abi  # noqa: E402

ALLOWED_NEEDED = re.compile(r"^(libstdc\+\+|libgcc_s|libc|libm|libdl|libpthread|librt|ld-linux[-\w]*)\.so(\.\d+)*$")


def dynamic_exports(path):
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(fields) >= 8 and fields[0].endswith(":") and fields[6] != "UND" and fields[4] in ("GLOBAL", "WEAK"):
            names.add(fields[7].split("@")[0])
    return names


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("module")
    parser.add_argument("--built", required=True)
    parser.add_argument("--archs", default="")
    args = parser.parse_args()
    if args.built.upper() not in ("ON", "TRUE", "1", "YES"):
        print("SKIP: the self-test module was not built (nvcc not found or CUDADIAG_BUILD_SELFTEST_MODULE=OFF)")
        return 77
    problems = []
    if not os.path.isfile(args.module):
        print(f"FAIL: {args.module} does not exist")
        return 1

    exports = dynamic_exports(args.module)
    if exports != abi.EXPORTS:
        problems.append(f"exports {sorted(exports)}, expected exactly {sorted(abi.EXPORTS)}")
    libs = needed(args.module)
    print(f"NEEDED: {libs}")
    for lib in libs:
        if "libcuda" in lib or not ALLOWED_NEEDED.match(lib):
            problems.append(f"unexpected NEEDED entry {lib}")

    module = abi.load(args.module)
    if module.cudadiag_cub_selftest_abi() != abi.ABI:
        problems.append(f"abi() = {module.cudadiag_cub_selftest_abi()}, expected {abi.ABI}")

    info = abi.ModuleInfo()
    code = module.cudadiag_cub_selftest_info(ctypes.byref(info))
    print(f"info: code={code} abi={info.abi} built={info.cuda_version_built} cccl={info.cccl_version} "
          f"runtime={info.runtime_version} driver={info.driver_version} archs='{info.archs.decode()}'")
    if info.abi != abi.ABI or info.cuda_version_built < 11000 or info.cccl_version < 2000000:
        problems.append("info: wrong abi or build facts")
    if args.archs and info.archs.decode() != args.archs:
        problems.append(f"info: archs '{info.archs.decode()}', expected '{args.archs}'")
    if info.runtime_version != info.cuda_version_built:
        problems.append("info: runtime version differs from the version built (cudart is static)")
    if code == 0 and info.driver_version <= 0:
        problems.append("info: success without a driver version")
    if module.cudadiag_cub_selftest_info(None) == 0:
        problems.append("info(NULL) returned success")

    result = abi.Result()
    if module.cudadiag_cub_selftest_run(None, ctypes.byref(result)) != 1 or result.cuda_error != 1:
        problems.append(f"run(NULL params): {abi.describe(result)}")
    for bad in (abi.Params(which=9, count=10, warmup=0, repetitions=1),
                abi.Params(which=abi.REDUCE_I32, count=0, warmup=0, repetitions=1),
                abi.Params(which=abi.SORT_U32, count=10, warmup=0, repetitions=0),
                abi.Params(which=abi.REDUCE_I32, count=10, warmup=0, repetitions=1, warmup_ms=-1),
                abi.Params(which=abi.REDUCE_I32, count=10, warmup=0, repetitions=1, warmup_ms=10001)):
        code = module.cudadiag_cub_selftest_run(ctypes.byref(bad), ctypes.byref(result))
        if code != 1 or not result.error_where.startswith(b"parameters"):
            problems.append(f"invalid parameters accepted: {abi.describe(result)}")

    # No current context here (this process never made one): an error code, or, should cudart have
    # created one anyway, a verified run. Never a crash.
    params = abi.Params(which=abi.REDUCE_I32, count=100003, warmup=0, repetitions=2)
    code = module.cudadiag_cub_selftest_run(ctypes.byref(params), ctypes.byref(result))
    print(f"run without a context: {abi.describe(result)}")
    if code != result.cuda_error:
        problems.append("run's return value differs from result.cuda_error")
    if code != 0 and (not result.error_name or not result.error_where):
        problems.append("an error without its name or place")
    if code == 0 and result.verified != 1:
        problems.append("a run without error that did not verify")

    for problem in problems:
        print(f"FAIL: {problem}")
    if not problems:
        print(f"ok: {args.module}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
