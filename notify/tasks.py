"""Notification tasks. They take ids, re-read rows, and are idempotent: an
attempt is claimed with a conditional update, so a task delivered twice (or
a sweep racing a countdown) sends once."""
from __future__ import annotations

import logging

from celery import shared_task

log = logging.getLogger(__name__)


@shared_task(name="notify.attempt_delivery", ignore_result=True)
def attempt_delivery(delivery_pk: int) -> None:
    """Attempt this delivery, and any other due ones up to a batch."""
    from .actions import perform_batch

    perform_batch([delivery_pk])


# The sweep hands attempts out in small batches: one message per batch keeps
# a sweep over 10,000 due attempts fast, and small batches keep one slow
# receiver (8 s each) from holding up many others.
SWEEP_BATCH = 16  # = notify.actions.BATCH


@shared_task(name="notify.attempt_deliveries", ignore_result=True)
def attempt_deliveries(delivery_pks: list[int]) -> None:
    from .actions import perform_batch

    perform_batch(list(delivery_pks))


@shared_task(name="notify.drain_deliveries", ignore_result=True)
def drain_deliveries() -> int:
    """Attempt every due delivery, in parallel batches (see actions.drain)."""
    from .actions import drain

    return drain()


@shared_task(name="notify.sweep_due_deliveries", ignore_result=True)
def sweep_due_deliveries() -> int:
    """Re-enqueue every due attempt nobody holds: what a lost worker or a
    restarted broker dropped is picked up here, never lost. A delivery
    enqueued twice is still sent once: each attempt is claimed first."""
    from .actions import due_delivery_ids
    from .models import Kick

    # A drain lost with its worker left the kick set; clear it so the next
    # new delivery queues a fresh one.
    Kick.objects.update(pending=False)
    ids = due_delivery_ids()
    for start in range(0, len(ids), SWEEP_BATCH):
        attempt_deliveries.delay(ids[start:start + SWEEP_BATCH])
    return len(ids)


@shared_task(name="notify.purge_old_deliveries", ignore_result=True)
def purge_old_deliveries() -> int:
    from .actions import do_purge_old_deliveries

    return do_purge_old_deliveries()


@shared_task(name="notify.handle_run_event", ignore_result=True)
def handle_run_event_task(run_pk: int, event: str, approval_pk: int | None = None) -> None:
    from runs.models import Approval, Run

    from .actions import handle_run_event

    run = Run.objects.select_related("workspace", "workspace__account").filter(pk=run_pk).first()
    if run is None:
        return
    approval = Approval.objects.select_related("step").filter(pk=approval_pk).first() if approval_pk else None
    handle_run_event(run, event, approval)
