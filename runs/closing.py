"""A step's closing transaction in one flight, when what it would read is already in hand.

The closing transaction (runs/execute.py) reads the run under its lock — its row, whether its flow's schedule is
quarantined, its unfinished plain steps, the AGENTS.md heads its end reads, whether its account is metered —
then decides and writes: two flights. Yet a step's last spend (runs/budget.py `settle`, sent right after its
last model call) has just updated that row, and its RETURNING gives all of it: the row as the spend left it, its
version (`xmin`, which any later UPDATE of the row changes), and the same derived values. With that snapshot
the end decides before sending anything, and sends, in one flight: BEGIN, the run's lock, a guard, every write,
and the COMMIT.

The guard runs after the lock is held, as a statement of its own, so its snapshot of the database is taken
with the lock held (a statement that waited for a lock still sees the database as it was when it started).
It checks that the run's row is the version the spend returned, that the step is still running under this
try's lease, and that the derived values are still the ones the end decided on; if not, it fails (its
sentence cast to an integer, as foldrun/batch.py's `send_one_row` does), the server makes nothing after it, the
COMMIT included, and the transaction rolls back. The end is then made again the two-flight way from fresh rows,
its objects (the step, the try, the trace lines still to write) put back as they were.

PostgreSQL only; a step with no spend (none made, or one whose answer came from another statement) closes the
two-flight way.
"""
from __future__ import annotations

import copy
import functools
import threading
from dataclasses import dataclass
from typing import Any

from django.db import DataError
from django.db.models import CharField
from django.db.models.expressions import Col, RawSQL

from foldrun import batch
from foldrun.pgcursor import db

from .desks import agents_md_heads
from .models import Run, Schedule, Step, StepStatus

DERIVED = ("unfinished", "quarantined", "agents_md", "credits_null")  # what _derived gives, in order
STALE = "the run changed while its step ran"  # the guard's sentence (an error only this module reads)

_here = threading.local()


@dataclass
class Snapshot:
    """The run as a step's last spend left it (see the module)."""

    run: Run  # its row, plan and inputs deferred; annotated as the closing query annotates it
    version: str  # the row's xmin
    credits_null: bool  # the account is not metered


@functools.cache
def _fields() -> tuple:
    """The run's columns the spend returns, in order: all but its plan and inputs (written once, at the start)."""
    return tuple(f for f in Run._meta.concrete_fields if f.attname not in ("plan", "inputs"))


@functools.cache
def _attnames() -> list[str]:
    return [f.attname for f in _fields()]


@functools.lru_cache(maxsize=4)
def _converters(alias: str) -> tuple[tuple[int, Col, tuple], ...]:
    """(position, column, converters) of each of the spend's returned columns that has converters, as Django
    would apply them reading the row: found once per process and database rather than on every step's end."""
    connection = db()
    found = []
    for n, field in enumerate(_fields()):
        expression = Col(Run._meta.db_table, field)
        converters = (*connection.ops.get_db_converters(expression), *field.get_db_converters(connection))
        if converters:
            found.append((n, expression, converters))
    return tuple(found)


def unfinished_steps(run_table: str) -> RawSQL | None:
    """The run's plain and parent steps not completed or skipped, as `pk:status:attempt` joined by commas, as a
    column of the closing transaction's query on runs (PostgreSQL; None elsewhere). Read by a statement started
    once the run's lock is held (`take_lock`), and every change to a step's status is made under that lock, so
    it stays true until the transaction ends — the next step's take need not wait for its own row count
    (runs/chain.py `still_as_seen`)."""
    connection = db()
    if connection.vendor != "postgresql":
        return None
    q = connection.ops.quote_name
    return RawSQL(f"(SELECT COALESCE(string_agg(s.{q('id')} || ':' || s.{q('status')} || ':' || s.{q('attempt')}, "
                  f"','), '') FROM {q(Step._meta.db_table)} s WHERE s.{q('run_id')} = {q(run_table)}.{q('id')} "
                  f"AND s.{q('instance')} IS NULL AND s.{q('status')} NOT IN (%s, %s))",
                  (StepStatus.COMPLETED.value, StepStatus.SKIPPED.value), output_field=CharField())


@functools.lru_cache(maxsize=4)
def _derived(table: str, vendor: str = "postgresql") -> tuple[tuple[str, str, tuple], ...]:
    """(name, SQL, values) of each value the closing query derives for the run, as SQL over `table`'s row, in
    DERIVED's order; made once per process (`vendor`: the cache key; PostgreSQL only)."""
    connection = db()
    q = connection.ops.quote_name
    unfinished = unfinished_steps(table)
    quarantined = (f"EXISTS (SELECT 1 FROM {q(Schedule._meta.db_table)} s WHERE s.{q('workspace_id')} = "
                   f"{q(table)}.{q('workspace_id')} AND s.{q('flow')} = {q(table)}.{q('name')} "
                   f"AND s.{q('quarantined_at')} IS NOT NULL)")
    credits_null = (f"(SELECT a.{q('credits_usd')} IS NULL FROM {q('accounts_account')} a "
                    f"WHERE a.{q('id')} = {q(table)}.{q('account_id')})")
    heads = agents_md_heads(table)
    return (("unfinished", unfinished.sql, tuple(unfinished.params)), ("quarantined", quarantined, ()),
            ("agents_md", heads.sql, tuple(heads.params)), ("credits_null", credits_null, ()))


