"""Commits that need not wait for the disk.

On PostgreSQL a commit waits, by default, until its WAL record is flushed: on this kind of machine a few
milliseconds, most of what a small write costs. Two of a step's writes do not need that wait, because a
worker's death loses nothing either way (the commit is made and seen by every other transaction at once;
only the flush is later, within `wal_writer_delay`) and because the write the step's outcome depends on —
the "about to write" note before a write, the step's end — is a normal commit that flushes everything
committed before it:

- a step's claim (its lease and running try): lost only with the database itself before the step had
  written or ended, it leaves the step queued, and a step that had only read is re-run — the crash rule;
- the spend after each model call (the run's and the try's): the same, and the reservation it replaces
  stays counted until then, so a budget never admits more than its cap.

Only a crash of the database server within that fraction of a second could lose one of them. Nothing here
changes what any other transaction sees, or when.
"""
from __future__ import annotations

from django.db import connection

# For a single statement run in autocommit: a WITH part whose set_config applies to that statement's own
# transaction (is_local), so to its commit, and to nothing after it.
NO_FLUSH_WAIT_CTE = "nowait AS (SELECT set_config('synchronous_commit', 'off', true))"


def no_flush_wait() -> None:
    """Let the current transaction commit without waiting for its WAL flush (PostgreSQL; elsewhere nothing).
    Precondition: inside `transaction.atomic()` — a SET LOCAL outside a transaction does nothing."""
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
