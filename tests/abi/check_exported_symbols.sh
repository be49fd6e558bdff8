#!/usr/bin/env bash
# The ABI check: the dynamic symbols libcudadiag.so defines must be exactly those listed in
# tests/abi/exported_symbols.txt (mangled names with their version node, one per line; '#' starts a
# comment). A symbol added to the API is added to the list in the same change; a symbol that
# disappears breaks the ABI and needs a new SOVERSION (docs/api.md "Versioning policy").
#
#   check_exported_symbols.sh LIBRARY LIST            compare; print the difference, demangled
#   check_exported_symbols.sh LIBRARY LIST --update   rewrite LIST from LIBRARY (keeps its header)
set -euo pipefail
library=$1 list=$2 mode=${3:-check}

# Absolute symbols are version nodes (CUDADIAG_0); the @@CUDADIAG_0 suffixes already name them.
actual=$(nm -D --defined-only "$library" | awk '$2 != "A" {print $NF}' | LC_ALL=C sort -u)
if [[ $mode == --update ]]; then
  { grep '^#' "$list" || true; printf '%s\n' "$actual"; } > "$list.new"
  mv "$list.new" "$list"
  exit 0
fi
expected=$(grep -v -e '^#' -e '^$' "$list" | LC_ALL=C sort -u)
if [[ "$actual" == "$expected" ]]; then
  echo "libcudadiag exports the $(wc -l <<< "$actual") listed symbols"
  exit 0
fi
echo "libcudadiag's exported symbols differ from $list (< listed only, > exported only):"
diff <(printf '%s\n' "$expected") <(printf '%s\n' "$actual") | grep '^[<>]' | c++filt
echo "If the change is intended: $0 $library $list --update"
exit 1
