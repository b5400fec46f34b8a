"""`endpoints.live`: a WebSocket of the session's screen as it changes — frames of the browser's own screencast over
the session's DevTools endpoint, with the session's short-lived token — closed when the session ends; and the watch
page, opened in a real Chromium, that reads it for a person."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time

import httpx
import pytest
from django.utils import timezone
from playwright.sync_api import sync_playwright

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_live
from browsing.attach import attach
from browsing.models import BrowserSession, SessionStatus
from browsing.records import record
from browsing.tokens import session_token
from tests.mcp.conftest import mcp_server  # noqa: F401 - the platform's ASGI app on a live port
from tests.conftest import wait_in_page

pytestmark = pytest.mark.e2e


def _open(session, url: str) -> None:
    with attach(session) as page:
        page.goto(url)


def _frame(viewer) -> tuple[int, str]:
    return (int(viewer.get_attribute("#screen", "data-frames") or 0), viewer.get_attribute("#screen", "src") or "")


def test_the_live_page_shows_the_sessions_screen_and_its_changes(
    mcp_server,
    session_worker,  # noqa: F811
    account,
    site,
    settings,
):
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    session = wait_live(
        do_create_session(account, check_create_session(account, {"startUrl": f"{site.url}/"})), timeout=60
    )
    shown = record(session, may_act=True)
    live = shown["endpoints"]["live"]
    assert live == f"ws{mcp_server.base[4:]}/v1/sessions/{session.public_id}/live?token={shown['token']}"
    watch = f"{mcp_server.base}/v1/sessions/{session.public_id}/watch?token={shown['token']}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
        try:
            viewer = browser.new_page()
            refused: list[str] = []  # what the page's Content-Security-Policy refused, as the console says it
            viewer.on(
                "console",
                lambda message: refused.append(message.text) if "Content Security Policy" in message.text else None,
            )
            answer = viewer.goto(watch)
            policy = answer.headers["content-security-policy"]
            assert "default-src 'none'" in policy and "script-src 'nonce-" in policy and "unsafe" not in policy
            wait_in_page(viewer, "Number(document.getElementById('screen').dataset.frames) > 0", timeout=20_000)
            count, first = _frame(viewer)
            assert first.startswith("data:image/jpeg;base64,/9j/")  # a JPEG frame of the session's page
            assert viewer.text_content("#state") == "live"
            # The session's page changes (from a thread of its own: this one is inside Playwright's loop, which
            # the ORM refuses); the view follows.
            mover = threading.Thread(target=_open, args=(session, f"{site.url}/pricing/"))
            mover.start()
            mover.join(timeout=60)
            # Frames of the old page may still arrive after the move; the view has followed once one shows the
            # new page, so wait for a frame that differs rather than for the next one.
            wait_in_page(viewer, f"document.getElementById('screen').src !== {json.dumps(first)}", timeout=20_000)
            later_count, later = _frame(viewer)
            assert later_count > count and later.startswith("data:image/jpeg;base64,/9j/")
            assert refused == []  # the page's one script, its style and the socket all ran under its policy
        finally:
            browser.close()
    do_stop_session(account, session.public_id)
    deadline = time.monotonic() + 10
    while httpx.get(watch).status_code != 410 and time.monotonic() < deadline:
        time.sleep(0.2)
    ended = httpx.get(watch)
    assert ended.status_code == 410 and "This session is not live any more" in ended.text


def test_endpoints_live_is_a_websocket_of_jpeg_frames_that_closes_when_the_session_ends(  # noqa: F811
    mcp_server, session_worker, account, site, settings
):  # noqa: F811
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    session = wait_live(
        do_create_session(account, check_create_session(account, {"startUrl": f"{site.url}/"})), timeout=60
    )
    with ws_connect(record(session, may_act=True)["endpoints"]["live"], open_timeout=10) as socket:
        assert socket.recv(timeout=20).startswith("/9j/")  # base64 of a JPEG frame of the session's page
        socket.send("click at 10,10")  # dropped: the socket is watch-only (it closes below for the session's end)
        do_stop_session(account, session.public_id)
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                socket.recv(timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.reason == "the session's browser closed"


def test_endpoints_live_is_wss_on_an_https_install_and_the_socket_address_over_http_names_the_watch_page(
    mcp_server, account, settings
):  # noqa: F811
    session = BrowserSession.objects.create(
        account=account, status=SessionStatus.LIVE, cdp_endpoint="ws://127.0.0.1:9/devtools/browser/x"
    )
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example"
    assert record(session, may_act=True)["endpoints"]["live"].startswith(
        f"wss://foldrun.example/v1/sessions/{session.public_id}/live?token="
    )
    token, _ = session_token(session.public_id)
    asked = httpx.get(f"{mcp_server.base}/v1/sessions/{session.public_id}/live?token={token}")
    assert asked.status_code == 426
    assert (
        f"This address is the live view's WebSocket. To watch the session in a browser, open "
        f"/v1/sessions/{session.public_id}/watch with the same token."
    ) in asked.text


def test_a_live_link_with_a_wrong_or_expired_token_says_so(mcp_server, account):  # noqa: F811
    session = do_create_session(account, check_create_session(account, {}))
    old, _ = session_token(session.public_id, now=timezone.now() - dt.timedelta(hours=1))
    for token in (old, "1.abc"):
        page = httpx.get(f"{mcp_server.base}/v1/sessions/{session.public_id}/watch?token={token}")
        assert page.status_code == 403
        assert "This live view's link has expired or is not valid" in page.text
        with (
            ws_connect(
                f"ws{mcp_server.base[4:]}/v1/sessions/{session.public_id}/live?token={token}", open_timeout=10
            ) as socket,
            pytest.raises(ConnectionClosed) as refused,
        ):
            socket.recv(timeout=10)
        assert (
            refused.value.rcvd.reason == "This live view's link has expired or is not valid: read the session "
            "again for a fresh one."
        )
