"""A queued step's claim in one flight to PostgreSQL: BEGIN, the claim's two locking reads, the take of the step
with its running try, and the COMMIT, sent together and answered once.

The claim (runs/execute.py `execute_step`) reads the run and its steps under their locks, decides, then writes
the step running and inserts its try: a flight for the reads and another for the write and its COMMIT. Almost
every message finds its step queued and its run going on, and for that case the decision can be the server's:
the take is an UPDATE that moves the step only if it is still queued and its run not finished — made after the
run's lock is taken, in the same transaction, so nothing changes either meanwhile — and the try is inserted
from what that UPDATE returns. When it takes nothing (a second delivery, a run cancelled, a step not queued),
nothing was written, and the claim is made again the two-flight way, which says why.

The move is the one `move_step` allows (queued → running, "try N started"); its sentence is written from
STARTED, the same text the two-flight claim gives move_step, and the step in hand is moved by move_step after.
"""
from __future__ import annotations

import datetime as dt
import functools

from django.db import connection, transaction
from django.db.models import BooleanField, Q, Subquery
from django.db.models.expressions import RawSQL
from django.utils import timezone

from foldrun import batch, leases, prepared
from foldrun.commits import without_flush_wait
from foldrun.inserts import column_types
from foldrun.pgcursor import db
from foldrun.prepared import Prepared
from vault.models import Secret

from .desks import library_head
from .models import FINISHED_RUN_STATUSES, FINISHED_STEP_STATUSES, Run, Step, StepStatus, Try
from .states import move_step, start_try_with_step, try_fields

STARTED = "try {} started"  # why a claimed step is running; {} is the try's number
_FINISHED_RUN = tuple(sorted(s.value for s in FINISHED_RUN_STATUSES))  # in a fixed order: the take's SQL is made once


Claimed = tuple[Run, Step, Try, list[Step]]


def claim(step_pk: int, holder: str) -> str | Claimed:
    """Take the step `step_pk` for `holder`: its run (locked, with what the step reads of it joined in), the step
    moved to running under the lease, its running try, and the run's plain steps (the step among them); or a
    word saying why not, for the task log."""
    return _claim_in_one_flight(step_pk, holder) or _claim_in_two_flights(step_pk, holder)


def _claim_in_one_flight(step_pk: int, holder: str) -> Claimed | None:
    """Take the queued step `step_pk` for `holder` (see the module): its run, the step moved to running, its try,
    and the run's plain steps with the step among them, as the two-flight claim leaves them. None when it took
    nothing, having written nothing (or off PostgreSQL): the caller claims the two-flight way."""
    connection = db()
    if connection.vendor != "postgresql":
        return None
    take = _take_sql(connection.alias)
    if take is None:
        return None
    now = timezone.now()
    new = Try(n=0, status="running", started_at=now)
    others = [f for f in try_fields() if f.name not in ("step", "n")]
    prefix, suffix = STARTED.split("{}")
    params = [StepStatus.RUNNING.value, prefix, suffix, holder, now + dt.timedelta(seconds=leases.lease_seconds()),
              now, "", step_pk, StepStatus.QUEUED.value, *_FINISHED_RUN,
              *(f.get_db_prep_save(f.pre_save(new, True), connection=connection) for f in others)]
    with transaction.atomic():
        bound = [_CLAIM._bound({"step": step_pk}), _CLAIM_STEPS._bound({"step": step_pk})]
        if any(b is None for b in bound):
            return None
        # The COMMIT in the flight when this is the transaction's own (inside a caller's — a test's, an eager
        # task's — the block ends as usual); Django's commit then finds the transaction ended.
        answers = batch.in_one_flight([(sql, values) for sql, values, _reader in bound] + [(take, params)],
                                      commit=len(connection.atomic_blocks) == 1)
        if answers is None:
            return None
        runs, rows = (reader.instances(answer.fetchall()) for answer, (_sql, _values, reader) in zip(answers, bound))
        taken = answers[2].fetchone()
    if not runs or taken is None:
        return None
    run, step = runs[0], next(s for s in rows if s.pk == step_pk)
    # The step in hand as the UPDATE left its row (its read came before it, in the same transaction).
    step.attempt += 1
    move_step(step, StepStatus.RUNNING, STARTED.format(step.attempt))  # as the UPDATE wrote it
    step.lease_holder, step.lease_until = holder, params[4]
    step.started_at = step.started_at or now
    step.error = ""
    new.pk, new.n, new.step = taken[0], step.attempt, step
    new._state.adding, new._state.db = False, connection.alias
    return run, step, new, rows


