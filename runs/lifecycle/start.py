"""A run's start: the run and its steps written in one transaction, and its first move — the first step's message
when the plan starts with a plain step (the run saved already running, as `advance` would leave it), else the
advance itself, made at once after commit (a queue hop saved) or left to a worker on any trouble."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from django.db import transaction

from foldrun.celery import send
from library.models import Changeset

from accounts.models import Workspace

from ..models import Run, RunStatus, Step, StepStatus
from .advance import advance
from .chain import enqueue_step
from .states import move_run, move_step


def create_run(
    *,
    workspace: Workspace,
    user,
    kind: str,
    name: str,
    plan: list[dict],
    flow_meta: dict,  # noqa: F811 - the parameter, not desks.flow_meta
    budget: float | None,
    inputs: dict,
    is_test: bool,
    trigger: str,
    changeset: Changeset | None,
    delivery_id: str,
    first_task: str | None,
    moved: bool,
    now: dt.datetime,
) -> Run:
    """A run's start (runs/actions.py do_start_run, once it is checked): its rows, written together or not at all, and the first move queued once they are committed."""
    run = Run(
        account=workspace.account,
        workspace=workspace,
        kind=kind,
        name=name,
        trigger=trigger,
        is_test=bool(is_test),
        changeset=changeset,
        changeset_number=changeset.number if changeset else 0,
        inputs={**inputs, "__flow__": flow_meta},
        plan=plan,
        budget_usd=Decimal(str(budget)) if budget else None,
        created_by=user if getattr(user, "is_authenticated", False) else None,
        delivery_id=delivery_id,
        delivery_day=now.date() if delivery_id else None,
        created_at=now,
        status=RunStatus.QUEUED,
    )
    steps = [
        Step(
            run=run,
            index=spec["number"],
            agent=spec["agent"],
            task=spec["task"],
            status=StepStatus.PENDING,
            wait_event=spec.get("wait_event") or "",
        )
        for spec in plan
    ]
    if moved:
        # The moves `advance` would make first, made on the rows before they are written (no statement more).
        move_run(run, RunStatus.RUNNING, "its first step is due")
        run.started_at = now
        move_step(steps[0], StepStatus.QUEUED, "its turn came")
        steps[0].task, steps[0].queued_at = first_task, now
    # The run and its steps together or not at all: a delivery id's unique constraint broken by a simultaneous
    # start leaves nothing written (a savepoint, inside a caller's transaction).
    with transaction.atomic():
        run.save(force_insert=True)
        Step.objects.bulk_create(steps)
    run_pk = run.pk
    if moved:
        # bulk_create returns the keys on PostgreSQL and SQLite 3.35+; look it up elsewhere.
        enqueue_step(steps[0].pk or Step.objects.get(run=run, index=plan[0]["number"], instance__isnull=True).pk)
    else:
        transaction.on_commit(lambda: advance_now_or_later(run_pk))
    return run


def advance_now_or_later(run_pk: int) -> None:
    """Take the run's first move at once (saves a queue hop); on any trouble leave it to a worker."""
    try:
        advance(run_pk)
    except Exception:  # noqa: BLE001 - the task retries the same idempotent move
        send("runs.advance", run_pk)
