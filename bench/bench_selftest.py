#!/usr/bin/env python3
"""Self-test benchmarks against CUB called directly, side by side in one run (the targets in docs/performance.md).

    python3 bench/bench_selftest.py build/cli/cudadiag [--cub-direct PATH] [--nvcc PATH] [--arch native]

Builds bench/cub_direct.cu with nvcc unless --cub-direct names a built one (-arch=native, falling
back to sm_90), runs it (reduce f32 2^30, radix sort u32 and u64 2^28, cudaMemcpy D2D), then runs
`cudadiag selftest --level full --only ptx,reduce,sort --json`, and prints the ratios
cudadiag / CUB direct for reduce f32, sort u32 and sort u64, and the bundled copy kernel against
cuMemcpyDtoD as the self-test itself measured it. Targets: reduce >= 0.97, sorts >= 1.0, copy >= 0.98.
Prints figures only; exit 0 when both programs produced them, 1 otherwise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"reduce f32": 0.97, "sort u32": 1.0, "sort u64": 1.0, "copy vs cuMemcpyDtoD": 0.98}


def find_nvcc(explicit):
    if explicit:
        return explicit
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        root = os.environ.get(variable)
        if root and os.path.isfile(os.path.join(root, "bin", "nvcc")):
            return os.path.join(root, "bin", "nvcc")
    return shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def build_cub_direct(nvcc, arch, out_dir):
    out = os.path.join(out_dir, "cub_direct")
    source = os.path.join(HERE, "cub_direct.cu")
    for candidate in ([arch] if arch else ["native", "sm_90"]):
        command = [nvcc, "-O3", "-std=c++17", f"-arch={candidate}", "-o", out, source]
        print(f"building: {' '.join(command)}", file=sys.stderr)
        if subprocess.run(command).returncode == 0:
            return out
    raise SystemExit("could not build bench/cub_direct.cu")


def metric(tests, key, name, device):
    for test in tests:
        if test.get("key") == key and test.get("device", device) == device:
            for entry in test.get("metrics", []):
                if entry.get("name") == name:
                    return entry.get("value")
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cudadiag")
    parser.add_argument("--cub-direct", help="a built bench/cub_direct (default: build it now)")
    parser.add_argument("--nvcc")
    parser.add_argument("--arch", help="-arch for building cub_direct (default: native, else sm_90)")
    parser.add_argument("--device", type=int, default=0, help="the CUDA device both programs run on")
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        binary = args.cub_direct or build_cub_direct(find_nvcc(args.nvcc), args.arch, scratch)
        direct_run = subprocess.run([binary, "--reps", str(args.reps), "--device", str(args.device)],
                                    capture_output=True, text=True)
    if direct_run.returncode != 0:
        print(f"cub_direct failed ({direct_run.returncode}): {direct_run.stderr.strip()}")
        return 1
    direct = json.loads(direct_run.stdout)

    command = [args.cudadiag, "selftest", "--level", "full", "--only", "ptx,reduce,sort", "--device", str(args.device),
               "--json"]
    selftest_run = subprocess.run(command, capture_output=True, text=True)
    try:
        report = json.loads(selftest_run.stdout)
    except json.JSONDecodeError:
        print(f"{' '.join(command)} gave no JSON (exit {selftest_run.returncode}): {selftest_run.stderr.strip()[-2000:]}")
        return 1
    tests = (report.get("selftest") or {}).get("tests", [])
    for test in tests:
        if test.get("device", args.device) == args.device and test.get("status") != "pass":
            print(f"note: selftest {test.get('key')} is {test.get('status')}: {test.get('reason', '')}")

    rows = [
        ("reduce f32", "GB/s", metric(tests, "reduce", "f32_gbps", args.device), direct.get("reduce_f32_gbps")),
        ("sort u32", "Gkeys/s", metric(tests, "sort", "u32_gkeys_per_s", args.device),
         direct.get("sort_u32_gkeys_per_s")),
        ("sort u64", "Gkeys/s", metric(tests, "sort", "u64_gkeys_per_s", args.device),
         direct.get("sort_u64_gkeys_per_s")),
        ("copy vs cuMemcpyDtoD", "GB/s", metric(tests, "ptx", "copy_gbps", args.device),
         metric(tests, "ptx", "memcpy_dtod_gbps", args.device)),
    ]
    print(f"device: {direct.get('device')} ({direct.get('sm_count')} SMs), driver {direct.get('driver_version')}, "
          f"runtime {direct.get('runtime_version')}, CCCL {direct.get('cccl_version')}")
    print(f"{'benchmark':24} {'unit':8} {'cudadiag':>10} {'reference':>10} {'ratio':>7} {'target':>7}")
    for name, unit, ours, reference in rows:
        ratio = ours / reference if ours is not None and reference else None
        if name.startswith("copy"):
            own_ratio = metric(tests, "ptx", "copy_vs_memcpy", args.device)
            ratio = own_ratio if own_ratio is not None else ratio
        show = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
        print(f"{name:24} {unit:8} {show(ours, '10.2f')} {show(reference, '10.2f')} {show(ratio, '7.3f')} "
              f"{TARGETS[name]:7.2f}")
    print(f"(reference: CUB called directly by bench/cub_direct.cu in this run; copy: the self-test's own "
          f"cuMemcpyDtoD on the same buffers; cub_direct memcpy D2D: {direct.get('memcpy_dtod_gbps')} GB/s "
          f"counting {direct.get('memcpy_dtod_counts')})")
    return 0 if all(ours is not None for _, _, ours, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
