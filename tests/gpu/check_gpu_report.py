#!/usr/bin/env python3
"""GPU-host check of a full `cudadiag --json` report (ctest label `gpu`; exit 77 = skipped).

    check_gpu_report.py CUDADIAG [--expect-sm-count N] [--expect-peak-gbps G]

Runs cudadiag, then checks what only a machine with a working GPU can show: the driver loaded and
cuInit succeeded, every device has SMs, memory and a peak bandwidth derived from its memory clock
and bus width, NVML saw the same GPUs, and the healthy stack has no error-level finding. Prints a
summary line per device. Skips (77) when this machine has no NVIDIA device nodes.
"""
import argparse
import glob
import json
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cudadiag")
    parser.add_argument("--expect-sm-count", type=int)
    parser.add_argument("--expect-peak-gbps", type=float)
    parser.add_argument("--report-out")
    args = parser.parse_args()
    if not glob.glob("/dev/nvidia[0-9]*"):
        print("SKIP: no NVIDIA GPU device nodes on this machine")
        return 77
    done = subprocess.run([args.cudadiag, "--json"], capture_output=True, timeout=120)
    report = json.loads(done.stdout)
    if args.report_out:
        with open(args.report_out, "w") as out:
            json.dump(report, out, indent=2)
    problems = []
    steps = {step["component"]: step for step in report["verification"]["steps"]}
    driver = steps.get("cuda")
    if driver is None or driver["status"] != "ok" or (driver["result"] or {}).get("init", {}).get("code") != 0:
        problems.append(f"driver step: {driver}")
    if not report["devices"]:
        problems.append("no devices listed")
    for device in report["devices"]:
        print(f"GPU {device.get('ordinal')}: {device.get('name')} cc {device.get('compute_capability')} "
              f"{device.get('sm_count')} SMs, peak {device.get('peak_bandwidth_gbps')} GB/s, "
              f"NVML: {'yes' if 'nvml' in device else 'no'}")
        if not device.get("sm_count") or not device.get("peak_bandwidth_gbps"):
            problems.append(f"device without SM count or peak bandwidth: {device}")
        if "nvml" not in device:
            problems.append(f"NVML did not report device {device.get('uuid')}")
        if args.expect_sm_count and device.get("sm_count") != args.expect_sm_count:
            problems.append(f"sm_count {device.get('sm_count')} != {args.expect_sm_count}")
        if args.expect_peak_gbps and abs(device.get("peak_bandwidth_gbps", 0) - args.expect_peak_gbps) > 0.01 * args.expect_peak_gbps:
            problems.append(f"peak {device.get('peak_bandwidth_gbps')} GB/s != {args.expect_peak_gbps}")
    errors = [f"{f['id']}: {f['message']}" for f in report["findings"] if f["severity"] == "error"]
    problems += [f"error finding on the GPU host: {e}" for e in errors]
    for step in report["verification"]["steps"]:
        print(f"  {step['component']:10} {step['status']:8} {step['elapsed_ms']:.0f} ms")
    print(f"findings: {[f['id'] + '/' + f['severity'] for f in report['findings']]}")
    for problem in problems:
        print("PROBLEM:", problem)
    print("gpu report check:", "FAILED" if problems else "passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
