"""Opening, finding and stopping sessions; the account's limit and the install's browser capacity.

`check_create_session` reads the options; `do_create_session` takes a place (or a place in the queue) and
enqueues the keeper by name once the row is committed. A session's browser is the keeper's (browsing/keeper.py),
on the browser service — a worker of its own, on its own queue, whose slots are the install's browser capacity;
nothing here starts a process, and nothing here waits for a worker to decide whether there is room: the places
are counted in the database, under a lock, so a full account or a full install is `capacity_exceeded` at once.
"""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Account
from foldrun import net
from foldrun.celery import send_after_commit
from foldrun.heartbeats import BROWSERS, seconds_since

from .cancelling import cancel_runs_on
from .ending import close_session
from .errors import SessionError
from .models import BrowserSession, EndReason, SessionStatus
from .options import SessionOptions, read_options
from .sealed import seal_secrets

KEEP_TASK = "browsing.keep_session"
CAPACITY_POLL_SECONDS = 0.25
# The code a caller gets for a session that closed before it was live, by why it closed.
CODE_OF_END = {EndReason.NAVIGATION_BLOCKED: "navigation_blocked", EndReason.CAPACITY_TIMEOUT: "capacity_timeout"}
# PostgreSQL's transaction-scoped advisory lock that makes the install's capacity decisions one at a time (any
# number unlikely to be another lock's; SQLite's IMMEDIATE transactions are one at a time already).
POOL_LOCK = 0x62726F7773  # "brows"
OPEN = [SessionStatus.STARTING, SessionStatus.LIVE]


def capacity() -> int:
    """The sessions one account may have open at once (FOLDRUN_BROWSER_MAX_SESSIONS)."""
    return int(settings.FOLDRUN_BROWSER_MAX_SESSIONS)


def install_capacity() -> int:
    """The browsers this install keeps open at once: the browser service's slots (FOLDRUN_BROWSER_CAPACITY)."""
    return int(settings.FOLDRUN_BROWSER_CAPACITY)


def holding_a_browser():  # noqa: ANN201 - a QuerySet
    """Every session holding a browser place (or about to): open and not waiting in a queue."""
    return BrowserSession.objects.filter(status__in=OPEN, queued_until__isnull=True)


def open_sessions(account_id: int):  # noqa: ANN201 - a QuerySet
    """The account's sessions holding a browser (or about to): open and not waiting in the queue."""
    return holding_a_browser().filter(account_id=account_id)


def _lock_places(account_id: int) -> None:
    """Inside a transaction: the install's and the account's capacity decisions, one at a time, so two callers
    never take the last place together."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [POOL_LOCK])
    Account.objects.select_for_update().filter(pk=account_id).first()


def _no_place(account_id: int) -> tuple[str, int, int] | None:
    """Under the lock: None when a new session fits, else (whose places are full, open, capacity)."""
    used = open_sessions(account_id).count()
    if used >= capacity():
        return "account", used, capacity()
    everyone = holding_a_browser().count()
    if everyone >= install_capacity():
        return "install", everyone, install_capacity()
    return None


def _refusal(full: tuple[str, int, int], waited_ms: int) -> SessionError:
    scope, used, limit = full
    waited = f" after waiting {waited_ms:,} ms" if waited_ms else ""
    what = (
        f"Every browser of this account is busy ({used} of {limit} sessions open)"
        if scope == "account"
        else f"Every browser of this install is busy ({used} of {limit} browsers open)"
    )
    return SessionError(
        "capacity_exceeded",
        f"{what}{waited}. Stop a session with stop_session, pass "
        f"waitForCapacityMs to wait for one, or queueForCapacity to queue.",
        {"open": used, "capacity": limit, "scope": scope},
    )


def check_create_session(account: Account, body: Any) -> SessionOptions:
    """The checked options of a new session of `account` (SessionError("invalid_input") naming each issue), and
    a browser service to start it: refused at once (start_failed) when the service has not been heard from."""
    opts = read_options(body)
    check_browser_service()
    return opts


def check_browser_service() -> None:
    """SessionError("start_failed") when the browser service (the worker on `<queue>.browsers` that keeps the
    sessions' browsers) has not beaten its heartbeat within FOLDRUN_HEALTH_STALE_SECONDS — /api/health's own
    judgement — rather than a session left `starting` for FOLDRUN_SESSION_START_SECONDS that then fails."""
    stale = settings.FOLDRUN_HEALTH_STALE_SECONDS
    ago = seconds_since(BROWSERS)
    if ago is not None and ago <= stale:
        return
    when = "it never has" if ago is None else f"it was last heard from {int(ago)} seconds ago"
    raise SessionError(
        "start_failed",
        f"No browser can be started now: the browser service has not answered in the "
        f"last {stale} seconds ({when}). Try again once it is back; /api/health says "
        f"when it is.",
    )


def do_create_session(account: Account, opts: SessionOptions, *, user: Any = None) -> BrowserSession:
    """A new session: `starting` with its keeper enqueued, or queued (queueForCapacity) when the account's
    sessions or the install's browsers are all taken; waits up to waitForCapacityMs for a free place first.
    SessionError("capacity_exceeded") when none — at once when it need not wait."""
    deadline = time.monotonic() + opts.wait_for_capacity_ms / 1000
    while True:
        with transaction.atomic():
            _lock_places(account.pk)
            full = _no_place(account.pk)
            if full is None:
                session = _new_session(account, opts, user, queued_until=None)
                send_after_commit(KEEP_TASK, session.pk)
                return session
            if opts.queue_seconds:
                until = timezone.now() + dt.timedelta(seconds=opts.queue_seconds)
                return _new_session(account, opts, user, queued_until=until)
        if time.monotonic() >= deadline:
            raise _refusal(full, opts.wait_for_capacity_ms)
        time.sleep(CAPACITY_POLL_SECONDS)


def do_refused_session(
    account: Account, opts: SessionOptions, refusal: SessionError, *, user: Any = None
) -> BrowserSession:
    """The record of a session refused a browser (capacity_exceeded), closed at once: what run_task's task
    that never got a browser is on, so the task is on the account's records like any other."""
    with transaction.atomic():
        session = _new_session(account, opts, user, queued_until=None)
        close_session(session.pk, EndReason.CAPACITY_EXCEEDED, refusal.message.rstrip("."))
    session.refresh_from_db()
    return session


def give_up_starting(session: BrowserSession, limit: float) -> bool:
    """Close a session that is still starting (not waiting in its queue) after its caller waited `limit` s for
    a worker to start its browser; whether this closed it."""
    if BrowserSession.objects.filter(pk=session.pk, status=SessionStatus.STARTING, queued_until__isnull=True).exists():
        return close_session(session.pk, EndReason.START_FAILED, f"no worker started its browser within {limit:g} s")
    return False


def _new_session(
    account: Account, opts: SessionOptions, user: Any, *, queued_until: dt.datetime | None
) -> BrowserSession:
    session = BrowserSession(
        account=account,
        created_by=user if getattr(user, "pk", None) else None,
        options=opts.public(),
        engine=opts.engine,
        title=opts.title,
        queued_until=queued_until,
        private_addresses=net.allows_private(),
    )
    seal_secrets(session, opts.headers, opts.proxy_url)
    session.status_reason = (
        "queued: every browser place of the account or the install was taken"
        if queued_until
        else "waiting for the browser service to start its browser"
    )
    session.save()
    return session


def promote_queued(account_id: int) -> int:
    """Start the oldest queued sessions of the account that now fit in its limit and the install's capacity;
    how many started."""
    started = 0
    with transaction.atomic():
        _lock_places(account_id)
        free = min(capacity() - open_sessions(account_id).count(), install_capacity() - holding_a_browser().count())
        if free <= 0:
            return 0
        waiting = list(
            BrowserSession.objects.filter(
                account_id=account_id, status=SessionStatus.STARTING, queued_until__gte=timezone.now()
            )
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:free]
        )
        for pk in waiting:
            BrowserSession.objects.filter(pk=pk).update(
                queued_until=None, status_reason="a browser became free; starting it"
            )
            send_after_commit(KEEP_TASK, pk)
            started += 1
    return started


