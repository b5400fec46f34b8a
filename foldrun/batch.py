"""Writes a transaction sends together, with its COMMIT (PostgreSQL's pipeline mode).

A step's closing transaction writes rows whose answers it does not need before it commits: its last trace
lines, the step's and the run's UPDATEs, the try's end, the next try. Sent one by one, each waited a round
trip to the server — five of a one-step run's end, most of what they cost on a busy two-core machine. Inside
`writes_together()` they are held (`send`) and go out at once when the block ends, followed by the COMMIT in
the same flight when the block is the transaction's own end: one round trip for all of them.

What keeps this the transaction it was:

- Order. Any other statement the transaction makes while writes are held — a read, a savepoint, a write of
  the ORM's — sends the held ones first (a Django execute wrapper), so it sees them, as it did when they were
  sent at once. A statement that needs its answer at once calls `flush()`, which sends what is held with it.
- Errors. A held write that fails raises when the writes are sent, inside the transaction: nothing after it
  is made (the server skips the rest of the flight, the COMMIT included), and the transaction rolls back as
  it did when the write raised where it was made.
- Answers. What a write returns (RETURNING keys, a row count) reaches the code that sent it through its
  `on_result`, once the flight has come back and before the block ends. A write that must change exactly one
  row (`send_one_row`) is checked by the server as it runs, so that a wrong count is an error of the flight
  itself: the COMMIT sent with it is then not made. (Checked when its answer came back, the COMMIT in the same
  flight would already have been made.)

Elsewhere than PostgreSQL, and outside a block, `send` makes the statement at once and calls `on_result`
straight away: callers are written one way.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from django.db import DatabaseError

from foldrun.pgcursor import cursor, db, log_sent, raw_cursor, shown

_here = threading.local()

OnResult = Callable[[Any], None]


class _Held:
    def __init__(self) -> None:
        self.writes: list[tuple[str, list, OnResult | None]] = []

    def before_other(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        # Any statement made through Django's cursors while writes are held goes after them — in the same
        # flight: it is made in the pipeline that sends them, and its answer is in hand once that flight is back.
        if not self.writes:
            return execute(sql, params, many, context)
        return self.send_all(commit=False, then=lambda: execute(sql, params, many, context))

    def send_all(self, *, commit: bool, then: Callable[[], Any] | None = None) -> Any:
        """Send the held writes in one flight, followed by `then()` (the statement that asked for them) or by
        the COMMIT; returns what `then()` returned."""
        writes, self.writes = self.writes, []
        connection = db()
        raw = connection.connection
        started = time.monotonic()
        # Nothing to run after them but the COMMIT: one write to the server, one wait (foldrun/pgengine).
        answers = in_one_flight([(sql, params) for sql, params, _ in writes], commit=commit) if then is None else None
        if answers is not None:
            for (_, _, on_result), answer in zip(writes, answers):
                if on_result is not None:
                    on_result(answer)
            return None
        sent: list[tuple[Any, OnResult | None]] = []
        out = None
        # Wrapped as Django's cursors are: a failure is Django's DatabaseError (IntegrityError, …), as it was.
        with connection.wrap_database_errors, raw.pipeline():
            for sql, params, on_result in writes:
                cursor = raw_cursor(connection)
                cursor.execute(sql, params)
                sent.append((cursor, on_result))
            # Counted and logged as Django's cursors log theirs: a query count (tests, the bench) stays honest.
            # Before `then()`, which logs itself: the log keeps the order the server runs them in.
            # (The COMMIT Django logs itself, as it ends the block.)
            # The text is the one the cursor made for the log as it ran the write (pgcursor.PreparingCursor).
            each = (time.monotonic() - started) / max(1, len(writes))
            for cursor, _ in sent:
                log_sent(lambda cursor=cursor: cursor._query.query.decode(errors="replace"), each)
            if then is not None:
                out = then()
            elif commit:
                # As a statement of the flight: psycopg's commit() would wait for an answer of its own (a Sync) before
                # the pipeline's end waits for another. Django's commit then finds the transaction ended.
                raw_cursor(connection).execute("COMMIT", prepare=False)
        for cursor, on_result in sent:
            if on_result is not None:
                on_result(cursor)
            cursor.close()
        return out


def in_one_flight(statements: list[tuple[str, Any]], *, commit: bool) -> list | None:
    """`statements` ((sql, params) each) sent as one flight (`send_flight` in foldrun/pgengine), COMMITted with
    it when `commit`, failures raised as Django's errors and each statement counted and logged as a cursor's;
    their answers (`fetchone`, `fetchall`, `rowcount`). None, having sent nothing, where the connection is not
    foldrun's PostgreSQL one."""
    connection = db()
    raw = connection.connection
    if not hasattr(raw, "send_flight"):
        return None
    started = time.monotonic()
    with connection.wrap_database_errors:
        answers = raw.send_flight(statements, commit=commit)
    each = (time.monotonic() - started) / max(1, len(statements))
    for sql, params in statements:
        log_sent(lambda sql=sql, params=params: shown(connection, sql, params), each)
    return answers


