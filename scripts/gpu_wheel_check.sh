#!/usr/bin/env bash
# On the GPU host: the wheel built on the development machine (dist/, by
# scripts/build_wheel_lowglibc.sh), installed into a Python environment there, against the CMake
# build of the same tree. Both write the report the plain `cudadiag --json` gives (the quick
# self-test included, where the GPU is usable) from the same environment (the venv active); the two
# JSON documents are compared with `cudadiag diff` and field by field after dropping what changes
# from run to run (timings, the self-test's figures). Then quick_check() is timed from Python: the
# import, the first call and the median of 200 repeated calls, without and with torch imported.
#
# Usage (the device machine runs it in a copy of the work tree; dist/ travels with `carry`):
#   OUT=$OUT bash scripts/gpu_wheel_check.sh [VENV]        (default /opt/torch/.venv)
# Output in $OUT: report-cmake.json, report-wheel.json, diff.txt (cudadiag diff), fields.txt (the
# field-by-field differences), quick_check.txt (timings), wheel-install.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-/opt/torch/.venv}
out=${OUT:-$PWD/out}
mkdir -p "$out"
wheel=$(ls dist/cudadiag-*-py3-none-*manylinux*_"$(uname -m)".whl | head -n 1)
echo "wheel: $wheel" | tee "$out/wheel-install.txt"

{
  cmake -S . -B build-gpu-wheel -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_BUILD_TESTS=OFF &&
  cmake --build build-gpu-wheel -j"$(nproc)" --target cudadiag cudadiag_cub_selftest
} >"$out/build.log" 2>&1 || { tail -n 50 "$out/build.log"; exit 1; }

"$venv/bin/python" -m pip install --no-deps --force-reinstall --no-index "$wheel" >>"$out/wheel-install.txt" 2>&1
"$venv/bin/python" -m pip show -f cudadiag >>"$out/wheel-install.txt"

# Both from the venv, as a user who activated it would run them.
active=(env "PATH=$venv/bin:$PATH" "VIRTUAL_ENV=$venv")
"${active[@]}" build-gpu-wheel/cli/cudadiag --json >"$out/report-cmake.json" || true
"${active[@]}" "$venv/bin/cudadiag" --json >"$out/report-wheel.json" || true
build-gpu-wheel/cli/cudadiag diff "$out/report-cmake.json" "$out/report-wheel.json" >"$out/diff.txt" 2>&1 || true

python3 - "$out/report-cmake.json" "$out/report-wheel.json" >"$out/fields.txt" <<'EOF'
import json, re, sys

VOLATILE = re.compile(r"(_ms|_us|_s|seconds|elapsed|duration|time|timestamp|started|pid|_per_s|gbps|tflops|"
                      r"bandwidth|score|clock|temperature|power|utilization|value|figure|metrics|samples)$", re.I)

def flatten(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            if not VOLATILE.search(key):
                yield from flatten(item, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from flatten(item, f"{path}[{index}]")
    else:
        yield path, value

a, b = (dict(flatten(json.load(open(p)))) for p in sys.argv[1:3])
different = sorted(k for k in a.keys() | b.keys() if a.get(k, "<absent>") != b.get(k, "<absent>"))
for key in different:
    print(f"{key}\n  cmake: {a.get(key, '<absent>')!r}\n  wheel: {b.get(key, '<absent>')!r}")
print(f"{len(different)} of {len(a.keys() | b.keys())} fields differ (timings and figures left out)")
EOF

"$venv/bin/python" - >"$out/quick_check.txt" <<'EOF'
import statistics, subprocess, sys, time

def timed_import():
    code = "import time; t = time.perf_counter(); import cudadiag; print((time.perf_counter() - t) * 1e3)"
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)

print(f"import cudadiag: {statistics.median(timed_import() for _ in range(5)):.2f} ms (median of 5 fresh interpreters)")
import cudadiag

def measure(label):
    start = time.perf_counter()
    result = cudadiag.quick_check()
    first = (time.perf_counter() - start) * 1e3
    repeats = []
    for _ in range(200):
        start = time.perf_counter()
        cudadiag.quick_check()
        repeats.append((time.perf_counter() - start) * 1e3)
    print(f"{label}: first {first:.2f} ms, repeated median {statistics.median(repeats):.3f} ms "
          f"(min {min(repeats):.3f}, max {max(repeats):.3f}); verdict {result.verdict}, "
          f"{len(result.findings)} findings: {[f.id for f in result.findings]}")

measure("quick_check() before torch")
try:
    import torch
    torch.zeros(1).cuda()
    measure(f"quick_check() after import torch {torch.__version__} and a CUDA tensor")
except Exception as error:  # reported, not fatal: the timing above stands
    print(f"torch: {error!r}")
print(f"cudadiag {cudadiag.__version__}, library {cudadiag.library_version()}, Python {sys.version.split()[0]}")
EOF
cat "$out/quick_check.txt" "$out/fields.txt" | tail -n 30
