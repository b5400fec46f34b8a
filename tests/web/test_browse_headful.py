"""`headless: false` — the same browser with a window (spec tools.md, "How this agent's browser presents itself"):
1920×1080, its pages the window's size instead of an emulated 1366×900; with no screen, an in-step browser starts an
Xvfb of its own for the call and stops it after; the run log says `browser: with a window (headless: false)` and
where; there is no per-call argument for it. Through real runs on a real worker with real Chromium."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from runs.actions import check_start_run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.fakes import html
from tests.web.test_browse_worker import finished, log_lines, tool_results

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(bool(os.environ.get("DISPLAY")), reason="this machine has a screen")]

SIZE = """<html><body><p id="size"></p><script>
document.getElementById('size').textContent = 'window ' + innerWidth + 'x' + innerHeight + ' screen ' +
  screen.width + 'x' + screen.height;
</script></body></html>"""
WINDOW_LINE = re.compile(r"browser: with a window \(headless: false\) — on a virtual screen \(Xvfb :(\d+), "
                         r"1920x1080\) started for the call")


def xvfbs() -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].endswith(b"Xvfb"):
                    found.add(int(entry))
            except OSError:
                pass
    return found


@pytest.fixture
def sized(site):
    site.pages["/size"] = html(SIZE)
    return site


def test_headless_false_draws_a_1920_by_1080_window_on_a_virtual_screen_of_the_calls_own(
        celery_worker_process, workspace, alice, fake_provider, sized):
    before = xvfbs()
    push(workspace, {"agents/reader/agent.md": agent_file(
        "reader", fake_provider, tools="[web]", extra="web:\n  browse:\n    headless: false\n")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    first, second = tool_results(done)
    assert done.status == "completed", done.error
    width, height = map(int, re.search(r"window (\d+)x(\d+)", first).groups())
    assert "screen 1920x1080" in first
    assert 1900 <= width <= 1920 and 900 < height <= 1080  # the window's size (less its frame), not 1366x900
    windows = [WINDOW_LINE.fullmatch(line) for line in log_lines(done) if line.startswith("browser: with a window")]
    assert len(windows) == 2 and all(windows)  # one line each call, each with its own screen
    assert xvfbs() == before  # each call's Xvfb stopped with its browser


def test_without_headless_false_the_page_is_the_emulated_1366_by_900(
        celery_worker_process, workspace, alice, fake_provider, sized):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    assert "window 1366x900" in tool_results(done)[0]
    assert not [line for line in log_lines(done) if line.startswith("browser: with a window")]


def test_a_call_asking_for_a_window_itself_is_refused_there_is_no_per_call_argument(
        celery_worker_process, workspace, alice, fake_provider, sized, make_tool):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{sized.url}/size", "headless": False})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="How big is it?"))
    assert tool_results(done)[0].startswith("web: unknown argument `headless`; it takes action, ")  # the model's
    assert not [line for line in log_lines(done) if line.startswith("browser: with a window")]
    from foldrun.web.errors import WebToolError

    with pytest.raises(WebToolError) as refused:  # a caller past the schema (the CLI) is told where it belongs
        make_tool().call({"action": "browse", "url": f"{sized.url}/size", "headless": False})
    assert str(refused.value) == ("browse: headless is the agent's own setting (web.browse.headless: false in its "
                                  "file), not a call's — there is no per-call argument for it")
