#!/usr/bin/env python3
"""Summarizes bench_timeline's output: for each call, the stages' spans (start and end, in ms from
the call's start), and for the two parallel stages (resolve: the components; linkage: the closures)
how many threads worked, how busy each was, and the longest tasks. Then the medians over the calls.

    bench_timeline 50 9 > timeline.txt && bench/timeline_summary.py timeline.txt
"""
import statistics
import sys
from collections import defaultdict

STAGES = ["report", "quick_check", "inspect_process", "run", "prepare", "python_environments", "ld_so_cache",
          "ld_so_conf", "resolve", "finish", "linkage", "findings", "output"]
TASKS = {"resolve": "component", "linkage": "closures"}


def read_calls(path):
    calls, spans = [], None
    for line in open(path):
        if line.startswith("## call"):
            spans = []
            calls.append(spans)
        elif line.startswith("#") or spans is None or not line.strip():
            continue
        else:
            thread, start, end, what, detail = line.split(maxsplit=4)
            spans.append((int(thread), float(start) / 1e3, float(end) / 1e3, what, detail.strip()))
    return calls


def stage_of(spans, name):
    found = [s for s in spans if s[3] == name]
    return (min(s[1] for s in found), max(s[2] for s in found)) if found else None


def nested(spans, thread, start, end):
    """The time of each kind of span inside [start, end] on `thread` (outermost ones only)."""
    inside = sorted((s for s in spans if s[0] == thread and s[1] >= start and s[2] <= end and (s[1], s[2]) != (start, end)),
                    key=lambda s: (s[1], -s[2]))
    totals = defaultdict(float)
    covered_until = start
    for _, s_start, s_end, what, _ in inside:
        if s_start >= covered_until:
            totals[what] += s_end - s_start
            covered_until = s_end
    return totals


def summarize(spans, figures, show):
    stages = {name: stage_of(spans, name) for name in STAGES}
    origin = stages["quick_check"][0] if stages["quick_check"] else min(s[1] for s in spans)
    for name, span in stages.items():
        if span:
            figures[name + " (ms)"].append(span[1] - span[0])
            if show:
                print(f"  {name:20s} {span[0] - origin:7.3f} .. {span[1] - origin:7.3f}  ({span[1] - span[0]:.3f} ms)")
    for stage, task in TASKS.items():
        window = stages[stage]
        if not window:
            continue
        tasks = [s for s in spans if s[3] == task and s[1] >= window[0] - 1e-6 and s[2] <= window[1] + 1e-6]
        per_thread = defaultdict(float)
        last_end = defaultdict(float)
        for thread, start, end, _, _ in tasks:
            per_thread[thread] += end - start
            last_end[thread] = max(last_end[thread], end)
        length = window[1] - window[0]
        work = sum(per_thread.values())
        first_start = min((s[1] for s in tasks), default=window[0])
        figures[f"{stage}: work (ms)"].append(work)
        figures[f"{stage}: threads"].append(len(per_thread))
        figures[f"{stage}: first task starts after (ms)"].append(first_start - window[0])
        figures[f"{stage}: busy fraction"].append(work / (length * max(1, len(per_thread))) if length else 0)
        if show:
            ends = sorted(e - window[0] for e in last_end.values())
            print(f"  {stage}: {len(tasks)} tasks on {len(per_thread)} threads, work {work:.3f} ms in {length:.3f} ms; "
                  f"first task after {first_start - window[0]:.3f} ms; threads' last task ends at "
                  + " ".join(f"{e:.2f}" for e in ends))
            for thread, start, end, what, detail in sorted(tasks, key=lambda s: s[1] - s[2])[:6]:
                inside = nested(spans, thread, start, end)
                print(f"      {end - start:6.3f} ms  {detail} (thread {thread}, {start - window[0]:.2f} .. {end - window[0]:.2f})"
                      + "".join(f"; {name} {length:.3f}" for name, length in sorted(inside.items(), key=lambda i: -i[1])))
        inside_all = defaultdict(float)
        for thread, start, end, _, _ in tasks:
            for name, length in nested(spans, thread, start, end).items():
                inside_all[name] += length
        for name, length in inside_all.items():
            figures[f"{stage}: inside the tasks, {name} (ms)"].append(length)
    others = defaultdict(list)
    for thread, start, end, what, detail in spans:
        if what not in STAGES and what not in TASKS.values():
            others[what].append(end - start)
    for what, lengths in others.items():
        figures[f"{what}: total (ms)"].append(sum(lengths))
        figures[f"{what}: count"].append(len(lengths))
    if show:
        for what, lengths in sorted(others.items(), key=lambda item: -sum(item[1])):
            print(f"  {what:24s} {len(lengths):5d} spans, {sum(lengths):7.3f} ms in all, longest {max(lengths):.3f} ms")


def main():
    calls = read_calls(sys.argv[1])
    figures = defaultdict(list)
    for number, spans in enumerate(calls, 1):
        print(f"call {number}:")
        summarize(spans, figures, show=number <= 2)
    print(f"medians over {len(calls)} calls:")
    for name, values in figures.items():
        print(f"  {name:48s} {statistics.median(values):8.3f}")


if __name__ == "__main__":
    main()
