"""Queueing notify's tasks by NAME: nothing in notify imports its tasks module
(the tasks import the actions, never the reverse)."""

from __future__ import annotations

import logging

from foldrun.celery import send

log = logging.getLogger(__name__)


def enqueue(task_name: str, *args) -> bool:
    """Send `task_name(*args)` to the workers. A broker that is down loses
    nothing: every task here works on rows the beat sweep finds again, so a
    failure is a warning, not an error the caller must handle."""
    try:
        send(task_name, *args)  # the one by-name sender (runs it at once when the install is eager)
    except Exception as exc:  # noqa: BLE001 — any broker failure; the sweep is the backstop
        log.warning("could not queue %s (%s); the sweep will", task_name, type(exc).__name__)
        return False
    return True
