#!/usr/bin/env bash
# What a binary of ours may load (its DT_NEEDED list), by what it is:
#   library     libcudadiag.so: the C and C++ runtimes and zlib (an image's gzip-compressed layers,
#               the `image` option; libz.so.1 is on every Linux system and in every manylinux
#               policy). No CUDA library (it must load on a machine without CUDA), and no spdlog or
#               fmt (it prints nothing; the core never logs).
#   executable  the `cudadiag` executable built with CUDADIAG_STATIC_RUNTIME: the C runtime and zlib
#               only. Its C++ runtime is linked in, spdlog and fmt are headers (cli/CMakeLists.txt):
#               loading libstdc++.so.6 and its users would cost every run about 0.7 ms.
#
#   check_needed.sh library|executable FILE
set -euo pipefail
kind=$1 file=$2
c_runtime='libm\.so\.6|libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-[a-z0-9_-]+\.so\.[0-9]+'
case $kind in
  library) allowed="^(libz\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1|$c_runtime)\$" what="the C and C++ runtimes and zlib" ;;
  executable) allowed="^(libz\.so\.1|$c_runtime)\$" what="the C runtime and zlib" ;;
  *) echo "check_needed.sh: library or executable, not $kind" >&2; exit 2 ;;
esac
needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
unexpected=$(grep -Ev "$allowed" <<< "$needed" || true)
if [[ -n "$unexpected" ]]; then
  echo "$(basename "$file") needs more than $what:"
  echo "$unexpected"
  exit 1
fi
echo "$(basename "$file") needs only: $(tr '\n' ' ' <<< "$needed")"
