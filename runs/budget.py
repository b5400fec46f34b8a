"""Budgets that stop exactly at the cap: reservations against a run's `budget:` and the workspace's window.

Before a model call or a paid tool call the step reserves what the call can cost (`reserve`); the grant
may be less than asked — the engine then lowers the call's `max_tokens` to what it pays for — but never
less than `minimum`, and never more than is left. After the call the reservation is settled with the
real cost in the same UPDATE (`settle`), or given back (`release`). Concurrent `each:` instances of one
run, and the runs of one workspace, see each other's reservations: every reservation takes the
workspace's row lock (PostgreSQL) or the database's write lock (SQLite) before it reads what is left.
"""
from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal
from typing import Any, Mapping

from django.db import transaction
from django.db.models import F, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from accounts.models import Workspace
from foldrun import prepared
from foldrun.commits import NO_FLUSH_WAIT_CTE
from foldrun.engine.errors import BudgetExceeded
from foldrun.pgcursor import db, log_sent

from . import closing
from .models import Run, Try

WINDOWS = {"day": "daily", "week": "weekly", "month": "monthly"}
ZERO = Decimal("0")


class Unheld(Decimal):
    """A grant no row holds: nothing caps the run, so `reserve` wrote nothing, and settling or releasing it gives
    nothing back (given back, it left the run's reserved_usd below zero, and a window set later counted the
    run's spend as less than it was)."""


def held(reserved: Decimal) -> Decimal:
    """What a reservation put on the run's row: nothing for an Unheld grant."""
    return ZERO if isinstance(reserved, Unheld) else reserved


