#!/usr/bin/env python3
"""Summarizes the load check of a cudadiag report (`cudadiag --json`, loading allowed): one line per
closure (component, answers, objects, whether it loads, predicted vs real, how long), then a total.

Usage: summarize_load_check.py REPORT.json
Exit status 1 when the load check did not run or any closure's prediction disagrees with its link map.
"""
import json
import sys


def main():
    report = json.load(open(sys.argv[1]))
    linkage = report["linkage"]
    check_run = linkage["load_check"]
    if not check_run["ran"]:
        print("load check did not run:", check_run["skipped_reason"])
        return 1
    total = agree = 0
    for component in linkage["components"]:
        for closure in component["closures"]:
            check = closure["check"]
            if check is None:
                continue
            total += 1
            agree += bool(check["agrees"])
            status = "OK " if check["agrees"] else "BAD"
            print("%s %-12s %-20s %3d objects, predicted %s, real %s, %6.0f ms%s%s" % (
                status, component["name"], "+".join(closure["answers"]), len(closure["objects"]),
                "loads" if closure["loads"] else "fails", check["status"] if check["status"] != "ok" else
                ("loads" if check["loads"] else "fails"), check["elapsed_ms"],
                "" if not check["also_loaded"] else "; also loaded: " + ", ".join(check["also_loaded"]),
                "" if check["agrees"] else "; " + "; ".join(check["differences"] or [check["detail"]])))
    print("load check: %d closures loaded in %.0f ms, %d as predicted, %d not (closure stage %.1f ms, %d files)" % (
        total, check_run["elapsed_ms"], agree, total - agree, linkage["elapsed_ms"], linkage["files_read"]))
    return 0 if total == agree else 1


if __name__ == "__main__":
    sys.exit(main())
