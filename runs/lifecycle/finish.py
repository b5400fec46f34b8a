"""A run's end: `finish_run` saves its verdict, headline and summary (or its failure), skips the steps a failed run
will not get to, fires notify's events and keeps a flow's schedule's quarantine (`disable_after:`);
`finish_within` is the end a step's closing transaction makes, with no savepoint (runs/lifecycle/advance.py:
move_within). Precondition, everywhere here: inside a transaction holding the run's row lock.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError
from django.utils import timezone

from foldrun.celery import send_after_commit
from foldrun.engine.flow import headline_of, verdict_of

from ..desks import flow_meta
from ..models import Run, RunStatus, Schedule, Step, StepStatus
from ..signals import emit
from .states import move_run, skip_unstarted
from ..trace_log import trace

log = logging.getLogger(__name__)


def finish_within(run: Run, parents: dict[int, Step]) -> None:
    """move_within's end of a run whose steps all ended, with no savepoint (its SAVEPOINT and RELEASE were two of
    a run end's round trips): it writes one UPDATE of the run's row, locked here, with values that fit its
    columns (a headline cut to 500, a verdict of four words, text the steps' saves took), and notifications that
    keep their failures to themselves (notify/receivers.py). What raises before the UPDATE (an illegal move)
    wrote nothing: the advance task tries again, as after a failed savepoint. A database error is not caught."""
    try:
        finish_run(run, RunStatus.COMPLETED, parents=parents)
    except DatabaseError:
        raise  # the transaction cannot go on past it
    except Exception:  # noqa: BLE001 - as move_within's
        log.exception("moving %s on after a step failed; the advance task tries again", run.public_id)
        send_after_commit("runs.advance", run.pk)


def clears_quarantine(run: Run) -> bool:
    """Whether this run's success clears its flow's schedule's quarantine (an UPDATE). `quarantined`: whether one
    was there when the closing transaction took the run's lock (absent on a run read elsewhere: then it does)."""
    return run.kind == "flow" and getattr(run, "quarantined", True)


def finish_run(run: Run, status: str, *, error: str = "", parents: dict[int, Step] | None = None) -> None:
    """End the run `status` (completed: its verdict, headline and summary from its last completed step; failed:
    `error`, its unstarted steps skipped), and fire notify's events. Precondition: the run's lock is held.
    `parents`: the run's plain and parent steps by index, when the caller has them locked in hand."""
    moved = move_run(run, status, error.splitlines()[0] if error else "every step ended")
    run.finished_at = timezone.now()
    run.error = error[:2000]
    if status == RunStatus.COMPLETED:
        if parents is not None:
            done = [s for s in parents.values() if s.status == StepStatus.COMPLETED]
            last = max(done, key=lambda s: s.index) if done else None
        else:
            last = (
                Step.objects.filter(run=run, instance__isnull=True, status=StepStatus.COMPLETED)
                .order_by("-index")
                .first()
            )
        reply = last.output if last else ""
        run.headline = headline_of(reply)
        run.verdict = verdict_of(reply)
        lines = reply.strip().splitlines()
        run.summary = "\n".join(lines[1:]).strip()[:4000]
    else:
        run.headline = run.headline or error.splitlines()[0][:500] if error else run.headline
    run.save(update_fields=[*moved, "finished_at", "error", "headline", "verdict", "summary"])
    if status == RunStatus.FAILED:
        # Steps that never started end skipped, not pending: the record says the run will not get to them.
        skip_unstarted(run, "the run failed before this step started")
    if status == RunStatus.COMPLETED:
        emit(run, "completed")
        if run.verdict == "BLOCKED":
            emit(run, "blocked")
        # A success forgets a quarantine (clears_quarantine). One set by another run's failure since the
        # closing transaction took the lock is one that run's streak counted without this success (it cannot
        # see it before this commits), as it would have been had this UPDATE run first.
        if clears_quarantine(run):
            Schedule.objects.filter(workspace_id=run.workspace_id, flow=run.name).update(quarantined_at=None)
    elif status == RunStatus.FAILED:
        emit(run, "failed")
        _maybe_quarantine(run)


def _maybe_quarantine(run: Run) -> None:
    """`disable_after: N`: N failed runs of the flow in a row stop its schedule (once, until it succeeds)."""
    limit = flow_meta(run).get("disable_after")
    if run.kind != "flow" or not limit:
        return
    recent = list(
        Run.objects.filter(
            workspace_id=run.workspace_id,
            name=run.name,
            kind="flow",
            is_test=False,
            status__in=[RunStatus.COMPLETED, RunStatus.FAILED],
        )
        .exclude(pk=run.pk)
        .order_by("-finished_at", "-pk")
        .values_list("status", flat=True)[: limit - 1]
    )
    streak = [run.status] + recent
    if len(streak) < limit or any(s != RunStatus.FAILED for s in streak):
        return
    if Schedule.objects.filter(workspace_id=run.workspace_id, flow=run.name, quarantined_at__isnull=True).update(
        quarantined_at=timezone.now()
    ):
        trace(
            run,
            None,
            f"flow {run.name} failed {limit} times in a row (disable_after: {limit}); its schedule "
            f"stops firing until it succeeds",
        )
        emit(run, "quarantined")
