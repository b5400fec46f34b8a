"""The cursor foldrun's kept statements run on (foldrun/prepared.py, foldrun/batch.py): on PostgreSQL it binds
each value on the server and has the server keep each statement's plan; see prepared.py's module text."""
from __future__ import annotations

import functools
from typing import Any, Callable

from django.db import DEFAULT_DB_ALIAS, connections
from psycopg import pq


def db() -> Any:
    """This thread's wrapper of the default database, looked up once by the caller and then read directly.

    `django.db.connection` looks the wrapper up again on every attribute read, through asgiref's Local (about
    2 µs a read here); a one-step run's own code read it ~185 times, ~0.4 ms of CPU. A function that reads it
    more than once takes `connection = db()` first. Per call, never kept: each thread has its own."""
    return connections[DEFAULT_DB_ALIAS]


def cursor() -> Any:
    """A cursor for the statements of this module (see the module): on PostgreSQL it binds on the server and
    prepares each statement; elsewhere `connection.cursor()`."""
    connection = db()
    if connection.vendor != "postgresql":
        return connection.cursor()
    return connection._prepare_cursor(raw_cursor(connection))


def raw_cursor(connection: Any = None) -> Any:
    """cursor()'s psycopg cursor itself, not wrapped by Django (foldrun/batch.py sends its writes with it), on
    `connection` (db(), when the caller has it in hand). PostgreSQL only."""
    connection = db() if connection is None else connection
    connection.ensure_connection()
    raw = connection.connection
    if raw.prepare_threshold is None:
        # Django turns psycopg's preparing off (None); a threshold no statement reaches turns it back on for the
        # cursors that ask for it (this one) and for nothing else — Django's own cursors bind on the client,
        # and those never prepare.
        raw.prepare_threshold = 2**31
    made = _preparing_cursor_class()(raw)
    made.wrapper = connection  # whose query log its statements go to
    return made


def log_sent(sql: Callable[[], str], seconds: float) -> None:
    """Count and log a statement sent outside Django's cursors as they log theirs, when queries are logged (DEBUG,
    a test or the bench counting them): `sql()` gives its text, asked only then."""
    connection = db()
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql(), "time": f"{seconds:.3f}"})


def shown(connection: Any, sql: str, params: Any) -> str:
    """A statement as the query log shows it: its values in place, or its placeholders where the client cannot
    quote one."""
    try:
        return connection.ops.compose_sql(sql, params)
    except Exception:  # noqa: BLE001 - the log keeps the placeholders
        return sql


class _Logged:
    def __init__(self, query: bytes) -> None:
        self.query = query


@functools.cache
def _preparing_cursor_class() -> type:
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparingCursor(ServerBindingCursor):
        """Prepares every statement it runs (psycopg keeps up to `prepared_max` per connection): Django's wrapper
        calls `execute(sql, params)` with no way to ask for it."""

        _query_cls = _kept_query_class() or ServerBindingCursor._query_cls
        wrapper: Any = None  # the Django connection whose query log its statements go to (set by raw_cursor)

        def execute(self, query, params=None, *, prepare=None, binary=None):  # type: ignore[override]
            prepare = True if prepare is None else prepare
            raw = self.connection
            if raw._pipeline is None and not raw.autocommit and raw.pgconn.transaction_status == pq.TransactionStatus.IDLE:
                # The transaction's first statement: in a pipeline, so its BEGIN goes in the same flight
                # (foldrun/pgengine's connection) instead of a round trip of its own.
                with raw.pipeline():
                    out = super().execute(query, params, prepare=prepare, binary=binary)
            else:
                out = super().execute(query, params, prepare=prepare, binary=binary)
            connection = self.wrapper if self.wrapper is not None else db()
            if connection.queries_logged:
                # Where Django's query log reads a statement's text (`_query`, as a client-binding cursor keeps
                # it): the statement with its values in place, as the log showed it before — written only while
                # queries are logged (DEBUG, a test counting them), never on a worker's ordinary step.
                self._query = _Logged(shown(connection, query, params).encode())
            return out

    return PreparingCursor


def query_class() -> type:
    """The class a kept statement's text and values are made into what the server is sent (see below)."""
    from psycopg._queries import PostgresQuery

    return _kept_query_class() or PostgresQuery


@functools.cache
def _kept_query_class() -> type | None:
    """psycopg rewrites a statement's %s placeholders as $1, $2… once per statement text only when it has at most
    50 values (its cache guards against ORMs' ever-different statements), and again on every call otherwise —
    ~120 µs for insert_with_rows's run and step (55 values). This module's statements are few and their texts
    fixed: each is rewritten once, whatever its count. None (psycopg's own) if psycopg's inner names moved."""
    from psycopg import _queries

    convert = getattr(_queries, "_query2pg", None)
    base = getattr(_queries, "PostgresQuery", None)
    if convert is None or base is None or not hasattr(base, "_ensure_bytes") or not hasattr(base, "dump"):
        return None

    class KeptQuery(base):  # type: ignore[misc, valid-type]
        def convert(self, query: Any, vars: Any) -> None:
            if vars is None or not isinstance(query, (str, bytes)):
                return super().convert(query, vars)
            self.query, self._want_formats, self._order, self._parts = convert(self._ensure_bytes(query),
                                                                               self._tx.encoding)
            self.dump(vars)

    return KeptQuery
