"""Sessions on a real worker with real Chromium, against the local test site."""
from __future__ import annotations

import pytest

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_ended, wait_live
from browsing.attach import attach, navigate
from browsing.models import BrowserSession
from tests.fakes.test_site import EMAIL, PASSWORD

pytestmark = pytest.mark.e2e


def open_session(account, body=None) -> BrowserSession:
    return wait_live(do_create_session(account, check_create_session(account, body or {})), timeout=60)


def test_a_session_stays_live_across_two_attaches_and_keeps_its_cookie(session_worker, account, site):
    session = open_session(account)
    with attach(session) as page:
        navigate(page, f"{site.url}/login")
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{site.url}/dashboard")
    assert BrowserSession.objects.get(pk=session.pk).status == "live"
    with attach(session) as page:
        url_before = page.url
        navigate(page, f"{site.url}/dashboard")
        heading = page.inner_text("h1")
        cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    assert url_before == f"{site.url}/dashboard"
    assert heading == "Welcome back"
    assert cookies["arena"] == "signed-in"
    assert do_stop_session(account, session.public_id) == {"deleted": True, "closed": True}
    assert wait_ended(session)
    ended = BrowserSession.objects.get(pk=session.pk)
    assert (ended.status, ended.end_reason, ended.status_reason) == ("closed", "stopped", "stopped by a caller")
    assert do_stop_session(account, session.public_id) == {"deleted": True, "closed": False}
