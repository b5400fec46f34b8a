"""Watching a browse call, through real runs on a real Celery worker with real Chromium: the step's frames reach
the place its Run page reads (at most three a second, `live` while the call runs, the last one held after), none
when the agent turns the live view off or the call signs in; `video` kept as a real .webm among the run's files,
skipped (and said) for a call that signs in; trace and HAR named for the Run page, refused beside a sign-in."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.test import override_settings
from django.urls import reverse

from foldrun import leases

from runs import live_view
from runs.actions import check_start_run
from runs.host import DbHost
from runs.models import Artifact, Run, Step, TraceEvent, Try
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import TestSite, html, page
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e

# A page that changes ten times a second: Chromium sends a frame each time it draws something new.
TICKER = page(
    "Ticker",
    '<h1 id="n">0</h1><script>let n = 0; setInterval(() => { '
    'document.getElementById("n").textContent = ++n; }, 100);</script>',
)
SIGN_IN = page("Sign in", '<form><input id="user"><input id="pw" type="password"><button>Go</button></form>')
# A page whose button opens the ticker in a popup (window.open): a second page the call itself opened.
OPENER = page(
    "Opener",
    "<h1>Opener</h1><button id=\"open\" onclick=\"window.open('/ticker', '_blank', "
    "'popup,width=800,height=600')\">Open</button>",
)
ROUTES = {"/ticker": html(TICKER), "/sign-in": html(SIGN_IN), "/opener": html(OPENER)}


@pytest.fixture(scope="module")
def ticker_site():
    with TestSite(ROUTES) as server:
        yield server


def finished(run) -> Run:
    return wait_for(
        lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(), timeout=120
    )


def tool_results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("pk")]


def browsing_step(run) -> Step:
    return wait_for(lambda: Step.objects.filter(run=run, status="running").first(), timeout=60)


def reader(workspace, fake_provider, browse: str = "", extra: str = "") -> None:
    extra += f"web: {{browse: {{{browse}}}}}\n" if browse else ""
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]", extra=extra)})


def watch_frames(step_id: str, stop: threading.Event) -> list[dict]:
    """Every distinct frame line the step's panel would have read, polled every 50 ms."""
    seen: list[dict] = []

    def poll():
        while not stop.is_set():
            line = live_view.read(step_id)
            if line is not None and (not seen or seen[-1]["seq"] != line["seq"] or seen[-1]["live"] != line["live"]):
                seen.append({**line, "polled": time.monotonic()})
            time.sleep(0.05)

    threading.Thread(target=poll, daemon=True).start()
    return seen


def watched_run(workspace, alice, task: str) -> tuple[Run, Step, list[dict]]:
    """A reader's run, its browsing step, and every frame line the step's panel showed until a moment after it
    ended."""
    run = check_start_run(workspace=workspace, user=alice, agent="reader", task=task)
    step = browsing_step(run)
    stop = threading.Event()
    seen = watch_frames(step.public_id, stop)
    done = finished(run)
    time.sleep(0.3)
    stop.set()
    return done, step, seen


def test_a_step_browsing_a_changing_page_hands_its_frames_to_its_run_live_and_then_last_seen(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    reader(workspace, fake_provider)
    fake_provider.reply_tool_use(
        "web", {"action": "browse", "url": f"{ticker_site.url}/ticker", "mode": "text", "actions": [{"wait": 4000}]}
    )
    fake_provider.reply_text("GOOD — watched it tick")
    done, step, seen = watched_run(workspace, alice, "Watch the ticker.")
    assert done.status == "completed", done.error
    live = [line for line in seen if line["live"]]
    assert len(live) >= 4, seen  # the page changed all along, so frames came all along
    assert {line["url"] for line in seen} == {f"{ticker_site.url}/ticker"}
    # At most three frames a second: the sequence grows no faster than that over the call.
    span = live[-1]["at"] - live[0]["at"]
    assert live[-1]["seq"] - live[0]["seq"] <= 3 * span + 1, (live[0], live[-1])
    last = live_view.read(step.public_id)
    assert last is not None and last["live"] is False  # the call ended: the panel says `last seen`
    assert live_view.frame(step.public_id)[:3] == b"\xff\xd8\xff"  # a JPEG the page can show


def test_the_live_view_follows_a_popup_the_call_opens_and_ends_on_the_page_the_call_ended_on(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    reader(workspace, fake_provider)
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{ticker_site.url}/opener",
            "mode": "text",
            "actions": [{"wait": 800}, {"click": "#open"}, {"tab": "last"}, {"wait": 3000}],
        },
    )
    fake_provider.reply_text("GOOD — watched the popup")
    done, step, seen = watched_run(workspace, alice, "Open the popup.")
    assert done.status == "completed", done.error
    urls = [line["url"] for line in seen if line["live"]]
    assert f"{ticker_site.url}/ticker" in urls, seen  # the popup the call opened is on the panel
    popup_from = urls.index(f"{ticker_site.url}/ticker")
    assert set(urls[popup_from:]) == {f"{ticker_site.url}/ticker"}  # and only it, once it opened
    last = live_view.read(step.public_id)
    assert last is not None and last["live"] is False and last["url"] == f"{ticker_site.url}/ticker"


