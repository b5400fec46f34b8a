"""State in one place: the one transition function per model (Run, Step, Try).

Every status change goes through `move_run`, `move_step` or `move_try`, which refuse a move the table below
does not allow (raising IllegalMove with a sentence) and record why the move was made (`status_reason`).
They set the fields on the object in hand and return their names; the caller saves them with whatever else it
changes, so a move costs no query of its own.
"""
from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any

from django.db import connection
from django.db.models.sql import InsertQuery, UpdateQuery

from foldrun import batch, prepared
from foldrun.inserts import insert_rows
from foldrun.pgcursor import db
from foldrun.prepared import update_params, update_sql

from .models import FINISHED_RUN_STATUSES, Run, RunStatus, Step, StepStatus, Try

R, S = RunStatus, StepStatus

RUN_MOVES: dict[str, set[str]] = {
    R.QUEUED: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.RUNNING: {R.AWAITING_APPROVAL, R.WAITING, R.COMPLETED, R.FAILED, R.CANCELLED},
    R.AWAITING_APPROVAL: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.WAITING: {R.RUNNING, R.FAILED, R.CANCELLED},
    R.COMPLETED: set(), R.FAILED: set(), R.CANCELLED: set(),
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
    S.COMPLETED: set(), S.FAILED: set(), S.SKIPPED: set(), S.CANCELLED: set(),
}

