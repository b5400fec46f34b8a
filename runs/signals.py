"""Signals the runs app sends for other apps (notifications) to act on.

`run_event` is sent with keyword arguments:

- `sender`: the `Run` class
- `run`: the `Run` row, already saved with its new status
- `event`: one of
    - `"completed"`        the run finished and every step ran (verdict may be anything)
    - `"blocked"`          sent *as well as* `"completed"` when the verdict is `BLOCKED`
    - `"failed"`           the run failed (`run.error` says why)
    - `"awaiting-approval"` a `!` gate or `ask:` parked the run; `approval` is the pending row
    - `"waiting"`          a `wait: event` parked the run (no links: it waits for a machine)
    - `"cancelled"`        the run was cancelled
    - `"sla"`              the run passed its flow's `sla:` and is still going (sent once)
    - `"quarantined"`      the flow's `disable_after:` tripped with this (failed) run; its schedule stops firing
- `step`: the `Step` concerned, or None
- `approval`: the pending `Approval` for `awaiting-approval`, else None

`run_event_recorded` is the same event with the same arguments, sent at once,
inside the transaction that changed the run: a receiver there writes rows
that must commit with the run's change or not at all (notify's deliveries
and mail outbox). It must not send anything itself, and must keep its own
failure to itself (a savepoint), since the run's transaction is at stake.

`run_event` is always sent after the transaction that changed the run commits
(`transaction.on_commit`), so a receiver sees committed rows and may enqueue
Celery work. A receiver must not raise: an exception is logged and ignored
(`send_robust`), the run goes on.

Example::

    from django.dispatch import receiver
    from runs.signals import run_event

    @receiver(run_event)
    def on_run_event(sender, run, event, step=None, approval=None, **kwargs):
        ...
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

log = logging.getLogger(__name__)

run_event = Signal()
run_event_recorded = Signal()

RUN_EVENTS = ("completed", "blocked", "failed", "awaiting-approval", "waiting", "cancelled", "sla", "quarantined")


def emit(run, event: str, *, step=None, approval=None) -> None:
    """Send `run_event` once the current transaction commits."""
    if event not in RUN_EVENTS:
        raise ValueError(f"unknown run event {event!r}")

    for receiver, result in run_event_recorded.send_robust(
        sender=type(run), run=run, event=event, step=step, approval=approval
    ):
        if isinstance(result, Exception):
            log.error("run_event_recorded receiver %r failed for %s %s: %r", receiver, run.public_id, event, result)

    def send() -> None:
        for receiver, result in run_event.send_robust(
            sender=type(run), run=run, event=event, step=step, approval=approval
        ):
            if isinstance(result, Exception):
                log.error("run_event receiver %r failed for %s %s: %r", receiver, run.public_id, event, result)

    transaction.on_commit(send)


# Sent by the Triggers tab with `request` and `workspace` (found through the requester's
# membership); notify connects the outbound deliveries' part (foldrun/pageparts.py).
triggers_parts = Signal()
