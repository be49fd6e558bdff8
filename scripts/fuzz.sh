#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (fuzz/README.md), built with clang in a build directory of their own.
#
#   scripts/fuzz.sh build                  configure and build BUILD (default build-fuzz) with the newest
#                                          clang-18 ... clang-14 (or clang) that can link libFuzzer
#   scripts/fuzz.sh smoke                  build, then the CI smoke run: ctest -L '^fuzz$' (each target
#                                          CUDADIAG_FUZZ_SMOKE_SECONDS, default 10, two at a time)
#   scripts/fuzz.sh run SECONDS [JOBS] [OUT]
#                                          build, then each target for SECONDS (JOBS libFuzzer workers
#                                          per target, default 1), CUDADIAG_FUZZ_PARALLEL targets at
#                                          once (default: one per core, so each has a core to itself;
#                                          the next starts when one ends); the corpora grow in
#                                          BUILD/corpus/<target> (a later run goes on from them); OUT
#                                          (default BUILD/runs) gets <target>/artifacts/,
#                                          <target>/log-tail.txt, summary.tsv and summary.md (execs,
#                                          exec/s, corpus size, crashes, leaks, timeouts, ooms)
#   scripts/fuzz.sh targets                the target names
#
# CUDADIAG_FUZZ_BUILD_DIR (default build-fuzz), CUDADIAG_FUZZ_OPT (default -O1),
# CUDADIAG_FUZZ_SMOKE_SECONDS (default 10) adjust the build and the smoke run; CUDADIAG_FUZZ_ONLY
# ("elf tar_gzip ...") runs those targets only; CUDADIAG_FUZZ_BIN_DIR runs the cudadiag_fuzz_* binaries
# found there instead of building (fuzzers built on one machine, run on a bigger one without clang). The targets' scratch files go to /dev/shm where it is
# writable (TMPDIR, unless set: several targets write the files they parse).
# Exits 77 (skipped) when no clang with the libFuzzer runtime is installed, saying what to install;
# `run` exits 1 when any target found a crash, leak, timeout or out-of-memory input (its artifact is
# in OUT/<target>/artifacts/; copy it to tests/fuzz/<target>/ with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${CUDADIAG_FUZZ_BUILD_DIR:-build-fuzz}
# The targets are fuzz/CMakeLists.txt's CUDADIAG_FUZZ_TARGETS (one list for CMake, ctest and this script).
mapfile -t targets < <(awk '/^set\(CUDADIAG_FUZZ_TARGETS/ {on = 1; sub(/^set\(CUDADIAG_FUZZ_TARGETS/, "")}
                            on {line = $0; done = sub(/\).*/, "", line); n = split(line, w, /[ \t]+/)
                                for (i = 1; i <= n; ++i) if (w[i] != "") print w[i]
                                if (done) exit}' fuzz/CMakeLists.txt)