def test_live_view_false_shows_none_of_the_agents_pages(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    reader(workspace, fake_provider, "live_view: false")
    fake_provider.reply_tool_use(
        "web", {"action": "browse", "url": f"{ticker_site.url}/ticker", "mode": "text", "actions": [{"wait": 1500}]}
    )
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Watch the ticker."))
    assert done.status == "completed", done.error
    assert not tool_results(done)[0].startswith("browse:")  # the page was opened and read
    step = done.steps.get()
    assert live_view.read(step.public_id) is None and not live_view.folder(step.public_id).exists()


def test_a_call_that_fills_a_field_from_a_secret_is_never_streamed_and_skips_the_blocks_video(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    from vault.actions import do_set_secret

    do_set_secret(workspace.account, None, "SITE_PASSWORD", value="hunter2-very-secret")
    reader(workspace, fake_provider, "video: true", extra="secrets: [SITE_PASSWORD]\n")
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{ticker_site.url}/sign-in",
            "mode": "text",
            "actions": [{"fill": "#user", "text": "alice"}, {"fill": "#pw", "secret": "SITE_PASSWORD"}, {"wait": 1000}],
        },
    )
    fake_provider.reply_text("GOOD — signed in")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in."))
    step = done.steps.get()
    result = tool_results(done)[0]
    assert done.status == "completed", done.error
    assert "hunter2-very-secret" not in result
    assert result.startswith(
        "video: not recorded — a call that signs in is never kept (its page shows what it "
        "typed); sign in with session= or state= and record the next call"
    )
    assert not live_view.folder(step.public_id).exists()
    assert not Artifact.objects.filter(run=done, path__endswith=".webm").exists()


def test_a_call_that_signs_in_refuses_its_own_video_trace_and_har_in_a_sentence(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    reader(workspace, fake_provider)
    sign_in = [{"fill": "#pw", "secret": "SITE_PASSWORD"}]
    for ask in ({"video": "true"}, {"trace": "true"}, {"har": "true"}):
        fake_provider.reply_tool_use(
            "web", {"action": "browse", "url": f"{ticker_site.url}/sign-in", "actions": sign_in, **ask}
        )
    fake_provider.reply_text("BAD — nothing kept")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Sign in, recorded."))
    assert tool_results(done) == [
        "browse: a call that signs in keeps no video — its page shows every field it filled; sign in with session= "
        "and record the next call",
        "browse: a call that signs in keeps no trace — a trace keeps every field's value, a HAR every request body; "
        "sign in with session= and record the next call",
        "browse: a call that signs in keeps no har — a trace keeps every field's value, a HAR every request body; "
        "sign in with session= and record the next call",
    ]
    assert not Artifact.objects.filter(run=done).exists()


def test_video_trace_and_har_are_kept_with_the_runs_files_and_named_for_its_run_page(
    celery_worker_process, workspace, alice, fake_provider, ticker_site
):
    reader(workspace, fake_provider)
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{ticker_site.url}/ticker",
            "mode": "text",
            "video": "true",
            "trace": "true",
            "har": "true",
            "actions": [{"wait": 2000}],
        },
    )
    fake_provider.reply_text("GOOD — recorded")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Record the ticker."))
    assert done.status == "completed", done.error
    kept = {a.path: bytes(a.content) for a in Artifact.objects.filter(run=done)}
    assert set(kept) == {"outputs/videos/browse-1.webm", "outputs/trace.zip", "outputs/network.har"}, tool_results(done)
    video = kept["outputs/videos/browse-1.webm"]
    assert video[:4] == b"\x1a\x45\xdf\xa3" and b"webm" in video[:64] and len(video) > 2000  # EBML, doctype webm
    assert kept["outputs/trace.zip"][:2] == b"PK"
    assert b'"log"' in kept["outputs/network.har"][:200]
    assert "video: outputs/videos/browse-1.webm" in tool_results(done)[0]
    event = TraceEvent.objects.get(run=done, kind="web")
    assert event.data["recordings"] == {
        "trace": "outputs/trace.zip",
        "har": "outputs/network.har",
        "video": ["outputs/videos/browse-1.webm"],
    }


