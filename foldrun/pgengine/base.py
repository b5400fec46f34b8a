"""Django's PostgreSQL backend, with a health check that asks the connection's socket before the server.

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

import psycopg
from django.db.backends.postgresql import base
from psycopg import pq

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

    def _start_query(self):  # type: ignore[override]
        if self._autocommit or self.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            return
        pipeline = self._pipeline
        if pipeline is not None and self._begun_in is pipeline:
            return  # this flight already begins the transaction: the server reports it only once it syncs
        yield from self._exec_command(self._get_tx_start_command())
        self._begun_in = pipeline

    def _commit_gen(self):  # type: ignore[override]
        self._begun_in = None
        return (yield from super()._commit_gen())

    def _rollback_gen(self):  # type: ignore[override]
        self._begun_in = None
        return (yield from super()._rollback_gen())
