"""The runs engine's events, heard inside the run's own transaction.

`run_event_recorded` is sent by `runs.signals.emit` in the transaction that
changed the run, so what an event sends — its deliveries and its outbox mail
— is written with the run's change or not at all, and attempted by workers
once it commits. Nothing here sends or waits on a receiver.
"""
from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import receiver

from runs.signals import run_event_recorded

from .events import handle_run_event

log = logging.getLogger(__name__)

HANDLED = {"completed", "blocked", "failed", "awaiting-approval", "sla", "quarantined"}


@receiver(run_event_recorded, dispatch_uid="notify.on_run_event")
def on_run_event(sender, run, event, step=None, approval=None, **kwargs) -> None:
    if event not in HANDLED:
        return
    try:
        # A savepoint: a notification that cannot be written must never break the run.
        with transaction.atomic():
            handle_run_event(run, event, approval)
    except Exception:
        log.exception("notification for %s %s failed", run.public_id, event)