def scoped_session(account: Account, public_id: Any) -> BrowserSession:
    """The account's session with this id; another account's, or none, is not_found (one sentence for both)."""
    session = None
    if isinstance(public_id, str) and public_id:
        session = BrowserSession.objects.filter(account=account, public_id=public_id).first()
    if session is None:
        raise SessionError("not_found", f"No session {str(public_id)[:60]} in this account.")
    return session


def list_sessions(account: Account, limit: int = 200) -> list[BrowserSession]:
    return list(BrowserSession.objects.filter(account=account).order_by("-created_at", "-pk")[:limit])


def do_stop_session(
    account: Account, public_id: Any, *, who: str = "a caller", cancels_runs: bool = False
) -> dict[str, bool]:
    """End the session. Safe to repeat: `closed` says whether this call stopped a browser. A caller's stop
    (`cancels_runs`) ends a skill run still using the session `cancelled`; a run's own end does not."""
    try:
        session = scoped_session(account, public_id)
    except SessionError:
        return {"deleted": False, "closed": False}
    if cancels_runs:
        cancel_runs_on(session, who)
    had_browser = session.queued_until is None
    closed = close_session(session.pk, EndReason.STOPPED, f"stopped by {who}")
    if closed:
        promote_queued(account.pk)
    return {"deleted": True, "closed": closed and had_browser}


def wait_live(session: BrowserSession, timeout: float | None = None) -> BrowserSession:
    """The session once it is live; SessionError with its code when it closed first or never started."""
    limit = float(settings.FOLDRUN_SESSION_START_SECONDS) if timeout is None else timeout
    deadline = time.monotonic() + limit
    while True:
        fresh = BrowserSession.objects.get(pk=session.pk)
        if fresh.status == SessionStatus.LIVE:
            return fresh
        if fresh.status == SessionStatus.CLOSED:
            code = CODE_OF_END.get(fresh.end_reason, "session_closed" if fresh.live_at else "start_failed")
            raise SessionError(
                code,
                f"Session {fresh.public_id} is closed: {fresh.status_reason}.",
                {"sessionId": fresh.public_id, "endReason": fresh.end_reason},
            )
        if fresh.queued_until is not None:
            deadline = time.monotonic() + limit  # queued: the queue's own wait applies (the sweep ends it)
        elif time.monotonic() >= deadline:
            close_session(fresh.pk, EndReason.START_FAILED, f"no worker started its browser within {limit:g} s")
            raise SessionError(
                "start_failed",
                f"Session {fresh.public_id} did not start: no worker started its browser within {limit:g} s.",
                {"sessionId": fresh.public_id},
            )
        time.sleep(0.1)


def wait_ended(session: BrowserSession, timeout: float = 15.0) -> bool:
    """After a close: wait until the keeper let go (its browser stopped, its recording written)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not BrowserSession.objects.filter(pk=session.pk).exclude(lease_holder="").exists():
            return True
        time.sleep(0.1)
    return False