if [[ ${#targets[@]} -eq 0 ]]; then
  echo "fuzz.sh: no CUDADIAG_FUZZ_TARGETS list in fuzz/CMakeLists.txt" >&2
  exit 2
fi
if [[ -n ${CUDADIAG_FUZZ_ONLY:-} ]]; then
  for wanted in $CUDADIAG_FUZZ_ONLY; do
    printf '%s\n' "${targets[@]}" | grep -qx "$wanted" || { echo "fuzz.sh: unknown target $wanted" >&2; exit 2; }
  done
  read -r -a targets <<<"$CUDADIAG_FUZZ_ONLY"
fi
if [[ -z ${TMPDIR:-} && -d /dev/shm && -w /dev/shm ]]; then
  export TMPDIR=/dev/shm
fi

# The newest clang that links -fsanitize=fuzzer; sets cc and cxx.
find_clang() {
  local probe version candidate
  probe=$(mktemp -d)
  printf '#include <cstddef>\n#include <cstdint>\nextern "C" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n' >"$probe/t.cpp"
  for version in 18 17 16 15 14 ""; do
    candidate=clang++${version:+-$version}
    command -v "$candidate" >/dev/null || continue
    if "$candidate" -fsanitize=fuzzer,address,undefined "$probe/t.cpp" -o "$probe/t" 2>/dev/null; then
      cxx=$candidate
      cc=clang${version:+-$version}
      rm -rf "$probe"
      return 0
    fi
    echo "fuzz.sh: $candidate is installed but cannot link -fsanitize=fuzzer (its libFuzzer runtime is missing)" >&2
  done
  rm -rf "$probe"
  echo "fuzz.sh: skipped: no clang (14-18) with the libFuzzer runtime; install it with" \
       "scripts/install_dependencies.sh fuzz (Debian/Ubuntu: clang libclang-rt-dev)" >&2
  return 1
}

build() {
  find_clang || exit 77
  echo "fuzz.sh: building $build_dir with $cxx ($("$cxx" --version | head -1))" >&2
  local extra=()
  command -v ninja >/dev/null && [[ ! -f $build_dir/CMakeCache.txt ]] && extra+=(-G Ninja)
  [[ ${CUDADIAG_CCACHE:-1} == 1 ]] && command -v ccache >/dev/null &&
    extra+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -O1 by default (libFuzzer's recommendation); CUDADIAG_FUZZ_OPT=-O0 builds faster for a smoke run.
  local opt=${CUDADIAG_FUZZ_OPT:--O1}
  CC=$cc CXX=$cxx cmake -S . -B "$build_dir" "${extra[@]}" -DCMAKE_BUILD_TYPE=None -DCUDADIAG_FUZZ=ON \
        -DCUDADIAG_WERROR=OFF -DCUDADIAG_INSTALL=OFF -DCMAKE_C_FLAGS="$opt" -DCMAKE_CXX_FLAGS="$opt" \
        ${CUDADIAG_FUZZ_SMOKE_SECONDS:+-DCUDADIAG_FUZZ_SMOKE_SECONDS=$CUDADIAG_FUZZ_SMOKE_SECONDS} >/dev/null
  cmake --build "$build_dir" --parallel "$(nproc)" --target cudadiag_fuzzers
}

# The last value of a libFuzzer final stat ("stat::number_of_executed_units: 123") in a log.
stat_of() { grep -ho "^stat::$1: *[0-9]*" "$2" 2>/dev/null | tail -1 | awk '{print $2}'; }

run() {
  local seconds=${1:?usage: scripts/fuzz.sh run SECONDS [JOBS] [OUT]} jobs=${2:-1} out=${3:-$build_dir/runs}
  local bin_dir=${CUDADIAG_FUZZ_BIN_DIR:-}
  if [[ -z $bin_dir ]]; then
    build
    bin_dir=$build_dir/fuzz
  else
    cxx=true # the summary names no compiler: the binaries were built elsewhere
  fi
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  local parallel=${CUDADIAG_FUZZ_PARALLEL:-$(nproc)} running=0 failed=0 target
  for target in "${targets[@]}"; do
    if [[ $running -ge $parallel ]]; then
      wait -n || failed=1
      running=$((running - 1))
    fi
    # The corpus grows in the build directory (a later run goes on from it); OUT gets what to read:
    # the artifacts, the tail of each log and the summaries.
    local corpus=$build_dir/corpus/$target dir=$out/$target
    mkdir -p "$corpus" "$dir/artifacts"
    local args=(-max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 -print_final_stats=1
                -artifact_prefix="$dir/artifacts/" "$corpus" "fuzz/corpus/$target")
    [[ -d tests/fuzz/$target ]] && args+=("tests/fuzz/$target")
    # With several jobs, libFuzzer's fork mode runs them and keeps going after a crash.
    [[ $jobs -gt 1 ]] && args=(-fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 "${args[@]}")
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$bin_dir/cudadiag_fuzz_$target" "${args[@]}" >"$build_dir/corpus/$target.log" 2>&1 &
    running=$((running + 1))
  done
  while [[ $running -gt 0 ]]; do
    wait -n || failed=1
    running=$((running - 1))
  done
  printf 'target\texecs\texec_per_s\tcorpus_files\tcrashes\tleaks\ttimeouts\tooms\n' >"$out/summary.tsv"
  for target in "${targets[@]}"; do
    local dir=$out/$target log=$build_dir/corpus/$target.log execs rate
    tail -n 300 "$log" >"$dir/log-tail.txt"
    execs=$(stat_of number_of_executed_units "$log")
    rate=$(stat_of average_exec_per_sec "$log")
    if [[ -z $execs ]]; then # fork mode prints "#N ... exec/s: R" progress lines instead
      execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
      rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | awk '{print $2}')
    fi
    count() { find "$dir/artifacts" -name "$1-*" -type f | wc -l; }
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$target" "${execs:-?}" "${rate:-?}" \
      "$(find "$build_dir/corpus/$target" -type f | wc -l)" "$(count crash)" "$(count leak)" "$(count timeout)" \
      "$(count oom)" >>"$out/summary.tsv"
  done
  {
    echo "# cudadiag fuzz run: $seconds s per target, $jobs job(s) each, $parallel target(s) at once, $(nproc) cores, $(date -u +%Y-%m-%dT%H:%MZ), ${CUDADIAG_FUZZ_BIN_DIR:+prebuilt in $CUDADIAG_FUZZ_BIN_DIR, }$("$cxx" --version 2>/dev/null | head -1)"
    echo
    awk -F'\t' 'NR==1 {print "| " $1 " | " $2 " | " $3 " | " $4 " | " $5 " | " $6 " | " $7 " | " $8 " |"; print "|---|---:|---:|---:|---:|---:|---:|---:|"; next}
                {print "| " $1 " | " $2 " | " $3 " | " $4 " | " $5 " | " $6 " | " $7 " | " $8 " |"}' "$out/summary.tsv"
  } >"$out/summary.md"
  cat "$out/summary.md"
  if awk -F'\t' 'NR > 1 && ($5 + $6 + $7 + $8) > 0 {found = 1} END {exit !found}' "$out/summary.tsv"; then
    failed=1
  fi
  return $failed
}

case ${1:-} in
build) build ;;
smoke) build && (cd "$build_dir" && ctest -L '^fuzz$' --output-on-failure -j 2) ;;
run) shift && run "$@" ;;
targets) printf '%s\n' "${targets[@]}" ;;
*) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0" >&2; exit 2 ;;
esac
