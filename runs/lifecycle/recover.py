"""The recovery sweep: what happens to work whose worker died (DESIGN.md's crash rule).

Run by Celery beat every `FOLDRUN_SWEEP_SECONDS`. It never waits for the
broker to redeliver (Redis keeps an unacknowledged message until its
visibility timeout; the embedded broker keeps it only in the dead worker's
memory), so it works the same on both:

- a step `running` whose lease ran out was lost with its worker. Its try is
  kept on the record as `lost` (with its cost, tokens and seconds, which the
  step's totals include). Had it only read, it runs again as a new try; had
  it written, it fails with a sentence naming what it wrote, and the run moves
  on as for any failure (`retry:`, `on-fail:`, notifications);
- a step `queued` for more than a lease's length whose message is no longer
  in the queue (a dead worker took it with it) is sent again; a second
  message for one step is harmless, since only one claim can take it;
- a run still going with no step queued, running or parked (its move on was
  lost) is moved on.

A live lease is never touched, whoever holds it and wherever it runs.
"""

from __future__ import annotations

import datetime as dt
import logging

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from foldrun import incidents, leases
from foldrun.broker import waiting_task_args

from ..trace_log import trace
from .advance import advance, fail_run
from .chain import enqueue_step, queue
from .settle import settle_failure
from ..models import Run, RunStatus, Step, StepStatus, Try
from .states import move_step, move_try

log = logging.getLogger(__name__)

# A step lost this many times with its worker is not run again: something in it takes the worker down.
MAX_LOST_RERUNS = 5
ACTIVE_STEP_STATUSES = [StepStatus.QUEUED, StepStatus.RUNNING, StepStatus.AWAITING_APPROVAL, StepStatus.WAITING]


def sweep(now: dt.datetime | None = None) -> dict[str, int]:
    """One pass. Returns how many steps were recovered, re-sent and runs moved on (for the task log)."""
    now = now or timezone.now()
    lease = dt.timedelta(seconds=leases.lease_seconds())
    lost = list(leases.expired(Step, now).filter(status=StepStatus.RUNNING).values_list("pk", flat=True))
    recovered = sum(1 for pk in lost if recover_step(pk, now=now))
    stale = list(
        Step.objects.filter(status=StepStatus.QUEUED)
        .filter(Q(queued_at__lt=now - lease) | Q(queued_at__isnull=True))
        .values_list("pk", flat=True)
    )
    if stale:
        waiting = waiting_task_args("runs.run_step")
        if waiting is not None:  # still in the queue, behind others: not lost
            stale = [pk for pk in stale if repr((pk,)) not in waiting]
    resent = sum(1 for pk in stale if _resend(pk, now=now))
    stuck = list(
        Run.objects.filter(status__in=[RunStatus.QUEUED, RunStatus.RUNNING], created_at__lt=now - lease)
        .exclude(steps__status__in=ACTIVE_STEP_STATUSES)
        .values_list("pk", flat=True)
    )
    for pk in stuck:
        try:
            advance(pk)
        except Exception:  # noqa: BLE001 - a run that cannot move on fails with a sentence, never hangs
            code = incidents.record(log, "moving run %s on from the sweep failed", pk)
            fail_run(pk, incidents.sentence("the run", code))
    return {"recovered": recovered, "resent": resent, "moved": len(stuck)}


def recover_step(step_pk: int, *, now: dt.datetime | None = None) -> bool:
    """Act on one step whose lease ran out. False when it was not lost after all (renewed, or ended)."""
    now = now or timezone.now()
    with transaction.atomic():
        run = (
            Run.objects.select_for_update(of=("self",))
            .select_related("workspace__account")
            .filter(steps__pk=step_pk)
            .first()
        )
        if run is None:
            return False
        step = Step.objects.select_for_update().get(pk=step_pk)
        if step.status != StepStatus.RUNNING or step.lease_until is None or step.lease_until >= now:
            return False  # its holder renewed in time, or it ended: nothing was lost
        _keep_lost_try(step, now)
        who = f"the worker running step {step.label} ({step.agent})"
        step.lease_holder, step.lease_until = "", None
        if run.is_finished:
            move_step(step, StepStatus.CANCELLED, f"its worker was lost, and the run had {run.status}")
            step.finished_at = now
            step.save()
            return True
        if step.wrote:
            message = (
                f"{who} was lost after it had written: {'; '.join(step.wrote)} — it is not run again, "
                f"so nothing is sent twice"
            )
            trace(run, step, message)
            settle_failure(run, step, message, retry_allowed=True)
            return True
        if step.lost_reruns >= MAX_LOST_RERUNS:
            message = (
                f"{who} was lost {step.lost_reruns + 1} times; it is not run again (something in the step "
                f"takes its worker down)"
            )
            trace(run, step, message)
            settle_failure(run, step, message, retry_allowed=False)
            return True
        step.lost_reruns += 1
        trace(run, step, f"{who} was lost; it had only read, so the step runs again")
        queue(step, now, why=f"try {step.attempt} was lost with its worker; it had only read")
        step.save()
    return True


def _keep_lost_try(step: Step, now: dt.datetime) -> None:
    """The lost try stays on the record, `lost`, with what it had spent (the step's totals include it)."""
    attempt = Try.objects.filter(step=step, n=step.attempt, status="running").first()
    if attempt is None:
        return
    last_seen = (step.lease_until or now) - dt.timedelta(seconds=leases.lease_seconds())
    # Its last signs of life: its last renewal (the lease's expiry less one lease) and its last paid call.
    attempt.seconds = max(attempt.seconds, (max(last_seen, attempt.started_at) - attempt.started_at).total_seconds())
    if attempt.finished_at is None:
        attempt.finished_at = now
    fields = move_try(attempt, "lost", "its lease ran out: the worker stopped renewing it")
    attempt.error = "the worker was lost during this try"
    attempt.save(update_fields=["seconds", "finished_at", *fields, "error"])
    step.cost_usd += attempt.cost_usd
    step.tokens_in += attempt.tokens_in
    step.tokens_out += attempt.tokens_out


def _resend(step_pk: int, *, now: dt.datetime) -> bool:
    """Send a queued step's message again when nobody took it for a lease's length (a dead worker had it)."""
    stamped = (
        Step.objects.filter(pk=step_pk, status=StepStatus.QUEUED)
        .filter(Q(queued_at__lt=now - dt.timedelta(seconds=leases.lease_seconds())) | Q(queued_at__isnull=True))
        .update(queued_at=now)
    )
    if stamped:
        enqueue_step(step_pk)
    return bool(stamped)
