#!/usr/bin/env bash
# Runs pytest with a test venv's interpreter, for ctest.
# Usage: tests/cli/run_pytest.sh VENV_PYTHON PYTEST_ARGS...
# Exits 77 (ctest's skip, see SKIP_RETURN_CODE) when the venv does not exist, which is what
# happens when scripts/make_test_venvs.sh skipped because PyPI was unreachable: ctest still runs
# tests whose fixture setup was skipped.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 VENV_PYTHON PYTEST_ARGS..." >&2
  exit 2
fi
python=$1
shift
if [[ ! -x "$python" ]]; then
  echo "SKIP: $python does not exist (scripts/make_test_venvs.sh was skipped or not run)"
  exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
exec "$python" -m pytest -p no:cacheprovider "$@"
