#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pack a cuda/hip module image and its entry table into an ACCELGPU bundle.

gpupack.py -o kernels.cuexe --format ptx \\
    --entry saxpy:2:1:64 --entry fill_u32:1:1:64,1,1 kernels.ptx

Each --entry is NAME:BINDINGS:CONSTANTS:WORKGROUP_SIZE[:OPS:BYTES], the
workgroup size being X or X,Y,Z: the kernel's ABI, which the image cannot
tell (the kernel must be launched with that block size); OPS and BYTES, the
cost of one workgroup for libaccel's cost model (operations; bytes read
plus written), 0 to 2^40. Formats: ptx, cubin (cuda),
hsaco (a hip code object). The layout is in drivers/gpu/gpu.h.
"""
import argparse
import struct

FORMATS = {'ptx': 1, 'cubin': 2, 'hsaco': 3}


def entry(text):
    parts = text.split(':')
    if len(parts) not in (4, 6):
        raise argparse.ArgumentTypeError(
            'want NAME:BINDINGS:CONSTANTS:WGSIZE[:OPS:BYTES], got %r' % text)
    cost = [int(v) for v in parts[4:6]] + [0, 0]
    if not all(0 <= v <= 1 << 40 for v in cost):
        raise argparse.ArgumentTypeError('operations and bytes per workgroup go from 0 to 2^40 in %r' % text)
    size = [int(v) for v in parts[3].split(',')]
    if len(size) not in (1, 3) or min(size) < 1:
        raise argparse.ArgumentTypeError('bad workgroup size %r' % parts[3])
    size = (size + [1, 1])[:3] if len(size) == 1 else size
    name = parts[0].encode()
    if not name or len(name) >= 64:
        raise argparse.ArgumentTypeError('bad entry name %r' % parts[0])
    return name, int(parts[1]), int(parts[2]), size, cost[:2]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('-o', '--output', required=True)
    ap.add_argument('--format', choices=sorted(FORMATS), required=True)
    ap.add_argument('--entry', type=entry, action='append', default=[])
    ap.add_argument('image')
    args = ap.parse_args()
    image = open(args.image, 'rb').read()
    header_size = 32 + 112 * len(args.entry)
    offset = (header_size + 15) & ~15
    out = bytearray(b'ACCELGPU')
    out += struct.pack('<6I', 2, len(args.entry), FORMATS[args.format],
                       offset, len(image), 0)
    for name, bindings, constants, size, cost in args.entry:
        out += name.ljust(64, b'\0')
        out += struct.pack('<8I2Q', bindings, constants, *size, 0, 0, 0, *cost)
    out += b'\0' * (offset - len(out))
    out += image
    with open(args.output, 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
