#!/usr/bin/env python3
"""GPU-host check of `cudadiag selftest` (ctest label `gpu`; exit 77 = skipped without a GPU).

    check_gpu_selftest.py CUDADIAG [--level quick|full] [--json-out FILE]

Every test must pass on every device (ipc and green_ctx included; memory and checkpoint skip at the quick level),
with the evidence that makes a pass meaningful: jit ran all three routes on the device; the %smid
probe reached every SM; the green-context partitions were disjoint and each stayed within its SMs;
both IPC paths exchanged data; pcie read the link from NVML and found it at its max gen and width;
compute reached at least 80% of SMs x max clock x FMA/clock; memory (full) found no wrong word and no
new NVML memory error; libs called every math library it found (each listed with its file, version and
time; a library not installed is a skip, printed) and reported the cuBLASLt bf16 GEMM and cuBLAS SGEMM
TFLOP/s. Benchmark figures are printed, not asserted (the ratios against CUB called directly come from
bench/bench_selftest.py); only a floor of a quarter of the device's peak guards against a figure
computed from the wrong units.
"""
import argparse
import glob
import json
import subprocess
import sys


def key_level_skip(test, level):
    """The memory and checkpoint tests run at the full level only (checkpoint also when named); at
    quick their skip is expected."""
    return (test["key"] in ("memory", "checkpoint") and level == "quick" and test["status"] == "skip"
            and "full" in (test["reason"] or ""))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("cudadiag")
    parser.add_argument("--level", default="quick", choices=["quick", "full"])
    parser.add_argument("--json-out")
    args = parser.parse_args()
    if not glob.glob("/dev/nvidia[0-9]*"):
        print("SKIP: no NVIDIA GPU device nodes on this machine")
        return 77
    done = subprocess.run([args.cudadiag, "selftest", "--level", args.level, "--json"], capture_output=True, timeout=600)
    doc = json.loads(done.stdout)
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump(doc, out, indent=2)
    selftest = doc["selftest"]
    problems = []
    peaks = {d.get("ordinal"): d.get("peak_bandwidth_gbps") or 0 for d in doc["devices"]}
    devices = {t["device"] for t in selftest["tests"]}
    if None in devices or len(devices) != len([d for d in doc["devices"] if d.get("ordinal") is not None]):
        problems.append(f"tests ran on devices {devices}, the report lists {list(peaks)}")
    for test in selftest["tests"]:
        figures = ", ".join(f'{m["name"]}={m["value"]:.4g} {m["unit"]}' for m in test["metrics"])
        print(f'GPU {test["device"]} {test["key"]:10} {test["status"]:5} {test["wall_ms"]:8.0f} ms  {figures}')
        if key_level_skip(test, args.level):
            continue
        if test["status"] != "pass" or test["reason"]:
            problems.append(f'{test["key"]} on GPU {test["device"]}: {test["status"]}: {test["reason"]}')
            continue
        details, key = test["details"], test["key"]
        metrics = {m["name"]: m["value"] for m in test["metrics"]}
        peak = peaks.get(test["device"], 0)
        if key == "jit" and {r: v["status"] for r, v in details["routes"].items()} != {"ptx": "pass", "cubin": "pass", "lto": "pass"}:
            problems.append(f"jit routes: {details['routes']}")
        if key == "ptx" and details["smid_probe"]["sms_touched"] != details["smid_probe"]["sm_count"]:
            problems.append(f"smid probe: {details['smid_probe']}")
        for name in ("copy_gbps", "f32_gbps", "i32_gbps"):
            if name in metrics and metrics[name] < 0.25 * peak:
                problems.append(f"{key}.{name} = {metrics[name]:.0f} GB/s, under a quarter of the {peak} GB/s peak")
        if key == "green_ctx":
            parts = details["partitions"]
            if details["overlap_sm_ids"] or any(p["sms_touched"] > p["granted_sms"] or p["sms_touched"] == 0 for p in parts):
                problems.append(f"green contexts not confined: {parts}, overlap {details['overlap_sm_ids']}")
        if key == "ipc" and (details["legacy"]["status"], details["vmm"]["status"]) != ("pass", "pass"):
            problems.append(f"ipc: legacy {details['legacy']}, vmm {details['vmm']}")
        if key == "pcie":
            pcie = details["pcie"]
            print(f'    pcie: link {pcie.get("link")}, expected {pcie.get("expected_current_gbps")}, problem {pcie.get("problem")}')
            if pcie.get("link") is None or pcie.get("problem"):
                problems.append(f"pcie: {pcie.get('link_unknown') or pcie.get('problem')}")
        if key == "compute" and metrics.get("fp32_fraction_of_peak", 0) < 0.8:
            problems.append(f"compute: {metrics.get('fp32_tflops')} TFLOP/s is under 80% of {metrics.get('fp32_expected_tflops')}")
        if key == "memory" and (details["memory"]["wrong_words"] or details["memory"]["new_errors"]):
            problems.append(f"memory: {details['memory']['wrong_words']} wrong words, new errors {details['memory']['new_errors']}")
        if key == "libs":
            for lib in details["libraries"]:
                print(f'    {lib["library"]:9} {lib["status"]:4} {lib.get("ms", 0):7.0f} ms  version {lib.get("version")}  '
                      f'{lib.get("path")}  {lib.get("reason") or lib.get("checked") or ""}')
            ran = {lib["library"] for lib in details["libraries"] if lib["status"] == "ok"}
            if "cublasLt" in ran and "bf16_gemm_tflops" not in metrics:
                problems.append("libs: cuBLASLt ran but reported no bf16_gemm_tflops")
            if "cublas" in ran and "sgemm_tflops" not in metrics:
                problems.append("libs: cuBLAS ran but reported no sgemm_tflops")
            for name, expected in (("bf16_gemm_tflops", "bf16_peak_tflops"), ("sgemm_tflops", "sgemm_peak_tflops")):
                if name in metrics and expected in metrics and metrics[name] < 0.25 * metrics[expected]:
                    problems.append(f"libs.{name} = {metrics[name]:.0f} TFLOP/s, under a quarter of {metrics[expected]:.0f}")
        if "clocks" in details:
            print(f'    clocks: {json.dumps(details["clocks"])}')
    print(f'selftest {selftest["level"]}: {selftest["status"]}, score {selftest["score"]["value"]}, {selftest["wall_ms"]:.0f} ms')
    for problem in problems:
        print("PROBLEM:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
