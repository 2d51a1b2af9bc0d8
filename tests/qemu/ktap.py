#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Judge one VM run: relay its KTAP, check it, scan the kernel log.

Reads the KTAP document the VM's /init wrote (ttyS1) and the kernel console
(ttyS0). The run passes only if the VM finished, every KTAP plan at every
nesting level was met, no result is "not ok", and the kernel log holds no
splat. On failure the kernel log is printed, so CI's output alone explains
the failure.

Counts are over leaf results: a test program's own tests, and the VM's
steps that have no subtests (insmod, rmmod, commands).
"""
import argparse
import re
import sys

# Kernel log lines that fail a run (liburing's runner scans for the same).
SPLATS = [
    r"\bBUG:", r"WARNING:", r"\bOops\b", r"KASAN", r"UBSAN", r"kernel BUG",
    r"possible circular locking", r"inconsistent lock state",
    r"suspicious RCU usage", r"possible recursive locking",
    r"sleeping function called from invalid context", r"hung task",
    r"blocked for more than", r"refcount_t:", r"general protection fault",
    r"list_(add|del) corruption", r"unreferenced object", r"Kernel panic",
    r"Call Trace:", r"suspected memory leak", r"ODEBUG:",
]
SPLAT_RE = re.compile("|".join(SPLATS))
# The harness's own markers name tests and commands, not splats (a command
# may set UBSAN_OPTIONS): left out, as vm-init.sh's kernel-log step does.
MARKER_RE = re.compile(r"accelsched-(vm|test): ")
RESULT_RE = re.compile(r"^(?P<indent> *)(?P<not>not )?ok (?P<num>\d+)(?: (?P<name>[^#]*))?(?:#\s*(?P<directive>.*))?$")
PLAN_RE = re.compile(r"^(?P<indent> *)1\.\.(?P<n>\d+)\s*$")
DONE_MARK = "# accelsched-vm: done"
# An oops's "Code:" line: the bytes around its RIP, RIP's own in <>.
CODE_RE = re.compile(r"\bCode: ((?:<?[0-9a-f]{2}>? ?)+)")


def stale_int3(console):
    """The oops line if the run's first splat is an int3 that is not there.

    An int3 trap reports the address after the int3, so the byte before
    RIP's in the oops's Code: line is the one that trapped. When that byte
    is not int3 (0xcc) any more, the vCPU ran an int3 that the kernel's own
    code patching (text_poke_bp: int3 first, the rest, then the first byte)
    had already replaced: a translation QEMU's TCG kept after the patch,
    which no kernel or module code can cause. Anything else (another first
    splat, a real int3, no Code: line) returns None.
    """
    for i, line in enumerate(console):
        if not SPLAT_RE.search(line) or MARKER_RE.search(line):
            continue
        if "Oops: int3" not in line:
            return None
        for code in console[i:i + 60]:
            m = CODE_RE.search(code)
            if not m:
                continue
            b = m.group(1).split()
            k = next((j for j, x in enumerate(b) if x.startswith("<")), 0)
            if k > 0 and b[k - 1] != "cc":
                return line.strip()
            return None
        return None
    return None


def parse_block(lines):
    """Results of one KTAP level: (plan, [(ok, name, directive)])."""
    plan, results = None, []
    for line in lines:
        m = PLAN_RE.match(line)
        if m and not m.group("indent"):
            plan = int(m.group("n"))
            continue
        m = RESULT_RE.match(line)
        if m and not m.group("indent"):
            results.append((not m.group("not"), (m.group("name") or "").strip(),
                            (m.group("directive") or "").strip()))
    return plan, results


def count(ok, directive):
    if not ok:
        return 0, 1, 0
    if directive.upper().startswith("SKIP"):
        return 0, 0, 1
    return 1, 0, 0


def parse_ktap(lines):
    """Return (passed, failed, skipped, problems) over leaf results.

    Each top-level result is a step of the VM; the lines indented by four
    spaces just before it are its subtests (a test program's own KTAP).
    """
    passed = failed = skipped = 0
    problems = []
    top_plan, top_results, block = None, 0, []
    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("    "):
            block.append(line[4:])
            continue
        m = PLAN_RE.match(line)
        if m:
            top_plan = int(m.group("n"))
            continue
        m = RESULT_RE.match(line)
        if not m:
            continue
        top_results += 1
        ok = not m.group("not")
        name = (m.group("name") or "").strip()
        directive = (m.group("directive") or "").strip()
        plan, sub = parse_block(block)
        block = []
        if not sub and plan is None:
            p, f, s = count(ok, directive)
            passed, failed, skipped = passed + p, failed + f, skipped + s
            if f:
                problems.append(f"not ok: {name} ({directive})")
            continue
        sub_failed = 0
        for sok, sname, sdir in sub:
            p, f, s = count(sok, sdir)
            passed, failed, skipped = passed + p, failed + f, skipped + s
            sub_failed += f
            if f:
                problems.append(f"not ok: {name}: {sname}")
        if plan is not None and len(sub) < plan:
            missing = plan - len(sub)
            problems.append(f"{name}: planned {plan} tests, reported "
                            f"{len(sub)}: {missing} missing")
            failed += missing
            sub_failed += missing
        if not ok and not sub_failed:
            problems.append(f"not ok: {name} ({directive}) with no failed subtest")
            failed += 1
    if top_plan is None:
        problems.append("no KTAP plan from the VM")
        failed += 1
    elif top_results < top_plan:
        problems.append(f"the VM planned {top_plan} steps and reported {top_results}")
        failed += top_plan - top_results
    return passed, failed, skipped, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--ktap", required=True)
    ap.add_argument("--console", required=True)
    ap.add_argument("--qemu-log")
    ap.add_argument("--qemu-rc", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=0)
    ap.add_argument("--counts")
    ap.add_argument("--flake-exit", type=int, default=0,
                    help="exit with this status, writing no counts, when the "
                    "run failed on a stale int3 only (see stale_int3())")
    args = ap.parse_args()

    with open(args.ktap, errors="replace") as f:
        ktap = [l.replace("\r", "") for l in f]
    with open(args.console, errors="replace") as f:
        console = [l.replace("\r", "") for l in f]

    print(f"# ---- VM: {args.kernel} ----")
    sys.stdout.writelines(ktap)
    sys.stdout.flush()

    passed, failed, skipped, problems = parse_ktap(ktap)
    if not any(l.startswith(DONE_MARK) for l in ktap):
        if args.qemu_rc in (124, 137):
            problems.append(f"the VM timed out after {args.timeout} s")
        else:
            problems.append("the VM did not finish (crash, panic or hang); "
                            f"qemu exit status {args.qemu_rc}")
        failed += 1
    splats = [l.rstrip() for l in console
              if SPLAT_RE.search(l) and not MARKER_RE.search(l)]
    if splats:
        problems.append(f"the kernel log has {len(splats)} splat line(s):")
        problems.extend("  " + s for s in splats[:40])
        # The VM's own kernel-log step counted it already, unless the splat
        # came after that step (or the VM never got there).
        if not any(RESULT_RE.match(l.rstrip("\n")) and l.startswith("not ok")
                   and l.rstrip().endswith("kernel-log # exit status 1")
                   for l in ktap):
            failed += 1

    if problems:
        print(f"# ---- VM: {args.kernel}: FAILED ----")
        for p in problems:
            print(f"# {p}")
        print(f"# ---- kernel log ({args.console}) ----")
        start = 0
        for i, l in enumerate(console):
            if "accelsched-vm: init started" in l:
                start = max(i - 20, 0)
                break
        if start:
            print(f"# (boot messages before line {start} left out)")
        sys.stdout.writelines(console[start:])
        if args.qemu_log:
            with open(args.qemu_log, errors="replace") as f:
                q = f.read().strip()
            if q:
                print("# ---- qemu ----")
                print(q)
        print(f"# ---- end of kernel log: {args.kernel} ----")

    flake = stale_int3(console) if problems and args.flake_exit else None
    if flake:
        print(f"# VM {args.kernel}: its kernel trapped on an int3 that its code "
              f"patching had already replaced ({flake}): TCG ran a stale "
              "translation; this run does not count")
        return args.flake_exit
    print(f"# VM {args.kernel}: {passed} passed, {failed} failed, {skipped} skipped")
    if args.counts:
        with open(args.counts, "w") as f:
            f.write(f"{passed} {failed} {skipped}\n")
    return 1 if (failed or problems) else 0


if __name__ == "__main__":
    sys.exit(main())
