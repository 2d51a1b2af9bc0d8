#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check-spec.py SCHEMA SPEC [DEVICE_PATH MAJOR MINOR ENGINE...]

Validates a CDI spec against tests/cdi/cdi-schema.json and the rules the
schema does not carry (unique device names, the 'all' device first, one
device per ENGINE with ACCEL_ENGINE=<engine>, every node DEVICE_PATH with
MAJOR:MINOR). Prints what is wrong and exits 1; 0 when the spec is right.
"""
import json
import sys

import jsonschema


def main():
    schema = json.load(open(sys.argv[1]))
    spec = json.load(open(sys.argv[2]))
    jsonschema.validate(spec, schema)
    names = [d['name'] for d in spec['devices']]
    assert len(names) == len(set(names)), f'device names repeat: {names}'
    if len(sys.argv) > 3:
        path, major, minor = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        engines = sys.argv[6:]
        assert names[0] == 'all', f'first device is {names[0]}, not all'
        want = ['all'] + [e.replace(':', '-') for e in engines]
        assert names == want, f'devices {names}, want {want}'
        for d in spec['devices']:
            nodes = d['containerEdits']['deviceNodes']
            assert nodes == [{'path': path, 'type': 'c', 'major': major,
                              'minor': minor, 'permissions': 'rw'}], nodes
        for d, e in zip(spec['devices'][1:], engines):
            assert d['containerEdits']['env'] == [f'ACCEL_ENGINE={e}'], d
    print('spec ok:', ', '.join(names))


if __name__ == '__main__':
    try:
        main()
    except (AssertionError, jsonschema.ValidationError) as e:
        print('spec wrong:', str(e).splitlines()[0])
        sys.exit(1)
