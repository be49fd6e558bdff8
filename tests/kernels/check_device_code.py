#!/usr/bin/env python3
"""The device code run on a real GPU (ctest kernels.device_code, label gpu; exit 77 = skipped).

    check_device_code.py PTX_DIR MODULE --built ON|OFF

Drives the driver API through ctypes the way the self-test worker does: loads libcuda.so.1,
makes device 0's primary context current, JIT-loads the bundled PTX and checks each kernel's
result (copy: byte-exact, with a tail; %smid probe: a full-device launch sets exactly as many bits
as there are SMs, all below %nsmid). Then, when the module was built, runs every CUB case through
the C ABI (small and odd sizes, a user stream, sizes above INT_MAX for the 64-bit offset path,
an out-of-memory that must name its allocation and leave the next run working) and checks that the
module left the current context alone. Prints the full-size figures for information only.
"""
import argparse
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cub_module_abi as abi  # noqa: E402

CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16
CU_STREAM_NON_BLOCKING = 1


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)

    def __call__(self, name, *args):
        code = getattr(self.lib, name)(*args)
        if code != 0:
            raise RuntimeError(f"{name} returned CUresult {code}")


def launch(cu, function, grid, block, *values):
    holders = [ctypes.c_uint64(v) for v in values]
    params = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
    cu("cuLaunchKernel", function, ctypes.c_uint(grid), ctypes.c_uint(1), ctypes.c_uint(1), ctypes.c_uint(block),
       ctypes.c_uint(1), ctypes.c_uint(1), ctypes.c_uint(0), ctypes.c_void_p(0), params, ctypes.c_void_p(0))
    cu("cuCtxSynchronize")


