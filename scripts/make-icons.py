#!/usr/bin/env python3
"""Draws vramfit's app icons (a stacked memory bar against a card outline) as PNGs, with the
standard library only. Run once after changing the design; the PNGs are committed.

    python3 scripts/make-icons.py
"""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, '..', 'public', 'icons')

BG = (27, 30, 33)
SEGMENTS = [(79, 134, 198), (154, 124, 196), (199, 122, 46), (78, 154, 82), (217, 83, 79)]
WIDTHS = [0.12, 0.16, 0.08, 0.22, 0.18]
MARK = (232, 234, 237)


def png(path, size, pixels):
    raw = b''.join(b'\x00' + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, data):
        return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data) & 0xffffffff)

    data = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', size, size, 8, 2, 0, 0, 0))
            + chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))
    with open(path, 'wb') as f:
        f.write(data)


def draw(size, safe):
    """`safe`: the share of the icon kept clear at each edge (maskable icons need 10 %)."""
    px = [[BG for _ in range(size)] for _ in range(size)]
    left, right = int(size * safe), int(size * (1 - safe))
    top, bottom = int(size * 0.36), int(size * 0.64)
    x = left
    span = right - left
    for color, w in zip(SEGMENTS, WIDTHS):
        x1 = x + int(span * w)
        for yy in range(top, bottom):
            for xx in range(x, x1):
                px[yy][xx] = color
        x = x1
    mark = left + int(span * 0.84)
    for yy in range(int(size * 0.26), int(size * 0.74)):
        for xx in range(mark, mark + max(2, size // 48)):
            px[yy][xx] = MARK
    return px


os.makedirs(OUT, exist_ok=True)
png(os.path.join(OUT, 'icon-192.png'), 192, draw(192, 0.12))
png(os.path.join(OUT, 'icon-512.png'), 512, draw(512, 0.12))
png(os.path.join(OUT, 'maskable-512.png'), 512, draw(512, 0.2))
print('icons written to', os.path.normpath(OUT))
