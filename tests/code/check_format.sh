#!/usr/bin/env bash
# Every C/C++ source of the repository is formatted as the committed .clang-format says, by the
# pinned clang-format (14: Debian 12's and Ubuntu 24.04's clang-format-14; CUDADIAG_CLANG_FORMAT
# names another binary of that version). Lists each file that differs and how to fix it.
#
#   check_format.sh SOURCE_DIR          exit 0 formatted, 1 a file differs, 77 no clang-format 14
set -uo pipefail
cd "$1" || exit 1
tool=${CUDADIAG_CLANG_FORMAT:-clang-format-14}
if ! command -v "$tool" >/dev/null; then
  echo "SKIP: $tool is not installed (scripts/install_dependencies.sh installs it)"
  exit 77
fi
version=$("$tool" --version)
if [[ $version != *"version 14."* ]]; then
  echo "SKIP: $tool is not clang-format 14 ($version): another version formats differently"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu')
else
  mapfile -t files < <(find . -path ./build\* -prune -o -type f \( -name '*.c' -o -name '*.h' -o \
                         -name '*.cpp' -o -name '*.hpp' -o -name '*.cu' \) -print | sed 's|^\./||' | sort)
fi
# One process over every file (one per file took 40 s here); each difference is reported on stderr
# as "FILE:LINE:COL: error: code should be clang-formatted".
mapfile -t differing < <("$tool" --dry-run --Werror "${files[@]}" 2>&1 >/dev/null |
                         sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
echo "${#files[@]} files checked with $version; ${#differing[@]} differ"
if [[ ${#differing[@]} -gt 0 ]]; then
  printf '  %s\n' "${differing[@]}"
  echo "fix: $tool -i ${differing[*]}"
  exit 1
fi
