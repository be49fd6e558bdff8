#!/usr/bin/env bash
# Builds the .deb from a configured and built tree and checks what a user gets (ctest label packaging):
# Depends computed and free of CUDA, the expected files, no CUDA library in any NEEDED list, and a
# cudadiag that runs from the unpacked tree.
#
#   check_deb.sh BUILD_DIR WORK_DIR      (exit 77 = skipped: no dpkg-deb/dpkg-shlibdeps)
set -euo pipefail
build=$(realpath "$1") work=$2
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "skipped: $tool not found (install dpkg-dev)"; exit 77; }
done
rm -rf "$work"
mkdir -p "$work"
work=$(realpath "$work")

cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 || { cat "$work/cpack.log"; exit 1; }
deb=$(find "$work" -maxdepth 1 -name 'cudadiag_*.deb')
echo "built $(basename "$deb")"

depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
# libc6 always; libstdc++6 too on Debian 12 (Ubuntu 24.04's dpkg-shlibdeps leaves it implied).
grep -q "libc6" <<< "$depends" || { echo "Depends lacks libc6"; exit 1; }
if grep -Eiq 'cuda|nvidia' <<< "$depends"; then
  echo "Depends names a CUDA package"; exit 1
fi

contents=$(dpkg-deb -c "$deb" | awk '{print $6}')  # perms owner size date time PATH [-> target]
for path in ./usr/bin/cudadiag ./usr/lib/libcudadiag.so.0 ./usr/lib/libcudadiag.so ./usr/include/cudadiag/cudadiag.h \
            ./usr/include/cudadiag/cudadiag.hpp ./usr/lib/cmake/cudadiag/cudadiagConfig.cmake \
            ./usr/lib/pkgconfig/cudadiag.pc ./usr/share/man/man1/cudadiag.1 ./usr/share/doc/cudadiag/CHANGELOG.md \
            ./usr/share/bash-completion/completions/cudadiag ./usr/share/zsh/vendor-completions/_cudadiag \
            ./usr/share/fish/vendor_completions.d/cudadiag.fish; do
  grep -qxF "$path" <<< "$contents" || { echo "the package lacks $path"; exit 1; }
done

root=$work/root
dpkg-deb -x "$deb" "$root"
for elf in "$root/usr/bin/cudadiag" "$root"/usr/lib/libcudadiag.so.0; do
  if readelf -d "$elf" | grep NEEDED | grep -Eiq 'libcuda|libnvidia|libcudart|libnvrtc|libnvJitLink'; then
    echo "$elf needs a CUDA library:"; readelf -d "$elf" | grep NEEDED; exit 1
  fi
done
"$root/usr/bin/cudadiag" --version
# The executable loads no C++ library (CUDADIAG_STATIC_RUNTIME); where the build made the fleet's
# simdjson program, the package carries it and `cudadiag fleet` runs it.
if readelf -d "$root/usr/bin/cudadiag" | grep NEEDED | grep -Eq 'libstdc\+\+|libspdlog|libfmt|libsimdjson'; then
  echo "usr/bin/cudadiag loads a C++ library:"; readelf -d "$root/usr/bin/cudadiag" | grep NEEDED; exit 1
fi
if [[ -x "$build/cli/cudadiag-fleet" ]]; then
  grep -qxF ./usr/libexec/cudadiag/cudadiag-fleet <<< "$contents" || { echo "the package lacks the fleet's simdjson program"; exit 1; }
  "$root/usr/bin/cudadiag" --json --no-load >"$work/node.json" || [[ $? -le 1 ]]
  "$root/usr/bin/cudadiag" -v fleet "$work/node.json" 2>"$work/fleet.log" >/dev/null || [[ $? -le 1 ]]
  grep -q "reports parsed with simdjson" "$work/fleet.log" || { echo "installed cudadiag fleet did not run cudadiag-fleet:"; cat "$work/fleet.log"; exit 1; }
fi
# The installed completion scripts are the ones the installed binary prints.
for shell in bash zsh fish; do
  case $shell in
    bash) file=$root/usr/share/bash-completion/completions/cudadiag ;;
    zsh) file=$root/usr/share/zsh/vendor-completions/_cudadiag ;;
    fish) file=$root/usr/share/fish/vendor_completions.d/cudadiag.fish ;;
  esac
  "$root/usr/bin/cudadiag" completion "$shell" | cmp -s - "$file" || { echo "$file is not \`cudadiag completion $shell\`"; exit 1; }
done
echo "package ok"
