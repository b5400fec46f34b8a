"""Sessions on a real worker with real Chromium, against the local test site."""

from __future__ import annotations

import datetime as dt
import os
import signal
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import av
import pytest
from django.db import connection
from django.utils import timezone

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_ended, wait_live
from browsing.attach import attach, navigate
from browsing.errors import SessionError
from browsing.models import BrowserSession
from browsing.sweep import sweep
from tests.conftest import start_worker, stop_worker, wait_for
from foldrun.net.proxy import GuardProxy
from tests.fakes.mcp_site import EMAIL, PASSWORD, PIXEL
from tests.processes import descendants_named
from tests.fakes.website import html

pytestmark = pytest.mark.e2e
ATTACH_TOUCH_MS = 6_000  # a little over attach's TOUCH_SECONDS


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


def port_answers(cdp: str) -> bool:
    parts = urlsplit(cdp)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=1).close()
        return True
    except OSError:
        return False


def test_an_idle_session_is_reaped_and_its_browser_stopped(session_worker, account):

    session = open_session(account, {"idleTimeoutMs": 10_000})
    assert port_answers(session.cdp_endpoint)
    # Eleven seconds without an action, as the row records it (no attach since it went live).
    BrowserSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now() - dt.timedelta(seconds=11))
    assert sweep()["idle"] == 1
    assert wait_ended(session)
    ended = BrowserSession.objects.get(pk=session.pk)
    assert (ended.status, ended.end_reason, ended.status_reason) == (
        "closed",
        "idle_timeout",
        "it had no actions for 10 s (idleTimeoutMs)",
    )
    assert not port_answers(session.cdp_endpoint)


def in_a_thread(fn):
    """`fn()` from a thread of its own (the test's thread holds Playwright's loop inside an attach)."""
    box: list = []

    def run() -> None:
        try:
            box.append(fn())
        finally:
            connection.close()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(timeout=30)
    return box[0]


def test_a_session_in_use_by_one_long_attach_is_not_idle(session_worker, account, site):
    session = open_session(account, {"idleTimeoutMs": 10_000})
    with attach(session) as page:
        navigate(page, f"{site.url}/pricing/")
        in_a_thread(
            lambda: BrowserSession.objects.filter(pk=session.pk).update(
                last_activity_at=timezone.now() - dt.timedelta(seconds=11)
            )
        )
        page.wait_for_timeout(ATTACH_TOUCH_MS)
        swept = in_a_thread(sweep)
        still = in_a_thread(lambda: BrowserSession.objects.get(pk=session.pk).status)
    do_stop_session(account, session.public_id)
    assert swept["idle"] == 0 and still == "live"


def test_a_keeper_killed_with_kill_9_leaves_its_session_closed_with_a_sentence(session_worker, account):

    session = open_session(account)
    browsers = descendants_named(session_worker.pid, b"--remote-debugging-port=0")
    assert len(browsers) >= 1
    keeper = int(open(f"/proc/{browsers[0]}/stat").read().rsplit(")", 1)[1].split()[1])
    assert keeper != session_worker.pid  # the pool's child process that runs the task, not the worker itself
    os.kill(keeper, signal.SIGKILL)
    killed = time.monotonic()
    ended = wait_for(lambda: sweep()["lost"] and BrowserSession.objects.get(pk=session.pk), timeout=20)
    assert time.monotonic() - killed < 3 + 5 + 2  # the lease (3 s) and a sweep's period, with room
    assert (ended.status, ended.end_reason) == ("closed", "keeper_lost")
    assert ended.status_reason == (
        "its keeper stopped renewing its lease (the worker holding the browser was lost), so the session was closed"
    )
    wait_for(lambda: not port_answers(session.cdp_endpoint), timeout=10)


def test_a_recorded_session_keeps_its_video_after_it_closes(session_worker, account, site):

    session = open_session(account, {"record": True, "startUrl": f"{site.url}/"})
    with attach(session) as page:
        navigate(page, f"{site.url}/pricing/")
        page.wait_for_timeout(300)
    do_stop_session(account, session.public_id)
    assert wait_ended(session)
    ended = BrowserSession.objects.get(pk=session.pk)
    video = Path(ended.recording)
    assert video.read_bytes()[:4] == b"\x1a\x45\xdf\xa3"  # EBML: a WebM file
    assert ended.recording_bytes == video.stat().st_size
    with av.open(str(video)) as container:
        assert sum(1 for _ in container.decode(video=0)) >= 2


