"""Screencast frames encoded once as WebM (VP8): a recorded browser session's video (browsing's keeper) and a
browse call's `video` (watch.py).

Frames come only when the page changes, so each is shown until the next one (its own timestamp); PyAV's
bundled FFmpeg does the encoding, no system ffmpeg needed.
"""

from __future__ import annotations

import io
from fractions import Fraction
from pathlib import Path

import av

MAX_SIDE = 1920


def encode(frames: list[tuple[bytes, float]], target: Path) -> int:
    """Write `frames` (JPEG bytes, seconds) to `target` as WebM; the file's size in bytes (0: no frames)."""
    if not frames:
        return 0
    target.parent.mkdir(parents=True, exist_ok=True)
    first = _decode(frames[0][0])
    width, height = _even(first.width), _even(first.height)
    start = frames[0][1]
    with av.open(str(target), mode="w", format="webm") as container:
        stream = container.add_stream("libvpx", rate=30)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        stream.options = {"deadline": "realtime", "cpu-used": "8"}
        last_pts = -1
        for data, stamp in frames:
            image = _decode(data).reformat(width=width, height=height, format="yuv420p")
            pts = max(last_pts + 1, int(round((stamp - start) * 1000)))
            image.pts, image.time_base, last_pts = pts, Fraction(1, 1000), pts
            for packet in stream.encode(image):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return target.stat().st_size


def _decode(jpeg: bytes) -> av.VideoFrame:
    with av.open(io.BytesIO(jpeg), format="mjpeg") as source:
        return next(source.decode(video=0))


def _even(n: int) -> int:
    return max(2, min(MAX_SIDE, n) // 2 * 2)
