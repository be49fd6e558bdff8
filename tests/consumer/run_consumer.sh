#!/usr/bin/env bash
# Builds and runs the consumer projects against cudadiag in one of three ways (ctest label consumer):
#
#   run_consumer.sh install          BUILD_DIR WORK_DIR   cmake --install BUILD_DIR into WORK_DIR/prefix, then
#                                                         find_package and pkg-config against that prefix
#   run_consumer.sh build-tree       BUILD_DIR WORK_DIR   find_package with cudadiag_DIR=BUILD_DIR/packaging
#   run_consumer.sh add-subdirectory SOURCE_DIR WORK_DIR  add_subdirectory(SOURCE_DIR) from a parent project
#
# WORK_DIR is emptied first. Exits non-zero, with the failing step's output, on any failure.
# CUDADIAG_COMPILER_LAUNCHER (the parent build's compiler launcher, e.g. ccache) wraps the compilers.
# add-subdirectory builds with the parent build's CUDADIAG_PARENT_BUILD_TYPE, CUDADIAG_PARENT_C_FLAGS,
# CUDADIAG_PARENT_CXX_FLAGS and CUDADIAG_PARENT_WERROR when they are set (the same compile commands,
# so that a compiler cache answers them), and CUDADIAG_SUBPROJECT_BINARY_DIR as cudadiag's binary directory.
set -euo pipefail
mode=$1 input=$(realpath "$2") work=$3
here=$(cd "$(dirname "$0")" && pwd)
jobs=$(nproc)
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")

launcher=(-DCMAKE_C_COMPILER_LAUNCHER="${CUDADIAG_COMPILER_LAUNCHER:-}"
          -DCMAKE_CXX_COMPILER_LAUNCHER="${CUDADIAG_COMPILER_LAUNCHER:-}")

quiet() { # runs a command, showing its output only when it fails
  local log
  log=$(mktemp)
  if ! "$@" >"$log" 2>&1; then
    cat "$log"
    rm -f "$log"
    echo "FAILED: $*" >&2
    exit 1
  fi
  rm -f "$log"
}

run_consumers() {
  "$work/build/consumer_cpp" "$@"
  "$work/build/consumer_c"
}

case $mode in
install)
  prefix=$work/prefix
  quiet cmake --install "$input" --prefix "$prefix"
  "$prefix/bin/cudadiag" --version
  quiet cmake -S "$here/find_package" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" "${launcher[@]}"
  quiet cmake --build "$work/build" --parallel "$jobs"
  # The installed library finds the worker at ../bin/cudadiag relative to itself.
  run_consumers --expect-worker
  # The installed config asks for no dependency: the headers need none.
  if grep -rq find_dependency "$prefix"/lib*/cmake/cudadiag/; then
    echo "the installed CMake config looks for dependencies" >&2
    exit 1
  fi
  pc_dir=$(dirname "$(find "$prefix" -name cudadiag.pc)")
  flags=$(PKG_CONFIG_PATH=$pc_dir pkg-config --cflags --libs cudadiag)
  libdir=$(PKG_CONFIG_PATH=$pc_dir pkg-config --variable=libdir cudadiag)
  # shellcheck disable=SC2086 # the flags are words
  quiet cc -std=c99 -Wall -Werror "$here/common/consumer.c" $flags -Wl,-rpath,"$libdir" -o "$work/consumer_pkgconfig"
  "$work/consumer_pkgconfig"
  ;;
build-tree)
  quiet cmake -S "$here/find_package" -B "$work/build" -Dcudadiag_DIR="$input/packaging" "${launcher[@]}"
  quiet cmake --build "$work/build" --parallel "$jobs"
  run_consumers
  ;;
add-subdirectory)
  parent=()
  if [[ -n "${CUDADIAG_PARENT_BUILD_TYPE:-}" ]]; then
    # The flags of that build type are the parent's whole set: the sub-project's own are emptied.
    type=${CUDADIAG_PARENT_BUILD_TYPE^^}
    parent=(-DCMAKE_BUILD_TYPE="$CUDADIAG_PARENT_BUILD_TYPE" -DCMAKE_C_FLAGS="" -DCMAKE_CXX_FLAGS=""
            "-DCMAKE_C_FLAGS_${type}=${CUDADIAG_PARENT_C_FLAGS:-}"
            "-DCMAKE_CXX_FLAGS_${type}=${CUDADIAG_PARENT_CXX_FLAGS:-}"
            -DCUDADIAG_WERROR="${CUDADIAG_PARENT_WERROR:-OFF}")
  fi
  # CUDADIAG_SUBPROJECT_BINARY_DIR: where cudadiag's part of the parent build goes (emptied first).
  sub=${CUDADIAG_SUBPROJECT_BINARY_DIR:-$work/build/cudadiag}
  rm -rf "$sub"
  quiet cmake -S "$here/add_subdirectory" -B "$work/build" -DCUDADIAG_SOURCE_DIR="$input" \
    -DCUDADIAG_BINARY_DIR="$sub" "${launcher[@]}" "${parent[@]}"
  quiet cmake --build "$work/build" --parallel "$jobs" --target consumer_cpp consumer_c
  run_consumers
  # A sub-project gets no tests, no CPack and no install rules of cudadiag's own.
  if [[ -e $work/build/CPackConfig.cmake || -e $sub/tests ]] ||
     grep -rqE 'libcudadiag\.so|cudadiagTargets' --include=cmake_install.cmake "$sub"; then
    echo "cudadiag added tests, CPack or install rules to its parent project" >&2
    exit 1
  fi
  ;;
*)
  echo "usage: $0 install|build-tree|add-subdirectory DIR WORK_DIR" >&2
  exit 2
  ;;
esac
echo "consumer ($mode): ok"
