"""The Run page shows a browsing step's browser, in real Chromium against a real run on a real worker: under the
step, the page live (its picture changing while the call runs, marked `live`, with the address), `last seen`
once the call ended; once the run finishes, the step's video playing inline and seeking (byte ranges), its
trace and HAR as downloads. Another account gets a 404 for the panel, the frames and the video."""

from __future__ import annotations

import time

import pytest

from runs import live_view
from runs.actions import check_start_run
from runs.models import Artifact, Run, Step
from tests.conftest import wait_for, wait_in_page
from tests.e2e.conftest import chromium, signed_in  # noqa: F401 - real Chromium, signed in on the live server
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import TestSite, html, page
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e

TICKER = page(
    "Ticker",
    '<h1 id="n" style="font-size:120px">0</h1><script>let n = 0; setInterval(() => { '
    'document.getElementById("n").textContent = ++n; }, 100);</script>',
)


@pytest.fixture(scope="module")
def ticker_site():
    with TestSite({"/ticker": html(TICKER)}) as server:
        yield server


def finished(run) -> Run:
    return wait_for(
        lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(), timeout=120
    )


def start(workspace, alice, fake_provider, call: dict) -> Run:
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "mode": "text", **call})
    fake_provider.reply_text("GOOD — watched")
    return check_start_run(workspace=workspace, user=alice, agent="reader", task="Watch the ticker.")


def test_the_run_page_shows_the_steps_browser_live_and_then_last_seen(
    celery_worker_process, live_server, signed_in, workspace, alice, charlie_web, fake_provider, ticker_site
):
    # The page stays open 12 s: on a loaded machine a new picture may take a second or two to come.
    run = start(workspace, alice, fake_provider, {"url": f"{ticker_site.url}/ticker", "actions": [{"wait": 12000}]})
    tab = signed_in(alice)
    tab.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    frame = tab.locator(".browser-live img.browser-frame")
    frame.wait_for(timeout=60_000)
    assert tab.locator(".browser-live .live-mark").inner_text() == "live"
    assert tab.locator(".browser-live .browser-address").inner_text() == f"{ticker_site.url}/ticker"
    pictures = set()
    until = time.monotonic() + 9
    while time.monotonic() < until and len(pictures) < 3:
        src = frame.get_attribute("src")
        if src:
            pictures.add(src)
        time.sleep(0.1)
    assert len(pictures) >= 3, pictures  # a new picture as the page changes, without reloading the Run page
    wait_in_page(tab, "document.querySelector('.browser-live img.browser-frame').naturalWidth > 100")
    step = Step.objects.get(run=run)
    panel = f"/w/rank-desk/runs/{run.public_id}/browser/{step.public_id}"
    # Another account's run: its panel and frames are not found, like a missing one.
    assert charlie_web.get(panel).status_code == 404
    assert charlie_web.get(panel + "/frame").status_code == 404
    assert finished(run).status == "completed"
    tab.locator(".browser-live .last-seen").wait_for(timeout=30_000)
    assert tab.locator(".browser-live .last-seen").inner_text() == "last seen"
    assert tab.locator(".browser-live .live-mark").count() == 0
    assert tab.locator(".browser-live .browser-address").inner_text() == f"{ticker_site.url}/ticker"
    assert live_view.frame(step.public_id)[:3] == b"\xff\xd8\xff"


def test_once_the_run_finishes_the_steps_video_plays_inline_and_seeks_and_its_trace_and_har_download(
    celery_worker_process, live_server, signed_in, workspace, alice, alice_web, charlie_web, fake_provider, ticker_site
):
    run = finished(
        start(
            workspace,
            alice,
            fake_provider,
            {
                "url": f"{ticker_site.url}/ticker",
                "video": "true",
                "trace": "true",
                "har": "true",
                "actions": [{"wait": 3000}],
            },
        )
    )
    assert run.status == "completed", run.error
    video = Artifact.objects.get(run=run, path="outputs/videos/browse-1.webm")
    tab = signed_in(alice)
    tab.goto(f"{live_server.url}/w/rank-desk/runs/{run.public_id}")
    player = tab.locator("video.step-video")
    player.wait_for()
    wait_in_page(tab, "document.querySelector('video.step-video').readyState >= 1", timeout=15_000)
    assert player.evaluate("v => v.error") is None
    assert player.evaluate("v => v.duration") > 2  # the call's three seconds of the ticker
    assert player.evaluate("v => v.seekable.length") == 1
    player.evaluate("v => { v.currentTime = 2; }")
    wait_in_page(
        tab,
        "(() => { const v = document.querySelector('video.step-video'); "
        "return !v.seeking && Math.abs(v.currentTime - 2) < 0.6; })()",
        timeout=15_000,
    )
    src = player.get_attribute("src")
    ranged = alice_web.get(src, HTTP_RANGE="bytes=0-99")
    assert ranged.status_code == 206
    assert ranged["Content-Range"] == f"bytes 0-99/{video.size}"
    assert ranged.content == bytes(video.content)[:100]
    assert charlie_web.get(src).status_code == 404
    trace = tab.request.get(live_server.url + tab.locator("a.recording-trace").get_attribute("href"))
    har = tab.request.get(live_server.url + tab.locator("a.recording-har").get_attribute("href"))
    assert trace.status == 200 and trace.body()[:2] == b"PK"
    assert har.status == 200 and b'"log"' in har.body()[:200]
    assert tab.locator("a.recording-trace").inner_text() == "trace"
    assert tab.locator("a.recording-har").inner_text() == "HAR"
