#!/usr/bin/env bash
# Quick start, command 2 (and what CI runs through .ci/run): install what is missing, build
# everything with warnings as errors, and run the whole test suite (unit, CLI, real pip layouts,
# conformance with cuda-pathfinder). GPU tests carry the ctest label "gpu" and skip without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_dependencies.sh
build_dir=${CUDADIAG_BUILD_DIR:-build-check}
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDADIAG_WERROR=ON >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
(cd "$build_dir" && ctest --output-on-failure --timeout 600 "$@")
# Then the embedded API's tests again under AddressSanitizer + UndefinedBehaviorSanitizer, in a build
# of their own (build-check-asan): about 4 minutes more on 2 cores (the whole run: ~15 minutes there).
# CUDADIAG_SANITIZERS=0 skips it; ThreadSanitizer runs with `scripts/sanitizers.sh tsan`.
if [[ ${CUDADIAG_SANITIZERS:-1} == 1 ]]; then
  CUDADIAG_SANITIZER_BUILD_PREFIX=$build_dir scripts/sanitizers.sh asan
fi
