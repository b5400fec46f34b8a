"""A chain of steps in one worker task: the one step its run queues next is run by the same task once the one
before it ends (runs.lifecycle.execute.run_steps_from), taken in that step's closing transaction — no claim transaction
of its own, no queue hop. What the task keeps between its steps (the vault values read, the desk, the run's
steps as last seen under the run's lock, the try just ended) lives here, per thread.
"""
from __future__ import annotations

import datetime as dt
import threading
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from foldrun import leases
from foldrun.celery import send_after_commit

from ..host import HeldSecrets
from ..models import Run, Step, StepStatus, Try
from .states import end_try, end_try_and_start_next, move_step, start_try


# The worker task running steps: the one step its run queues next is run by the same task once this one ends
# (no broker hop, no second task) — the hop is kept for work that really moves: a fan-out's instances, a step
# queued by a person's answer or from the web.
_here = threading.local()


@dataclass
class _Chain:
    """What one worker task keeps while it runs one run's steps one after another (run_steps_from)."""

    held: HeldSecrets = field(default_factory=HeldSecrets)  # vault values read by the steps before
    desk: tuple[int, Any] | None = None  # (run pk, the desk at the run's revision): a revision never changes
    # The run's plain and parent steps as this task last read or wrote them under the run's lock. A row
    # seen finished stays so (finished is final), which is all `_continue` relies on; any other row it
    # takes only if the row is still as seen (a conditional UPDATE), else `_move` reads them afresh.
    parents: dict[int, Step] | None = None
    parents_of: int | None = None  # the run they are of
    run: Run | None = None  # the run, locked, while a step's closing transaction is open
    ending: tuple | None = None  # (try, status, why, fields): the try just ended, written with the next one
    next: Any = None  # what this task runs next: a step's pk (queued) or (run, step, try, holder) (taken)


def _chain() -> _Chain | None:
    return getattr(_here, "chain", None)


def enqueue_step(step_pk: int) -> None:
    chain = _chain()
    if chain is not None and chain.next is None:
        chain.next = step_pk  # still queued in the database: if this worker dies first, the sweep sends it
        return
    send_after_commit("runs.run_step", step_pk)


def _claim_here(step: Step) -> bool:
    """Take `step` for this task inside the transaction ending the previous step (which holds the run's lock):
    the next step of a run continued in the same worker task. The caller saves it with QUEUE_FIELDS."""
    chain = _chain()
    run = chain.run if chain is not None else None
    if run is None or chain.next is not None or run.pk != step.run_id or run.is_finished:
        return False
    holder = _take(step)
    chain.next = (run, step, _start_try(chain, step), holder)
    return True


def _start_try(chain: _Chain, step: Step) -> Try:
    """The running try of a step this task just took, written with the end of the try before it when that is
    still held (one statement); see `_end_held_try`."""
    if chain.ending is None:
        return start_try(step, started_at=step.queued_at)
    ended, to, why, fields = chain.ending
    chain.ending = None
    attempt = Try(step=step, n=step.attempt, status="running", started_at=step.queued_at)
    end_try_and_start_next(ended, to, why, attempt, **fields)
    return attempt


def _end_held_try(chain: _Chain) -> None:
    """End the try the closing transaction still holds, if it does (one conditional UPDATE)."""
    if chain.ending is not None:
        ended, to, why, fields = chain.ending
        chain.ending = None
        end_try(ended.pk, to, why, **fields)


def _take(step: Step) -> str:
    """Mark `step` running under a new lease held by this task (the caller saves it); returns the holder."""
    now = timezone.now()
    holder = leases.new_holder()
    step.attempt += 1
    move_step(step, StepStatus.RUNNING, f"try {step.attempt} started")
    step.lease_holder, step.lease_until = holder, now + dt.timedelta(seconds=leases.lease_seconds())
    step.queued_at = now
    step.started_at = step.started_at or now
    step.error = ""
    return holder


def _enqueue_group(step_pks: list[int]) -> None:
    for pk in step_pks:
        send_after_commit("runs.run_step", pk)

