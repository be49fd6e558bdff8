#!/usr/bin/env python3
"""Discovery speed: cudadiag against cuda-pathfinder, side by side in one run, cold processes.

    python3 bench/bench_discovery.py --cudadiag build/cli/cudadiag --python <venv>/bin/python

Measures, each in a fresh process:
  * `cudadiag find --all --json NAME` for every component of cudadiag's catalog (N runs each);
  * `cudadiag --json`, the full report, which covers the whole catalog (N runs);
  * `python -c` that imports cuda.pathfinder, loads every dynamic library and finds every header
    directory both tools support (M runs), and `python -c "import cuda.pathfinder"` alone;
and prints medians, p90s and the ratio. It then checks, with strace if available, whether cudadiag
spawns a subprocess on its default path (no --python): execve calls beyond its own, and
fork/vfork/clone/clone3 without CLONE_THREAD.

Both tools see the same environment: --python's venv activated (VIRTUAL_ENV, PATH) unless
--no-activate. Library loads by cuda-pathfinder are real dlopen() calls; cudadiag loads nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Timing:
    label: str
    samples_ms: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ms)

    @property
    def p90(self) -> float:
        if len(self.samples_ms) < 2:
            return self.samples_ms[0]
        return statistics.quantiles(self.samples_ms, n=10, method="inclusive")[-1]


def time_command(label: str, command: list[str], runs: int, env: dict, ok_codes=(0, 1)) -> Timing:
    """Runs `command` once to warm the page cache, then `runs` times, timing each cold process."""
    def once() -> float:
        start = time.perf_counter()
        done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        elapsed = (time.perf_counter() - start) * 1000.0
        if done.returncode not in ok_codes:
            sys.exit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-2000:]}")
        return elapsed

    once()
    return Timing(label, [once() for _ in range(runs)])


def catalog(cudadiag: str, env: dict) -> list[tuple[str, str]]:
    done = subprocess.run([cudadiag, "--json", "--no-load"], env=env, capture_output=True, check=False)
    if done.returncode not in (0, 1):
        sys.exit(f"cudadiag --json exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    return [(c["kind"], c["name"]) for c in json.loads(done.stdout)["components"]]


def find_command(cudadiag: str, kind: str, name: str) -> list[str]:
    """`cudadiag find KIND/NAME`: exactly that component, whatever else shares its name."""
    return [cudadiag, "find", "--all", "--json", f"{kind}/{name}"]


def quick_check_median(bench: str, env: dict, runs: int = 200) -> dict:
    """bench_quick_check's own figures: the median and p90 of `runs` in-process calls."""
    done = subprocess.run([os.path.abspath(bench), str(runs)], env=env, capture_output=True, text=True, check=False)
    figures = dict(re.findall(r"^(median|p90)\s+([0-9.]+) ms", done.stdout, re.MULTILINE))
    if done.returncode != 0 or len(figures) != 2:
        sys.exit(f"{bench} exited {done.returncode}: {done.stdout[-500:]}{done.stderr[-500:]}")
    return {"median_ms": float(figures["median"]), "p90_ms": float(figures["p90"]), "runs": runs}


