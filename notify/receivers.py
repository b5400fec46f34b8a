"""The runs engine's events, heard here."""
from __future__ import annotations

import logging

from django.dispatch import receiver

from runs.signals import run_event

log = logging.getLogger(__name__)

HANDLED = {"completed", "blocked", "failed", "awaiting-approval", "sla", "quarantined"}


@receiver(run_event, dispatch_uid="notify.on_run_event")
def on_run_event(sender, run, event, step=None, approval=None, **kwargs) -> None:
    """Handle a run event in the process that sent it: the signal fires after
    the commit, deliveries are rows first and attempts go to the worker, so
    nothing here waits on a receiver."""
    if event not in HANDLED:
        return
    from .actions import handle_run_event

    try:
        handle_run_event(run, event, approval)
    except Exception:  # a notification must never break the run
        log.exception("notification for %s %s failed", run.public_id, event)
