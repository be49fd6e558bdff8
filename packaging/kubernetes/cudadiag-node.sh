#!/bin/sh
# The DaemonSet's loop (packaging/kubernetes/cudadiag-daemonset.yaml): every CUDADIAG_INTERVAL
# seconds (default 3600), check this node's CUDA stack; print the report as JSON on stdout (for
# `kubectl logs --prefix | cudadiag fleet -`) and write the Prometheus textfile CUDADIAG_TEXTFILE
# (atomically; cudadiag writes a temporary file and renames it). A failing check does not end the
# loop: the findings are in the report and the metrics. CUDADIAG_ARGS adds options.
set -u
interval=${CUDADIAG_INTERVAL:-3600}
textfile=${CUDADIAG_TEXTFILE:-}
while :; do
  set -- --json
  [ -n "$textfile" ] && set -- "$@" --prometheus "$textfile"
  # shellcheck disable=SC2086  # CUDADIAG_ARGS is a list of words by design
  cudadiag "$@" ${CUDADIAG_ARGS:-}
  sleep "$interval" &
  wait $!
done
