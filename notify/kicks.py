"""The drain's kick and the beat sweep's one shape, shared by webhook
deliveries (notify/deliveries.py, notify/sweep.py) and outgoing mail
(notify/outbox.py). A kick (a `Kick` row) makes a burst of new work one drain
message, not one per row; the sweep writes down work lost with its worker,
then clears the kick and queues a fresh drain when anything is due. Written
once so the two queues cannot drift apart; it sits below both in the layers
and knows only the Kick row and how to queue a task by name."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sized
from datetime import datetime

from django.db import IntegrityError, transaction

from .enqueue import enqueue
from .models import Kick

log = logging.getLogger(__name__)


def kicker(kick_name: str, drain_task: str) -> Callable[[], None]:
    """The kick of one queue: a function that sees that one drain (the task
    named `drain_task`) is on its way, queueing it only when the kick named
    `kick_name` was not already set. It never raises: the work is a due row
    the sweep finds, so a broker or database hiccup here loses nothing — and
    a kick run on a transaction's commit must not break the caller that
    committed."""

    def kick() -> None:
        try:
            if not Kick.objects.filter(name=kick_name, pending=False).update(pending=True):
                if Kick.objects.filter(name=kick_name).exists():
                    return  # one is already on its way
                try:
                    with transaction.atomic():
                        Kick.objects.create(name=kick_name, pending=True)
                except IntegrityError:
                    return  # another process created it a moment ago, and queues the drain
            enqueue(drain_task)
        except Exception as exc:  # noqa: BLE001 — any broker or database hiccup; the sweep is the backstop
            log.warning("could not queue %s (%s); the sweep will", drain_task, type(exc).__name__)

    kick.__name__ = kick.__qualname__ = f"kick_{kick_name}"
    kick.__doc__ = f"See that one {drain_task} is on its way (kick {kick_name!r}; see kicks.kicker)."
    return kick


def sweep(
    now: datetime | None,
    *,
    recover: Callable[[datetime | None], object],
    kick_name: str,
    due: Callable[[datetime | None], Sized],
    kick: Callable[[], None],
) -> int:
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
