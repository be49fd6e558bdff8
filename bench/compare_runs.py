#!/usr/bin/env python3
"""Two (or more) commands timed side by side, interleaved, in fresh processes:

    python3 bench/compare_runs.py 150 build-base/cli/cudadiag --json --no-load ';;' build/cli/cudadiag --json --no-load

Runs each command once to warm the page cache, then RUNS rounds; each round runs every command once,
alternating the order from round to round. Prints each command's median wall time, its 10th
percentile, its median CPU time (user + system, from wait4) and its median page faults (minor, the
child's own), and for every command after the first the median and mean of its paired differences
against the first (the two runs of one round), in wall and in CPU time: a shared machine's speed
drifts by more than a change makes, and the paired difference cancels the drift that a comparison of
two medians keeps.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import NamedTuple


class Sample(NamedTuple):
    wall_ms: float
    cpu_ms: float
    faults: int


# stdin, stdout and stderr of every run: /dev/null.
_NULL_STREAMS = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]


def timed(command: list[str]) -> Sample:
    # posix_spawn (glibc's shares the parent's memory until the exec): the child's CPU time and page
    # faults are the command's own, without those of a forked copy of this interpreter.
    start = time.perf_counter()
    pid = os.posix_spawnp(command[0], command, os.environ, file_actions=_NULL_STREAMS)
    _, _, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1000.0
    return Sample(wall, (usage.ru_utime + usage.ru_stime) * 1000.0, usage.ru_minflt)


def main() -> None:
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(__doc__)
    rounds = int(sys.argv[1])
    commands = [part.split() for part in " ".join(sys.argv[2:]).split(";;")]
    samples: list[list[Sample]] = [[] for _ in commands]
    for command in commands:
        timed(command)
    for round_index in range(rounds):
        order = range(len(commands)) if round_index % 2 == 0 else reversed(range(len(commands)))
        for i in order:
            samples[i].append(timed(commands[i]))
    for command, runs in zip(commands, samples):
        walls = sorted(run.wall_ms for run in runs)
        print(f"{statistics.median(walls):8.2f} ms  p10 {walls[len(walls) // 10]:7.2f}  "
              f"cpu {statistics.median(run.cpu_ms for run in runs):7.2f} ms  "
              f"faults {statistics.median(run.faults for run in runs):6.0f}  {' '.join(command)}")
    for i in range(1, len(commands)):
        wall = [b.wall_ms - a.wall_ms for a, b in zip(samples[0], samples[i])]
        cpu = [b.cpu_ms - a.cpu_ms for a, b in zip(samples[0], samples[i])]
        print(f"command {i + 1} - command 1, paired: wall median {statistics.median(wall):+.2f} ms, "
              f"mean {statistics.mean(wall):+.2f} ms; cpu median {statistics.median(cpu):+.2f} ms, "
              f"mean {statistics.mean(cpu):+.2f} ms")


if __name__ == "__main__":
    main()
