#!/usr/bin/env bash
# Run on the GPU host (through the device tool): builds the cudadiag executable and captures the
# report of the torch venv (/opt/torch/.venv, activated as `source bin/activate` would) at 80
# columns through a pseudo-terminal, as a user sees it, plus its --full and --json forms. Writes
# ${OUT:-out}/torch-venv-report-80.txt (the file docs/examples/ keeps), -full-80.txt, .json and
# check.txt: the line count (the target: at most 60) and the lines of the two warnings (the target:
# both in the first 20). Needs no network. VENV=DIR names another venv.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
venv=${VENV:-/opt/torch/.venv}
mkdir -p "$out"
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR=ON &&
    cmake --build build-gpu --parallel "$(nproc)" --target cudadiag
} >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
bin=$PWD/build-gpu/cli/cudadiag
# The venv activated: VIRTUAL_ENV and its bin first on PATH (what bin/activate does).
export VIRTUAL_ENV=$venv PATH=$venv/bin:$PATH
unset PYTHONHOME
# stdout on a pty of 80 x 50: the width the report reads from the terminal itself; no colour codes.
capture() { # FILE ARGS...: the text of `cudadiag ARGS` on an 80-column pty
  local file=$1
  shift
  python3 - "$file" "$bin" "$@" <<'PY'
import fcntl, os, pty, struct, subprocess, sys, termios
file, command = sys.argv[1], sys.argv[2:]
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))
env = dict(os.environ, TERM="xterm-256color", NO_COLOR="1")
env.pop("COLUMNS", None)
process = subprocess.Popen(command, stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
os.close(slave)
data = bytearray()
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    data += chunk
code = process.wait()
open(file, "wb").write(bytes(data).replace(b"\r\n", b"\n"))
print(f"{os.path.basename(file)}: exit {code}")
PY
}
capture "$out/torch-venv-report-80.txt"
capture "$out/torch-venv-report-full-80.txt" --full
"$bin" --json >"$out/torch-venv-report.json"
{
  echo "lines at 80 columns: $(wc -l <"$out/torch-venv-report-80.txt") (target: at most 60)"
  echo "lines of the full report at 80 columns: $(wc -l <"$out/torch-venv-report-full-80.txt")"
  echo "warning lines (line number: text; target: cudnn and nccl within the first 20):"
  grep -n "WARNING\|ERROR" "$out/torch-venv-report-80.txt"
  echo "widest line: $(python3 -c 'import sys; print(max(map(len, open(sys.argv[1], encoding="utf-8").read().splitlines())))' "$out/torch-venv-report-80.txt") characters"
} | tee "$out/check.txt"
cat "$out/torch-venv-report-80.txt"
