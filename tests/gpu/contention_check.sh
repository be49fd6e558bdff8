#!/usr/bin/env bash
# Run on the GPU host (through the device tool): the self-test on a GPU another process is using.
# Builds cudadiag, its CUB module and the competitor (tests/gpu/contention_competitor.cpp) with all
# cores, then tests/gpu/check_gpu_contention.py: `cudadiag selftest --level quick --json` and
# `--level full --json`, RUNS times each (default 10) while the competitor keeps the GPU busy, then
# the same idle for comparison. Checks: no wrong data, gpu.busy names the competitor, no
# gpu.throttled / selftest.slow blamed on the GPU while busy, idle runs pass without gpu.busy.
# Every JSON, the build log and summary.txt / summary.json go to ${OUT:-out}/contention/.
#
#   OUT=$OUT bash tests/gpu/contention_check.sh        (RUNS=2 for a short run; INJECT_RUNS=N memory
#                                                       runs with injected errors at full; LEVELS=quick or
#                                                       LEVELS=full for one level per call; the
#                                                       build in build-gpu/ is reused when present)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}/contention
mkdir -p "$out"
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR="${CUDADIAG_WERROR:-OFF}" \
        ${CUDADIAG_SELFTEST_ARCHS:+-DCUDADIAG_SELFTEST_ARCHS=$CUDADIAG_SELFTEST_ARCHS} &&
  cmake --build build-gpu --parallel "$(nproc)" --target cudadiag cudadiag_cub_selftest cudadiag_gpu_competitor
} >"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,utilization.gpu,memory.used --format=csv >"$out/nvidia-smi.csv" 2>&1
python3 tests/gpu/check_gpu_contention.py build-gpu/cli/cudadiag build-gpu/tests/cudadiag_gpu_competitor \
        kernels/ptx --runs "${RUNS:-10}" --levels "${LEVELS:-quick,full}" --inject-runs "${INJECT_RUNS:-3}" \
        --out "$out"
