"""Django's PostgreSQL backend, with a health check that asks the connection's socket before the server, a
transaction's BEGIN sent with its first statement, statements sent without waiting for their answer, and a
flight of statements sent in one write and answered once (`send_flight`).

A worker keeps its connection from task to task and checks it at each task's first use (CONN_HEALTH_CHECKS),
so a connection the server dropped is replaced there rather than failing the work. Django's check is a
`SELECT 1`: a round trip per task, a twentieth of a one-step run's time in the worker. A connection the server
ended — a terminated backend, a restart, a crash — has something to read on its idle socket (the server's
goodbye, or the end of the stream), and a live idle one has nothing: so the socket is polled, without waiting,
and only a connection with something waiting on it is asked `SELECT 1` (Django's own check, which then fails
and replaces it). A connection that vanished silently on the network answers neither way until TCP gives up,
with or without the round trip.
"""
from __future__ import annotations

import select
from typing import Any

import psycopg
from django.db.backends.postgresql import base
from psycopg import errors, generators, pq
from psycopg.adapt import PyFormat, Transformer

from foldrun.pgcursor import query_class

# What Django's postgresql backend module provides besides the wrapper (the ENGINE path names this package).
from django.db.backends.postgresql.base import *  # noqa: F401,F403


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        raw = self.connection
        if raw is None or raw.closed or raw.pgconn.status != pq.ConnStatus.OK:
            return False
        if raw.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return super().is_usable()
        try:
            waiting, _, _ = select.select([raw.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return super().is_usable() if waiting else True

    def get_new_connection(self, conn_params):
        raw = super().get_new_connection(conn_params)
        if type(raw) is psycopg.Connection:
            raw.__class__ = Connection  # the same object, with the BEGIN below (psycopg's class adds no slots)
        return raw


class Connection(psycopg.Connection):
    """psycopg's connection, whose transaction's BEGIN goes with the statement after it.

    psycopg starts a transaction by sending BEGIN before the transaction's first statement and waiting for its
    answer — in pipeline mode too, where it syncs after BEGIN alone. That wait is a round trip of its own for
    each transaction a step makes (its claim, its end). Here, in pipeline mode, the BEGIN is queued and not
    synced, so it reaches the server in the same flight as the statement that caused it (pgcursor's cursor
    runs a transaction's first statement in a pipeline for that); the server runs them in order, so the
    statement is inside the transaction as before. Outside pipeline mode nothing changes."""

    _begun_in: object = None  # the pipeline whose flight carries a BEGIN not yet answered
    _unawaited: bool = False  # a statement sent by send_unawaited whose answer is still to be read
    _kept: dict[str, bytes] | None = None  # send_unawaited's statements prepared on this connection, by text
    _sent: int = 0  # how many statements send_unawaited has sent on this connection: each one's ticket
    _answer: tuple[int, list] | None = None  # (ticket, results) of the last one whose answer was read
    _flights: dict[tuple, bytes] | None = None  # send_flight's statements prepared here: (text, types) -> name
    _flight_names: int = 0  # names send_flight has given on this connection (each one once)

    def send_flight(self, statements: list[tuple[str, Any]], *, commit: bool) -> list["Answer"]:
        """Make `statements` (each `(sql, params)`, `%s` placeholders as a cursor takes them) in order — inside
        the transaction, which this flight begins when it is the first to speak in it, and then COMMITted when
        `commit` — and return each one's answer. The whole flight is one write to the socket and one wait for
        the server.

        psycopg's pipeline sends a statement, flushes it and polls the socket for each one in turn: for the five
        of a step's claim that was ~150 µs of this process's CPU above what the statements cost (measured beside
        this, on this machine), and the server was woken once per statement. Here each statement is prepared on
        the server the first time its text (with its values' types) is met — the PREPARE rides in the same
        flight — and bound by name after.

        The first statement that fails raises its error, as a cursor would; the server skips the rest of the
        flight (the COMMIT with it), and the transaction is left failed for its caller's rollback. Precondition:
        not in a psycopg pipeline."""
        with self.lock:
            self._take_unawaited()
            if self._pipeline is not None:
                raise errors.ProgrammingError("send_flight cannot be used inside a pipeline")
            pgconn = self.pgconn
            kept = self._flights if self._flights is not None else {}
            self._flights = kept
            dumper = Transformer(self)
            made = query_class()
            queries = []
            for sql, params in statements:  # a value that cannot be sent raises here, before anything is
                query = made(dumper)
                query.convert(sql, params)
                queries.append(query)
            sent: list[tuple[str, Any]] = []  # per command sent: what it was, to read its result by
            preparing: dict[tuple, bytes] = {}  # prepared in this flight, kept once the server says so
            pgconn.enter_pipeline_mode()
            try:
                if not self._autocommit and pgconn.transaction_status == pq.TransactionStatus.IDLE:
                    pgconn.send_query_params(b"BEGIN", None)
                    sent.append(("begin", None))
                for query in queries:
                    key = (query.query, tuple(query.types))
                    name = kept.get(key) or preparing.get(key)
                    if name is None and len(kept) + len(preparing) < _FLIGHT_KEPT:
                        self._flight_names += 1
                        name = preparing[key] = f"foldrun_flight_{self._flight_names}".encode()
                        pgconn.send_prepare(name, query.query, param_types=query.types)
                        sent.append(("prepare", (key, name)))
                    if name is None:  # full: this one goes unprepared
                        pgconn.send_query_params(query.query, query.params, param_types=query.types,
                                                 param_formats=query.formats)
                    else:
                        pgconn.send_query_prepared(name, query.params, param_formats=query.formats)
                    sent.append(("statement", None))
                if commit:
                    pgconn.send_query_params(b"COMMIT", None)
                    sent.append(("commit", None))
                pgconn.pipeline_sync()
                results = super().wait(_flight(pgconn))
            except BaseException:  # an interrupt mid-flight too leaves a half-sent pipeline: drop it, raise
                self._abandon_pipeline()
                raise
            pgconn.exit_pipeline_mode()
            answers: list[Answer] = []
            failed = None
            for (what, extra), result in zip(sent, results):
                status = result[-1].status if result else None
                if status == pq.ExecStatus.FATAL_ERROR and failed is None:
                    failed = result[-1]
                if what == "prepare" and status == pq.ExecStatus.COMMAND_OK:
                    kept[extra[0]] = extra[1]
                elif what == "statement":
                    answers.append(Answer(self, result[-1] if result else None))
            if failed is not None:
                raise errors.error_from_result(failed, encoding=self.info.encoding)
            return answers

    def _abandon_pipeline(self) -> None:
        """A flight stopped midway (an interrupt, a lost connection): its answers can no longer be told apart,
        so the connection is closed, and Django replaces it."""
        try:
            self.pgconn.exit_pipeline_mode()
        except Exception:  # noqa: BLE001 - results still due: the connection cannot be used again
            self.close()

    def send_unawaited(self, query: str, params: list[Any]) -> int | None:
        """Send `query` (one statement, `%s` for each of `params`, no other `%`) to run in autocommit, and return
        once it is on its way, without waiting for its answer: that is read before the connection's next use
        (`wait`, through which every operation of psycopg goes), and an error it met is raised there. Returns
        the statement's ticket, for `unawaited_rows`; None, having sent nothing, where it cannot be sent so:
        inside a transaction or a pipeline.

        For a write whose answer nobody needs at once but which must be committed soon — a step's spend after a
        model call (runs/budget.py `settle`): the server runs and commits it whether or not this process lives
        to read the answer, and the step does its next work meanwhile instead of waiting a round trip."""
        with self.lock:
            self._take_unawaited()
            if not self._autocommit or self._pipeline is not None or self.pgconn.transaction_status != pq.TransactionStatus.IDLE:
                return None
            kept = self._kept if self._kept is not None else {}
            self._kept = kept
            name = kept.get(query)
            if name is None:
                if "%" in query.replace("%s", ""):
                    # Its placeholders are found by splitting on %s: a literal % (or %%) would be misread.
                    raise ValueError("send_unawaited takes a statement whose only % are its %s placeholders")
                # Prepared once per connection, the types left to the server (what each value is compared with
                # or added to): psycopg picks an integer's type by its size, and a statement prepared for a
                # smallint would refuse a larger count later.
                name = f"foldrun_unawaited_{len(kept)}".encode()
                parts = query.split("%s")
                numbered = parts[0] + "".join(f"${n}{part}" for n, part in enumerate(parts[1:], 1))
                self.pgconn.send_prepare(name, numbered.encode())
                self._check(super().wait(generators.execute(self.pgconn)))
                kept[query] = name
            values = Transformer(self).dump_sequence(params, [PyFormat.TEXT] * len(params))
            self.pgconn.send_query_prepared(name, values)
            super().wait(generators.send(self.pgconn))
            self._unawaited = True
            self._sent += 1
            return self._sent

    def unawaited_rows(self, ticket: int) -> list[tuple] | None:
        """The rows the statement send_unawaited gave `ticket` returned (its answer read now if it is still to
        come), each value as psycopg loads it on this connection; None once a later one was sent."""
        with self.lock:
            self._take_unawaited()
            if self._answer is None or self._answer[0] != ticket:
                return None
            rows: list[tuple] = []
            for result in self._answer[1]:
                if result.status == pq.ExecStatus.TUPLES_OK and result.ntuples:
                    loader = Transformer(self)
                    loader.set_pgresult(result)
                    rows += loader.load_rows(0, result.ntuples, tuple)
            return rows

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        if self._unawaited:
            self._take_unawaited()
        return super().wait(gen, *args, **kwargs)

    def _take_unawaited(self) -> None:
        """Read the answer of the statement send_unawaited sent; raise the error it met, if any."""
        if self._unawaited:
            self._unawaited = False
            self._answer = None
            results = super().wait(generators.fetch_many(self.pgconn))
            self._check(results)
            self._answer = (self._sent, results)

    def _check(self, results: list) -> None:
        for result in results:
            if result.status == pq.ExecStatus.FATAL_ERROR:
                raise errors.error_from_result(result, encoding=self.info.encoding)

    def _start_query(self):  # type: ignore[override]
        if self._autocommit or self.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return
        pipeline = self._pipeline
        if pipeline is not None and self._begun_in is pipeline:
            return  # this flight already begins the transaction: the server reports it only once it syncs
        yield from self._exec_command(self._get_tx_start_command())
        self._begun_in = pipeline

    def _deallocate(self, name: bytes | None):  # type: ignore[override]
        if name is None:
            # DEALLOCATE ALL: psycopg's answer to any ROLLBACK (a savepoint's too) once it has prepared statements.
            # send_unawaited's and send_flight's go with them, and are prepared again when next sent.
            self._kept = self._flights = None
        return super()._deallocate(name)

    def _commit_gen(self):  # type: ignore[override]
        self._begun_in = None
        return (yield from super()._commit_gen())

    def _rollback_gen(self):  # type: ignore[override]
        self._begun_in = None
        return (yield from super()._rollback_gen())


_FLIGHT_KEPT = 200  # statements send_flight keeps prepared per connection; any further ones are sent unprepared


def _flight(pgconn: Any):
    """psycopg's wait protocol: flush what the flight wrote, then collect every command's results up to the
    pipeline's sync — one list per command (an aborted one's holds its PIPELINE_ABORTED)."""
    while pgconn.flush():
        ready = yield generators.WAIT_RW
        if ready & generators.READY_R:
            pgconn.consume_input()
    results: list[list] = []
    current: list = []
    while True:
        if pgconn.is_busy():
            while not (yield generators.WAIT_R):
                continue
            pgconn.consume_input()
            continue
        result = pgconn.get_result()
        if result is None:
            results.append(current)
            current = []
        elif result.status == pq.ExecStatus.PIPELINE_SYNC:
            return results
        else:
            current.append(result)


class Answer:
    """What one statement of a flight returned, read as a cursor's results are (`fetchone`, `fetchall`,
    `rowcount`)."""

    def __init__(self, connection: Connection, result: Any) -> None:
        self.connection, self.result = connection, result
        self.rowcount = result.command_tuples if result is not None and result.command_tuples is not None else -1
        self._rows: list[tuple] | None = None
        self._at = 0

    def _loaded(self) -> list[tuple]:
        if self._rows is None:
            result = self.result
            if result is None or result.status != pq.ExecStatus.TUPLES_OK or not result.ntuples:
                self._rows = []
            else:
                loader = Transformer(self.connection)
                loader.set_pgresult(result)
                self._rows = loader.load_rows(0, result.ntuples, tuple)
        return self._rows

    def fetchall(self) -> list[tuple]:
        rows = self._loaded()[self._at:]
        self._at += len(rows)
        return rows

    def fetchone(self) -> tuple | None:
        rows = self._loaded()
        if self._at >= len(rows):
            return None
        self._at += 1
        return rows[self._at - 1]

    def close(self) -> None:
        pass
