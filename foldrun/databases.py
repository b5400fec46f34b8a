"""Where foldrun's two databases truly differ, named in one place.

Everything else — a run's start, a step's claim, a step's end — is written once with Django's public ORM and
runs the same on both. What differs:

- Row locks. PostgreSQL locks the rows a `select_for_update()` reads (and `skip_locked=True` passes over rows
  another transaction holds); SQLite has no row locks and Django ignores both there: its transactions are
  IMMEDIATE (settings: `transaction_mode`), so the one writer holds the whole database and the reads that
  follow in its transaction are as current as a locked row would be. Callers write `select_for_update()` once.
- A bound on a lock wait: PostgreSQL's `lock_timeout`, for one transaction (`wait_for_locks_at_most`); SQLite's
  one writer waits its busy timeout (settings: OPTIONS `timeout`).
- A connection pool for the web process: psycopg's pool through Django's `OPTIONS["pool"]`
  (`pool_web_connections`); SQLite's connections are files, opened per request.
"""

from __future__ import annotations

from django.db import connection

POSTGRESQL = "django.db.backends.postgresql"


def is_postgresql() -> bool:
    return connection.vendor == "postgresql"


def pool_web_connections(databases: dict, pool: dict) -> None:
    """Make `databases` (a web process's own settings.DATABASES, before any connection opens) draw their
    PostgreSQL connections from a psycopg pool of `pool`'s options (min_size, max_size, timeout: how long a
    request waits for a free connection), and keep none past a request otherwise (Django's pool requires
    CONN_MAX_AGE 0). A worker or beat never calls this: each keeps its one connection."""
    for database in databases.values():
        database["CONN_MAX_AGE"] = 0
        if database["ENGINE"] == POSTGRESQL:
            database.setdefault("OPTIONS", {})["pool"] = dict(pool)


def wait_for_locks_at_most(seconds: float) -> None:
    """Within the current transaction, a statement that waits longer than `seconds` for a row lock fails
    (PostgreSQL's `SET LOCAL lock_timeout`, through `set_config(…, is_local => true)`). SQLite: nothing — its one
    writer waits its busy timeout. Precondition: inside `transaction.atomic()`."""
    if is_postgresql():
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{max(int(seconds * 1000), 1)}ms"])
