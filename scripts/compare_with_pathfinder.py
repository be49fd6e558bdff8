#!/usr/bin/env python3
"""Compares cudadiag's selections with cuda-pathfinder's answers on the same machine.

    compare_with_pathfinder.py REPORT.json ORACLE.json

REPORT is `cudadiag --json`; ORACLE is tests/real_layouts/pathfinder_oracle.py's output, run with
the same environment and the interpreter cudadiag treats as primary. For every component both
know, the selected realpath must equal cuda-pathfinder's (both "not found" counts as agreement).
Prints one line per component and exits 1 on any disagreement.
"""
import json
import os
import sys


def main() -> int:
    report = json.load(open(sys.argv[1]))
    oracle = json.load(open(sys.argv[2]))
    disagreements = 0
    compared = 0
    for component in report["components"]:
        key = f'{component["kind"]}/{component["name"]}'
        answer = oracle.get(key)
        if answer is None or answer.get("error") == "unsupported":
            continue
        compared += 1
        ours = component["selected"]
        ours_path = os.path.realpath(ours["realpath"] or ours["path"]) if ours else None
        theirs = os.path.realpath(answer["abs_path"]) if answer.get("abs_path") else None
        agree = ours_path == theirs
        disagreements += 0 if agree else 1
        print(f'{"ok  " if agree else "DIFF"} {key:22} cudadiag={ours_path} '
              f'({ours["found_via"] if ours else "-"}) pathfinder={theirs} ({answer.get("found_via")})')
    print(f"{compared - disagreements}/{compared} components agree")
    return 1 if disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
