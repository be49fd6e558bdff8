#!/usr/bin/env bash
# Run on the GPU host (through the device tool), issue 52: builds cudadiag and bench_quick_check with
# every core, then runs bench/bench_report_cache.py: `cudadiag --json --no-selftest` first (empty
# load-check cache) vs repeated (the cache filled) vs --no-cache (the same run's reference: every
# closure loaded, as before the cache) vs --no-load-check, N runs each (default 20), the live driver
# and NVML workers shown separately, and quick_check() first vs repeated (300 in-process calls),
# alternated with BASE's bench_quick_check (3 rounds each) when BASE is built.
# When git can see BASE (default 7150271, the code before issue 52), that commit is built too and
# run beside it as "baseline". Writes ${OUT:-out}/report-cache.txt (the figures), report-cache.json,
# build.log. Needs no network.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
runs=${N:-20}
base=${BASE:-7150271}
mkdir -p "$out"
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR=ON &&
    cmake --build build-gpu --parallel "$(nproc)" --target cudadiag bench_quick_check
} >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
baseline=()
if git rev-parse --verify -q "$base^{commit}" >/dev/null 2>&1; then
  rm -rf build-base-src && mkdir -p build-base-src && git archive "$base" | tar -x -C build-base-src &&
    {
      cmake -S build-base-src -B build-base -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR=ON &&
        cmake --build build-base --parallel "$(nproc)" --target cudadiag bench_quick_check
    } >>"$out/build.log" 2>&1 && baseline=(--baseline "$PWD/build-base/cli/cudadiag"
      --quick-check-baseline "$PWD/build-base/bench/bench_quick_check")
else
  echo "no git history here: the baseline is this build's --no-cache run" >>"$out/build.log"
fi
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "no nvidia-smi"
  echo "$(nproc) CPUs; $(uname -r)"
  python3 bench/bench_report_cache.py --cudadiag "$PWD/build-gpu/cli/cudadiag" "${baseline[@]}" \
    --quick-check "$PWD/build-gpu/bench/bench_quick_check" -n "$runs" --json-out "$out/report-cache.json"
} 2>&1 | tee "$out/report-cache.txt"