def test_a_video_records_every_page_the_call_opens_one_webm_each_and_the_run_page_plays_them_all(
    celery_worker_process, workspace, alice, fake_provider, ticker_site, client
):
    reader(workspace, fake_provider)
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{ticker_site.url}/opener",
            "mode": "text",
            "video": "true",
            "actions": [{"click": "#open"}, {"tab": "last"}, {"wait": 1500}],
        },
    )
    fake_provider.reply_text("GOOD — recorded both")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Record the popup."))
    assert done.status == "completed", done.error
    kept = {a.path: bytes(a.content) for a in Artifact.objects.filter(run=done)}
    assert set(kept) == {"outputs/videos/browse-1.webm", "outputs/videos/browse-1-tab2.webm"}, tool_results(done)
    for video in kept.values():
        assert video[:4] == b"\x1a\x45\xdf\xa3" and b"webm" in video[:64] and len(video) > 2000  # EBML, doctype webm
    assert kept["outputs/videos/browse-1-tab2.webm"] != kept["outputs/videos/browse-1.webm"]  # each page its own
    answer = tool_results(done)[0]
    assert "video: outputs/videos/browse-1.webm" in answer
    assert "video: outputs/videos/browse-1-tab2.webm (tab 2, opened by the call)" in answer
    event = TraceEvent.objects.get(run=done, kind="web")
    assert event.data["recordings"] == {"video": ["outputs/videos/browse-1.webm", "outputs/videos/browse-1-tab2.webm"]}
    client.force_login(alice)
    run_page = client.get(reverse("run-page", args=[workspace.name, done.public_id])).content.decode()
    played = re.findall(r'<video class="step-video" controls preload="metadata" src="([^"]+)"', run_page)
    artifacts = {a.path: a.public_id for a in Artifact.objects.filter(run=done)}
    assert played == [
        reverse("run-video", args=[workspace.name, done.public_id, artifacts[path]])
        for path in ("outputs/videos/browse-1.webm", "outputs/videos/browse-1-tab2.webm")
    ]


def test_frames_are_held_five_minutes_after_the_last_and_then_dropped_read_or_not():
    import json
    import os
    import shutil

    for name in ("stp_heldfive", "stp_unread", "stp_another", "stp_nothing_drawn"):
        shutil.rmtree(live_view.folder(name), ignore_errors=True)  # a run of this test before
    live_view.write("stp_heldfive", "frame", b"\xff\xd8\xff jpeg", "https://shop.test/a")
    live_view.write("stp_heldfive", "end", None, "https://shop.test/a")
    live_view.write("stp_unread", "frame", b"\xff\xd8\xff jpeg", "https://shop.test/b")
    assert live_view.read("stp_heldfive")["live"] is False and live_view.frame("stp_heldfive") == b"\xff\xd8\xff jpeg"
    five_minutes_ago = time.time() - live_view.HOLD_SECONDS - 1
    line = live_view.folder("stp_heldfive") / "frame.json"
    line.write_text(json.dumps({**json.loads(line.read_text()), "at": five_minutes_ago}))
    assert live_view.read("stp_heldfive") is None and not live_view.folder("stp_heldfive").exists()
    os.utime(live_view.folder("stp_unread") / "frame.json", (five_minutes_ago, five_minutes_ago))
    live_view.write("stp_another", "frame", b"\xff\xd8\xff jpeg", "https://shop.test/c")  # a new step's first frame
    assert not live_view.folder("stp_unread").exists() and live_view.read("stp_another")["seq"] == 1
    live_view.write("stp_nothing_drawn", "end", None, "https://shop.test/d")  # a call that ended before a frame
    assert live_view.read("stp_nothing_drawn") is None and not live_view.folder("stp_nothing_drawn").exists()


@pytest.mark.django_db(transaction=True)
@override_settings(FOLDRUN_LEASE_SECONDS=1)
def test_a_worker_that_lost_the_steps_lease_puts_no_more_frames_on_its_panel(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])
    step = Step.objects.create(run=run, index=1, agent="reader", status="running")
    attempt = Try.objects.create(step=step, n=1)
    holder = leases.new_holder()
    assert leases.claim(Step, step.pk, holder)
    with leases.Heartbeat(Step, step.pk, holder) as beat:
        host = DbHost(run, step, attempt, lease=beat)
        host.live_frame("frame", b"\xff\xd8\xff while held", "https://shop.test/a")
        assert live_view.frame(step.public_id) == b"\xff\xd8\xff while held"
        Step.objects.filter(pk=step.pk).update(lease_holder="the-sweep")  # the sweep runs the step elsewhere now
        wait_for(lambda: beat.lost, timeout=5)
        host.live_frame("frame", b"\xff\xd8\xff after it was lost", "https://shop.test/b")
        host.live_frame("end", None, "https://shop.test/b")
    line = live_view.read(step.public_id)
    assert live_view.frame(step.public_id) == b"\xff\xd8\xff while held"  # the lost holder's frames never landed
    assert line["url"] == "https://shop.test/a" and line["live"] is True
