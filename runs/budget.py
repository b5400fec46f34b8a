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
from decimal import Decimal
from typing import Any, Mapping

from django.db import transaction
from django.db.models import F, Sum, Value
from django.db.models.functions import Greatest
from django.utils import timezone

from accounts.models import Workspace
from foldrun.engine.errors import BudgetExceeded

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
    return (
        Run.objects.filter(workspace_id=workspace_id, created_at__gte=window_start(window, now)).aggregate(
            s=Sum("cost_usd")
        )["s"]
        or ZERO
    )


def _caps(windows: Mapping[str, Any] | None) -> list[tuple[str, Decimal]]:
    """The workspace's `budget: {month: 50}` as (window, cap), ignoring what `foldrun check` reports."""
    caps: list[tuple[str, Decimal]] = []
    for window, raw in (windows or {}).items() if isinstance(windows, Mapping) else ():
        if window in WINDOWS and isinstance(raw, (int, float)) and not isinstance(raw, bool) and raw > 0:
            caps.append((window, Decimal(str(raw))))
    return caps


def reserve(
    run: Run, amount: Decimal, minimum: Decimal, *, where: str, windows: Mapping[str, Any] | None = None
) -> Decimal:
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
            sentence = (
                f"budget reached: the run spent ${committed:.4f} of its ${row['budget_usd']:.2f} budget at "
                f"{where}; no further model or paid call was made"
            )
        now = timezone.now()
        for window, cap in caps:
            totals = Run.objects.filter(
                workspace_id=run.workspace_id, created_at__gte=window_start(window, now)
            ).aggregate(cost=Sum("cost_usd"), reserved=Sum("reserved_usd"))
            committed = (totals["cost"] or ZERO) + (totals["reserved"] or ZERO)
            if left is None or cap - committed < left:
                left = cap - committed
                sentence = (
                    f"budget reached: the workspace spent ${committed:.2f} of its ${cap:.2f} "
                    f"{WINDOWS[window]} budget at {where}; no further model or paid call was made"
                )
        assert left is not None
        if left <= ZERO or left < minimum:
            raise BudgetExceeded(sentence)
        grant = min(amount, left)
        Run.objects.filter(pk=run.pk).update(reserved_usd=F("reserved_usd") + grant)
    return grant


def settle(
    run: Run,
    reserved: Decimal,
    cost: Decimal,
    tokens_in: int,
    tokens_out: int,
    *,
    attempt_pk: int | None = None,
    seconds: float = 0.0,
) -> None:
    """The call's real cost replaces its reservation in one UPDATE of the run (no moment counts both, or
    neither); then, with `attempt_pk`, the try's spend so far (and its seconds) is added to it: a try lost later
    keeps its cost on the record. The run's first: a worker lost between the two leaves the run's spend exact
    (what budgets read) and the try's record short by that one call."""
    Run.objects.filter(pk=run.pk).update(
        cost_usd=F("cost_usd") + cost,
        reserved_usd=_less(held(reserved)),
        tokens_in=F("tokens_in") + tokens_in,
        tokens_out=F("tokens_out") + tokens_out,
    )
    if attempt_pk is not None:
        Try.objects.filter(pk=attempt_pk).update(
            cost_usd=F("cost_usd") + cost,
            tokens_in=F("tokens_in") + tokens_in,
            tokens_out=F("tokens_out") + tokens_out,
            seconds=seconds,
        )


def release(run: Run, reserved: Decimal) -> None:
    """Give back a reservation whose call was not made (or failed without a response)."""
    reserved = held(reserved)
    if reserved:
        Run.objects.filter(pk=run.pk).update(reserved_usd=_less(reserved))


def _less(reserved: Decimal) -> Greatest:
    """The run's reservations less `reserved`, never below zero: a call settled after its run ended (which gave
    back every reservation, runs/lifecycle/states.py move_run) gives back nothing more."""
    return Greatest(F("reserved_usd") - reserved, Value(ZERO), output_field=Run._meta.get_field("reserved_usd"))