TRY_MOVES: dict[str, set[str]] = {
    "running": {"completed", "failed", "parked", "lost"},
    "completed": set(), "failed": set(), "parked": set(), "lost": set(),
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
    """End a running try by key in one UPDATE (no read): only a `running` try moves, so an ended one is never
    changed again. False when it had ended already."""
    connection = db()
    if to not in TRY_MOVES["running"]:
        raise IllegalMove(f"a try cannot move from running to {to} ({why or 'no reason given'})")
    values = {"status": to, "status_reason": why[:500], **fields}
    where = {Try._meta.pk.name: attempt_pk, "status": "running"}
    # Every run's last step ends its try here: on PostgreSQL the UPDATE's SQL is made once per process and bound
    # on the server (foldrun/prepared.py) — building and compiling it through the ORM cost more than running it.
    params = update_params(Try, values, where) if connection.vendor == "postgresql" else None
    if params is None:
        return bool(Try.objects.filter(pk=attempt_pk, status="running").update(**values))
    sql = update_sql(Try, tuple(values), tuple(where), connection.vendor)
    if batch.holding():
        # Held with the closing transaction's other writes (foldrun/batch.py), whose caller holds the try's lease:
        # it is running, and this UPDATE ends it.
        batch.send_one_row(sql, params, f"ending try {attempt_pk}")
        return True
    with prepared.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount == 1


TRY_END_FIELDS = ["status", "status_reason", "error", "seconds", "finished_at", "cost_usd", "tokens_in", "tokens_out",
                  "image", "pod_line"]


def end_try_with_next(ended: Try, to: str, why: str, new: Try, **fields: Any) -> None:
    """End the running try `ended` and write `new` (the run's next try, running) in one statement: an INSERT
    of both whose conflict on (step, n) updates the existing row with `ended`'s end.

    Precondition: the caller holds `ended`'s lease under its run's lock (a step's closing transaction), so
    `ended` is running — what end_try's WHERE checks — and nobody else can end it."""
    move_try(ended, to, why)
    for name, value in fields.items():
        setattr(ended, name, value)
    ended.pk = None  # both rows in one INSERT (Django writes rows with a key apart); the conflict finds it
    insert_rows([ended, new], update_conflicts=True, unique_fields=("step", "n"), update_fields=tuple(TRY_END_FIELDS))


def start_try_with_step(step: Step, fields: list[str], new: Try) -> None:
    """Save `step`'s `fields` (the claim that moved it to running) and insert `new`, its running try, in one
    statement on PostgreSQL: the UPDATE in a WITH part of the INSERT, as Django would write each (field
    preparation, defaults, pre_save). Elsewhere two statements. Precondition: inside the claim's transaction,
    which holds the step's row lock."""
    connection = db()
    if connection.vendor != "postgresql":
        step.save(update_fields=fields)
        new.save(force_insert=True)
        return
    values = {name: getattr(step, name) for name in fields}
    key = Step._meta.pk.name
    inserted = try_fields()
    # The statement's SQL made once per process for these fields (foldrun/prepared.py's update_sql and Django's
    # INSERT of one row, kept): building and compiling it through the ORM on every claim — every run's first
    # step — cost more than running it. Each value is prepared as Django prepares it.
    claim_params = update_params(Step, values, {key: step.pk})
    insert_params = [f.get_db_prep_save(f.pre_save(new, True), connection=connection) for f in inserted]
    sql = _claim_insert_sql(tuple(values), connection.alias) if claim_params is not None else None
    if sql is None or any(hasattr(v, "as_sql") or hasattr(v, "resolve_expression") for v in insert_params):
        update = Step.objects.filter(pk=step.pk).query.chain(UpdateQuery)
        update.add_update_values(values)
        claim_sql, claim_params = update.get_compiler(connection=connection).as_sql()
        insert_sql, insert_params = _insert_try_sql(new, inserted)
        sql = f"WITH claimed AS ({claim_sql}) {insert_sql}"
    def keyed(cursor) -> None:
        new.pk = cursor.fetchone()[0]
        new._state.adding, new._state.db = False, connection.alias

    # Bound on the server, its plan kept (foldrun/prepared.py); held with the claim's COMMIT (foldrun/batch.py).
    batch.send(sql, [*claim_params, *insert_params], keyed)


@functools.cache
def try_fields() -> list:
    """The fields an INSERT of a try writes (all but its key)."""
    return [f for f in Try._meta.local_concrete_fields if f is not Try._meta.auto_field]


def _insert_try_sql(new: Try, inserted: list) -> tuple[str, tuple]:
    """Django's INSERT of the one try `new` (RETURNING its key), and its parameters."""
    insert = InsertQuery(Try)
    insert.insert_values(inserted, [new])
    compiler = insert.get_compiler(connection=connection)
    compiler.returning_fields = [Try._meta.pk]
    [(insert_sql, insert_params)] = compiler.as_sql()
    return insert_sql, insert_params


@functools.lru_cache(maxsize=16)
def _claim_insert_sql(names: tuple[str, ...], alias: str) -> str | None:
    """start_try_with_step's statement for a claim saving `names` (`alias`: part of the cache key); None when
    Django writes a value of the INSERT other than as one plain placeholder (it is then compiled each time)."""
    inserted = try_fields()
    if any(hasattr(f, "get_placeholder") for f in inserted):
        return None
    insert_sql, _ = _insert_try_sql(Try(), inserted)
    key = Step._meta.pk.name
    return f"WITH claimed AS ({update_sql(Step, names, (key,), connection.vendor)}) {insert_sql}"


def take_next_step(step: Step, seen_attempt: int, fields: list[str], *, saving: Step | None = None,
                   known: bool = False) -> bool:
    """Save `step`'s `fields` (the chain taking it) only if it is still pending and untried since it was seen
    (`seen_attempt`); True when it was taken. `saving`: the step whose try just ended, saved whole in the same
    statement on PostgreSQL — the UPDATE in a WITH part of the conditional one, as Django's save writes it — and
    saved whether or not `step` is taken. Elsewhere two statements. `known`: the caller read `step`'s row under
    the run's lock and found it as seen (runs/chain.py still_as_seen), so the take is sent with the closing
    transaction's other writes instead of waiting for its row count there; a count other than 1 then raises
    and the transaction rolls back. Precondition: inside the closing transaction of `saving`, which holds the
    run's lock."""
    connection = db()
    values = {name: getattr(step, name) for name in fields}
    if saving is None or connection.vendor != "postgresql":
        take = Step.objects.filter(pk=step.pk, status=S.PENDING, attempt=seen_attempt)
        if saving is not None:
            saving.save()
        return bool(take.update(**values))
    # Both UPDATEs as Django writes them, their SQL made once per process (foldrun/prepared.py): building and
    # compiling them through the ORM on every step cost more than running them.
    saved = {f.name: f.pre_save(saving, False) for f in Step._meta.local_concrete_fields if not f.primary_key}
    key = Step._meta.pk.name
    where = {key: step.pk, "status": S.PENDING, "attempt": seen_attempt}
    save_params = update_params(Step, saved, {key: saving.pk})
    take_params = update_params(Step, values, where)
    if save_params is None or take_params is None:
        saving.save()
        return bool(Step.objects.filter(pk=step.pk, status=S.PENDING, attempt=seen_attempt).update(**values))
    save_sql = update_sql(Step, tuple(saved), (key,), connection.vendor)
    take_sql = update_sql(Step, tuple(values), tuple(where), connection.vendor)
    if known:  # held with the closing transaction's other writes; a wrong count fails their flight
        batch.send_one_row(take_sql, take_params, f"the take of step {step.label}",
                           before=(f"ended AS ({save_sql})", save_params))
        return True
    # Bound on the server, its plan kept (foldrun/prepared.py), and sent with the writes the closing transaction
    # holds (foldrun/batch.py): its answer is needed now, theirs not.
    taken: list[int] = []
    batch.send(f"WITH ended AS ({save_sql}) {take_sql}", [*save_params, *take_params],
               lambda cursor: taken.append(cursor.rowcount))
    batch.flush()
    return taken == [1]


def skip_unstarted(run: Run, why: str) -> int:
    """A failed run's steps that never started end `skipped`, saying why (one UPDATE)."""
    return Step.objects.filter(run=run, status__in=UNSTARTED_STEP_STATUSES).update(
        status=S.SKIPPED, status_reason=why[:500])


def cancel_unstarted(run: Run, why: str) -> int:
    return Step.objects.filter(run=run, status__in=UNSTARTED_STEP_STATUSES).update(
        status=S.CANCELLED, status_reason=why[:500])
