"""Where a browse call's time goes, for tests/bench/browse_bench.py --detail: off (and free) unless a bench
turns it on. Each mark is (label, monotonic seconds); the bench reads the gaps between them."""

from __future__ import annotations

import time

MARKS: list[tuple[str, float]] | None = None  # a list while a bench collects them; None the rest of the time


def mark(label: str) -> None:
    if MARKS is not None:
        MARKS.append((label, time.monotonic()))