def _held() -> _Held | None:
    held = getattr(_here, "held", None)
    return held if held is not None and db().in_atomic_block else None


@contextmanager
def writes_together() -> Iterator[None]:
    """Hold the writes `send` makes in this block and send them together when it ends — with the COMMIT when
    the block is the end of the outermost transaction (`with transaction.atomic(), writes_together():`);
    nested in a caller's transaction (a test's, an eager task's), without. Precondition: inside
    `transaction.atomic()`. Elsewhere than PostgreSQL, or inside another such block, a block that holds
    nothing."""
    connection = db()
    if connection.vendor != "postgresql" or getattr(_here, "held", None) is not None or not connection.in_atomic_block:
        yield
        return
    held = _here.held = _Held()
    try:
        with connection.execute_wrapper(held.before_other):
            yield
            if held.writes:
                # The transaction's own end: its COMMIT rides with the writes (Django's commit after this block
                # then finds nothing to commit, and runs the on_commit callbacks as after any commit).
                outermost = len(connection.atomic_blocks) == 1 and not connection.needs_rollback
                held.send_all(commit=outermost)
    finally:
        _here.held = None


def holding() -> bool:
    """Whether writes `send` makes now are held (inside `writes_together()` on PostgreSQL)."""
    return _held() is not None


def send(sql: str, params: list, on_result: OnResult | None = None) -> None:
    """Make this write: held until the block's end inside `writes_together()`, at once elsewhere; `on_result`
    gets its cursor (rows to fetch, `rowcount`) once it is made."""
    held = _held()
    if held is not None:
        held.writes.append((sql, params, on_result))
        return
    with cursor() as cur:
        cur.execute(sql, params)
        if on_result is not None:
            on_result(cur)


def flush() -> None:
    """Send the held writes now (the next statement needs their effect and its own answer in hand)."""
    held = _held()
    if held is not None and held.writes:
        held.send_all(commit=False)


def one_row(what: str) -> OnResult:
    """An `on_result` for a write made at once that must change exactly one row: anything else raises."""
    def check(cursor: Any) -> None:
        if cursor.rowcount != 1:
            raise DatabaseError(f"{what} changed {cursor.rowcount} rows, not 1")
    return check


def send_one_row(sql: str, params: list, what: str, *, before: tuple[str, list] = ("", [])) -> None:
    """`send` an UPDATE (no RETURNING) that must change exactly one row — else the transaction fails, saying
    "`what` changed N rows, not 1". `before`: `name AS (…)` parts of a WITH to run in the same statement, with
    their values.

    On PostgreSQL the server checks the count as the statement runs (SQL has no RAISE: the sentence is cast to
    an integer, which fails with it), so a held write's wrong count stops its flight before the COMMIT riding
    with it. Elsewhere the write is made at once and its row count checked here."""
    parts, values = before
    if db().vendor != "postgresql":
        send(f"WITH {parts} {sql}" if parts else sql, [*values, *params], one_row(what))
        return
    counted = (f"WITH {parts + ', ' if parts else ''}changed AS ({sql} RETURNING 1) SELECT CASE WHEN count(*) = 1 "
               f"THEN 1 ELSE (%s || count(*) || ' rows, not 1')::integer END FROM changed")
    send(counted, [*values, *params, f"{what} changed "])
