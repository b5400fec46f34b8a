"""The beat sweep's one shape, shared by webhook deliveries (notify/sweep.py)
and outgoing mail (notify/outbox.py): work lost with its worker is written
down first, then the drain's kick (a `Kick` row) is cleared and a fresh drain
queued when anything is due. Written once so the two cannot drift apart; it
sits below both in the layers and knows only the Kick row."""
from __future__ import annotations

from collections.abc import Callable, Sized
from datetime import datetime

from .models import Kick


def sweep(now: datetime | None, *, recover: Callable[[datetime | None], object], kick_name: str,
          due: Callable[[datetime | None], Sized], kick: Callable[[], None]) -> int:
    """Recover what a lost worker held (`recover(now)`), clear the kick named
    `kick_name`, count what is due (`due(now)`) and, if anything is, `kick()`
    a drain. Returns how many are due."""
    recover(now)
    # A drain lost with its worker left the kick set; clear it so this sweep
    # (or the next new piece of work) queues a fresh one. Recovery comes first
    # so what it makes due again is counted below.
    Kick.objects.filter(name=kick_name).update(pending=False)
    count = len(due(now))
    if count:
        kick()
    return count
