#!/usr/bin/env bash
# Run on the GPU host (through the device tool): builds cudadiag with the nvcc-built self-test
# module, runs `cudadiag selftest` at both levels (cold processes, timed), the default report, the
# GPU-labelled ctest checks and the benchmark against CUB called directly, RUNS (default 5)
# consecutive times, every ratio printed. Results go to ${OUT:-out}/. CUDADIAG_SELFTEST_ARCHS=90
# builds the module for sm_90 only (faster); CUDADIAG_WERROR=OFF keeps a new -O3 warning from
# costing the run.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR="${CUDADIAG_WERROR:-ON}" \
        ${CUDADIAG_SELFTEST_ARCHS:+-DCUDADIAG_SELFTEST_ARCHS=$CUDADIAG_SELFTEST_ARCHS} &&
  cmake --build build-gpu --parallel "$(nproc)" --target cudadiag cudadiag_cub_selftest
} >/tmp/build.log 2>&1 || { cp /tmp/build.log "$out/"; tail -60 /tmp/build.log; exit 1; }
bin=build-gpu/cli/cudadiag
summarize() { # FILE: one line per test
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["selftest"]
print("selftest", s["level"], s["status"], "score", s["score"]["value"], "wall_ms", round(s["wall_ms"]))
for t in s["tests"]:
    m = ", ".join(f'{x["name"]}={x["value"]:.4g}' for x in t["metrics"])
    print(f'  {t["key"]:10} {t["status"]:5} {round(t["wall_ms"]):6} ms  {t["reason"] or ""}  [{m}]')
PY
}
/usr/bin/time -f "selftest quick wall %e s" "$bin" selftest --json >"$out/selftest-quick.json" 2>"$out/stderr.log"
echo "exit $?"; tail -1 "$out/stderr.log"; summarize "$out/selftest-quick.json"
/usr/bin/time -f "selftest full wall %e s" "$bin" selftest --level full --json >"$out/selftest-full.json" 2>>"$out/stderr.log"
echo "exit $?"; tail -1 "$out/stderr.log"; summarize "$out/selftest-full.json"
[ -n "${LEAN:-}" ] || "$bin" selftest --no-color --level full >"$out/selftest-full.txt" 2>&1
[ -n "${LEAN:-}" ] || { /usr/bin/time -f "report wall %e s" "$bin" --json >/tmp/report.json 2>>"$out/stderr.log"; echo "report exit $?"; tail -1 "$out/stderr.log"; }
# Support artefacts: a bundle (carries the report) and the self-contained HTML report.
"$bin" bundle -o "$out/h200-host-bundle.tar.gz" >/dev/null 2>>"$out/stderr.log"; echo "bundle exit $?"
if [ -z "${LEAN:-}" ]; then # LEAN=1: the self-test, the bundle and the benchmark only
  "$bin" --html "$out/h200-host-report.html" >/dev/null 2>>"$out/stderr.log"; echo "html exit $?"
  (cd build-gpu && ctest -L gpu --output-on-failure) >"$out/gpu-ctest.log" 2>&1; tail -5 "$out/gpu-ctest.log"
fi
python3 bench/bench_selftest.py "$bin" --runs "${RUNS:-5}" >"$out/bench.txt" 2>&1; cat "$out/bench.txt"
