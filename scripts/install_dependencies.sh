#!/usr/bin/env bash
# Installs what cudadiag needs to build and test, from the distribution's packages, when missing.
# Debian 12 and Ubuntu 24.04. Prints nothing when everything is already there.
set -euo pipefail

packages=(cmake g++ make pkg-config libcli11-dev nlohmann-json3-dev libspdlog-dev doctest-dev
          python3 python3-venv strace)

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
[[ ${#wanted[@]} -eq 0 ]] && exit 0

sudo=()
[[ $(id -u) -ne 0 ]] && sudo=(sudo)
echo "Installing: ${wanted[*]}" >&2
"${sudo[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${wanted[@]}" >/dev/null
