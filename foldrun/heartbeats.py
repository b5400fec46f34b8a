"""The worker's and beat's heartbeats: a file's modification time under the data folder (`heartbeats/`).

Beat touches its file on every scheduler tick (foldrun/beat.py); a worker when it is ready and whenever it
runs the `foldrun.heartbeat` task beat sends it (foldrun/celery.py); /api/health reads them. Files, not
rows: no migration, and nothing a busy database could make slow. A multi-host install shares
FOLDRUN_DATA_DIR as a volume (deploy/compose.yaml does).
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from django.conf import settings

log = logging.getLogger(__name__)

ROLES = ("worker", "beat")
# The browser service (browsing/): its worker on its own queue; /api/health reports it apart from the workers.
BROWSERS = "browsers"


def heartbeat_path(role: str) -> Path:
    return Path(settings.DATA_DIR) / "heartbeats" / role


def beat_heartbeat(role: str) -> None:
    """Record that `role` (worker, beat or browsers) is alive now. Never raises: a heartbeat must not stop its process."""
    path = heartbeat_path(role)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
        os.utime(path, None)
    except OSError:
        log.warning("could not write the %s heartbeat under %s", role, path.parent)


def seconds_since(role: str) -> float | None:
    """How long ago `role` was last heard from, or None when it never was."""
    try:
        return max(0.0, time.time() - heartbeat_path(role).stat().st_mtime)
    except OSError:
        return None