@functools.lru_cache(maxsize=4)
def _take_sql(alias: str) -> str | None:
    """The take: the step's UPDATE (queued → running, under the lease) and its try's INSERT from what it returns.
    `alias`: the cache key. None if Django does not write the try's INSERT in the form this is made from."""
    fields = try_fields()
    types = column_types(Try, fields)
    if types is None or any(hasattr(f, "get_placeholder") for f in fields):
        return None
    q = connection.ops.quote_name
    col = {name: q(Step._meta.get_field(name).column) for name in (
        "attempt", "status", "status_reason", "lease_holder", "lease_until", "started_at", "error", "run")}
    chosen = [("c." + q("id") if f.name == "step" else "c." + col["attempt"] if f.name == "n" else f"%s::{t}")
              for f, t in zip(fields, types)]
    step_table, run_table, pk = q(Step._meta.db_table), q(Run._meta.db_table), q("id")
    return (f"WITH c AS (UPDATE {step_table} SET {col['attempt']} = {col['attempt']} + 1, {col['status']} = %s, "
            f"{col['status_reason']} = %s || ({col['attempt']} + 1) || %s, {col['lease_holder']} = %s, "
            f"{col['lease_until']} = %s, {col['started_at']} = COALESCE({col['started_at']}, %s), "
            f"{col['error']} = %s WHERE {step_table}.{pk} = %s AND {step_table}.{col['status']} = %s AND EXISTS ("
            f"SELECT 1 FROM {run_table} r WHERE r.{pk} = {step_table}.{col['run']} AND r.{q('status')} NOT IN "
            f"({', '.join(['%s'] * len(_FINISHED_RUN))})) RETURNING {step_table}.{pk}, {step_table}.{col['attempt']}) "
            f"INSERT INTO {q(Try._meta.db_table)} ({', '.join(q(f.column) for f in fields)}) "
            f"SELECT {', '.join(chosen)} FROM c RETURNING {q(Try._meta.db_table)}.{pk}")




def _claim_in_two_flights(step_pk: int, holder: str) -> str | Claimed:
    """The claim read, decided and written here: the locking reads in one flight, then the write with its
    COMMIT in another (foldrun/batch.py) — or, when the step cannot be run, the word why."""
    with transaction.atomic(), batch.writes_together():
        # The run's lock first (lock order), found through the step in the same query, with what the step
        # reads of it (workspace, account, revision) joined in rather than fetched one by one later.
        # The claim need not wait for the disk: the same query says so (foldrun/commits.py).
        # The account library's head rides on it too: the desk's cache key (desks.desk_at) needs no query of its own.
        # Both queries are compiled once per process (foldrun/prepared.py), as the closing transaction's is.
        # The step, and in the same query the run's plain and parent steps: when it ends, the run moves on
        # from these without reading them again (runs/progress.py _continue). Both queries go in one round
        # trip, the run's lock taken first (prepared.together).
        runs, rows = prepared.together((_CLAIM, {"step": step_pk}), (_CLAIM_STEPS, {"step": step_pk}))
        if not runs:
            return "missing"
        run = runs[0]
        step = next(s for s in rows if s.pk == step_pk)
        if step.status in FINISHED_STEP_STATUSES:
            return "already finished"  # refused: a step runs once
        if run.is_finished:
            step.save(update_fields=move_step(step, StepStatus.CANCELLED, f"the run had {run.status}"))
            return "run finished"
        if step.status == StepStatus.RUNNING:
            return "held by a lease"  # live: its holder runs it; expired: the sweep acts on it
        if step.status != StepStatus.QUEUED:
            return f"not runnable ({step.status})"
        now = timezone.now()
        step.attempt += 1
        fields = move_step(step, StepStatus.RUNNING, STARTED.format(step.attempt))
        step.lease_holder = holder
        step.lease_until = now + dt.timedelta(seconds=leases.lease_seconds())
        step.started_at = step.started_at or now
        step.error = ""
        attempt = Try(step=step, n=step.attempt, status="running", started_at=now)
        start_try_with_step(step, ["attempt", *fields, "lease_holder", "lease_until", "started_at", "error"], attempt)
    return run, step, attempt, rows


def _vault_empty() -> RawSQL:
    """Whether the run's account has no secret at all, as a column of the claim's query on runs. Written as SQL:
    the ORM's ~Exists(...) took more CPU to compile, on every claim, than the round trip it saves."""
    q = connection.ops.quote_name
    return RawSQL(f"NOT EXISTS (SELECT 1 FROM {q(Secret._meta.db_table)} v "
                  f"WHERE v.{q('account_id')} = {q(Run._meta.db_table)}.{q('account_id')})", (),
                  output_field=BooleanField())


def _claim_run(step: int):
    return without_flush_wait(Run.objects.select_for_update(of=("self",))
                              .select_related("workspace__account", "changeset")
                              .annotate(library_head=library_head(Run._meta.db_table), vault_empty=_vault_empty())
                              .filter(steps__pk=step).order_by())[:1]  # one row: Meta.ordering's sort is for nothing


def _claim_steps(step: int):
    # The run found through the step, as _claim_run finds it: the two go together, neither waiting for the other.
    return (Step.objects.select_for_update(of=("self",))
            .filter(run_id=Subquery(Step.objects.filter(pk=step).values("run_id")))
            .filter(Q(instance__isnull=True) | Q(pk=step)))


_CLAIM = Prepared(_claim_run, step=-8_000_000_000_000_000_003)
_CLAIM_STEPS = Prepared(_claim_steps, step=-8_000_000_000_000_000_005)
