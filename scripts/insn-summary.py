#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""insn-summary.py: instructions per operation from an accel-insn run.

Usage: insn-summary.py [--profile NAME [--user-map NM]] VMLOG PLUGINLOG

VMLOG is what the VM printed: accel-bench insn's window lines
("# insn: window ID NAME OPS") and, for --profile, the text symbols of
/proc/kallsyms. PLUGINLOG is what the accel-insn QEMU plugin
wrote ("accel-insn: window ..." at each window's end, "accel-insn:
profile ..." at exit with profile=on).

For each window it prints the median over its windows of the
instructions per operation on the window's vCPU (kernel and user), and on
every vCPU, in a '#' line, with the atomic instructions among the first
(LOCK, XCHG with memory, MFENCE) when the plugin counted them; windows
that ended on another vCPU than they began on are left out and counted. Then the METRIC lines, each a ratio of
two windows' medians (own vCPU, kernel + user), each after a '#' line
with their difference (a ratio moves with what both windows pay; the
difference is what one adds):

  insn.uring_job_vs_uring_cmd_nop   uring_job_submit / uring_cmd_nop
  insn.kernel_vs_embedded_submit    kernel_submit / embedded_submit

and, when the log has the window uring_cmd_nop_alone (one
ACCEL_URING_CMD_NOP entered alone: a trip into the module that does
nothing), the floor of a submission that enters the ring itself:

  insn.uring_floor_vs_embedded_submit
      (embedded_submit + uring_cmd_nop_alone) / embedded_submit
  insn.kernel_vs_uring_floor_submit
      kernel_submit / (embedded_submit + uring_cmd_nop_alone)

and, when the log has the windows uring_job_complete (a batch of
COMPLETEs through the ring) and ioctl_job_cycle (one job's SUBMIT and
COMPLETE, an ioctl each), the counted twins of make bench's timed
figures of how much of the NOPs' io_uring-over-ioctl advantage a job
keeps, with uring cycle = uring_job_submit + uring_job_complete:

  insn.uring_advantage_kept
      (ioctl_job_cycle / uring cycle) / (ioctl_nop / uring_cmd_nop)
  insn.uring_saving_kept
      (ioctl_job_cycle - uring cycle) / (2 * (ioctl_nop - uring_cmd_nop))

With --profile NAME, the instructions per operation of window NAME by
function, most first: kernel addresses named by the kallsyms lines, user
addresses by NM (`nm -n` of the statically linked program that ran, whose
addresses are fixed) or as [user] without it.

Exits 1, saying why, when a window a metric needs is missing or has no
counts, or a line is malformed; 2 on usage.
"""
import bisect
import statistics
import sys

METRICS = [
    ("insn.uring_job_vs_uring_cmd_nop", "uring_job_submit", "uring_cmd_nop"),
    ("insn.kernel_vs_embedded_submit", "kernel_submit", "embedded_submit"),
]
KERNEL_START = 0xFFFF800000000000
WINDOW_KEYS = ["vcpu", "start-vcpu", "own-kernel", "own-user", "all-kernel", "all-user"]
LOCKED_KEYS = ["own-locked-kernel", "own-locked-user"]


class Fail(Exception):
    pass


def windows_and_symbols(path):
    """Window id -> (name, ops); the kernel's text symbols, sorted."""
    windows, syms = {}, []
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if w[:3] == ["#", "insn:", "window"]:
                if len(w) != 6 or not w[3].isdigit() or not w[5].isdigit() or int(w[5]) < 1:
                    raise Fail(f"{path}:{n}: '{line.strip()}' is not "
                               "'# insn: window ID NAME OPS'")
                windows[int(w[3])] = (w[4], int(w[5]))
            elif len(w) >= 3 and len(w[0]) == 16 and w[1] in "tTwW" and len(w[1]) == 1:
                try:
                    addr = int(w[0], 16)
                except ValueError:
                    continue
                syms.append((addr, " ".join(w[2:4])))
    syms.sort()
    return windows, syms


def counts(path):
    """Window id -> list of (own_k, own_u, all_k, all_u, locked_k, locked_u),
    the last two None from a plugin that does not count them; migrated per
    id; profile."""
    per, moved, profile = {}, {}, {}
    with open(path, errors="replace") as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if w[:2] == ["accel-insn:", "window"]:
                keys = w[3::2]
                if (len(w), keys) not in ((15, WINDOW_KEYS), (19, WINDOW_KEYS + LOCKED_KEYS)):
                    raise Fail(f"{path}:{n}: '{line.strip()}' is not a window line")
                try:
                    v = [int(x) for x in w[2::2]]
                except ValueError:
                    raise Fail(f"{path}:{n}: '{line.strip()}' has a count that is not a number")
                wid, vcpu, start = v[0], v[1], v[2]
                if vcpu != start:
                    moved[wid] = moved.get(wid, 0) + 1
                    continue
                row = tuple(v[3:])
                if len(row) == 4:  # an older plugin: no atomic counts
                    row += (None, None)
                per.setdefault(wid, []).append(row)
            elif w[:2] == ["accel-insn:", "profile"]:
                if len(w) not in (5, 6):
                    raise Fail(f"{path}:{n}: '{line.strip()}' is not a profile line")
                try:
                    profile.setdefault(int(w[2]), []).append(
                        (int(w[3], 16), int(w[4]), int(w[5]) if len(w) == 6 else None))
                except ValueError:
                    raise Fail(f"{path}:{n}: '{line.strip()}' has a field that is not a number")
    return per, moved, profile


def main(argv):
    args, prof, umap = [], None, None
    it = iter(argv)
    for a in it:
        if a == "--profile":
            prof = next(it, "")
        elif a == "--user-map":
            umap = next(it, "")
        else:
            args.append(a)
    if len(args) != 2 or prof == "" or umap == "" or (umap and prof is None):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    windows, syms = windows_and_symbols(args[0])
    per, moved, profile = counts(args[1])
    med = {}
    for wid, (name, ops) in sorted(windows.items()):
        rows = per.get(wid, [])
        left = f"; {moved[wid]} that changed vCPU left out" if moved.get(wid) else ""
        if not rows:
            print(f"# insn: {name}: no counts (was the accel-insn plugin loaded?){left}")
            continue
        own = statistics.median(r[0] + r[1] for r in rows) / ops
        ok = statistics.median(r[0] for r in rows) / ops
        ou = statistics.median(r[1] for r in rows) / ops
        al = statistics.median(r[2] + r[3] for r in rows) / ops
        locked = ""
        if all(r[4] is not None for r in rows):
            lk = statistics.median(r[4] for r in rows) / ops
            lu = statistics.median(r[5] for r in rows) / ops
            locked = f", {lk + lu:.1f} of them atomic (kernel {lk:.1f}, user {lu:.1f})"
        med[name] = own
        print(f"# insn: {name}: {own:.0f} instructions per op on its vCPU "
              f"(kernel {ok:.0f}, user {ou:.0f}){locked}, {al:.0f} on all vCPUs; "
              f"median of {len(rows)} windows of {ops} ops{left}")
    for metric, num, den in METRICS:
        for n in (num, den):
            if n not in med:
                raise Fail(f"window '{n}' has no counts: {metric} needs it "
                           "(run accel-bench insn under the accel-insn plugin)")
        # A ratio falls or rises with what both sides pay; say the difference too.
        print(f"# insn: {num} - {den}: {med[num] - med[den]:.0f} instructions per op")
        print(f"METRIC {metric} {med[num] / med[den]:.4f}")
    if "uring_cmd_nop_alone" in med:
        floor = med["embedded_submit"] + med["uring_cmd_nop_alone"]
        print(f"# insn: embedded_submit + uring_cmd_nop_alone: {floor:.0f} instructions "
              f"per op; kernel_submit - that: {med['kernel_submit'] - floor:.0f}")
        print(f"METRIC insn.uring_floor_vs_embedded_submit {floor / med['embedded_submit']:.4f}")
        print(f"METRIC insn.kernel_vs_uring_floor_submit {med['kernel_submit'] / floor:.4f}")
    if "uring_job_complete" in med and "ioctl_job_cycle" in med:
        for n in ("uring_job_submit", "ioctl_nop", "uring_cmd_nop"):
            if n not in med:
                raise Fail(f"window '{n}' has no counts: insn.uring_advantage_kept needs it "
                           "(run accel-bench insn under the accel-insn plugin)")
        cycle = med["uring_job_submit"] + med["uring_job_complete"]
        ioctl, nops = med["ioctl_job_cycle"], med["ioctl_nop"] - med["uring_cmd_nop"]
        print(f"# insn: uring_job_submit + uring_job_complete: {cycle:.0f} instructions "
              f"per job; ioctl_job_cycle - that: {ioctl - cycle:.0f}; "
              f"ioctl_nop - uring_cmd_nop: {nops:.0f}")
        if nops <= 0:
            raise Fail(f"ioctl_nop ({med['ioctl_nop']:.0f}) is not above uring_cmd_nop "
                       f"({med['uring_cmd_nop']:.0f}): the ring saves a NOP nothing, so no "
                       "share of that saving can be kept")
        kept = (ioctl / cycle) / (med["ioctl_nop"] / med["uring_cmd_nop"])
        print(f"METRIC insn.uring_advantage_kept {kept:.4f}")
        print(f"METRIC insn.uring_saving_kept {(ioctl - cycle) / (2 * nops):.4f}")
    if prof is None:
        return 0
    ids = [wid for wid, (name, _) in windows.items() if name == prof]
    if not ids:
        raise Fail(f"no window named '{prof}' (the VM log names "
                   f"{', '.join(n for n, _ in windows.values()) or 'none'})")
    wid = ids[0]
    nwin = len(per.get(wid, [])) + moved.get(wid, 0)
    if wid not in profile or not nwin:
        raise Fail(f"no profile of window '{prof}' (load the plugin with profile=on)")
    if not syms:
        raise Fail("no kallsyms lines in the VM log: the kernel's addresses cannot be named")
    starts = [a for a, _ in syms]
    usyms = []
    if umap:
        with open(umap) as f:
            for line in f:
                w = line.split()
                if len(w) == 3 and w[1] in "tTwW":
                    try:
                        usyms.append((int(w[0], 16), w[2]))
                    except ValueError:
                        pass
        if not usyms:
            raise Fail(f"{umap} has no text symbols (give it `nm -n PROGRAM`)")
        usyms.sort()
    ustarts = [a for a, _ in usyms]
    by, atomic = {}, {}
    for addr, insns, locked in profile[wid]:
        if addr < KERNEL_START:
            i = bisect.bisect_right(ustarts, addr) - 1
            name = f"{usyms[i][1]} [user]" if i >= 0 else "[user]"
        else:
            i = bisect.bisect_right(starts, addr) - 1
            name = syms[i][1] if i >= 0 else f"0x{addr:x}"
        by[name] = by.get(name, 0) + insns
        if locked is not None:
            atomic[name] = atomic.get(name, 0) + locked
    ops = windows[wid][1] * nwin
    total = sum(by.values())
    # A plugin that counts the atomic instructions: how many, by function.
    head, cols = "", lambda name: ""
    if atomic:
        head = f", {sum(atomic.values()) / ops:.1f} of them atomic"
        cols = lambda name: f"{atomic.get(name, 0) / ops:7.1f} atomic  "
    print(f"# insn profile: {prof}: {total / ops:.0f} instructions per op{head} over "
          f"{nwin} windows, by function:")
    for name, insns in sorted(by.items(), key=lambda x: -x[1]):
        print(f"#   {insns / ops:8.1f}  {100 * insns / total:5.1f}%  {cols(name)}{name}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as e:
        print(f"insn-summary.py: {e}", file=sys.stderr)
        sys.exit(1)
