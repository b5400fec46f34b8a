"""State in one place: the one transition function per model (Run, Step, Try).

Every status change goes through `move_run`, `move_step` or `move_try`, which refuse a move the table below
does not allow (raising IllegalMove with a sentence) and record why the move was made (`status_reason`).
They set the fields on the object in hand and return their names; the caller saves them with whatever else it
changes, so a move costs no query of its own.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import QuerySet

from ..models import FINISHED_RUN_STATUSES, Run, RunStatus, Step, StepStatus, Try

R, S = RunStatus, StepStatus

RUN_MOVES: dict[str, set[str]] = {
    R.QUEUED: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.RUNNING: {R.AWAITING_APPROVAL, R.WAITING, R.COMPLETED, R.FAILED, R.CANCELLED},
    R.AWAITING_APPROVAL: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.WAITING: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.COMPLETED: set(),
    R.FAILED: set(),
    R.CANCELLED: set(),
}

STEP_MOVES: dict[str, set[str]] = {
    # A fan-out's parent goes pending → running (its instances run) → completed/failed; an `each:` with no items
    # or that cannot split its input ends at once.
    S.PENDING: {S.QUEUED, S.RUNNING, S.AWAITING_APPROVAL, S.WAITING, S.COMPLETED, S.FAILED, S.SKIPPED, S.CANCELLED},
    S.QUEUED: {S.RUNNING, S.SKIPPED, S.CANCELLED},
    # Back to queued: a `retry:` or a re-run after a lost worker; back to pending: it asked a person.
    S.RUNNING: {S.COMPLETED, S.FAILED, S.QUEUED, S.PENDING, S.CANCELLED},
    S.AWAITING_APPROVAL: {S.PENDING, S.QUEUED, S.CANCELLED, S.SKIPPED},
    S.WAITING: {S.PENDING, S.CANCELLED, S.SKIPPED},
    S.COMPLETED: set(),
    S.FAILED: set(),
    S.SKIPPED: set(),
    S.CANCELLED: set(),
}

TRY_MOVES: dict[str, set[str]] = {
    "running": {"completed", "failed", "parked", "lost"},
    "completed": set(),
    "failed": set(),
    "parked": set(),
    "lost": set(),
}

UNSTARTED_STEP_STATUSES = [S.PENDING, S.QUEUED, S.WAITING, S.AWAITING_APPROVAL]


class IllegalMove(Exception):
    """A status change the model's table does not allow; the message says which and why it was asked."""


def _move(kind: str, table: dict[str, set[str]], obj: Any, to: str, why: str) -> list[str]:
    current = str(obj.status)
    if current == str(to):
        obj.status_reason = why[:500] or obj.status_reason
        return ["status_reason"]
    if str(to) not in table.get(current, set()):
        raise IllegalMove(f"{kind} cannot move from {current} to {to} ({why or 'no reason given'})")
    obj.status = to
    obj.status_reason = why[:500]
    return ["status", "status_reason"]


def move_run(run: Run, to: str, why: str = "") -> list[str]:
    """…and a run that ends holds no reservation any more: a call its lost worker reserved for and never settled
    (the provider may have billed it) counts against the run's cap until then, and against no window after."""
    fields = _move(f"run {run.public_id}", RUN_MOVES, run, to, why)
    if to in FINISHED_RUN_STATUSES and "status" in fields:
        run.reserved_usd = Decimal("0")
        fields.append("reserved_usd")
    return fields


def move_step(step: Step, to: str, why: str = "") -> list[str]:
    return _move(f"step {step.label}", STEP_MOVES, step, to, why)


def move_try(attempt: Try, to: str, why: str = "") -> list[str]:
    return _move(f"try {attempt.n}", TRY_MOVES, attempt, to, why)


