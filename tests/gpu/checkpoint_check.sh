#!/usr/bin/env bash
# Run on the GPU host (through the device tool): the checkpoint self-test on a real driver. Builds
# cudadiag with all cores (no CUB module: the test needs only the bundled PTX), then
# tests/gpu/check_gpu_checkpoint.py: `cudadiag selftest --only checkpoint --json` with a 256 MiB and
# a 4 GiB target (each must pass, with each step's ms and the GiB/s), then two forced failures that
# must give checkpoint.failed: a target holding managed memory (the driver cannot checkpoint UVM) and
# a busy target (a kernel spinning 10 s) locked with a 1 ms timeout. Each run is bounded (no hang),
# and afterwards no process of it may be left (each run's processes carry a marker variable).
# Every JSON, stderr, the build log and summary.txt / summary.json go to ${OUT:-out}/checkpoint/.
#
#   OUT=$OUT bash tests/gpu/checkpoint_check.sh      (CASES=ok256,ok4096,managed,busy_lock picks
#                                                     cases; the build in build-gpu/ is reused)
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}/checkpoint
mkdir -p "$out"
started=$(date +%s)
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR="${CUDADIAG_WERROR:-OFF}" &&
  cmake --build build-gpu --parallel "$(nproc)" --target cudadiag
} >"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - started )) s" | tee "$out/build_time.txt"
nvidia-smi --query-gpu=name,driver_version,persistence_mode,memory.used --format=csv >"$out/nvidia-smi.csv" 2>&1
python3 tests/gpu/check_gpu_checkpoint.py build-gpu/cli/cudadiag --cases "${CASES:-ok256,ok4096,managed,busy_lock}" \
        --out "$out"
