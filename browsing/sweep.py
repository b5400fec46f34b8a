"""The session sweep (beat, every FOLDRUN_SWEEP_SECONDS): no session stays open that nobody keeps or uses.

- an open session whose keeper's lease ran out (its worker died) is closed, saying so;
- a live session idle past its idleTimeoutMs, or open past its maxDurationMs, is closed (its keeper sees it
  on its next tick and stops the browser);
- a queued session past its queue wait is closed as capacity_timeout; queued ones that now fit start;
- a session no worker began to start within FOLDRUN_SESSION_START_SECONDS is closed.
A live lease is never judged by anything but its expiry.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.utils import timezone

from foldrun import leases

from .actions import promote_queued
from .ending import close_session
from .models import BrowserSession, EndReason, SessionStatus
from .options import DEFAULT_IDLE_MS, DEFAULT_MAX_DURATION_MS

OPEN = [SessionStatus.STARTING, SessionStatus.LIVE]


def _seconds(ms: int) -> str:
    seconds = ms / 1000
    return f"{seconds / 60:g} minutes" if seconds >= 120 else f"{seconds:g} s"


def sweep(now: dt.datetime | None = None) -> dict[str, int]:
    now = now or timezone.now()
    counts = {"lost": 0, "idle": 0, "max_duration": 0, "capacity_timeout": 0, "not_started": 0, "started": 0}
    for pk in leases.expired(BrowserSession, now).filter(status__in=OPEN).values_list("pk", flat=True):
        if close_session(
            pk,
            EndReason.KEEPER_LOST,
            "its keeper stopped renewing its lease (the worker holding "
            "the browser was lost), so the session was closed",
        ):
            counts["lost"] += 1
    start_grace = dt.timedelta(seconds=settings.FOLDRUN_SESSION_START_SECONDS)
    accounts: set[int] = set()
    for session in BrowserSession.objects.filter(status__in=OPEN).only(
        "pk",
        "account_id",
        "status",
        "options",
        "created_at",
        "last_activity_at",
        "queued_until",
        "lease_holder",
        "lease_until",
    ):
        options = session.options or {}
        idle_ms = int(options.get("idleTimeoutMs") or DEFAULT_IDLE_MS)
        max_ms = int(options.get("maxDurationMs") or DEFAULT_MAX_DURATION_MS)
        if session.queued_until is not None:
            accounts.add(session.account_id)
            if session.queued_until < now and close_session(
                session.pk,
                EndReason.CAPACITY_TIMEOUT,
                f"no browser of the account became free within its queue wait "
                f"({(options.get('queueForCapacity') or {}).get('maxWaitSeconds', '?')} s)",
            ):
                counts["capacity_timeout"] += 1
            continue
        if now - session.created_at > dt.timedelta(milliseconds=max_ms):
            if close_session(
                session.pk,
                EndReason.MAX_DURATION,
                f"it reached its maximum duration of {_seconds(max_ms)} (maxDurationMs)",
            ):
                counts["max_duration"] += 1
                accounts.add(session.account_id)
        elif session.status == SessionStatus.LIVE and now - session.last_activity_at > dt.timedelta(
            milliseconds=idle_ms
        ):
            if close_session(session.pk, EndReason.IDLE, f"it had no actions for {_seconds(idle_ms)} (idleTimeoutMs)"):
                counts["idle"] += 1
                accounts.add(session.account_id)
        elif (
            session.status == SessionStatus.STARTING
            and not session.lease_holder
            and now - session.created_at > start_grace
        ):
            if close_session(
                session.pk,
                EndReason.START_FAILED,
                f"no worker started its browser within {start_grace.total_seconds():g} s",
            ):
                counts["not_started"] += 1
                accounts.add(session.account_id)
    for account_id in accounts:
        counts["started"] += promote_queued(account_id)
    return counts
