#!/usr/bin/env python3
"""Full report against cuda-pathfinder, side by side in one run, cold processes, interleaved.

    python3 bench/bench_report.py --cudadiag build/cli/cudadiag --python <venv>/bin/python [-n 30]

cudadiag row: `cudadiag --json` — discovery of the whole catalog plus the isolated workers that
load the core set (libcuda, NVML, cudart, NVRTC with a test compile, nvJitLink) and ask each for
its version; CCCL's version comes from its headers. cuda-pathfinder row: a fresh interpreter that
imports cuda.pathfinder, loads cudart, nvrtc and nvJitLink, finds the CCCL headers and tries the
driver libraries — the same core set, located and loaded, with no version queries. The two are
measured alternately so that machine noise hits both alike. Prints medians, p90 and the ratio
(target: cudadiag <= 0.5x cuda-pathfinder).
"""
import argparse
import statistics
import subprocess
import time

PATHFINDER_CORE = """
from cuda.pathfinder import load_nvidia_dynamic_lib as load, find_nvidia_header_directory as headers
for name in ("cudart", "nvrtc", "nvJitLink"):
    load(name)
headers("cccl")
for name in ("cuda", "nvml"):
    try:
        load(name)
    except Exception:
        pass
"""


def timed(command) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def summary(samples):
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.9 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cudadiag", required=True)
    parser.add_argument("--python", required=True, help="an interpreter with cuda-pathfinder installed")
    parser.add_argument("-n", "--runs", type=int, default=30)
    args = parser.parse_args()
    rows = {
        "cudadiag --json (discovery + workers)": [args.cudadiag, "--json"],
        "cudadiag --json --no-load (discovery only)": [args.cudadiag, "--json", "--no-load"],
        "cuda-pathfinder: load core set + find CCCL": [args.python, "-c", PATHFINDER_CORE],
    }
    samples = {name: [] for name in rows}
    for command in rows.values():  # warm the page cache once
        timed(command)
    for _ in range(args.runs):
        for name, command in rows.items():
            samples[name].append(timed(command))
    print(f"{'cold process, ' + str(args.runs) + ' interleaved runs':48} median ms    p90 ms")
    medians = {}
    for name, values in samples.items():
        median, p90 = summary(values)
        medians[name] = median
        print(f"  {name:46} {median:9.1f} {p90:9.1f}")
    full = medians["cudadiag --json (discovery + workers)"]
    reference = medians["cuda-pathfinder: load core set + find CCCL"]
    print(f"ratio cudadiag full report / cuda-pathfinder: {full / reference:.2f}x (target <= 0.5x)")


if __name__ == "__main__":
    main()
