"""A PNG read back into pixels, for tests that check a picture the browser wrote (no imaging library here)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path


def rows_of(path: Path) -> tuple[int, int, list[bytes]]:
    """A PNG's rows of RGBA bytes (8-bit colour types 2 and 6, as Chromium writes them)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks, width = 8, b"", 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and colour in (2, 6)
            step = 4 if colour == 6 else 3
        elif kind == b"IDAT":
            chunks += body
        at += 12 + length
    raw, rows, previous = zlib.decompress(chunks), [], bytearray(width * step)
    stride = width * step
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - step] if i >= step else 0
            up, corner = previous[i], previous[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(
            bytes(line) if step == 4 else b"".join(bytes(line[i : i + 3]) + b"\xff" for i in range(0, stride, 3))
        )
        previous = line
    return width, height, rows


def pixel(rows: list[bytes], x: int, y: int) -> tuple[int, int, int]:
    return tuple(rows[y][4 * x : 4 * x + 3])
