#!/usr/bin/env bash
# Creates the two Python virtual environments the CLI and real-layout tests run in:
#
#   DEST/wheels  cuda-pathfinder 1.9.1 + the CUDA 13 pip wheels (nvrtc, nvJitLink, CCCL) + pytest, jsonschema
#   DEST/bare    cuda-pathfinder 1.9.1 + pytest, jsonschema, junitparser, prometheus_client,
#                kubernetes-validate, dockerfile, packaging (CUDA comes from the system toolkit)
#   DEST/mismatch  NVRTC 13 with a CUDA 12 nvJitLink wheel: the nvjitlink.version_mismatch situation
#   DEST/closure   cuSPARSE 12.3.1.170 (CUDA 12.4, needs __nvJitLink*_12_4) with its nvJitLink 12.4.127,
#                  and DEST/closure-old: nvJitLink 12.1.105 (pip --target) for LD_LIBRARY_PATH: the
#                  pytorch#134929 situation the closure tests reproduce (lib.undefined_symbol)
#
# Usage: scripts/make_test_venvs.sh DEST
#
# A venv that is already complete (its marker file matches the requested package set) is reused,
# so a second run costs a second. Exit status: 0 ready; 77 pip's package index does not answer
# (callers treat it as a skip); 1 anything else (the message says what). Environment: PYTHON
# (default python3) picks the base interpreter; PIP_CACHE_DIR, when set, is passed to pip as
# --cache-dir; pip's own configuration (pip.conf, PIP_INDEX_URL, ...) says where packages come from.
set -euo pipefail

readonly k_marker=".cudadiag-test-venv-complete"
# cuda-pathfinder is pinned: the catalog mirrors 1.9.1 and the conformance tests compare with it
# (1.9.1 is also the newest release on 2026-12-02).
readonly k_pathfinder_pin=cuda-pathfinder==1.9.1
readonly k_common_packages=("$k_pathfinder_pin" pytest jsonschema)
# The bare venv also runs the JUnit test, whose consumer is junitparser, and the fleet tests:
# prometheus_client parses node_exporter's scrape, kubernetes-validate checks packaging/kubernetes/,
# dockerfile (Docker's own parser) reads packaging/Containerfile; packaging is the oracle of the
# PEP 440/508 evaluators (tests/cli/test_pep440_oracle.py).
readonly k_bare_packages=(junitparser prometheus_client kubernetes-validate dockerfile packaging)
readonly k_wheel_packages=(nvidia-cuda-nvrtc nvidia-nvjitlink nvidia-cuda-cccl)
readonly k_mismatch_packages=(nvidia-cuda-nvrtc nvidia-nvjitlink-cu12)
readonly k_closure_packages=(nvidia-cusparse-cu12==12.3.1.170 nvidia-nvjitlink-cu12==12.4.127)
readonly k_closure_old_package=nvidia-nvjitlink-cu12==12.1.105

usage() {
  echo "usage: $0 DEST" >&2
  exit 1
}

[[ $# -eq 1 && -n "$1" ]] || usage
dest=$1
python=${PYTHON:-python3}

pip_args=(--quiet --disable-pip-version-check --no-input)
if [[ -n "${PIP_CACHE_DIR:-}" ]]; then
  pip_args+=(--cache-dir "$PIP_CACHE_DIR")
fi

# Returns 0 when pip, as configured here (pip.conf, PIP_INDEX_URL, PIP_FIND_LINKS, ...), fetches one
# small package (cuda-pathfinder, no dependencies, bypassing pip's cache) within 60 seconds. The
# script names no index of its own: whatever pip would install from is what is asked.
pip_index_answers() {
  local py=$1 probe status=0
  probe=$(mktemp -d)
  timeout 60 "$py" -m pip download --quiet --disable-pip-version-check --no-input --no-cache-dir --no-deps \
    --timeout 10 --retries 0 --dest "$probe" cuda-pathfinder >/dev/null 2>&1 || status=1
  rm -rf "$probe"
  return $status
}

# The marker records what was asked for, so a changed package list or base interpreter rebuilds.
marker_text() {
  local base_version
  base_version=$("$python" -c 'import sys; print(sys.version.split()[0])')
  printf 'python %s\npackages %s\n' "$base_version" "$*"
}

venv_complete() {
  local dir=$1
  shift
  [[ -f "$dir/$k_marker" && -x "$dir/bin/python" ]] || return 1
  [[ "$(cat "$dir/$k_marker")" == "$(marker_text "$@")" ]] || return 1
  "$dir/bin/python" -c 'import cuda.pathfinder, pytest, jsonschema' >/dev/null 2>&1
}

make_venv() {
  local dir=$1
  shift
  local no_deps=()
  if [[ "${1:-}" == --no-deps ]]; then
    no_deps=(--no-deps)
    shift
  fi
  if venv_complete "$dir" "$@"; then
    return 0
  fi
  rm -rf "$dir"
  if ! "$python" -m venv "$dir" >/dev/null 2>"$dest/venv-error.log"; then
    echo "error: '$python -m venv $dir' failed (on Debian/Ubuntu install python3-venv):" >&2
    cat "$dest/venv-error.log" >&2
    rm -rf "$dir"
    exit 1
  fi
  if ! "$dir/bin/python" -m pip install "${pip_args[@]}" "${no_deps[@]}" "$@" 2>"$dest/pip-error.log"; then
    if ! pip_index_answers "$dir/bin/python"; then
      echo "SKIP: pip's package index does not answer (could not install $* into $dir)"
      rm -rf "$dir"
      exit 77
    fi
    echo "error: pip install $* into $dir failed:" >&2
    tail -n 20 "$dest/pip-error.log" >&2
    rm -rf "$dir"
    exit 1
  fi
  marker_text "$@" >"$dir/$k_marker"
}

mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
trap 'rm -f "$dest/venv-error.log" "$dest/pip-error.log"' EXIT

# Two ctest runs (or a developer and ctest) may share DEST: serialise on a lock when flock exists.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dest/.lock"
  flock 9
fi

make_venv "$dest/bare" "${k_common_packages[@]}" "${k_bare_packages[@]}"
make_venv "$dest/wheels" "${k_wheel_packages[@]}" "${k_common_packages[@]}"
make_venv "$dest/mismatch" "${k_mismatch_packages[@]}" "${k_common_packages[@]}"
# The closure venv pins its wheels without their dependencies (cusparse would pull the newest
# nvJitLink); pytest and cuda-pathfinder come in a second step so that their own dependencies resolve.
if ! venv_complete "$dest/closure" "${k_closure_packages[@]}" "${k_common_packages[@]}"; then
  make_venv "$dest/closure" --no-deps "${k_closure_packages[@]}"
  rm -f "$dest/closure/$k_marker"
  "$dest/closure/bin/python" -m pip install "${pip_args[@]}" "${k_common_packages[@]}" >/dev/null
  marker_text "${k_closure_packages[@]}" "${k_common_packages[@]}" >"$dest/closure/$k_marker"
fi
old_marker="$dest/closure-old/$k_marker"
if [[ ! -f "$old_marker" || "$(cat "$old_marker")" != "$(marker_text "$k_closure_old_package")" ]]; then
  rm -rf "$dest/closure-old"
  "$dest/bare/bin/python" -m pip install "${pip_args[@]}" --no-deps --target "$dest/closure-old" "$k_closure_old_package"
  marker_text "$k_closure_old_package" >"$old_marker"
fi
