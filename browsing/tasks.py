"""Celery entry points of the sessions: thin, by id, safe to run twice."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_shutting_down

from foldrun.heartbeats import BROWSERS, beat_heartbeat

from . import keeper, sweep as sweeps


@shared_task(name="browsing.keep_session", acks_late=True)
def keep_session(session_pk: int) -> str:
    """Own the session's browser for the session's life (browsing/keeper.py says why here)."""
    return keeper.keep(session_pk)


@shared_task(name="browsing.sweep", acks_late=True)
def sweep() -> dict[str, int]:
    return sweeps.sweep()


@worker_shutting_down.connect
def _stop_keeping(**_kwargs: Any) -> None:
    # In the worker's main process; the pool's processes, where the keepers run, share the event.
    keeper.SHUTTING_DOWN.set()


@shared_task(name="browsing.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Sent by beat to the browser service's queue; whichever browser worker runs it shows /api/health that the
    service answers (a full one's keepers say so themselves)."""
    beat_heartbeat(BROWSERS)
