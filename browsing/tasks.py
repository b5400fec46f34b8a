"""Celery entry points of the sessions: thin, by id, safe to run twice."""
from __future__ import annotations

from celery import shared_task

from . import keeper, sweep as sweeps


@shared_task(name="browsing.keep_session", acks_late=True)
def keep_session(session_pk: int) -> str:
    """Own the session's browser for the session's life (browsing/keeper.py says why here)."""
    return keeper.keep(session_pk)


@shared_task(name="browsing.sweep", acks_late=True)
def sweep() -> dict[str, int]:
    return sweeps.sweep()