def window_start(window: str, now: dt.datetime) -> dt.datetime:
    day = now.astimezone(dt.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "day":
        return day
    if window == "week":
        return day - dt.timedelta(days=day.weekday())
    return day.replace(day=1)


def spent_in_window(workspace_id: int, window: str, now: dt.datetime) -> Decimal:
    """What the workspace's runs created since `window` began (UTC) have spent: what its `budget:` counts."""
    return (Run.objects.filter(workspace_id=workspace_id, created_at__gte=window_start(window, now))
            .aggregate(s=Sum("cost_usd"))["s"] or ZERO)


def _caps(windows: Mapping[str, Any] | None) -> list[tuple[str, Decimal]]:
    """The workspace's `budget: {month: 50}` as (window, cap), ignoring what `foldrun check` reports."""
    caps: list[tuple[str, Decimal]] = []
    for window, raw in (windows or {}).items() if isinstance(windows, Mapping) else ():
        if window in WINDOWS and isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0:
            caps.append((window, Decimal(str(raw))))
    return caps


def reserve(run: Run, amount: Decimal, minimum: Decimal, *, where: str,
            windows: Mapping[str, Any] | None = None) -> Decimal:
    """Reserve up to `amount` (at least `minimum`) against the run's cap and the workspace's windows;
    returns the grant. Raises BudgetExceeded with the sentence when less than `minimum` is left (or
    nothing at all, for a call that costs nothing known). `where` names the step in that sentence."""
    caps = _caps(windows)
    if run.budget_usd is None and not caps:
        return Unheld(amount)
    with transaction.atomic():
        # The locks first, then the reads: one reservation at a time per workspace. A write first (the run's
        # row; on SQLite the database's write lock, taken before any read so no snapshot goes stale), then
        # the workspace's row on PostgreSQL — always in this order, so two reservations never deadlock.
        Run.objects.filter(pk=run.pk).update(reserved_usd=F("reserved_usd"))
        list(Workspace.objects.select_for_update().filter(pk=run.workspace_id).values_list("pk", flat=True))
        row = Run.objects.filter(pk=run.pk).values("cost_usd", "reserved_usd", "budget_usd").get()
        left: Decimal | None = None
        sentence = ""
        if row["budget_usd"] is not None:
            committed = row["cost_usd"] + row["reserved_usd"]
            left = row["budget_usd"] - committed
            sentence = (f"budget reached: the run spent ${committed:.4f} of its ${row['budget_usd']:.2f} budget at "
                        f"{where}; no further model or paid call was made")
        now = timezone.now()
        for window, cap in caps:
            totals = Run.objects.filter(workspace_id=run.workspace_id, created_at__gte=window_start(window, now)) \
                .aggregate(cost=Sum("cost_usd"), reserved=Sum("reserved_usd"))
            committed = (totals["cost"] or ZERO) + (totals["reserved"] or ZERO)
            if left is None or cap - committed < left:
                left = cap - committed
                sentence = (f"budget reached: the workspace spent ${committed:.2f} of its ${cap:.2f} "
                            f"{WINDOWS[window]} budget at {where}; no further model or paid call was made")
        assert left is not None
        if left <= ZERO or left < minimum:
            raise BudgetExceeded(sentence)
        grant = min(amount, left)
        Run.objects.filter(pk=run.pk).update(reserved_usd=F("reserved_usd") + grant)
    return grant


def settle(run: Run, reserved: Decimal, cost: Decimal, tokens_in: int, tokens_out: int, *,
           attempt_pk: int | None = None, seconds: float = 0.0, snapshot: bool = True) -> None:
    """The call's real cost replaces its reservation, in one UPDATE (no moment counts both, or neither);
    with `attempt_pk`, the try's spend so far (and its seconds) is added in the same statement. `snapshot`:
    the statement returns the run's row for the step's end (runs/closing.py), which an `each:` instance's does
    not use."""
    connection = db()
    reserved = held(reserved)
    if attempt_pk is not None and connection.vendor == "postgresql":
        # One round trip, one commit: a data-modifying WITH runs both UPDATEs as one statement, and its commit
        # does not wait for the disk (foldrun/commits.py: the step's end, a normal commit, flushes it).
        run_table, try_table = (connection.ops.quote_name(m._meta.db_table) for m in (Run, Try))
        in_autocommit = not connection.in_atomic_block
        sql = (f"WITH {NO_FLUSH_WAIT_CTE if in_autocommit else 'nowait AS (SELECT 1)'}, "
               f"t AS (UPDATE {try_table} SET cost_usd = cost_usd + %s, tokens_in = tokens_in + %s, "
               f"tokens_out = tokens_out + %s, seconds = %s WHERE id = %s) "
               f"UPDATE {run_table} SET cost_usd = cost_usd + %s, reserved_usd = GREATEST(reserved_usd - %s, 0), "
               f"tokens_in = tokens_in + %s, tokens_out = tokens_out + %s "
               f"WHERE id = %s AND EXISTS (SELECT 1 FROM nowait)")
        params = [cost, tokens_in, tokens_out, seconds, attempt_pk, cost, reserved, tokens_in, tokens_out, run.pk]
        # The run's row as this UPDATE leaves it comes back with it: the step's end, when this was its last spend,
        # decides from it without reading the run again (runs/closing.py).
        if snapshot:
            clause, values = closing.returning(connection.vendor)
            sql, params = sql + clause, [*params, *values]
        # Outside a transaction, sent without waiting for its answer (foldrun/pgengine): the server commits it
        # whatever becomes of this process after the send — a try lost later keeps this cost on the record — and
        # the step goes on meanwhile; the answer is read, and an error raised, at the connection's next use.
        # An execute wrapper (a test's, batch's) must see every statement: then it goes through a cursor.
        ticket = _send_unawaited(sql, params) if in_autocommit and not connection.execute_wrappers else None
        if ticket is not None:
            closing.spent(run.pk, attempt_pk, ticket if snapshot else None)
            return
        with prepared.cursor() as cursor:  # bound on the server, its plan kept (foldrun/prepared.py)
            cursor.execute(sql, params)
            closing.spent(run.pk, attempt_pk, cursor.fetchall() if snapshot else None)
        return
    with transaction.atomic():
        Run.objects.filter(pk=run.pk).update(cost_usd=F("cost_usd") + cost, reserved_usd=_less(reserved),
                                             tokens_in=F("tokens_in") + tokens_in,
                                             tokens_out=F("tokens_out") + tokens_out)
        if attempt_pk is not None:
            Try.objects.filter(pk=attempt_pk).update(cost_usd=F("cost_usd") + cost, tokens_in=F("tokens_in") + tokens_in,
                                                     tokens_out=F("tokens_out") + tokens_out, seconds=seconds)


def _send_unawaited(sql: str, params: list) -> int | None:
    """Send `sql` on Django's connection without waiting for its answer, where its connection can (see
    foldrun/pgengine); counted in Django's query log as any statement is. Its ticket; None where it was not
    sent."""
    connection = db()
    connection.ensure_connection()
    send = getattr(connection.connection, "send_unawaited", None)
    if send is None:
        return None
    started = time.monotonic()
    with connection.wrap_database_errors:
        ticket = send(sql, params)
    if ticket is None:
        return None
    log_sent(lambda: connection.ops.compose_sql(sql, params), time.monotonic() - started)
    return ticket


def release(run: Run, reserved: Decimal) -> None:
    """Give back a reservation whose call was not made (or failed without a response)."""
    reserved = held(reserved)
    if reserved:
        Run.objects.filter(pk=run.pk).update(reserved_usd=_less(reserved))


def _less(reserved: Decimal) -> Greatest:
    """The run's reservations less `reserved`, never below zero: a call settled after its run ended (which gave
    back every reservation, runs/states.py move_run) gives back nothing more."""
    return Greatest(F("reserved_usd") - reserved, Value(ZERO), output_field=Run._meta.get_field("reserved_usd"))
