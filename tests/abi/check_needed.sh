#!/usr/bin/env bash
# libcudadiag.so may depend only on the C and C++ runtimes: no CUDA library (it must load on a
# machine without CUDA), and no spdlog or fmt (it prints nothing; the core never logs).
#
#   check_needed.sh LIBRARY
set -euo pipefail
library=$1
needed=$(readelf -d "$library" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
allowed='^(libstdc\+\+\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libc\.so\.6|libdl\.so\.2|libpthread\.so\.0|ld-linux-[a-z0-9_-]+\.so\.[0-9]+)$'
unexpected=$(grep -Ev "$allowed" <<< "$needed" || true)
if [[ -n "$unexpected" ]]; then
  echo "libcudadiag.so needs more than the C and C++ runtimes:"
  echo "$unexpected"
  exit 1
fi
echo "libcudadiag.so needs only: $(tr '\n' ' ' <<< "$needed")"
