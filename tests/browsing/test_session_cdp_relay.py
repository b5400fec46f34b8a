"""A live session is driven from outside through its public DevTools endpoint, with its token only."""

from __future__ import annotations

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_live
from browsing.attach import attach
from browsing.records import record
from tests.mcp.conftest import mcp_server  # noqa: F401 - the platform's ASGI app on a live port

pytestmark = pytest.mark.e2e


def test_a_client_outside_drives_the_session_through_its_cdp_endpoint(
    mcp_server,
    session_worker,  # noqa: F811
    account,
    site,
    settings,
):
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    session = wait_live(do_create_session(account, check_create_session(account, {})), timeout=60)
    cdp = record(session, may_act=True)["endpoints"]["cdp"]
    assert cdp.startswith(f"ws://{mcp_server.base.removeprefix('http://')}/v1/sessions/{session.public_id}/cdp?token=")
    with sync_playwright() as pw:
        with pytest.raises(PlaywrightError):
            pw.chromium.connect_over_cdp(cdp.replace("token=", "token=1"), timeout=10_000)
        browser = pw.chromium.connect_over_cdp(cdp, timeout=15_000)
        page = browser.contexts[0].pages[0]
        page.goto(f"{site.url}/pricing/")
        title = page.title()
    assert title == "Pricing · Test Arena"
    with attach(session) as page:  # the page the outside client left is the session's page
        url = page.url
    do_stop_session(account, session.public_id)
    assert url == f"{site.url}/pricing/"
    with sync_playwright() as pw:
        with pytest.raises(PlaywrightError):
            pw.chromium.connect_over_cdp(cdp, timeout=10_000)  # the session ended: the endpoint refuses
