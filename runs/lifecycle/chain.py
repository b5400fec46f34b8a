"""A chain of steps in one worker task, and the queueing of a step.

The one step a run moves to next is run by the same task once the one before it ends (execute.run_steps_from),
taken in that step's closing transaction — no claim transaction of its own, no queue hop. What the task keeps
between its steps (the vault values read, the desk, the run's steps as last seen under the run's lock, the try
just ended) is a `Chain`, handed explicitly to the functions that end a step and move its run on; what the task
runs next is the value they return (`Next`), never a side effect: `enqueue_step` always sends a message.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Union

from django.utils import timezone

from foldrun import leases
from foldrun.celery import send_after_commit

from ..host import HeldSecrets
from ..models import Run, Step, StepStatus, Try
from .states import end_try, end_try_and_start_next, move_step, new_try, start_try


@dataclass
class Taken:
    """A step this task took for itself in the closing transaction of the step before it (moved to running under
    `holder`'s lease, its try written): the task runs it next without a claim."""

    run: Run
    step: Step
    attempt: Try
    holder: str


# What a worker task runs next after a step ends: a step it took (`Taken`), the key of a step left queued in the
# database for it (a retry, the next `max:` instance — if this worker dies first, the sweep sends it), or nothing.
Next = Union[Taken, int, None]


@dataclass
class Chain:
    """What one worker task keeps while it runs one run's steps one after another (execute.run_steps_from).

    `takes_next`: False for a single step run on its own (execute_step): what it moves to next is sent as a
    message, as from any other caller."""

    takes_next: bool = True
    held: HeldSecrets = field(default_factory=HeldSecrets)  # vault values read by the steps before
    desk: tuple[int, Any] | None = None  # (run pk, the desk at the run's revision): a revision never changes
    # The run's plain and parent steps as this task last read or wrote them under the run's lock. A row
    # seen finished stays so (finished is final), which is all advance's `_continue` relies on; any other row
    # it takes only if the row is still as seen (a conditional UPDATE), else `_move` reads them afresh.
    parents: dict[int, Step] | None = None
    parents_of: int | None = None  # the run they are of
    run: Run | None = None  # the run, locked, while a step's closing transaction is open
    ending: tuple | None = None  # (try, status, why, fields): the try just ended, written with the next one

    def take_here(self, step: Step) -> Taken | None:
        """Take `step` for this task inside the transaction ending the previous step (which holds the run's
        lock); None when this chain cannot (no closing transaction open for the step's run, or the run ended).
        The caller saves the step with QUEUE_FIELDS."""
        run = self.run
        if not self.takes_next or run is None or run.pk != step.run_id or run.is_finished:
            return None
        holder = take(step)
        return Taken(run, step, self.start_try(step), holder)

    def start_try(self, step: Step) -> Try:
        """The running try of a step this task just took, written with the end of the try before it when that is
        still held (one statement); see `end_held_try`."""
        if self.ending is None:
            return start_try(step, started_at=step.queued_at)
        ended, to, why, fields = self.ending
        self.ending = None
        attempt = new_try(step, started_at=step.queued_at)
        end_try_and_start_next(ended, to, why, attempt, **fields)
        return attempt

    def end_held_try(self) -> None:
        """End the try the closing transaction still holds, if it does (one conditional UPDATE)."""
        if self.ending is not None:
            ended, to, why, fields = self.ending
            self.ending = None
            end_try(ended.pk, to, why, **fields)


def steering(chain: Chain | None) -> Chain | None:
    """The chain that may take a run's next step for its task: `chain` unless it runs a single step."""
    return chain if chain is not None and chain.takes_next else None


def take(step: Step) -> str:
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


def enqueue_step(step_pk: int) -> None:
    """Send the step's message (`runs.run_step`) once the transaction commits."""
    send_after_commit("runs.run_step", step_pk)


def enqueue_group(step_pks: list[int]) -> None:
    """Send each step's message once the transaction commits: a fan-out's instances, one task each."""
    for pk in step_pks:
        send_after_commit("runs.run_step", pk)


QUEUE_FIELDS = ["status", "status_reason", "queued_at", "lease_holder", "lease_until", "attempt", "started_at", "error"]


def queue(step: Step, now=None, why: str = "its turn came", *, chain: Chain | None = None) -> Next:
    """Mark `step` queued (the caller saves it, with `QUEUE_FIELDS`) and send its message after commit — or, with
    a `chain` (a worker task ending the step before it), return it for that task to run next: taken at once when
    it was pending, else left queued in the database (the sweep sends it if this worker dies first)."""
    chain = steering(chain)
    if chain is not None and step.status == StepStatus.PENDING:
        taken = chain.take_here(step)
        if taken is not None:
            return taken
    move_step(step, StepStatus.QUEUED, why)
    step.queued_at = now or timezone.now()
    step.lease_holder, step.lease_until = "", None
    if chain is not None:
        return step.pk
    enqueue_step(step.pk)
    return None