def pathfinder_info(python: str, env: dict) -> dict:
    script = (
        "import json, sys, cuda.pathfinder as p\n"
        "from cuda.pathfinder._dynamic_libs.lib_descriptor import LIB_DESCRIPTORS\n"
        "print(json.dumps({'version': p.__version__, 'prefix': sys.prefix, 'python': sys.version.split()[0],\n"
        "  'venv': sys.prefix != sys.base_prefix,\n"
        "  'libs': sorted(LIB_DESCRIPTORS), 'headers': sorted(p.SUPPORTED_HEADERS_CTK)}))\n"
    )
    done = subprocess.run([python, "-c", script], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{python} cannot import cuda.pathfinder: {done.stderr}")
    return json.loads(done.stdout)


def pathfinder_script(libs: list[str], headers: list[str]) -> str:
    return (
        "import cuda.pathfinder as p\n"
        f"for n in {libs!r}:\n"
        "    try:\n        p.load_nvidia_dynamic_lib(n)\n    except Exception:\n        pass\n"
        f"for n in {headers!r}:\n"
        "    try:\n        p.find_nvidia_header_directory(n)\n    except Exception:\n        pass\n"
    )


def count_spawns(strace_output: str) -> tuple[int, int]:
    """(execve calls after the first, new processes) in `strace -f` output."""
    execs = processes = 0
    for line in strace_output.splitlines():
        if "resumed>" in line and not re.search(r"\b(execve|clone3?|v?fork)\(", line):
            continue
        if re.search(r"\bexecve\(", line):
            execs += 1
        elif re.search(r"\bv?fork\(", line):
            processes += 1
        elif re.search(r"\bclone3?\(", line) and "CLONE_THREAD" not in line:
            processes += 1
    return max(0, execs - 1), processes


def check_subprocesses(command: list[str], env: dict) -> str:
    strace = shutil.which("strace")
    if not strace:
        return "could not check: strace is not installed"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "strace.txt"
        done = subprocess.run([strace, "-f", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", str(log), *command],
                              env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              check=False)
        if not log.exists() or not log.read_text().strip():
            return f"could not check: strace failed ({done.stderr.decode(errors='replace').strip()[:200]})"
        execs, processes = count_spawns(log.read_text())
    verdict = "no subprocess" if execs == 0 and processes == 0 else "SPAWNED A SUBPROCESS"
    return f"{verdict} ({execs} execve after its own, {processes} fork/clone without CLONE_THREAD)"


def syscall_counts(command: list[str], env: dict) -> dict[str, int] | str:
    """System calls of one run of `command` (strace -c -f), by name; a string when strace is missing
    or fails."""
    strace = shutil.which("strace")
    if not strace:
        return "strace is not installed"
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "counts.txt"
        subprocess.run([strace, "-c", "-f", "-U", "name,calls", "-o", str(log), *command], env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if not log.exists():
            return "strace failed"
        counts = {}
        for line in log.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                counts[parts[0]] = int(parts[1])
        if not counts:  # an older strace without -U: the default columns, name last
            for line in log.read_text().splitlines():
                parts = line.split()
                if len(parts) >= 5 and parts[-1].isidentifier() and parts[3].isdigit():
                    counts[parts[-1]] = int(parts[3])
        return counts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cudadiag", required=True, help="the cudadiag executable")
    parser.add_argument("--python", required=True, help="an interpreter with cuda-pathfinder installed (a venv's)")
    parser.add_argument("-n", "--runs", type=int, default=30, help="cold runs per cudadiag measurement (30)")
    parser.add_argument("-m", "--pathfinder-runs", type=int, default=10, help="cold runs of cuda-pathfinder (10)")
    parser.add_argument("--no-activate", action="store_true", help="do not activate --python's venv for both tools")
    parser.add_argument("--json-out", help="also write the numbers here as JSON")
    parser.add_argument("--quick-check", help="bench/bench_quick_check, to time quick_check() in the same run")
    parser.add_argument("--no-per-component", action="store_true",
                        help="skip the per-component `find` rows (101 of them; the whole-catalog rows remain)")
    args = parser.parse_args(argv)

    cudadiag = os.path.abspath(args.cudadiag)
    env = dict(os.environ)
    info = pathfinder_info(args.python, env)
    if not args.no_activate and info["venv"]:
        env["VIRTUAL_ENV"] = info["prefix"]
        env["PATH"] = f"{info['prefix']}/bin:{env.get('PATH', '')}"
    version = subprocess.run([cudadiag, "--version"], capture_output=True, text=True, check=False).stdout.strip()

    components = catalog(cudadiag, env)
    libs = [name for kind, name in components if kind == "dynamic_lib" and name in info["libs"]]
    headers = [name for kind, name in components if kind == "headers" and name in info["headers"]]

    print(f"{version}; cuda-pathfinder {info['version']} on Python {info['python']} ({info['prefix']})")
    print(f"host: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs; "
          f"{args.runs} cold runs per cudadiag row, {args.pathfinder_runs} per cuda-pathfinder row\n")

    per_component = []
    if not args.no_per_component:
        print(f"{'cudadiag find --all --json':<34} {'median ms':>10} {'p90 ms':>9}")
    for kind, name in ([] if args.no_per_component else components):
        timing = time_command(f"{kind} {name}", find_command(cudadiag, kind, name), args.runs, env)
        per_component.append(timing)
        print(f"  {kind + ' ' + name:<32} {timing.median:>10.2f} {timing.p90:>9.2f}")
    sum_of_medians = sum(t.median for t in per_component)

    # Locate-only: the whole catalog without the verification workers (bench_report.py times those).
    full = time_command("cudadiag --json --no-load", [cudadiag, "--json", "--no-load"], args.runs, env)
    quick = quick_check_median(args.quick_check, env) if args.quick_check else None
    pathfinder = time_command(f"cuda-pathfinder: load {len(libs)} libs + find {len(headers)} header dirs",
                              [args.python, "-c", pathfinder_script(libs, headers)], args.pathfinder_runs, env,
                              ok_codes=(0,))
    baseline = time_command("python -c 'import cuda.pathfinder' only",
                            [args.python, "-c", "import cuda.pathfinder"], args.pathfinder_runs, env, ok_codes=(0,))

    print(f"\n{'whole catalog':<58} {'median ms':>10} {'p90 ms':>9}")
    for timing in (full, pathfinder, baseline):
        print(f"  {timing.label:<56} {timing.median:>10.2f} {timing.p90:>9.2f}")
    print(f"  {'sum of the per-component find medians':<56} {sum_of_medians:>10.2f}")

    counts = syscall_counts([cudadiag, "--json", "--no-load"], env)
    groups = {"stat (stat, lstat, newfstatat, statx)": ("stat", "lstat", "newfstatat", "statx", "fstat"),
              "openat / open": ("openat", "open"), "getdents64": ("getdents64", "getdents"),
              "readlink": ("readlink", "readlinkat"), "read": ("read", "pread64"), "access": ("access", "faccessat", "faccessat2")}
    print("\nsystem calls of one `cudadiag --json --no-load` (strace -c -f)")
    if isinstance(counts, str):
        print(f"  could not count: {counts}")
    else:
        for label, names in groups.items():
            print(f"  {label:<40} {sum(counts.get(n, 0) for n in names):>7}")
        print(f"  {'all':<40} {sum(counts.values()):>7}")

    ratio = pathfinder.median / full.median if full.median else float("inf")
    spawn_default = check_subprocesses([cudadiag, "--json", "--no-load"], env)
    spawn_find = check_subprocesses([cudadiag, "find", "nvrtc"], env)

    print("\nsummary")
    print(f"  cudadiag --json --no-load (all {len(components)} components): median {full.median:.1f} ms, p90 {full.p90:.1f} ms")
    print(f"  cuda-pathfinder, fresh process, {len(libs)} libs + {len(headers)} header dirs: "
          f"median {pathfinder.median:.1f} ms, p90 {pathfinder.p90:.1f} ms "
          f"(interpreter + import alone {baseline.median:.1f} ms)")
    print(f"  ratio cuda-pathfinder / cudadiag --json --no-load: {ratio:.1f}x")
    print(f"  target --json --no-load <= 10 ms median: {'met' if full.median <= 10.0 else 'NOT MET'}")
    if quick is not None:
        print(f"  quick_check() in process: median {quick['median_ms']:.2f} ms, p90 {quick['p90_ms']:.2f} ms "
              f"({quick['runs']} calls); target <= 3 ms: {'met' if quick['median_ms'] <= 3.0 else 'NOT MET'}")
    print(f"  subprocesses, discovery path: cudadiag --json --no-load: {spawn_default}; cudadiag find nvrtc: {spawn_find}")

    if args.json_out:
        Path(args.json_out).write_text(json.dumps({
            "cudadiag_version": version, "pathfinder_version": info["version"], "runs": args.runs,
            "pathfinder_runs": args.pathfinder_runs,
            "find": {t.label: {"median_ms": t.median, "p90_ms": t.p90} for t in per_component},
            "full_report": {"median_ms": full.median, "p90_ms": full.p90},
            "pathfinder": {"median_ms": pathfinder.median, "p90_ms": pathfinder.p90, "libs": libs, "headers": headers},
            "pathfinder_import_only": {"median_ms": baseline.median, "p90_ms": baseline.p90},
            "ratio": ratio, "subprocess_default": spawn_default, "subprocess_find": spawn_find,
            "syscalls": counts, "quick_check": quick,
        }, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
