#!/usr/bin/env python3
"""The full report's cost, first and repeated (issue 52), with same-run references.

    python3 bench/bench_report_cache.py --cudadiag build/cli/cudadiag [--baseline OTHER/cudadiag]
        [--quick-check build/bench/bench_quick_check] [-n 20] [--json-out FILE]

Runs `cudadiag --json --no-selftest` in fresh processes, interleaved round by round so that a
machine's slow phase hits every variant alike:
  * first:       an empty load-check cache (a fresh XDG_CACHE_HOME each run): every closure is loaded;
  * repeated:    the cache the previous runs filled: unchanged closures are answered from it;
  * no-cache:    --no-cache, the reference: what every run cost before the cache (same binary);
  * no-check:    --no-load-check: verification without the load check;
  * baseline:    --baseline's binary as it is (e.g. the code before issue 52), when given.
and prints the median and p90 of each and each one's ratio to the no-cache reference measured in the
same run. From one repeated run's JSON it prints what stays live: the verification workers of the
driver (cuda) and NVML, measured and shown separately (never cached). With --quick-check, it runs
that bench_quick_check program (300 in-process calls) and prints the first and repeated call; with
--quick-check-baseline, another build's program alternately with it (3 rounds) and the ratios.

Exits 0: the figures are for reading, not a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def p90(samples: list[float]) -> float:
    if len(samples) < 2:
        return samples[0]
    return statistics.quantiles(samples, n=10, method="inclusive")[-1]


def run_once(command: list[str], env: dict) -> tuple[float, bytes]:
    start = time.perf_counter()
    result = subprocess.run(command, env=env, capture_output=True, timeout=600, check=False)
    elapsed = (time.perf_counter() - start) * 1000.0
    if result.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)} exited {result.returncode}: {result.stderr.decode(errors='replace')[-2000:]}")
    return elapsed, result.stdout


def live_parts(document: dict) -> dict:
    """What a repeated run still does live: the verification workers' times, the load check's."""
    steps = {step.get("component"): step for step in document.get("verification", {}).get("steps", [])}
    load_check = document.get("linkage", {}).get("load_check", {})
    cache = load_check.get("cache") or {}
    return {
        "driver_worker_ms": (steps.get("cuda") or {}).get("elapsed_ms"),
        "nvml_worker_ms": (steps.get("nvml") or {}).get("elapsed_ms"),
        "verification_workers": len(steps),
        "load_check_ms": load_check.get("elapsed_ms"),
        "cache_hits": cache.get("hits"),
        "closures": sum(len(c.get("closures", [])) for c in document.get("linkage", {}).get("components", [])),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cudadiag", required=True, type=Path)
    parser.add_argument("--baseline", type=Path, help="another cudadiag binary, run as it is (its own default)")
    parser.add_argument("--quick-check", type=Path, help="the bench_quick_check program of the same build")
    parser.add_argument("--quick-check-baseline", type=Path,
                        help="another build's bench_quick_check, run alternately with --quick-check (3 rounds each)")
    parser.add_argument("-n", type=int, default=20, help="runs of each variant (default 20)")
    parser.add_argument("--json-out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()

    base_env = dict(os.environ)
    base_env.pop("CUDADIAG_CACHE", None)
    work = Path(tempfile.mkdtemp(prefix="cudadiag-bench-cache-"))
    warm_home = work / "warm"
    command = [str(args.cudadiag), "--json", "--no-selftest"]
    variants: dict[str, tuple[list[str], str | None]] = {
        "first": (command, "fresh"),
        "repeated": (command, str(warm_home)),
        "no-cache": (command + ["--no-cache"], str(work / "unused")),
        "no-check": (command + ["--no-load-check"], str(work / "unused")),
    }
    if args.baseline:
        variants["baseline"] = ([str(args.baseline), "--json", "--no-selftest"], str(work / "baseline"))

    # The repeated runs' cache, filled once before the clock starts.
    env = dict(base_env, XDG_CACHE_HOME=str(warm_home))
    _, warm_out = run_once(command, env)
    samples: dict[str, list[float]] = {name: [] for name in variants}
    last_repeated = b""
    for round_index in range(args.n):
        for name, (cmd, home) in variants.items():
            if home == "fresh":
                home = str(work / f"fresh-{round_index}")
            elapsed, out = run_once(cmd, dict(base_env, XDG_CACHE_HOME=home))
            samples[name].append(elapsed)
            if name == "repeated":
                last_repeated = out

    reference = statistics.median(samples["no-cache"])
    figures: dict[str, dict] = {}
    print(f"cudadiag --json --no-selftest, {args.n} runs each, interleaved ({args.cudadiag})")
    for name, values in samples.items():
        median = statistics.median(values)
        figures[name] = {"median_ms": median, "p90_ms": p90(values), "ratio_to_no_cache": median / reference}
        print(f"  {name:<10} median {median:8.1f} ms   p90 {p90(values):8.1f} ms   "
              f"x{median / reference:5.3f} of no-cache")
    live = live_parts(json.loads(last_repeated or warm_out))
    figures["repeated_live"] = live
    print("repeated run, live parts (never cached): "
          f"driver worker {live['driver_worker_ms']} ms, NVML worker {live['nvml_worker_ms']} ms "
          f"({live['verification_workers']} verification workers); load check {live['load_check_ms']} ms, "
          f"{live['cache_hits']} of {live['closures']} closures from the cache")
    print(f"speed-up of repeated over no-cache: {reference / figures['repeated']['median_ms']:.1f}x; "
          f"first over no-cache: {reference / figures['first']['median_ms']:.2f}x")

    if args.quick_check:
        def quick_figures(program: Path):
            result = subprocess.run([str(program), "300"], capture_output=True, text=True, timeout=600, check=False)
            first = re.search(r"first call\s+([0-9.]+) ms", result.stdout)
            median = re.search(r"median\s+([0-9.]+) ms", result.stdout)
            tail = re.search(r"p90\s+([0-9.]+) ms", result.stdout)
            if not (first and median and tail):
                print(f"quick_check bench gave no figures: {result.stdout[-500:]} {result.stderr[-500:]}")
                return None
            return {"first_ms": float(first.group(1)), "median_ms": float(median.group(1)),
                    "p90_ms": float(tail.group(1)), "calls": 300}

        # Alternated with the baseline's program when there is one: the ratio is of the same minutes.
        rounds = 3 if args.quick_check_baseline else 1
        ours, theirs = [], []
        for _ in range(rounds):
            if (mine := quick_figures(args.quick_check)) is not None:
                ours.append(mine)
            if args.quick_check_baseline and (other := quick_figures(args.quick_check_baseline)) is not None:
                theirs.append(other)
        if ours:
            figures["quick_check"] = ours[0] if rounds == 1 else {"rounds": ours}
            for mine in ours:
                print(f"quick_check(): first call {mine['first_ms']} ms, repeated median {mine['median_ms']} ms "
                      f"(p90 {mine['p90_ms']} ms, 300 calls); first/repeated "
                      f"x{mine['first_ms'] / mine['median_ms']:.1f}")
        if theirs:
            figures["quick_check_baseline"] = {"rounds": theirs}
            for mine, other in zip(ours, theirs):
                print(f"quick_check() baseline: first call {other['first_ms']} ms, median {other['median_ms']} ms; "
                      f"baseline/new median x{other['median_ms'] / mine['median_ms']:.1f}, "
                      f"first x{other['first_ms'] / mine['first_ms']:.2f}")

    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
