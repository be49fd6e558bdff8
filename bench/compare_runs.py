#!/usr/bin/env python3
"""Two (or more) commands timed side by side, interleaved, in fresh processes:

    python3 bench/compare_runs.py 150 build-base/cli/cudadiag --json --no-load ';;' build/cli/cudadiag --json --no-load

Runs each command once to warm the page cache, then RUNS rounds; each round runs every command once,
alternating the order from round to round. Prints each command's median and 10th percentile, and for
every command after the first the median and mean of its paired differences against the first (the
two runs of one round): a shared machine's speed drifts by more than a change makes, and the paired
difference cancels the drift that a comparison of two medians keeps.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000.0


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    commands = [part.split() for part in " ".join(sys.argv[2:]).split(";;")]
    samples: list[list[float]] = [[] for _ in commands]
    for command in commands:
        timed(command)
    for round_index in range(rounds):
        order = range(len(commands)) if round_index % 2 == 0 else reversed(range(len(commands)))
        for i in order:
            samples[i].append(timed(commands[i]))
    for command, times in zip(commands, samples):
        print(f"{statistics.median(times):8.2f} ms  p10 {sorted(times)[len(times) // 10]:7.2f}  {' '.join(command)}")
    for i in range(1, len(commands)):
        differences = [b - a for a, b in zip(samples[0], samples[i])]
        print(f"command {i + 1} - command 1, paired: median {statistics.median(differences):+.2f} ms, "
              f"mean {statistics.mean(differences):+.2f} ms")


if __name__ == "__main__":
    main()
