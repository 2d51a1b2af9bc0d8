#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-insn.py: hold the accel-insn plugin's counts to insn-selftest.

Usage: check-insn.py VMLOG PLUGINLOG

VMLOG is what the VM printed: insn-selftest's lines and the two lines of
/proc/kallsyms from __x64_sys_getppid on (grep -A1); PLUGINLOG is the
plugin's output with profile=on. Prints TAP, one result per property:

- every window closed once a round, on the vCPU it opened on;
- an empty window counts nothing;
- a user loop counts the same every round, and twice the iterations
  count twice the instructions (a few for the loop's set-up aside);
- a getppid() call costs the same kernel instructions per call in the
  windows of 1000 and of 2000 calls (medians, to leave out a timer
  interrupt), at least 50, and the same user instructions;
- the profile gives __x64_sys_getppid instructions in every call, and
  sums to what the window lines counted on their vCPU;
- the atomic instructions: exactly the 3000 of the atomics window (its
  look-alikes not among them), in its window lines and its profile, none
  in the user loops' own code (a timer interrupt's kernel atomics may land
  in them) or in the empty window.

Exits 1 if a result is not ok, 2 on usage.
"""
import bisect
import statistics
import sys

results = []


def check(ok, what):
    results.append((bool(ok), what))


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    names, rounds, syms = {}, None, []
    with open(argv[0], errors="replace") as f:
        for line in f:
            w = line.split()
            if w[:3] == ["#", "insn:", "window"] and len(w) == 6:
                names[int(w[3])] = (w[4], int(w[5]))
            elif w[:2] == ["#", "insn-selftest:"]:
                rounds = int(w[2])
            elif len(w) == 3 and len(w[0]) == 16 and w[1] in "tTwW":
                syms.append((int(w[0], 16), w[2]))
    wins, prof = {}, {}
    with open(argv[1], errors="replace") as f:
        for line in f:
            w = line.split()
            if w[:2] == ["accel-insn:", "window"] and len(w) == 19:
                v = [int(x) for x in w[2::2]]
                wins.setdefault(v[0], []).append(v[1:])
            elif w[:2] == ["accel-insn:", "profile"] and len(w) == 6:
                prof.setdefault(int(w[2]), []).append((int(w[3], 16), int(w[4]), int(w[5])))
    print("TAP version 13")
    check(rounds and sorted(names) == [1, 2, 3, 4, 5, 6],
          f"insn-selftest ran and named its six windows (rounds {rounds}, ids {sorted(names)})")
    if not results[-1][0]:
        return finish()
    for wid in names:
        rows = wins.get(wid, [])
        check(len(rows) == rounds and all(r[0] == r[1] for r in rows),
              f"window {names[wid][0]}: {len(rows)} of {rounds} closed, each on its own vCPU")

    def own(wid, k):  # k: 2 kernel, 3 user; 6, 7: of those, atomic
        return [r[k] for r in wins.get(wid, [])] or [0]

    check(own(6, 7) == [3000] * rounds,
          f"the atomics window counts its 3000 atomic instructions, not their "
          f"look-alikes (user: {own(6, 7)})")
    # User atomics only: a timer interrupt during a loop runs kernel ones.
    check(all(own(w, 7) == [0] * rounds for w in (3, 4, 5)) and own(3, 6) == [0] * rounds,
          f"the user loops count no atomic instruction of their own, the empty window none "
          f"(user {[own(w, 7) for w in (3, 4, 5)]}, kernel {[own(w, 6) for w in (3, 4, 5)]})")

    check(own(3, 2) == [0] * rounds and own(3, 3) == [0] * rounds,
          f"the empty window counts nothing (kernel {own(3, 2)}, user {own(3, 3)})")
    u4, u5 = own(4, 3), own(5, 3)
    check(len(set(u4)) == 1 and len(set(u5)) == 1,
          f"a user loop counts the same every round ({sorted(set(u4))}, {sorted(set(u5))})")
    check(abs(u5[0] - 2 * u4[0]) <= 16 and u4[0] >= 100000,
          f"twice the iterations count twice the instructions ({u4[0]}, {u5[0]})")
    k1 = statistics.median(own(1, 2)) / 1000
    k2 = statistics.median(own(2, 2)) / 2000
    check(k1 >= 50 and abs(k1 - k2) <= 0.02 * k1,
          f"a getppid() call costs the same kernel instructions in both windows ({k1:.1f}, {k2:.1f})")
    s1, s2 = statistics.median(own(1, 3)), statistics.median(own(2, 3))
    check(abs(s2 - 2 * s1) <= 16 and s1 >= 1000,
          f"and the same user instructions ({s1:.0f} for 1000 calls, {s2:.0f} for 2000)")
    at = [i for i, (_, s) in enumerate(syms) if s == "__x64_sys_getppid"]
    if not at or at[0] + 1 >= len(syms) or 1 not in prof:
        check(False, "the profile of the 1000-call window and the kallsyms lines of "
              "__x64_sys_getppid and the symbol after it are in the logs")
        return finish()
    lo, hi = syms[at[0]][0], syms[at[0] + 1][0]
    inside = sum(n for a, n, _ in prof[1] if lo <= a < hi)
    check(inside >= 1000 * rounds,
          f"the profile gives __x64_sys_getppid instructions in every call ({inside} "
          f"in {1000 * rounds} calls)")
    total = sum(n for _, n, _ in prof[1])
    counted = sum(r[2] + r[3] for r in wins[1])
    check(abs(total - counted) <= 0.01 * counted,
          f"the profile sums to what the window lines counted ({total} against {counted})")
    locked = sum(k for _, _, k in prof.get(6, []))
    check(locked == 3000 * rounds,
          f"the profile gives the atomics window its {3000 * rounds} atomic instructions "
          f"({locked})")
    return finish()


def finish():
    for i, (ok, what) in enumerate(results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} {what}")
    print(f"1..{len(results)}")
    return 0 if all(ok for ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
