#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test-targets.py: what to build to run some of a build's meson tests.

Usage: test-targets.py BUILDDIR TEST...
(@SUITE stands for every test of that suite, such as @unit.)

Prints, one a line, the files (relative to BUILDDIR, as ninja names them)
of the targets that the named tests run and depend on. check.sh builds
only these in its sanitizer builds: a plain build of everything would
also link the static programs (the VM's tests, the fuzzer), which no
sanitizer runtime allows. Fails naming a test that the build lacks.
"""
import json
import os
import subprocess
import sys


def introspect(builddir, what):
    out = subprocess.run(['meson', 'introspect', builddir, what],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip().splitlines()[2])
    builddir, names = sys.argv[1], sys.argv[2:]
    tests = {t['name']: t for t in introspect(builddir, '--tests')}
    files = {t['id']: t['filename'] for t in introspect(builddir, '--targets')}
    root = os.path.realpath(builddir)
    wanted = []
    for arg in list(names):
        if arg.startswith('@'):
            names.remove(arg)
            names += [n for n, t in tests.items()
                      if any(s.split(':')[-1] == arg[1:] for s in t['suite'])]
    for name in names:
        if name not in tests:
            sys.exit(f'test-targets.py: {builddir} has no test "{name}"')
        for dep in tests[name]['depends']:
            for f in files.get(dep, []):
                rel = os.path.relpath(os.path.realpath(f), root)
                if rel not in wanted:
                    wanted.append(rel)
    print('\n'.join(wanted))


if __name__ == '__main__':
    main()