def load_function(cu, ptx_path, name):
    image = open(ptx_path, "rb").read() + b"\0"
    module = ctypes.c_void_p()
    cu("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(image))
    function = ctypes.c_void_p()
    cu("cuModuleGetFunction", ctypes.byref(function), module, name.encode())
    return function


def alloc(cu, size):
    pointer = ctypes.c_uint64()
    cu("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(size))
    return pointer.value


def check_ptx(cu, ptx_dir, sm_count, problems):
    copy = load_function(cu, os.path.join(ptx_dir, "copy.ptx"), "cudadiag_copy_u32x4")
    for count, grid in ((1_000_003, sm_count * 8), (5, sm_count * 8), (4096 * 4 + 3, 3)):
        data = os.urandom(count * 16)
        src, dst = alloc(cu, count * 16), alloc(cu, count * 16)
        cu("cuMemcpyHtoD_v2", ctypes.c_uint64(src), data, ctypes.c_size_t(len(data)))
        cu("cuMemsetD32_v2", ctypes.c_uint64(dst), ctypes.c_uint(0), ctypes.c_size_t(count * 4))
        launch(cu, copy, grid, 256, dst, src, count)
        back = ctypes.create_string_buffer(len(data))
        cu("cuMemcpyDtoH_v2", back, ctypes.c_uint64(dst), ctypes.c_size_t(len(data)))
        cu("cuMemFree_v2", ctypes.c_uint64(src))
        cu("cuMemFree_v2", ctypes.c_uint64(dst))
        ok = back.raw == data
        print(f"{'ok' if ok else 'FAIL'}: cudadiag_copy_u32x4 count={count} grid={grid}x256")
        if not ok:
            problems.append(f"copy of {count} elements is wrong")

    smid_ptx = os.path.join(ptx_dir, "smid.ptx")
    nsmid, probe = load_function(cu, smid_ptx, "cudadiag_nsmid"), load_function(cu, smid_ptx, "cudadiag_smid_probe")
    out = alloc(cu, 4)
    launch(cu, nsmid, 1, 1, out)
    value = ctypes.c_uint32()
    cu("cuMemcpyDtoH_v2", ctypes.byref(value), ctypes.c_uint64(out), ctypes.c_size_t(4))
    words = (value.value + 31) // 32
    bitmap = alloc(cu, words * 4)
    cu("cuMemsetD32_v2", ctypes.c_uint64(bitmap), ctypes.c_uint(0), ctypes.c_size_t(words))
    launch(cu, probe, sm_count * 4, 32, bitmap, 2_000_000)
    host = (ctypes.c_uint32 * words)()
    cu("cuMemcpyDtoH_v2", host, ctypes.c_uint64(bitmap), ctypes.c_size_t(words * 4))
    ids = [w * 32 + b for w in range(words) for b in range(32) if host[w] >> b & 1]
    print(f"%nsmid={value.value}, SMs={sm_count}, probe reached {len(ids)} SMs (max id {max(ids) if ids else None})")
    if value.value < sm_count or len(ids) != sm_count or (ids and max(ids) >= value.value):
        problems.append("the %smid probe did not reach exactly the device's SMs")


def run_case(module, which, count, problems, warmup=1, reps=3, stream=None, expect_error=None, warmup_ms=0):
    params = abi.Params(which=which, count=count, warmup=warmup, repetitions=reps, stream=stream, warmup_ms=warmup_ms)
    result = abi.Result()
    code = module.cudadiag_cub_selftest_run(ctypes.byref(params), ctypes.byref(result))
    label = f"case {which} count {count}"
    print(f"{label}: {abi.describe(result)}")
    if expect_error is not None:
        if code != expect_error:
            problems.append(f"{label}: expected error {expect_error}, got {code}")
    elif code != 0 or result.verified != 1:
        problems.append(f"{label}: {abi.describe(result)}")
    return result


def check_module(cu, module_path, context, problems):
    module = abi.load(module_path)
    info = abi.ModuleInfo()
    print(f"info: code={module.cudadiag_cub_selftest_info(ctypes.byref(info))} driver={info.driver_version} "
          f"runtime={info.runtime_version} cccl={info.cccl_version} archs='{info.archs.decode()}'")
    for which in (abi.REDUCE_F32, abi.REDUCE_I32, abi.SORT_U32, abi.SORT_U64):
        for count in (1, 1000, (1 << 20) + 12345):
            run_case(module, which, count, problems)
    stream = ctypes.c_void_p()
    cu("cuStreamCreate", ctypes.byref(stream), ctypes.c_uint(CU_STREAM_NON_BLOCKING))
    run_case(module, abi.SORT_U64, 3_000_001, problems, stream=stream.value)
    cu("cuStreamDestroy_v2", stream)
    # 64-bit offsets (count > INT_MAX).
    run_case(module, abi.REDUCE_I32, (1 << 31) + 7, problems, warmup=0, reps=1)
    run_case(module, abi.SORT_U32, (1 << 31) + 7, problems, warmup=0, reps=1)
    # Out of memory: named, then nothing left behind.
    oom = run_case(module, abi.REDUCE_F32, 1 << 40, problems, expect_error=2)
    if b"cudaMalloc input (4398046511104 bytes)" not in oom.error_where:
        problems.append(f"out-of-memory place: {oom.error_where}")
    run_case(module, abi.REDUCE_F32, 12345, problems)
    # Warm-up by time: at least warmup_ms of GPU time in untimed runs, and their count reported.
    warm = run_case(module, abi.REDUCE_F32, 1 << 24, problems, warmup=0, reps=3, warmup_ms=50)
    print(f"  warm-up: {warm.warmup_runs} runs, {warm.warmup_elapsed_ms:.1f} ms")
    if warm.warmup_elapsed_ms < 50 or warm.warmup_runs < 1 or warm.max_ms < warm.best_ms:
        problems.append(f"warmup_ms=50 gave {warm.warmup_runs} runs in {warm.warmup_elapsed_ms:.1f} ms, "
                        f"best {warm.best_ms}, max {warm.max_ms}")
    # The full-level sizes, for information.
    for which, count, unit in ((abi.REDUCE_F32, 1 << 30, "GB/s"), (abi.REDUCE_I32, 1 << 30, "GB/s"),
                               (abi.SORT_U32, 1 << 28, "Gkeys/s"), (abi.SORT_U64, 1 << 28, "Gkeys/s")):
        result = run_case(module, which, count, problems, warmup=3, reps=10)
        if result.median_ms > 0:
            amount = result.bytes_per_run if unit == "GB/s" else result.keys_per_run
            print(f"  -> {amount / (result.median_ms * 1e6):.2f} {unit} (median)")
    current = ctypes.c_void_p()
    cu("cuCtxGetCurrent", ctypes.byref(current))
    if current.value != context.value:
        problems.append("the module changed the current context")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("ptx_dir")
    parser.add_argument("module")
    parser.add_argument("--built", default="OFF")
    args = parser.parse_args()
    try:
        cu = Driver()
        cu("cuInit", ctypes.c_uint(0))
        count = ctypes.c_int()
        cu("cuDeviceGetCount", ctypes.byref(count))
        if count.value == 0:
            raise RuntimeError("no devices")
    except (OSError, RuntimeError) as error:
        print(f"SKIP: no usable CUDA driver or device ({error})")
        return 77
    built = args.built.upper() in ("ON", "TRUE", "1", "YES")
    problems = []
    if built:
        # Before any context is current: an error (the module must not create one), never a crash.
        no_context = abi.Result()
        params = abi.Params(which=abi.REDUCE_I32, count=1000, warmup=0, repetitions=1)
        code = abi.load(args.module).cudadiag_cub_selftest_run(ctypes.byref(params), ctypes.byref(no_context))
        print(f"without a current context: code={code} {abi.describe(no_context)}")
    device = ctypes.c_int()
    cu("cuDeviceGet", ctypes.byref(device), ctypes.c_int(0))
    sm_count = ctypes.c_int()
    cu("cuDeviceGetAttribute", ctypes.byref(sm_count), ctypes.c_int(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), device)
    context = ctypes.c_void_p()
    cu("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    cu("cuCtxSetCurrent", context)
    check_ptx(cu, args.ptx_dir, sm_count.value, problems)
    if built:
        check_module(cu, args.module, context, problems)
    else:
        print("module not built: CUB cases not run")
    for problem in problems:
        print(f"FAIL: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
