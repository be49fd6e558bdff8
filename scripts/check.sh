#!/usr/bin/env bash
# Quick start, command 2 (and what CI runs through .ci/run): install what is missing, build
# everything with warnings as errors, and run the whole test suite (unit, CLI, real pip layouts,
# conformance with cuda-pathfinder). GPU tests carry the ctest label "gpu" and skip without a GPU.
#
# Environment: CUDADIAG_BUILD_DIR (default build-check); CUDADIAG_SANITIZERS=0 skips the ASan+UBSan
# run; CUDADIAG_CCACHE=0 compiles without ccache even when it is installed. Arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# The fuzz smoke run below needs clang's libFuzzer runtime: install it too unless CUDADIAG_FUZZ=0.
if [[ ${CUDADIAG_FUZZ:-1} == 1 ]]; then scripts/install_dependencies.sh fuzz; else scripts/install_dependencies.sh; fi

# The suite describes the documented machine: where a CUDA toolkit is installed at /usr/local/cuda,
# the loader knows its library directory (the /etc/ld.so.conf.d file NVIDIA's packages install), and
# the scenarios' "system" loader cache is this machine's. A toolkit there that the loader does not
# know fails a hundred scenarios for the machine, not the code (and cudadiag rightly reports that
# NVRTC cannot open its builtins): say so and stop. Without a toolkit, its tests skip.
toolkit_known_to_loader() {
  local lib listed ldconfig
  lib=$(readlink -f /usr/local/cuda/lib64 2>/dev/null) || return 0
  compgen -G "$lib/libcudart.so.*" >/dev/null || return 0
  ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
  while read -r listed; do
    [[ $(readlink -f "$(dirname "$listed")") == "$lib" ]] && return 0
  done < <("$ldconfig" -p | sed -n 's/^[[:space:]]*libcudart\.so[.0-9]* (.*) => //p')
  return 1
}
if ! toolkit_known_to_loader; then
  echo "check.sh: the CUDA toolkit at /usr/local/cuda is not known to the loader (ldconfig -p lists no" \
       "libcudart from $(readlink -f /usr/local/cuda/lib64)). Tell it, as NVIDIA's packages do:" \
       "echo $(readlink -f /usr/local/cuda/lib64) | sudo tee /etc/ld.so.conf.d/cuda.conf && sudo ldconfig" >&2
  exit 1
fi
build_dir=${CUDADIAG_BUILD_DIR:-build-check}
# Where the time goes: each phase's wall seconds, on stderr as it ends ("check.sh: build 312 s").
phase_start=$SECONDS
phase_done() {
  echo "check.sh: $1 $((SECONDS - phase_start)) s" >&2
  phase_start=$SECONDS
}
# ccache, when installed, keeps what was compiled for the next run (this build, the sanitizer build
# and the consumer test's sub-project build all pass it on); an empty launcher clears a cached one.
launcher=
if [[ ${CUDADIAG_CCACHE:-1} == 1 ]] && command -v ccache >/dev/null; then
  launcher=ccache
  # Paths under the checkout hash as relative ones, and the working directory is left out of the
  # hash of -g compiles (the sanitizer and fuzz builds): a clone in another folder on the same
  # machine reuses what an earlier one compiled.
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi
export CUDADIAG_COMPILER_LAUNCHER=$launcher
# -O2 and NDEBUG as RelWithDebInfo, without the debug information nobody reads in CI (it made every
# compile about 1.4 times as long and the links much longer).
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
      -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCUDADIAG_WERROR=ON \
      -DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" >/dev/null
cmake --build "$build_dir" --parallel "$(nproc)"
phase_done build
# The embedded API's tests also run under AddressSanitizer + UndefinedBehaviorSanitizer, in a build
# of their own (build-check-asan). That build runs at the lowest priority while the suite runs (the
# suite's tests spend much of their time waiting on the processes they start), its tests after it.
# ThreadSanitizer runs with `scripts/sanitizers.sh tsan`.
sanitizers=${CUDADIAG_SANITIZERS:-1}
if [[ $sanitizers == 1 ]]; then
  asan_log=$build_dir/asan-build.log
  CUDADIAG_SANITIZER_BUILD_PREFIX=$build_dir nice -n 19 scripts/sanitizers.sh asan build >"$asan_log" 2>&1 &
  asan_build=$!
fi
# Likewise the fuzz targets (fuzz/README.md): a clang -O0 build of their own (build-check-fuzz) at the
# lowest priority, then, after the suite, a smoke run of each target (CUDADIAG_FUZZ_SMOKE_SECONDS, 10)
# two at a time: 90 s on 2 cores. Without clang's libFuzzer runtime it is skipped, saying why
# (scripts/install_dependencies.sh fuzz installs it); CUDADIAG_FUZZ=0 skips it.
fuzz=${CUDADIAG_FUZZ:-1}
export CUDADIAG_FUZZ_BUILD_DIR=$build_dir-fuzz CUDADIAG_FUZZ_OPT=${CUDADIAG_FUZZ_OPT:--O0}
if [[ $fuzz == 1 ]]; then
  fuzz_log=$build_dir/fuzz-build.log
  nice -n 19 scripts/fuzz.sh build >"$fuzz_log" 2>&1 &
  fuzz_build=$!
fi
# The tests run in parallel, one per core (CONTRIBUTING.md, "Tests run in parallel"); a test whose
# precondition is missing here is counted as skipped, never as passed.
status=0
(cd "$build_dir" && ctest --output-on-failure --timeout 600 --parallel "$(nproc)" "$@") || status=$?
phase_done "test suite"
if [[ $sanitizers == 1 ]]; then
  if ! wait "$asan_build"; then
    cat "$asan_log"
    echo "check.sh: the sanitizer build failed (log: $asan_log)" >&2
    exit 1
  fi
  phase_done "sanitizer build (after the suite)"
  [[ $status == 0 ]] || exit "$status"
  CUDADIAG_SANITIZER_BUILD_PREFIX=$build_dir scripts/sanitizers.sh asan run
  phase_done "sanitizer run"
fi
if [[ $fuzz == 1 ]]; then
  fuzz_status=0
  wait "$fuzz_build" || fuzz_status=$?
  phase_done "fuzz build (after the above)"
  if [[ $fuzz_status == 77 ]]; then
    grep 'fuzz.sh' "$fuzz_log" >&2 # the reason: no clang with the libFuzzer runtime
  elif [[ $fuzz_status != 0 ]]; then
    cat "$fuzz_log"
    echo "check.sh: the fuzz build failed (log: $fuzz_log)" >&2
    exit 1
  else
    [[ $status == 0 ]] || exit "$status"
    scripts/fuzz.sh smoke
    phase_done "fuzz smoke run"
  fi
fi
echo "check.sh: total $SECONDS s" >&2
exit "$status"
