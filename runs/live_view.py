"""Where a browsing step's live frames wait for its Run page: one folder per step under the data folder.

The worker's step writes them (`DbHost.live_frame`, from the browser's thread: files only, never the ORM) and the
Run page reads them after finding the step through the requester's own run — so a frame is reached only through
a run of the reader's account. A step keeps its newest frame and a line of what it shows (`frame.jpg`,
`frame.json`); each is replaced whole (written beside, then renamed), so a reader never sees half of one. Frames
are held five minutes after the last, then dropped by the next reader.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

from django.conf import settings

HOLD_SECONDS = 5 * 60


def root() -> Path:
    return Path(settings.DATA_DIR) / "live"


def folder(step_public_id: str) -> Path:
    return root() / step_public_id


def _replace(target: Path, data: bytes) -> None:
    spare = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}")
    spare.write_bytes(data)
    os.replace(spare, target)


def write(step_public_id: str, kind: str, jpeg: bytes | None, url: str) -> None:
    """A frame (`kind` "frame") or the end of the call that drew it ("end": the panel says `last seen`)."""
    here = folder(step_public_id)
    if kind != "frame" and not (here / "frame.jpg").is_file():
        return  # a call that ended before its first frame shows nothing
    if not here.is_dir():
        prune()  # a step's first frame: the folders nobody read again after their five minutes go
    here.mkdir(parents=True, exist_ok=True)
    seen = read(step_public_id) or {}
    line = {
        "url": url or seen.get("url") or "",
        "at": time.time(),
        "seq": int(seen.get("seq") or 0) + (1 if kind == "frame" else 0),
        "live": kind == "frame",
    }
    if kind == "frame" and jpeg:
        _replace(here / "frame.jpg", jpeg)
    _replace(here / "frame.json", json.dumps(line).encode())


def read(step_public_id: str) -> dict | None:
    """What the step's panel shows — {url, at, seq, live} — or None: no frame, or its five minutes are over."""
    here = folder(step_public_id)
    try:
        line = json.loads((here / "frame.json").read_bytes())
    except (OSError, ValueError):
        return None
    if time.time() - float(line.get("at") or 0) > HOLD_SECONDS:
        shutil.rmtree(here, ignore_errors=True)
        return None
    return line


def prune() -> None:
    """Drop every step's frames held past their five minutes (a reader drops its own; this, the unread)."""
    live = root()
    cutoff = time.time() - HOLD_SECONDS
    for here in live.iterdir() if live.is_dir() else ():
        try:
            stale = (here / "frame.json").stat().st_mtime < cutoff
        except OSError:
            stale = here.stat().st_mtime < cutoff if here.exists() else False
        if stale:
            shutil.rmtree(here, ignore_errors=True)


def frame(step_public_id: str) -> bytes | None:
    if read(step_public_id) is None:
        return None
    try:
        return (folder(step_public_id) / "frame.jpg").read_bytes()
    except OSError:
        return None
