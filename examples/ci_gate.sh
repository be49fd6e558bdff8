#!/usr/bin/env bash
# A CI step that gates a job on the CUDA stack: runs `cudadiag --json`, keeps the report as an
# artifact, and fails the step on an error-level finding (add --fail-on warning to be stricter).
#
#   ci_gate.sh [cudadiag options...]      e.g. ci_gate.sh --fail-on warning
#
# Environment: CUDADIAG (the executable; default: cudadiag on PATH), CUDADIAG_REPORT (where the JSON
# goes; default cudadiag-report.json). Exit codes are cudadiag's: 0 pass, 1 findings, 2 usage error,
# 3 internal error.
set -uo pipefail
cudadiag=${CUDADIAG:-cudadiag}
report=${CUDADIAG_REPORT:-cudadiag-report.json}

"$cudadiag" --json "$@" > "$report"
code=$?
case $code in
0) echo "cudadiag: no finding at the failing level (report: $report)" ;;
1)
  echo "cudadiag: the CUDA stack has problems (report: $report):"
  python3 - "$report" <<'PY' || echo "  (see $report)"
import json, sys
for finding in json.load(open(sys.argv[1]))["findings"]:
    if finding["severity"] != "info":
        print(f"  {finding['severity']}: [{finding['id']}] {finding['message']}\n    remedy: {finding['remedy']}")
PY
  ;;
*) echo "cudadiag could not produce a report (exit $code: 2 usage error, 3 internal error)" ;;
esac
exit "$code"
