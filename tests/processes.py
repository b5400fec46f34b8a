"""What the tests read of this machine's processes from /proc: who started whom, and what runs under a worker
(its pool servers, their Xvfbs, a session's Chromium) — so a test can kill or count the real processes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def parent_of(pid: int) -> int:
    """The parent pid, or 0 for a process already gone."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def is_under(pid: int, root: int) -> bool:
    """Whether `root` started `pid`, directly or through its children."""
    up = parent_of(pid)
    while up > 1 and up != root:
        up = parent_of(up)
    return up == root


def running() -> Iterator[tuple[int, list[bytes]]]:
    """(pid, argv) of every process that is running (a zombie is not)."""
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            yield int(entry), argv


def descendants_named(root: int, needle: bytes) -> list[int]:
    """Pids under `root` whose command line holds `needle`."""
    return [pid for pid, argv in running() if needle in b"\0".join(argv) and is_under(pid, root)]
