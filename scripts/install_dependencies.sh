#!/usr/bin/env bash
# Installs what cudadiag needs to build and test, from the distribution's packages, when missing.
# Debian 12 and Ubuntu 24.04. Prints nothing when everything is already there.
#   scripts/install_dependencies.sh        the build and the test suite
#   scripts/install_dependencies.sh fuzz   also clang and its libFuzzer runtime, for scripts/fuzz.sh
#                                          (the distribution's default clang: 14 on Debian 12, 18 on
#                                          Ubuntu 24.04; libclang-rt-dev holds libFuzzer)
set -euo pipefail

# dpkg-dev and file: CPack computes the .deb's Depends with dpkg-shlibdeps (packaging/).
# libsimdjson-dev: `cudadiag fleet` parses thousands of node reports with it (optional in CMake).
# libsqlite3-dev: versions from RPM's package database (rpmdb.sqlite).
packages=(cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev libfmt-dev doctest-dev clang-format-14
          zlib1g-dev libsqlite3-dev python3 python3-venv strace dpkg-dev file libsimdjson-dev)
if [[ ${1:-} == fuzz ]]; then
  packages+=(clang libclang-rt-dev)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
# python3 and venv may come from elsewhere (pyenv, the toolkit image): accept a working one.
if command -v python3 >/dev/null && python3 -c 'import venv, ensurepip' 2>/dev/null; then
  missing=("${missing[@]/python3-venv}")
  missing=("${missing[@]/python3}")
fi
wanted=()
for package in "${missing[@]}"; do [[ -n "$package" ]] && wanted+=("$package"); done
# Optional: the HTML report's screenshot test renders it in headless Chromium and is skipped
# without it. Only Debian ships chromium as a plain package (Ubuntu's is a snap wrapper), so it is
# only installed there, and a failure to install it is not an error.
optional=()
if grep -qx 'ID=debian' /etc/os-release 2>/dev/null && ! command -v chromium >/dev/null; then
  optional+=(chromium)
fi
# Optional: zsh and fish run the completion scripts `cudadiag completion zsh|fish` prints (the
# tests skip those shells without them; bash is always there).
for package in zsh fish; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    optional+=("$package")
  fi
done
# Optional: the fleet tests start real daemons — Slurm (slurmctld, slurmd, srun: slurm-wlm) with
# munge, and prometheus-node-exporter — and skip, saying what is missing, without them; shellcheck
# lints the Slurm and Kubernetes scripts; ccache answers the consumer test's second build of the core
# (tests/consumer, add_subdirectory) from the first one's objects (scripts/check.sh uses it when present);
# buildah and debootstrap build the container image of packaging/Containerfile from the .deb
# (packaging/check_container.sh).
for package in slurm-wlm munge prometheus-node-exporter shellcheck ccache buildah debootstrap; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    optional+=("$package")
  fi
done
[[ ${#wanted[@]} -eq 0 && ${#optional[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -ne 0 ]] && sudo=(sudo)
echo "Installing: ${wanted[*]} ${optional[*]}" >&2
"${sudo[@]}" apt-get update -qq
if [[ ${#wanted[@]} -gt 0 ]]; then
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
fi
if [[ ${#optional[@]} -gt 0 ]] &&
   ! DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${optional[@]}" >/dev/null; then
  echo "note: could not install ${optional[*]}; the tests that need them will be skipped" >&2
fi
