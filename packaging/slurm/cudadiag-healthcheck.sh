#!/bin/sh
# cudadiag-healthcheck: a Slurm HealthCheckProgram (or Prolog) that checks the CUDA stack a job on
# this node will load and drains the node when cudadiag finds an error, naming the finding:
#
#   scontrol update nodename=$SLURMD_NODENAME state=drain reason="cudadiag: driver.init_failed"
#
# and resumes it once the stack is healthy again — but only a node this script drained (its reason
# starts with "cudadiag:"), never one an administrator drained. The decision is made here, not in
# cudadiag: cudadiag only reports (exit 0 healthy, 1 a problem, 2 unknown with --exit-style npd).
# When cudadiag itself cannot run (exit 2), the node is left as it is and the reason is logged.
#
# slurm.conf:   HealthCheckProgram=/usr/share/cudadiag/slurm/cudadiag-healthcheck.sh
#               HealthCheckInterval=300        (and/or Prolog=... with PrologFlags=Alloc)
# slurmd runs health checks with an empty environment (only SLURMD_NODENAME), so settings come from
# a file, CUDADIAG_HEALTHCHECK_CONFIG (default /etc/default/cudadiag-healthcheck), sourced as sh:
#   CUDADIAG=/usr/bin/cudadiag                 the binary
#   CUDADIAG_ARGS="--python /shared/venvs/train/bin/python --timeout 10"   the job environment to check
#   CUDADIAG_TEXTFILE=/var/lib/prometheus/node-exporter/cudadiag.prom     also write metrics there
#   SCONTROL=/usr/bin/scontrol
#   and any variable the job would have (LD_LIBRARY_PATH, CUDA_HOME, ...), exported.
# Exit status: 0 always when the node's state was handled (Slurm drains a node whose health check
# fails on its own, with a reason that does not say why; this script gives the reason itself).
set -u
PATH=${PATH:-/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin}
export PATH
config=${CUDADIAG_HEALTHCHECK_CONFIG:-/etc/default/cudadiag-healthcheck}
# shellcheck disable=SC1090
[ -r "$config" ] && . "$config"
cudadiag=${CUDADIAG:-cudadiag}
scontrol=${SCONTROL:-scontrol}
node=${SLURMD_NODENAME:-$(hostname -s)}

log() { logger -t cudadiag-healthcheck -- "$node: $*" 2>/dev/null || printf 'cudadiag-healthcheck: %s: %s\n' "$node" "$*" >&2; }

set -- --exit-style npd --no-selftest
[ -n "${CUDADIAG_TEXTFILE:-}" ] && set -- "$@" --prometheus "$CUDADIAG_TEXTFILE"
# shellcheck disable=SC2086  # CUDADIAG_ARGS is a list of words by design
line=$("$cudadiag" "$@" ${CUDADIAG_ARGS:-} 2>/dev/null)
status=$?
# The status line: "cudadiag PROBLEM: 1 error (driver.init_failed: cuda); 0 warnings" — the first
# finding id, without the components it names.
finding=$(printf '%s\n' "$line" | sed -n 's/^cudadiag [A-Z]*: [0-9]* errors\{0,1\} (\([^,:;)]*\).*/\1/p' | head -n 1)
current=$("$scontrol" -o show node "$node" 2>/dev/null)
ours=no
case "$current" in
  *"Reason=cudadiag:"*) ours=yes ;;
esac

case $status in
  0)
    if [ "$ours" = yes ]; then
      "$scontrol" update nodename="$node" state=resume && log "CUDA stack healthy again: resumed"
    fi
    ;;
  1)
    reason="cudadiag: ${finding:-problem}"
    case "$current" in
      *"Reason=$reason "* | *"Reason=$reason") ;; # already drained for this finding
      *)
        "$scontrol" update nodename="$node" state=drain reason="$reason" && log "drained: $line"
        ;;
    esac
    ;;
  *)
    log "cudadiag could not check the node (exit $status): $line"
    ;;
esac
exit 0
