#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the results in meson's testlog.json: print "passed failed skipped".

A test whose output has Check's closing line ("N%: Checks: N, Failures: F,
Errors: E") counts as its N checks; any other test counts once, by its
result. A test that failed without a failed check still counts as failed.
"""
import json
import re
import sys

CHECK_RE = re.compile(r"\d+%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
KTAP_RE = re.compile(r"# Totals: pass:(\d+) fail:(\d+) xfail:\d+ xpass:\d+ skip:(\d+) error:(\d+)")


def main(path):
    passed = failed = skipped = 0
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"count-meson-tests.py: {e}", file=sys.stderr)
        print("0 1 0")
        return
    for line in lines:
        if not line.strip():
            continue
        t = json.loads(line)
        result = t.get("result", "")
        out = t.get("stdout", "") or ""
        checks = CHECK_RE.findall(out)
        ktap = KTAP_RE.findall(out)
        bad = 0
        if checks:
            for n, f, e in checks:
                passed += int(n) - int(f) - int(e)
                bad += int(f) + int(e)
        elif ktap:
            for p, f, s, e in ktap:
                passed += int(p)
                skipped += int(s)
                bad += int(f) + int(e)
        elif result == "SKIP":
            skipped += 1
        elif result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        if result not in ("OK", "SKIP", "EXPECTEDFAIL") and bad == 0:
            bad = 1
        failed += bad
    print(passed, failed, skipped)


if __name__ == "__main__":
    main(sys.argv[1])
