"""What notify hears from the apps below it (it sits on top; they never import it).

`run_event_recorded` is sent by `runs.signals.emit` in the transaction that
changed the run, so what an event sends — its deliveries and its outbox mail
— is written with the run's change or not at all, and attempted by workers
once it commits; nothing sends or waits on a receiver there.

`foldrun.mail.platform_mail` is the platform mail accounts and vault ask for
(invites, low balance, broken provider keys); `runs.signals.triggers_parts`
gets the outbound deliveries' part of the Triggers tab.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from foldrun.mail import platform_mail
from runs.models import Schedule
from runs.signals import run_event_recorded, triggers_parts

from .email import send_platform_mail
from .events import completed_writes_nothing, forget_quarantine_of_schedule, handle_run_event, metas_for
from .outbox import queue_mail
from .pages import triggers_part

log = logging.getLogger(__name__)

HANDLED = {"completed", "blocked", "failed", "awaiting-approval", "sla", "quarantined"}


@receiver(run_event_recorded, dispatch_uid="notify.on_run_event")
def on_run_event(sender, run, event, step=None, approval=None, **kwargs) -> None:
    if event not in HANDLED:
        return
    try:
        # A read — nothing a savepoint would have to undo — and none at all when the run's closing query named
        # AGENTS.md texts this process has parsed (runs/lifecycle/execute.py, `agents_md`).
        metas = metas_for(run.workspace, event, heads=getattr(run, "agents_md", None))
        if event == "completed" and completed_writes_nothing(run, metas):
            return  # every run's end: no savepoint for nothing to write
        # A savepoint: a notification that cannot be written must never break the run.
        with transaction.atomic():
            handle_run_event(run, event, approval, metas=metas)
    except Exception:  # a notification that cannot be made must never break the run
        log.exception("notification for %s %s failed", run.public_id, event)


@receiver(post_delete, sender=Schedule, dispatch_uid="notify.on_schedule_deleted")
def on_schedule_deleted(sender, instance, **kwargs) -> None:
    """A schedule row that goes takes its quarantine's mark with it (events.forget_quarantine_of_schedule)."""
    forget_quarantine_of_schedule(instance.workspace_id, instance.flow)


@receiver(platform_mail, dispatch_uid="notify.platform_mail")
def on_platform_mail(sender, to: str, subject: str, body: str, category: str, queued: bool, **kwargs) -> None:
    """Mail an app below notify asked for (foldrun/mail.py): into the outbox in the caller's transaction,
    or sent now from the platform's sender."""
    if queued:
        queue_mail(to=to, subject=subject, body=body, category=category, platform=True)
    else:
        send_platform_mail(to=to, subject=subject, body=body, category=category)


triggers_parts.connect(triggers_part, dispatch_uid="notify.triggers_part")
