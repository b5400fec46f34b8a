"""A new session is counted against the account's limit and the install's browser capacity in the database, under
a lock: a full account or a full install answers the spec's `capacity_exceeded` at once — over REST a 429 in the
API's error shape, over MCP `isError` with `[capacity_exceeded] …` and `structuredContent.error` — and never
waits for a worker to find out. No worker runs here: none is needed to refuse."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.db import connections
from django.utils import timezone

from accounts.models import Account
from browsing.actions import check_create_session, do_create_session, do_stop_session, promote_queued
from browsing.errors import SessionError
from browsing.models import BrowserSession
from tests.mcp.conftest import mcp_client, mcp_server, token_for  # noqa: F401 - the live MCP server, shared

ACCOUNT_FULL = (
    "Every browser of this account is busy (1 of 1 sessions open). Stop a session with stop_session, "
    "pass waitForCapacityMs to wait for one, or queueForCapacity to queue."
)
INSTALL_FULL = (
    "Every browser of this install is busy (2 of 2 browsers open). Stop a session with stop_session, "
    "pass waitForCapacityMs to wait for one, or queueForCapacity to queue."
)


def live(account) -> BrowserSession:
    return BrowserSession.objects.create(
        account=account, status="live", live_at=timezone.now(), cdp_endpoint="ws://127.0.0.1:9/devtools/browser/x"
    )


def create(account, body=None) -> BrowserSession:
    return do_create_session(account, check_create_session(account, body or {}))


@pytest.fixture
def two_browsers(settings):
    """An install that keeps two browsers open, each account up to four of them."""
    settings.FOLDRUN_BROWSER_CAPACITY = 2
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 4


def test_a_full_account_is_a_429_capacity_exceeded_at_once_with_the_spec_error_shape(alice_api, account, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    live(account)
    began = time.monotonic()
    answer = alice_api.post("/v1/sessions", {}, format="json")
    assert time.monotonic() - began < 2  # counted, not waited for: no worker is running
    assert answer.status_code == 429
    assert answer.json() == {
        "code": "capacity_exceeded",
        "message": ACCOUNT_FULL,
        "details": {"open": 1, "capacity": 1, "scope": "account"},
    }
    assert BrowserSession.objects.filter(account=account).count() == 1


def test_a_full_install_is_capacity_exceeded_at_once_even_for_an_account_with_room(account, charlie, two_browsers):
    other = charlie.memberships.first().account
    live(other)
    live(other)
    began = time.monotonic()
    with pytest.raises(SessionError) as caught:
        create(account)
    assert time.monotonic() - began < 2
    assert (caught.value.code, caught.value.message, caught.value.details) == (
        "capacity_exceeded",
        INSTALL_FULL,
        {"open": 2, "capacity": 2, "scope": "install"},
    )
    assert not BrowserSession.objects.filter(account=account).exists()


def test_a_closed_or_queued_session_takes_no_place(account, charlie, two_browsers):
    other = charlie.memberships.first().account
    live(other)
    BrowserSession.objects.create(account=other, status="closed")
    create(other, {"queueForCapacity": {"maxWaitSeconds": 60}})  # room: it starts, it is not queued
    BrowserSession.objects.create(
        account=other, status="starting", queued_until=timezone.now() + dt.timedelta(seconds=60)
    )
    with pytest.raises(SessionError) as caught:  # the live one and the starting one fill the install
        create(account)
    assert caught.value.details == {"open": 2, "capacity": 2, "scope": "install"}


def test_a_queued_session_waits_for_the_install_not_only_for_its_account(account, charlie, two_browsers):
    other = charlie.memberships.first().account
    theirs = [live(other), live(other)]
    queued = create(account, {"queueForCapacity": {"maxWaitSeconds": 60}})
    assert queued.queued_until is not None and queued.status_reason == (
        "queued: every browser place of the account or the install was taken"
    )
    assert promote_queued(account.pk) == 0  # the account has room, the install has none
    do_stop_session(other, theirs[0].public_id)
    assert promote_queued(account.pk) == 1
    queued.refresh_from_db()
    assert queued.queued_until is None and queued.status == "starting"


def test_over_mcp_a_full_install_is_is_error_with_the_code_and_sentence(
    mcp_server, mcp_client, alice, charlie, two_browsers
):
    other = charlie.memberships.first().account
    live(other)
    live(other)
    with mcp_client(token_for(alice)) as client:
        began = time.monotonic()
        result = client.call_tool("create_session", {})
    assert time.monotonic() - began < 5
    assert result.is_error is True
    assert result.content[0].text == f"[capacity_exceeded] {INSTALL_FULL}"
    assert result.structured_content["error"] == {
        "code": "capacity_exceeded",
        "message": INSTALL_FULL,
        "details": {"open": 2, "capacity": 2, "scope": "install"},
    }


def test_two_callers_never_take_the_last_place_together(transactional_db, settings):
    """Four accounts ask at once for the install's last browser: one gets it, three are refused."""
    settings.FOLDRUN_BROWSER_CAPACITY = 1
    accounts = [Account.objects.create(name=f"racer {n}") for n in range(4)]
    outcomes: list[str] = []
    start = threading.Barrier(len(accounts))

    def ask(account: Account) -> None:
        try:
            start.wait()
            create(account)
            outcomes.append("opened")
        except SessionError as exc:
            outcomes.append(exc.code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask, args=(a,)) for a in accounts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["capacity_exceeded"] * 3 + ["opened"]
    assert BrowserSession.objects.filter(status="starting", queued_until__isnull=True).count() == 1
