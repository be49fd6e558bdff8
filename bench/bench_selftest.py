#!/usr/bin/env python3
"""Self-test benchmarks against CUB called directly, side by side in one run (the targets in docs/performance.md).

    python3 bench/bench_selftest.py build/cli/cudadiag [--runs 5] [--cub-direct PATH] [--nvcc PATH] [--arch native]

Builds bench/cub_direct.cu with nvcc unless --cub-direct names a built one (-arch=native, falling
back to sm_90), runs it (reduce f32 2^30, radix sort u32 and u64 2^28, cudaMemcpy D2D), then runs
`cudadiag selftest --level full --only ptx,reduce,sort --json`, and prints the ratios
cudadiag / CUB direct for reduce f32, sort u32 and sort u64, and the bundled copy kernel against
cuMemcpyDtoD as the self-test itself measured it. Targets: reduce >= 0.97, sorts >= 0.99, copy >= 0.98.
With --runs N both programs run N times, alternating (CUB direct, then cudadiag, in fresh processes),
every run's ratios are printed, and a last line says whether every ratio met its target in every run.
Exit 0 when every run produced its figures, 1 otherwise (a missed target is printed, not an exit code).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGETS = {"reduce f32": 0.97, "sort u32": 0.99, "sort u64": 0.99, "copy vs cuMemcpyDtoD": 0.98}


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


def one_run(binary, args):
    """Runs CUB direct and then the self-test; returns (rows, direct) or (None, message)."""
    direct_run = subprocess.run([binary, "--reps", str(args.reps), "--device", str(args.device)],
                                capture_output=True, text=True)
    if direct_run.returncode != 0:
        return None, f"cub_direct failed ({direct_run.returncode}): {direct_run.stderr.strip()}"
    direct = json.loads(direct_run.stdout)
    command = [args.cudadiag, "selftest", "--level", "full", "--only", "ptx,reduce,sort", "--device", str(args.device),
               "--json"]
    selftest_run = subprocess.run(command, capture_output=True, text=True)
    try:
        report = json.loads(selftest_run.stdout)
    except json.JSONDecodeError:
        return None, (f"{' '.join(command)} gave no JSON (exit {selftest_run.returncode}): "
                      f"{selftest_run.stderr.strip()[-2000:]}")
    tests = (report.get("selftest") or {}).get("tests", [])
    for test in tests:
        if test.get("device", args.device) == args.device and test.get("status") != "pass":
            print(f"note: selftest {test.get('key')} is {test.get('status')}: {test.get('reason', '')}")
    copy_ratio = metric(tests, "ptx", "copy_vs_memcpy", args.device)
    rows = [
        ("reduce f32", "GB/s", metric(tests, "reduce", "f32_gbps", args.device), direct.get("reduce_f32_gbps")),
        ("sort u32", "Gkeys/s", metric(tests, "sort", "u32_gkeys_per_s", args.device),
         direct.get("sort_u32_gkeys_per_s")),
        ("sort u64", "Gkeys/s", metric(tests, "sort", "u64_gkeys_per_s", args.device),
         direct.get("sort_u64_gkeys_per_s")),
        ("copy vs cuMemcpyDtoD", "GB/s", metric(tests, "ptx", "copy_gbps", args.device),
         metric(tests, "ptx", "memcpy_dtod_gbps", args.device)),
    ]
    out = []
    for name, unit, ours, reference in rows:
        ratio = ours / reference if ours is not None and reference else None
        if name.startswith("copy") and copy_ratio is not None:
            ratio = copy_ratio
        out.append((name, unit, ours, reference, ratio))
    return out, direct


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cudadiag")
    parser.add_argument("--cub-direct", help="a built bench/cub_direct (default: build it now)")
    parser.add_argument("--nvcc")
    parser.add_argument("--arch", help="-arch for building cub_direct (default: native, else sm_90)")
    parser.add_argument("--device", type=int, default=0, help="the CUDA device both programs run on")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1, help="consecutive runs of both programs (default 1)")
    args = parser.parse_args()

    show = lambda v, spec: format(v, spec) if v is not None else "-"  # noqa: E731
    all_rows = []
    with tempfile.TemporaryDirectory() as scratch:
        binary = args.cub_direct or build_cub_direct(find_nvcc(args.nvcc), args.arch, scratch)
        for run in range(1, args.runs + 1):
            rows, direct = one_run(binary, args)
            if rows is None:
                print(f"run {run}: {direct}")
                return 1
            if run == 1:
                print(f"device: {direct.get('device')} ({direct.get('sm_count')} SMs), driver "
                      f"{direct.get('driver_version')}, runtime {direct.get('runtime_version')}, CCCL "
                      f"{direct.get('cccl_version')}")
            print(f"run {run}: {'benchmark':22} {'unit':8} {'cudadiag':>10} {'reference':>10} {'ratio':>7} {'target':>7}")
            for name, unit, ours, reference, ratio in rows:
                print(f"run {run}: {name:22} {unit:8} {show(ours, '10.2f')} {show(reference, '10.2f')} "
                      f"{show(ratio, '7.3f')} {TARGETS[name]:7.2f}")
            all_rows.append(rows)
    print("(reference: CUB called directly by bench/cub_direct.cu in the same run; copy: the self-test's own "
          "cuMemcpyDtoD on the same buffers)")
    names = [row[0] for row in all_rows[0]]
    print(f"{'ratios per run':22} " + " ".join(f"{'run ' + str(i + 1):>7}" for i in range(len(all_rows))) +
          f" {'min':>7} {'target':>7}")
    every = True
    for index, name in enumerate(names):
        ratios = [rows[index][4] for rows in all_rows]
        known = [r for r in ratios if r is not None]
        low = min(known) if len(known) == len(ratios) else None
        met = low is not None and low >= TARGETS[name]
        every = every and met
        print(f"{name:22} " + " ".join(show(r, '7.3f') for r in ratios) + f" {show(low, '7.3f')} "
              f"{TARGETS[name]:7.2f} {'ok' if met else 'MISSED'}")
    print(f"every ratio at target in every one of {len(all_rows)} runs: {'yes' if every else 'no'}")
    return 0 if all(ours is not None for rows in all_rows for _, _, ours, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
