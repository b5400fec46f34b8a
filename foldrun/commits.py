"""Commits that need not wait for the disk.

On PostgreSQL a commit waits, by default, until its WAL record is flushed: on this kind of machine a few
milliseconds, most of what a small write costs (and far more when the disk is shared). A step's own writes
do not need that wait. Such a commit is made at once and seen by every other transaction at once — a dead
worker loses nothing of it; only its flush comes later, within `wal_writer_delay` (200 ms by default), or
sooner with the next commit that does wait, since the WAL is one sequence and that flush covers it. So only
a crash of the database server itself in that fraction of a second can lose one, and what a loss leaves is
a state the crash rule already handles:

- a step's claim (its lease, its running try): the step is queued again, and a step runs once;
- the spend after each model call (the run's and the try's): the reservation it replaces stays counted,
  so a budget never admits more than its cap;
- a step's end (its result, its trace, the run's next step or its verdict): the step is running again
  with a lease that runs out, and the sweep re-runs it (it had only read) or fails it naming what it wrote.

Everything that reaches the outside waits for the disk first: the "about to write" note before a write
(runs/host.py `before_write`), a delivery's or a mail's claim before it is sent, a run's start. Each of
those commits also makes every commit before it durable, so nothing is sent on the strength of a commit
that could still be lost.
"""
from __future__ import annotations

from django.db import connection
from django.db.models import QuerySet
from django.db.models.expressions import RawSQL

# For a single statement run in autocommit: a WITH part whose set_config applies to that statement's own
# transaction (is_local), so to its commit, and to nothing after it.
NO_FLUSH_WAIT_CTE = "nowait AS (SELECT set_config('synchronous_commit', 'off', true))"


def without_flush_wait(queryset: QuerySet) -> QuerySet:
    """`queryset`, whose evaluation also lets the current transaction commit without waiting for its WAL flush
    (PostgreSQL; elsewhere the queryset as it is): the setting rides on a query the transaction makes anyway,
    evaluated once per row it returns. Precondition: inside `transaction.atomic()`."""
    if connection.vendor != "postgresql":
        return queryset
    return queryset.annotate(no_flush_wait=RawSQL("set_config('synchronous_commit', 'off', true)", ()))