@functools.lru_cache(maxsize=4)
def returning(vendor: str) -> tuple[str, tuple] | None:
    """The RETURNING clause of the spend's UPDATE of the run, and its values: the snapshot (`vendor`: the cache
    key; None off PostgreSQL)."""
    if vendor != "postgresql":
        return None
    connection = db()
    q = connection.ops.quote_name
    table = Run._meta.db_table
    columns = [f"{q(table)}.{q(f.column)}" for f in _fields()]
    derived = _derived(table)
    return (" RETURNING " + ", ".join([*columns, f"{q(table)}.xmin::text", *(sql for _n, sql, _v in derived)]),
            tuple(v for _n, _sql, values in derived for v in values))


def spent(run_pk: int, attempt_pk: int, rows: Any) -> None:
    """What the try's last spend returned: its rows, or the ticket of a statement sent without waiting for its
    answer (foldrun/pgengine `send_unawaited`), read when the end asks."""
    _here.spend = (run_pk, attempt_pk, rows)


def snapshot(run: Run, attempt_pk: int) -> Snapshot | None:
    """The run as the try's last spend left it, or None (no spend by this try in this thread, or its answer is
    gone)."""
    kept = getattr(_here, "spend", None)
    _here.spend = None
    if kept is None or kept[:2] != (run.pk, attempt_pk):
        return None
    rows = kept[2]
    if isinstance(rows, int):
        connection = db()
        rows = connection.connection.unawaited_rows(rows) if connection.connection is not None else None
    if not rows:
        return None
    fields, connection = _fields(), db()
    row = list(rows[0])
    for n, expression, converters in _converters(connection.alias):
        value = row[n]
        for convert in converters:
            value = convert(value, expression, connection)
        row[n] = value
    made = Run.from_db(connection.alias, _attnames(), row[:len(fields)])
    rest = row[len(fields):]
    version = rest[0]
    derived = dict(zip(DERIVED, rest[1:]))
    made.unfinished, made.quarantined, made.agents_md = derived["unfinished"], derived["quarantined"], derived["agents_md"]
    return Snapshot(run=made, version=version, credits_null=bool(derived["credits_null"]))


@functools.lru_cache(maxsize=4)
def _guard_sql(vendor: str) -> tuple[str, str]:
    """(the lock's SQL, the guard's SQL). `vendor`: the cache key."""
    connection = db()
    q = connection.ops.quote_name
    run, step = q(Run._meta.db_table), q(Step._meta.db_table)
    lock = (f"SELECT set_config('synchronous_commit', 'off', true) FROM {run} WHERE {run}.{q('id')} = %s "
            f"FOR UPDATE")
    derived = _derived(Run._meta.db_table)
    checks = " AND ".join(f"({sql}) IS NOT DISTINCT FROM %s" for _n, sql, _v in derived)
    # The sentence is joined to the count so that it is not a constant: the planner would cast a constant, and
    # fail, before the CASE chose.
    guard = (f"SELECT CASE WHEN count(*) = 1 THEN 1 ELSE (%s || ' (' || count(*) || ' rows)')::integer END FROM {run} "
             f"WHERE {run}.{q('id')} = %s AND {run}.xmin::text = %s AND EXISTS (SELECT 1 FROM {step} s "
             f"WHERE s.{q('id')} = %s AND s.{q('lease_holder')} = %s AND s.{q('status')} = %s) AND {checks}")
    return lock, guard


def take_lock(run_pk: int) -> None:
    """On PostgreSQL, the run's lock as a statement of its own, held to go in the flight of the transaction's next
    statement (foldrun/batch.py); it also lets the transaction commit without waiting for the disk
    (foldrun/commits.py). Elsewhere nothing: the next statement locks the run as before."""
    vendor = db().vendor
    if vendor == "postgresql":
        batch.send(_guard_sql(vendor)[0], [run_pk])


def guard(snap: Snapshot, step: Step, holder: str) -> list[tuple[str, list]]:
    """The lock and the guard, as (SQL, values) to send first in the closing transaction."""
    lock_sql, sql = _guard_sql(db().vendor)
    run = snap.run
    # Each derived value's SQL carries its own values (the statuses unfinished_steps leaves out), in order;
    # each is compared with the snapshot's.
    seen = [run.unfinished, run.quarantined, run.agents_md, snap.credits_null]
    values: list = []
    for (_name, _part, part_values), expected in zip(_derived(Run._meta.db_table), seen):
        values += [*part_values, expected]
    return [(lock_sql, [run.pk]),
            (sql, [STALE, run.pk, snap.version, step.pk, holder, StepStatus.RUNNING.value, *values])]


def is_stale(exc: BaseException) -> bool:
    """Whether `exc` is the guard's failure (see the module)."""
    return isinstance(exc, DataError) and STALE in str(exc)


class Kept:
    """The objects a one-flight end changes in memory, as they were, to put back if its guard fails."""

    def __init__(self, *objs: Any, pending: list) -> None:
        self.objs = [(o, dict(o.__dict__), copy.copy(o._state)) for o in objs]
        self.pending, self.lines = pending, list(pending)

    def put_back(self) -> None:
        for obj, state, model_state in self.objs:
            obj.__dict__.clear()
            obj.__dict__.update(state)
            obj._state = model_state
        self.pending[:] = self.lines
