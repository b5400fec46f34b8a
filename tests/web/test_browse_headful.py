"""`headless: false` — the same browser with a window (spec tools.md, "How this agent's browser presents itself"):
1920×1080, its pages the window's size instead of an emulated 1366×900. On a worker the call renders in the
account's pool, on a windowed pod (a browser server under an Xvfb of its own), by the pool's rules — the step is
`slim`, a pod killed mid-call is reconnected to; in the step (the CLI) a browser starts an Xvfb of its own for the
call and stops it after. The run log says `browser: with a window (headless: false)` and where; there is no
per-call argument for it. Through real runs on a real worker with real Chromium."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.urls import reverse

from runs.actions import check_start_run
from tests.conftest import wait_for
from tests.processes import is_under, running
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.fakes import html
from runs.models import Step
from tests.web.test_browse_worker import a_slow_read_with_its_pod_killed, finished, log_lines, pods_of, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(os.environ.get("DISPLAY")), reason="this machine has a screen")]

SIZE = """<html><body><p id="size"></p><script>
document.getElementById('size').textContent = 'window ' + innerWidth + 'x' + innerHeight + ' screen ' +
  screen.width + 'x' + screen.height;
</script></body></html>"""
WINDOW_LINE = re.compile(
    r"browser: with a window \(headless: false\) — on a virtual screen \(Xvfb :(\d+), "
    r"1920x1080\) started for the call"
)
POD_WINDOW_LINE = re.compile(
    r"browser: with a window \(headless: false\) — on the browser pod's virtual screen "
    r"\(Xvfb :(\d+), 1920x1080\)"
)
WINDOWED = "web:\n  browse:\n    headless: false\n"


def xvfbs() -> dict[int, str]:
    """pid -> display of every Xvfb running."""
    return {pid: argv[1].decode() for pid, argv in running() if argv[0].endswith(b"Xvfb")}


def worker_xvfbs(worker) -> list[str]:
    """The displays of the Xvfbs the worker's processes started (its windowed pods' screens)."""
    return [display for pid, display in xvfbs().items() if is_under(pid, worker.pid)]


def display_of(pid: int) -> str | None:
    for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if item.startswith(b"DISPLAY="):
            return item.split(b"=", 1)[1].decode()
    return None


@pytest.fixture
def sized(site):
    site.pages["/size"] = html(SIZE)
    return site


def test_headless_false_draws_a_1920_by_1080_window_on_the_pools_windowed_pod_and_the_step_stays_slim(
    celery_worker_process, workspace, alice, fake_provider, sized, client
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]", extra=WINDOWED)})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    first, second = tool_results(done)
    assert done.status == "completed", done.error
    width, height = map(int, re.search(r"window (\d+)x(\d+)", first).groups())
    assert "screen 1920x1080" in first and "screen 1920x1080" in second
    assert 1900 <= width <= 1920 and 900 < height <= 1080  # the window's size (less its frame), not 1366x900
    windows = [POD_WINDOW_LINE.fullmatch(line) for line in log_lines(done) if line.startswith("browser: with a window")]
    assert len(windows) == 2 and all(windows)  # one line each call
    assert windows[0].group(1) == windows[1].group(1)  # both drawn on the same pod's screen
    display = f":{windows[0].group(1)}"
    servers = {display_of(pid) for pid in pods_of(celery_worker_process)}
    assert display in servers  # the windowed pod's server draws on that screen; the plain pod has none
    assert worker_xvfbs(celery_worker_process) == [display]  # one Xvfb, the windowed pod's own
    assert list(xvfbs().values()).count(display) == 1  # and no other on its display
    assert [t.image for t in Step.objects.get(run=done).tries.all()] == ["slim"]  # rendered in the pool
    client.force_login(alice)
    assert (
        "slim · browser pod" in client.get(reverse("run-page", args=[workspace.name, done.public_id])).content.decode()
    )


def test_a_windowed_call_cut_by_killing_its_pod_is_run_again_on_the_replaced_pod_and_its_screen_goes_with_it(
    celery_worker_process, workspace, alice, fake_provider, sized
):
    done, killed = a_slow_read_with_its_pod_killed(
        celery_worker_process, workspace, alice, fake_provider, sized, extra=WINDOWED
    )
    lines = [line for line in log_lines(done) if line.startswith("browser pod:")]
    windows = [POD_WINDOW_LINE.fullmatch(line) for line in log_lines(done) if line.startswith("browser: with a window")]
    assert done.status == "completed", done.error
    assert tool_results(done) == ["late"]
    assert len(lines) == 1 and lines[0].startswith("browser pod: reconnected (try 1 of 3, at ")
    assert [r["path"] for r in sized.seen].count("/slow") == 2  # asked again, on the windowed pod that replaced it
    assert len(windows) == 2 and all(windows)  # the first go and the run again each had a window
    assert len(killed["pids"]) == 1  # the windowed pod: a step whose browser has a window starts no other
    replacement = f":{windows[1].group(1)}"
    # Every Xvfb the worker started is a live server's: the killed server's screen went with it.
    wait_for(lambda: sorted(worker_xvfbs(celery_worker_process)) == [replacement], timeout=10)
    assert replacement in {display_of(pid) for pid in pods_of(celery_worker_process)}
    assert [t.image for t in Step.objects.get(run=done).tries.all()] == ["slim"]


def test_without_headless_false_the_page_is_the_emulated_1366_by_900(
    celery_worker_process, workspace, alice, fake_provider, sized
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    assert "window 1366x900" in tool_results(done)[0]
    assert not [line for line in log_lines(done) if line.startswith("browser: with a window")]


def test_in_the_step_a_windowed_call_starts_an_xvfb_of_its_own_and_stops_it_after(make_tool, recorder, sized):
    tool = make_tool({"browse": {"headless": False}})  # no pool (the CLI): the browser launches in the step
    before = xvfbs()
    answer = tool.call({"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    tool.close()
    assert "screen 1920x1080" in answer
    windows = [WINDOW_LINE.fullmatch(line) for line in recorder.lines if line.startswith("browser: with")]
    assert len(windows) == 1 and windows[0]
    assert xvfbs() == before  # the call's Xvfb stopped with its browser


HEADLESS_SENTENCE = (
    "browse: headless is the agent's own setting (web.browse.headless: false in its file), not a "
    "call's — there is no per-call argument for it"
)


def test_a_call_asking_for_a_window_itself_is_told_where_the_setting_belongs(
    celery_worker_process, workspace, alice, fake_provider, sized, make_tool
):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "headless": False})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    assert tool_results(done)[0] == HEADLESS_SENTENCE  # the model is told where it belongs, not just "unknown"
    assert not [line for line in log_lines(done) if line.startswith("browser: with a window")]
    from foldrun.web.errors import WebToolError

    with pytest.raises(WebToolError) as refused:  # a caller past the schema (the CLI) is told the same
        make_tool().call({"action": "browse", "url": f"{sized.url}/size", "headless": False})
    assert str(refused.value) == HEADLESS_SENTENCE
