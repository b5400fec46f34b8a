"""A queued step's claim: the step moved to running under a lease, its running try written, and what the step
reads read — one transaction, the same statements on PostgreSQL and SQLite.

One query reads the step, the run's plain steps and, joined, the run with what the step reads of it (workspace,
account, revision, the desk cache's key, whether the vault is empty). The move is `move_step`'s (queued →
running, "try N started"), and it is written by one conditional UPDATE (runs/lifecycle/states.py `take_step`) that finds
the step still queued with the attempt count read: two deliveries of one message take it once — the second
waits on the first's row lock, then finds the row changed and takes nothing. Then the try is inserted. A step
not taken is explained, for the task log: a second delivery, a run that ended, a step not queued — and a queued
step of a run that ended is cancelled, saying so (every way a run ends moves its unstarted steps, so a run
that ends after the read finds the step running, and its end is the step's).

No run lock is needed: the take itself is the one write that decides, and what the step reads of its run does
not change while it runs (its plan, inputs and revision are written once, at the start). The step's end takes
the run's lock and reads the run afresh (runs/lifecycle/execute.py).
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from foldrun import leases
from vault.models import Secret

from ..desks import library_head
from ..models import FINISHED_STEP_STATUSES, Run, Step, StepStatus, Try
from .states import move_step, move_steps, start_try, take_step

STARTED = "try {} started"  # why a claimed step is running; {} is the try's number

Claimed = tuple[Run, Step, Try, list[Step]]

# What a claim writes on the step it takes.
CLAIM_FIELDS = ["attempt", "status", "status_reason", "lease_holder", "lease_until", "started_at", "error"]


def claim(step_pk: int, holder: str) -> str | Claimed:
    """Take the step `step_pk` for `holder`: its run (with what the step reads of it joined in), the step moved
    to running under the lease, its running try, and the run's plain steps (the step among them); or a word
    saying why not, for the task log."""
    with transaction.atomic():
        rows = list(_claimed_steps(step_pk))
        step = next((s for s in rows if s.pk == step_pk), None)
        if step is None:
            return "missing"
        run = step.run
        if step.status != StepStatus.QUEUED or run.is_finished:
            return _why_not(step, run)
        now = timezone.now()
        seen = step.attempt
        step.attempt += 1
        move_step(step, StepStatus.RUNNING, STARTED.format(step.attempt))
        step.lease_holder = holder
        step.lease_until = now + dt.timedelta(seconds=leases.lease_seconds())
        step.started_at = step.started_at or now
        step.error = ""
        if not take_step(step, StepStatus.QUEUED, seen, CLAIM_FIELDS):  # changed since the read: say how
            found = Step.objects.select_related("run").filter(pk=step_pk).first()
            return _why_not(found, found.run) if found is not None else "missing"
        run.library_head, run.vault_empty = step.library_head, step.vault_empty
        for row in rows:
            row.run = run  # one run object for all: what the step's end changes on it, each of them sees
        attempt = start_try(step, started_at=now)
    return run, step, attempt, rows


def _why_not(step: Step, run: Run) -> str:
    """Why the step is not taken, for the task log; a queued step of a run that ended is cancelled, saying so."""
    if step.status in FINISHED_STEP_STATUSES:
        return "already finished"  # refused: a step runs once
    if step.status == StepStatus.RUNNING:
        return "held by a lease"  # live: its holder runs it; expired: the sweep acts on it
    if step.status == StepStatus.QUEUED:  # and its run has ended
        move_steps(
            Step.objects.filter(pk=step.pk), StepStatus.QUEUED, StepStatus.CANCELLED, f"the run had {run.status}"
        )
        return "run finished"
    return f"not runnable ({step.status})"


def vault_empty(account: str = "account_id") -> Exists:
    """Whether the account (the outer row's `account`) has no secret at all, as a column of a query made anyway:
    a step that looks a name up then needs no query of its own to hear "none"."""
    return ~Exists(Secret.objects.filter(account_id=OuterRef(account)))


def _claimed_steps(step_pk: int):
    """The step and its run's plain and parent steps — when it ends, the run moves on from these without reading
    them again (runs/lifecycle/advance.py _continue) — each joined with the run, as the step reads it."""
    return (
        Step.objects.select_related("run__workspace__account", "run__changeset")
        .annotate(library_head=library_head("run__account_id"), vault_empty=vault_empty("run__account_id"))
        .filter(run_id=Subquery(Step.objects.filter(pk=step_pk).values("run_id")[:1]))
        .filter(Q(instance__isnull=True) | Q(pk=step_pk))
    )
