#!/usr/bin/env bash
# Quick start, command 1: install what is missing, build cudadiag, and run it on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_dependencies.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_BUILD_TESTS=OFF >/dev/null
cmake --build build --parallel "$(nproc)" --target cudadiag >/dev/null
exec build/cli/cudadiag "$@"
