#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ab-summary.py: the medians of an A/B run of scripts/ab-vm.sh.

Usage: ab-summary.py RUNS

RUNS holds "# ab-run base" or "# ab-run new" before each run's
"METRIC <name> <value>" lines. Prints, per metric in first-seen order,

  # ab: <name>: base <median> new <median> new/base <ratio> (<n> pairs)

Exits 1, saying why, when either label has no run, when a run lacks a
metric another run has, when a METRIC comes before any run or its value
is not a number; 2 on usage.
"""
import statistics
import sys


def fail(msg):
    print(f"ab-summary.py: {msg}", file=sys.stderr)
    return 1


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    runs = {"base": [], "new": []}
    order = []
    label = None
    with open(sys.argv[1]) as f:
        for n, line in enumerate(f, 1):
            words = line.split()
            if words[:2] == ["#", "ab-run"]:
                if len(words) != 3 or words[2] not in runs:
                    return fail(f"line {n}: '{line.strip()}' names no run (base or new)")
                label = words[2]
                runs[label].append({})
            elif words[:1] == ["METRIC"]:
                if label is None:
                    return fail(f"line {n}: a METRIC before any '# ab-run' line")
                if len(words) != 3:
                    return fail(f"line {n}: '{line.strip()}' is not 'METRIC <name> <value>'")
                try:
                    runs[label][-1][words[1]] = float(words[2])
                except ValueError:
                    return fail(f"line {n}: '{words[2]}' is not a number")
                if words[1] not in order:
                    order.append(words[1])
    for l in runs:
        if not runs[l]:
            return fail(f"no run of {l}")
    for l in runs:
        for i, r in enumerate(runs[l], 1):
            missing = [m for m in order if m not in r]
            if missing:
                return fail(f"run {i} of {l} lacks {', '.join(missing)}")
    pairs = min(len(runs["base"]), len(runs["new"]))
    for m in order:
        b = statistics.median(r[m] for r in runs["base"])
        v = statistics.median(r[m] for r in runs["new"])
        ratio = f"{v / b:.3f}" if b else "inf" if v else "1.000"
        print(f"# ab: {m}: base {b:.4f} new {v:.4f} new/base {ratio} ({pairs} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
