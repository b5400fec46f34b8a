"""The account's capacity (capacity_exceeded, waiting, the queue, capacity_timeout) and the session sweep."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.utils import timezone

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_live
from browsing.errors import SessionError
from browsing.models import BrowserSession
from browsing.sweep import sweep


@pytest.fixture
def one_browser(settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1


def live_session(account, **fields) -> BrowserSession:
    return BrowserSession.objects.create(
        account=account,
        status="live",
        live_at=timezone.now(),
        cdp_endpoint="ws://127.0.0.1:9/devtools/browser/x",
        **fields,
    )


def create(account, body=None) -> BrowserSession:
    return do_create_session(account, check_create_session(account, body or {}))


def test_a_busy_account_gets_capacity_exceeded_with_the_count(account, one_browser):
    live_session(account)
    with pytest.raises(SessionError) as caught:
        create(account)
    assert caught.value.code == "capacity_exceeded"
    assert caught.value.message == (
        "Every browser of this account is busy (1 of 1 sessions open). Stop a session "
        "with stop_session, pass waitForCapacityMs to wait for one, or queueForCapacity "
        "to queue."
    )
    assert BrowserSession.objects.filter(account=account).count() == 1


def test_another_accounts_sessions_do_not_count(account, one_browser, charlie):
    live_session(charlie.memberships.first().account)
    assert create(account).status == "starting"


def test_waiting_for_capacity_takes_the_browser_a_stop_frees(transactional_db, account, one_browser):
    busy = live_session(account)
    threading.Timer(0.4, lambda: do_stop_session(account, busy.public_id)).start()
    began = time.monotonic()
    session = create(account, {"waitForCapacityMs": 5000})
    assert 0.3 < time.monotonic() - began < 5
    assert (session.status, session.queued_until) == ("starting", None)


def test_waiting_past_wait_for_capacity_ms_is_capacity_exceeded(transactional_db, account, one_browser):
    live_session(account)
    began = time.monotonic()
    with pytest.raises(SessionError) as caught:
        create(account, {"waitForCapacityMs": 600})
    assert time.monotonic() - began >= 0.6
    assert caught.value.code == "capacity_exceeded" and "after waiting 600 ms" in caught.value.message


def test_a_queued_session_starts_when_a_browser_is_freed(account, one_browser):
    busy = live_session(account)
    queued = create(account, {"queueForCapacity": {"maxWaitSeconds": 60}})
    assert queued.status == "starting" and queued.queued_until is not None
    do_stop_session(account, busy.public_id)
    queued.refresh_from_db()
    assert queued.queued_until is None and queued.status_reason == "a browser became free; starting it"


def test_a_queued_session_past_its_wait_ends_capacity_timeout(account, one_browser):
    live_session(account)
    queued = create(account, {"queueForCapacity": {"maxWaitSeconds": 5}})
    assert sweep(now=timezone.now() + dt.timedelta(seconds=6))["capacity_timeout"] == 1
    with pytest.raises(SessionError) as caught:
        wait_live(queued, timeout=1)
    assert caught.value.code == "capacity_timeout"
    assert caught.value.message == (
        f"Session {queued.public_id} is closed: no browser of the account became free within its queue wait (5 s)."
    )


def test_a_session_idle_past_its_timeout_is_closed_with_a_sentence(account):
    session = live_session(
        account, options={"idleTimeoutMs": 300_000}, last_activity_at=timezone.now() - dt.timedelta(minutes=6)
    )
    fresh = live_session(account, options={"idleTimeoutMs": 300_000})
    assert sweep()["idle"] == 1
    session.refresh_from_db()
    assert (session.status, session.end_reason, session.status_reason) == (
        "closed",
        "idle_timeout",
        "it had no actions for 5 minutes (idleTimeoutMs)",
    )
    assert BrowserSession.objects.get(pk=fresh.pk).status == "live"


def test_a_session_open_past_its_max_duration_is_closed(account):
    session = live_session(
        account, options={"maxDurationMs": 60_000}, created_at=timezone.now() - dt.timedelta(seconds=61)
    )
    assert sweep()["max_duration"] == 1
    session.refresh_from_db()
    assert (session.end_reason, session.status_reason) == (
        "max_duration",
        "it reached its maximum duration of 60 s (maxDurationMs)",
    )


def test_a_session_whose_keeper_stopped_renewing_is_closed(account):
    session = live_session(account, lease_holder="gone", lease_until=timezone.now() - dt.timedelta(seconds=1))
    held = live_session(account, lease_holder="alive", lease_until=timezone.now() + dt.timedelta(seconds=30))
    assert sweep()["lost"] == 1
    session.refresh_from_db()
    assert (session.status, session.end_reason) == ("closed", "keeper_lost")
    assert session.status_reason.startswith("its keeper stopped renewing its lease")
    assert BrowserSession.objects.get(pk=held.pk).status == "live"


def test_a_session_no_worker_started_is_closed(account, settings):
    settings.FOLDRUN_SESSION_START_SECONDS = 30
    session = BrowserSession.objects.create(account=account, created_at=timezone.now() - dt.timedelta(seconds=31))
    assert sweep()["not_started"] == 1
    session.refresh_from_db()
    assert (session.end_reason, session.status_reason) == ("start_failed", "no worker started its browser within 30 s")
