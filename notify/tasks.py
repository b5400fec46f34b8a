"""Notification tasks. They take ids, re-read rows and are safe to run twice:
each attempt and each mail is claimed with its lease (foldrun/leases.py)
first, so a task delivered twice — or a sweep racing a drain — sends once.
Everything is queued by task NAME (notify/enqueue.py); nothing imports this
module but Celery."""

from __future__ import annotations

import logging

from celery import shared_task

from .actions import (
    do_purge_old_deliveries,
    drain,
    drain_mail,
    perform_batch,
    send_outgoing,
    sweep_deliveries,
    sweep_mail,
)

log = logging.getLogger(__name__)


@shared_task(name="notify.attempt_delivery", ignore_result=True)
def attempt_delivery(delivery_pk: int) -> None:
    """Attempt this delivery, and any other due ones up to a batch."""
    perform_batch([delivery_pk])


@shared_task(name="notify.attempt_deliveries", ignore_result=True)
def attempt_deliveries(delivery_pks: list[int]) -> None:
    perform_batch(list(delivery_pks))


@shared_task(name="notify.drain_deliveries", ignore_result=True)
def drain_deliveries() -> int:
    """Attempt every due delivery, in parallel batches (see deliveries.drain)."""
    return drain()


@shared_task(name="notify.send_mail", ignore_result=True)
def send_mail_task(outgoing_pk: int) -> None:
    """Try one outbox mail (see outbox.send_outgoing)."""
    send_outgoing(outgoing_pk)


@shared_task(name="notify.drain_mail", ignore_result=True)
def drain_mail_task() -> int:
    """Try every mail that is due (what the sweep queues; see outbox.drain_mail)."""
    return drain_mail()


@shared_task(name="notify.sweep_due_deliveries", ignore_result=True)
def sweep_due_deliveries() -> int:
    """The beat sweep, every FOLDRUN_SWEEP_SECONDS: attempts and mail whose
    worker was lost (an expired lease) are written down as lost and their next
    try scheduled; whatever is due — a retry whose time came, anything a lost
    worker or a restarted broker dropped — is queued. It never waits for the
    broker to redeliver. Returns how many deliveries were due."""
    due = sweep_deliveries()
    sweep_mail()
    return due


@shared_task(name="notify.purge_old_deliveries", ignore_result=True)
def purge_old_deliveries() -> int:
    return do_purge_old_deliveries()
