#!/usr/bin/env bash
# The embedded API's tests (cudadiag_api_tests: tests/unit/test_api_*.cpp, linked to libcudadiag.so)
# under sanitizers, each kind in a build directory of its own with only that executable and what it
# runs built (libcudadiag and the core, the cudadiag worker, the test fixtures):
#
#   scripts/sanitizers.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer, every API test (build-asan)
#   scripts/sanitizers.sh tsan   ThreadSanitizer, every API test, the 8-thread one included (build-tsan)
#   scripts/sanitizers.sh        both
#
# A second argument does one half: `build` (configure and build only) or `run` (run what an earlier
# `build` made); scripts/check.sh builds while the suite runs and runs the tests after it.
#
# Any report fails the run (-fno-sanitize-recover, halt_on_error). CI runs `asan` (scripts/check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# Configures and builds build-NAME with -fsanitize=SANITIZE (not for step `run`); sets `tests` to
# the test executable.
build() {
  local name=$1 sanitize=$2
  local dir=${CUDADIAG_SANITIZER_BUILD_PREFIX:-build}-$name
  tests=$dir/tests/cudadiag_api_tests
  if [[ $step == run ]]; then
    [[ -x $tests ]] || { echo "$tests is not built: run '$0 $name build' first" >&2; exit 1; }
  else
    # -O0 and line tables only: the cheapest build that still gives file:line in reports (ASan and
    # UBSan); ThreadSanitizer is run at -O1, as its documentation recommends.
    local optimize=-O0
    [[ $sanitize == thread ]] && optimize=-O1
    local flags="$optimize -g1 -fno-omit-frame-pointer -fsanitize=$sanitize -fno-sanitize-recover=all"
    # CUDADIAG_COMPILER_LAUNCHER (scripts/check.sh sets it to ccache when installed) wraps the compiler.
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=None -DCUDADIAG_WERROR=ON \
          -DCMAKE_C_COMPILER_LAUNCHER="${CUDADIAG_COMPILER_LAUNCHER:-}" \
          -DCMAKE_CXX_COMPILER_LAUNCHER="${CUDADIAG_COMPILER_LAUNCHER:-}" \
          -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
          -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=$sanitize" >/dev/null
    cmake --build "$dir" --parallel "$(nproc)" --target cudadiag_api_tests
  fi
  [[ $step == build ]] || echo "== cudadiag_api_tests under -fsanitize=$sanitize"
}

asan() {
  build asan address,undefined
  [[ $step == build ]] && return 0
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
    "$tests"
}

tsan() {
  build tsan thread
  [[ $step == build ]] && return 0
  # ThreadSanitizer's shadow memory needs the classic address-space layout: run without ASLR
  # (newer kernels' mmap randomisation otherwise makes gcc 12's libtsan abort at start).
  TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1} \
    setarch "$(uname -m)" -R "$tests"
}

step=${2:-all}
case $step in
build | run | all) ;;
*) echo "usage: $0 [asan|tsan|all] [build|run]" >&2; exit 2 ;;
esac
case ${1:-all} in
asan) asan ;;
tsan) tsan ;;
all) asan && tsan ;;
*) echo "usage: $0 [asan|tsan|all] [build|run]" >&2; exit 2 ;;
esac
