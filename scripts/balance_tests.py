#!/usr/bin/env python3
"""Splits GPU tests into shards of about equal time, for scripts/gpu-check.sh's GPU-test step.

gtest's own sharding (GTEST_TOTAL_SHARDS) deals the tests out round robin, blind to how long
each takes, so a few of the 16 shards draw two or three of the 4-minute validation sweeps and
set the step's time: on an H100 (2026-12-06, 9fed436) the shards' test times ranged from 188 s
to 412 s, where an even split of the same 5200 s is 325 s.

  balance_tests.py LIST TIMES N   LIST: the test binary's --gtest_list_tests output (with the
                                  step's filter); TIMES: a times file (below); N: shards.
                                  Prints one --gtest_filter value a line, a line a shard
                                  (fewer when there are fewer tests): the longest test first,
                                  each into the shard with the least time so far.
  balance_tests.py --times LOG... the times of the passed tests in gtest logs ("[       OK ]
                                  NAME (N ms)"), as a times file: "NAME SECONDS" a line.

A test the times file does not hold counts as the median of those it holds (60 s if none).
"""
import re
import statistics
import sys

OK_LINE = re.compile(r"^\[       OK \] (\S+) \((\d+) ms\)$")


def listed_tests(text):
    """Full names from --gtest_list_tests output: "Suite." lines, then "  Name  # comment" lines."""
    names, suite = [], None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split()[0]
        elif suite is not None:
            names.append(suite + line.split()[0])
    return names


def read_times(path):
    times = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            try:
                if len(parts) != 2:
                    raise ValueError
                times[parts[0]] = float(parts[1])
            except ValueError:
                sys.exit(f"balance_tests.py: {path}:{n}: want 'TEST_NAME SECONDS', got '{line}'")
    return times


def balance(names, times, shards):
    """Longest first into the least loaded shard; ties keep the listed order."""
    known = [times[n] for n in names if n in times]
    default = statistics.median(known) if known else 60.0
    weight = {n: times.get(n, default) for n in names}
    order = sorted(range(len(names)), key=lambda i: (-weight[names[i]], i))
    bins = [[] for _ in range(min(shards, len(names)))]
    load = [0.0] * len(bins)
    for i in order:
        k = min(range(len(bins)), key=lambda b: (load[b], b))
        bins[k].append(names[i])
        load[k] += weight[names[i]]
    return bins


def main(argv):
    if len(argv) >= 2 and argv[1] == "--times":
        for path in argv[2:]:
            with open(path) as f:
                for line in f:
                    m = OK_LINE.match(line.rstrip("\n"))
                    if m:
                        print(f"{m.group(1)} {int(m.group(2)) / 1000:.1f}")
        return 0
    if len(argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    try:
        shards = int(argv[3])
        if shards < 1:
            raise ValueError
    except ValueError:
        sys.exit(f"balance_tests.py: N: want a whole number from 1, got '{argv[3]}'")
    with open(argv[1]) as f:
        names = listed_tests(f.read())
    if not names:
        sys.exit(f"balance_tests.py: {argv[1]}: no tests listed")
    for b in balance(names, read_times(argv[2]), shards):
        print(":".join(b))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