def test_a_start_url_on_loopback_is_navigation_blocked_without_the_opt_in(guarded_worker, account, site):
    session = do_create_session(account, check_create_session(account, {"startUrl": f"{site.url}/pricing/"}))
    with pytest.raises(SessionError) as caught:
        wait_live(session, timeout=60)
    assert caught.value.code == "navigation_blocked"
    assert caught.value.message == (
        f"Session {session.public_id} is closed: the start URL {site.url}/pricing/ was not opened: 127.0.0.1 "
        f"resolves to 127.0.0.1: private, loopback, link-local and other non-public addresses cannot be called."
    )
    assert "/pricing/" not in site.seen


def test_a_page_of_a_live_session_cannot_open_loopback_without_the_opt_in(guarded_worker, account, site, settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False  # this process too: the install has not opted in
    session = open_session(account)
    with attach(session) as page:
        with pytest.raises(SessionError) as caught:
            navigate(page, f"{site.url}/login")
    assert caught.value.code == "navigation_blocked"
    assert "non-public addresses cannot be called" in caught.value.message
    assert not any("/login" in seen for seen in site.seen)
    do_stop_session(account, session.public_id)


def echo_gate(request: dict):
    gate = {k.lower(): v for k, v in (request.get("headers") or {}).items()}.get("x-gate", "none")
    return html(f"<html><head><title>gate</title></head><body><p id=gate>{gate}</p></body></html>".encode())


def test_extra_headers_go_only_to_the_host_they_name_and_blocked_kinds_are_not_fetched(session_worker, account, site):
    site.routes["/gate"] = echo_gate
    site.routes["/pictured"] = html(b'<html><body><p id=gate>pictured</p><img src="/dot.png"></body></html>')
    site.routes["/dot.png"] = (200, {"content-type": "image/png"}, PIXEL)
    port = urlsplit(site.url).port
    session = open_session(
        account, {"headers": [{"host": "localhost", "name": "X-Gate", "value": "open-sesame"}], "block": ["image"]}
    )
    with attach(session) as page:
        navigate(page, f"http://localhost:{port}/gate")
        named = page.inner_text("#gate")
        navigate(page, f"http://127.0.0.1:{port}/gate")
        other = page.inner_text("#gate")
        navigate(page, f"{site.url}/pictured", wait_until="load")
    do_stop_session(account, session.public_id)
    assert (named, other) == ("open-sesame", "none")
    assert "/pictured" in site.seen and "/dot.png" not in site.seen
    stored = BrowserSession.objects.get(pk=session.pk)
    assert "open-sesame" not in repr(stored.options) and b"open-sesame" not in bytes(stored.sealed_headers)


def test_allow_hosts_are_reached_through_the_users_own_proxy(session_worker, account, site):
    site.routes["/gate"] = echo_gate
    port = urlsplit(site.url).port
    asked: list[str] = []

    def users_proxy_policy(host: str, _port: int) -> list[str]:
        asked.append(host)
        return ["127.0.0.1"]  # the user's proxy knows where staging.internal is; nothing else does

    users_proxy = GuardProxy(users_proxy_policy)
    try:
        session = open_session(account, {"proxyUrl": users_proxy.url, "allowHosts": ["staging.internal"]})
        with attach(session) as page:
            navigate(page, f"http://staging.internal:{port}/gate")
            through = page.title()
            navigate(page, f"http://127.0.0.1:{port}/gate")
        do_stop_session(account, session.public_id)
    finally:
        users_proxy.close()
    assert through == "gate"
    assert set(asked) == {"staging.internal"}  # the direct host did not go through the user's proxy


def test_a_worker_told_to_stop_closes_the_sessions_it_keeps_and_exits(transactional_db, account, tmp_path):
    worker = start_worker(tmp_path / "worker.log")
    try:
        session = open_session(account)
        worker.send_signal(signal.SIGTERM)  # a warm shutdown, as ./scripts/start and compose stop send
        worker.wait(timeout=30)
    finally:
        stop_worker(worker)
    ended = BrowserSession.objects.get(pk=session.pk)
    assert (ended.status, ended.status_reason) == (
        "closed",
        "the worker holding its browser was shutting down, so the browser was stopped",
    )
    assert not port_answers(session.cdp_endpoint)