def end_try(attempt_pk: int, to: str, why: str = "", **fields: Any) -> bool:
    """End a running try by key in one conditional UPDATE (no read): only a `running` try moves, so an ended one
    is never changed again. False when it had ended already."""
    if to not in TRY_MOVES["running"]:
        raise IllegalMove(f"a try cannot move from running to {to} ({why or 'no reason given'})")
    return bool(
        Try.objects.filter(pk=attempt_pk, status="running").update(status=to, status_reason=why[:500], **fields)
    )


TRY_END_FIELDS = [
    "status",
    "status_reason",
    "error",
    "seconds",
    "finished_at",
    "cost_usd",
    "tokens_in",
    "tokens_out",
    "image",
    "pod_line",
]


def end_try_and_start_next(ended: Try, to: str, why: str, new: Try, **fields: Any) -> None:
    """End the running try `ended` and insert `new` (its run's next try, running) in one statement: Django's
    `bulk_create(update_conflicts=True)` of both, `ended`'s row already there on (step, n), so its end is the
    conflict's update. Precondition: the caller holds `ended`'s lease under its run's lock (a step's closing
    transaction), so `ended` is running — what end_try's WHERE checks — and nobody else can end it."""
    move_try(ended, to, why)
    for name, value in fields.items():
        setattr(ended, name, value)
    key, ended.pk = ended.pk, None  # both rows in one INSERT: Django writes rows with a key apart
    try:
        Try.objects.bulk_create(
            [ended, new], update_conflicts=True, unique_fields=["step", "n"], update_fields=TRY_END_FIELDS
        )
    finally:
        ended.pk = key
        ended._state.adding = False
    if new.pk is None:  # a database that does not return keys from such an INSERT
        new.pk = Try.objects.filter(step=new.step, n=new.n).values_list("pk", flat=True).get()


def new_try(step: Step, started_at=None) -> Try:
    """The running try of `step`, just moved to running (its `attempt` counted), not yet saved: a try is born
    running (the one status its table starts from) and moves only through `move_try` and `end_try`."""
    return Try(step=step, n=step.attempt, status="running", started_at=started_at or step.started_at)


def start_try(step: Step, started_at=None) -> Try:
    """The running try of `step`, just moved to running (its `attempt` counted): inserted, and returned."""
    attempt = new_try(step, started_at)
    attempt.save(force_insert=True)
    return attempt


def take_step(step: Step, seen_status: str, seen_attempt: int, fields: list[str]) -> bool:
    """Save `step`'s `fields` (a move made on it in hand, by move_step) only if its row is still `seen_status`
    with the attempt count seen (`seen_attempt`): a conditional UPDATE, whose row count says whether it was
    taken. Two hands that read the same row take it once."""
    values = {name: getattr(step, name) for name in fields}
    return bool(Step.objects.filter(pk=step.pk, status=seen_status, attempt=seen_attempt).update(**values))


def move_steps(steps: QuerySet, frm: str, to: str, why: str, **fields: Any) -> int:
    """Move every step of `steps` that is `frm` to `to`, saying why, in one conditional UPDATE (the table's
    check made once for the move); how many moved."""
    if str(to) not in STEP_MOVES[str(frm)]:
        raise IllegalMove(f"a step cannot move from {frm} to {to} ({why or 'no reason given'})")
    return steps.filter(status=frm).update(status=to, status_reason=why[:500], **fields)


def skip_unstarted(run: Run, why: str) -> int:
    """A failed run's steps that never started end `skipped`, saying why (one UPDATE: a move each status's row
    of the table allows)."""
    return _end_unstarted(run, S.SKIPPED, why)


def cancel_unstarted(run: Run, why: str) -> int:
    return _end_unstarted(run, S.CANCELLED, why)


def _end_unstarted(run: Run, to: str, why: str) -> int:
    if not all(to in STEP_MOVES[status] for status in UNSTARTED_STEP_STATUSES):
        raise IllegalMove(f"a step that never started cannot move to {to} ({why or 'no reason given'})")
    return Step.objects.filter(run=run, status__in=UNSTARTED_STEP_STATUSES).update(status=to, status_reason=why[:500])
