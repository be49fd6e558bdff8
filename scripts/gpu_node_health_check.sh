#!/usr/bin/env bash
# Run on the GPU host (through the device tool): the node-health checks of issue 50 on a real GPU.
# Builds the cudadiag executable, then: the host's own kernel log (/dev/kmsg: its status, events,
# gpu.xid findings, each event's GPU matched to NVML's bus id); --expect-gpus with the host's GPU
# count (nothing missing) and one more (gpu.missing names the PCI bus, hardware_inspection); a
# debugging variable in the fleet context (env.behaviour_variable, warning); what reading /dev/kmsg
# costs (11 runs with it, 11 with CUDADIAG_KMSG=/dev/null, interleaved). Results in ${OUT:-out}/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-out}
mkdir -p "$out"
{
  cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCUDADIAG_WERROR=ON &&
    cmake --build build-gpu --parallel "$(nproc)" --target cudadiag
} >"$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
bin=build-gpu/cli/cudadiag
summary() { # FILE: kernel_log, the node-health findings and their repair classes
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
log = doc["kernel_log"]
print("kernel_log:", log["source"], log["status"], log["reason"], "bytes", log["bytes"], "events", log["event_count"])
for event in log["events"][-5:]:
    print("  event:", event["kind"], event["code"], event["pci"], event["seconds"], event["text"][:80])
print("devices:", [(d.get("nvml") or {}).get("pci_bus_id") for d in doc["devices"]])
print("behaviour_variables:", [(v["name"], v["class"]) for v in doc["environment"]["behaviour_variables"]])
for f in doc["findings"]:
    if f["id"] in ("gpu.xid", "nvswitch.sxid", "gpu.missing", "env.behaviour_variable"):
        print(f"finding: {f['id']} {f['severity']} repair={f['repair']}: {f['message'][:200]}")
print("repairs:", sorted({f["repair"] for f in doc["findings"]}))
PY
}
"$bin" --json --no-selftest >"$out/report.json"; echo "report exit: $?"
summary "$out/report.json" | tee "$out/node-health.txt"
gpus=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$out/report.json")
for n in "$gpus" $((gpus + 1)); do
  "$bin" --json --no-selftest --expect-gpus "$n" >"$out/expect-$n.json"
  echo "--expect-gpus $n exit: $?" | tee -a "$out/node-health.txt"
  summary "$out/expect-$n.json" | grep -E "finding: gpu.missing" | tee -a "$out/node-health.txt"
done
CUDA_LAUNCH_BLOCKING=1 "$bin" --json --no-selftest --context fleet >"$out/env.json"
summary "$out/env.json" | grep -E "behaviour|finding: env" | tee -a "$out/node-health.txt"
for _ in 1 2 3 4 5 6 7 8 9 10 11; do
  /usr/bin/time -f "kmsg %e" "$bin" --json --no-selftest >/dev/null
  CUDADIAG_KMSG=/dev/null /usr/bin/time -f "null %e" "$bin" --json --no-selftest >/dev/null
done 2>"$out/timing-raw.txt"
for kind in kmsg null; do
  echo "$kind wall s (11 runs, sorted): $(grep "^$kind " "$out/timing-raw.txt" | cut -d' ' -f2 | sort -n | tr '\n' ' ')"
done | tee -a "$out/node-health.txt"
