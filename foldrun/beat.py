"""Beat's scheduler: django-celery-beat's, leaving a heartbeat for /api/health on every tick."""

from __future__ import annotations

import time
from typing import Any

from django_celery_beat.schedulers import DatabaseScheduler

from foldrun.heartbeats import beat_heartbeat

# A tick comes every few seconds; touching the file once a second at most is plenty.
_EVERY = 1.0


class HeartbeatScheduler(DatabaseScheduler):
    _last_heartbeat = 0.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        now = time.monotonic()
        if now - self._last_heartbeat >= _EVERY:
            beat_heartbeat("beat")
            self._last_heartbeat = now
        return super().tick(*args, **kwargs)
