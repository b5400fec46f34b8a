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
