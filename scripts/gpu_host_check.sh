#!/usr/bin/env bash
# Run on the GPU host (through the device tool): builds cudadiag, runs the unit tests, writes the
# report (JSON and text), asks cuda-pathfinder the same questions and compares. Results go to
# ${OUT:-out}/. Needs no network. LEAN=1 builds the executable only and skips the unit tests.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
# LEAN=1: the cudadiag executable only, no unit tests (when device time is short).
targets=()
[ -n "${LEAN:-}" ] && targets=(--target cudadiag)
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR=ON &&
  cmake --build build-gpu --parallel "$(nproc)" "${targets[@]}"
} >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
# -FA: not the test venvs (they need pip's index, which this host cannot reach); the unit cases
# that probe their wheels report a skip.
if [ -z "${LEAN:-}" ]; then
  (cd build-gpu && ctest -L unit -FA cudadiag_test_venvs --output-on-failure) >"$out/unit-tests.log" 2>&1
  tail -3 "$out/unit-tests.log"
fi
bin=build-gpu/cli/cudadiag
python3 tests/gpu/check_gpu_report.py "$bin" --expect-sm-count 132 --expect-peak-gbps 4814 | tee "$out/gpu-check.txt"
"$bin" --json >"$out/report.json"; echo "cudadiag --json exit: $?"
# Every closure loaded for real in its worker; the prediction must equal the link map for all.
python3 scripts/summarize_load_check.py "$out/report.json" | tee "$out/load-check.txt" | tail -1
"$bin" --no-color >"$out/report.txt"
python3 tests/real_layouts/pathfinder_oracle.py --all-supported >"$out/oracle.json" 2>/tmp/oracle.err
python3 -c 'import cuda.pathfinder as p; print("cuda-pathfinder", p.__version__)'
python3 scripts/compare_with_pathfinder.py "$out/report.json" "$out/oracle.json" | tee "$out/conformance.txt"
for i in 1 2 3 4 5 6 7 8 9 10 11; do /usr/bin/time -f %e "$bin" --json >/dev/null; done 2>/tmp/timing.txt
echo "cudadiag --json wall seconds (11 runs): $(sort -n /tmp/timing.txt | tr '\n' ' ')"
{ "$bin" find nvrtc; "$bin" find cccl; "$bin" find --all nvrtc; "$bin" find --explain cuda; "$bin" find --explain cusparse; } >"$out/find.txt" 2>&1
cat "$out/report.txt"
