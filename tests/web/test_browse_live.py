"""`live: true` — a page that outlives the call (spec tools.md, "How this agent's browser presents itself"), through a
real run on a real Celery worker with real Chromium: a multi-step form keeps its progress from one call to the next,
`url` is optional on the next call, `session` names which live page, `live=end` closes it, the step's end closes
it, and a tab that crashed is a sentence and the next call starts fresh."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from runs.actions import check_start_run
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.fakes import html
from tests.web.test_browse_worker import finished, log_lines, tool_results

pytestmark = pytest.mark.e2e

WIZARD = """<html><body><h1>Wizard</h1>
<div id="s1"><label>Name <input id="name"></label>
<button id="next" onclick="s1.hidden=true; s2.hidden=false">Next</button></div>
<div id="s2" hidden><p>Step two of two</p><label>Email <input id="email"></label>
<button id="send" onclick="byId('out').textContent='Submitted ' + byId('name').value + ' ' + byId('email').value">Submit</button></div>
<p id="out"></p><script>function byId(id) { return document.getElementById(id); }</script></body></html>"""


@pytest.fixture
def wizard(site):
    site.pages["/wizard"] = html(WIZARD)
    site.seen.clear()
    return site


def live_browsers() -> dict[int, str]:
    """pid -> command line of every live page's browser on this machine (its profile is foldrun-live-…)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "foldrun-live-" in line and "--type=" not in line:
            found[int(entry)] = line
    return found


def renderers_of(profile: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            line = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "--type=renderer" in line and profile in line:
            found.append(int(entry))
    return found


def test_a_live_page_keeps_a_forms_progress_across_calls_and_live_end_closes_it(
    celery_worker_process, workspace, alice, fake_provider, wizard
):
    before = set(live_browsers())
    push(workspace, {"agents/clerk/agent.md": agent_file("clerk", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{wizard.url}/wizard",
            "live": True,
            "actions": [{"fill": "#name", "text": "Ada"}, {"click": "#next"}],
        },
    )
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "live": True,
            "device": "Pixel 7",
            "actions": [{"fill": "#email", "text": "ada@example.org"}, {"click": "#send"}],
        },
    )
    fake_provider.reply_tool_use("web", {"action": "browse", "live": "end"})
    fake_provider.reply_tool_use("web", {"action": "browse", "live": True})
    fake_provider.reply_text("GOOD — submitted")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="clerk", task="Fill in the wizard."))
    first, second, ended, after = tool_results(done)
    assert done.status == "completed", done.error
    assert "Step two of two" in first
    assert "Submitted Ada ada@example.org" in second  # call 2 found the page as call 1 left it
    assert second.startswith("live: device is not supported on a live page; carried on without it")
    assert ended == "live page live closed"
    assert after == "browse: there is no live page live in this step yet — the first call needs url="
    assert [r["path"] for r in wizard.seen].count("/wizard") == 1  # opened once; the next call reattached
    lines = log_lines(done)
    assert (
        "browse: live page live opened — kept beside the step until live=end, 15 minutes unused or the "
        "step's end" in lines
    )
    assert "browse: live page live closed (live=end)" in lines
    assert set(live_browsers()) - before == set()


def test_the_steps_end_closes_its_live_pages_and_session_names_which(
    celery_worker_process, workspace, alice, fake_provider, wizard
):
    before = set(live_browsers())
    push(
        workspace,
        {
            "agents/clerk/agent.md": agent_file(
                "clerk", fake_provider, tools="[web]", extra="web:\n  browse:\n    live: true\n"
            )
        },
    )
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{wizard.url}/wizard",
            "session": "one",
            "actions": [{"fill": "#name", "text": "One"}, {"click": "#next"}],
        },
    )
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{wizard.url}/wizard", "session": "two"})
    fake_provider.reply_tool_use(
        "web", {"action": "browse", "session": "one", "mode": "html", "url": f"{wizard.url}/wizard"}
    )  # the same URL: the page as it stands
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="clerk", task="Two live pages."))
    _one, two, one_again = tool_results(done)
    assert done.status == "completed", done.error
    assert "Step two of two" not in two and "Name" in two  # a page of its own, on its first step
    assert 'id="s1" hidden=""' in one_again  # page one still on its second step
    assert [r["path"] for r in wizard.seen].count("/wizard") == 2  # once for each live page, never reloaded
    wait_for(lambda: not (set(live_browsers()) - before), timeout=10)  # the step's end closed both


def test_a_live_page_whose_tab_crashed_is_a_sentence_and_the_next_call_starts_fresh(
    celery_worker_process, workspace, alice, fake_provider, wizard
):
    before = set(live_browsers())
    push(workspace, {"agents/clerk/agent.md": agent_file("clerk", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{wizard.url}/wizard",
            "live": True,
            "actions": [{"fill": "#name", "text": "Ada"}, {"click": "#next"}],
        },
    )
    fake_provider.reply_tool_use("web", {"action": "browse", "live": True}, delay=4)  # the tab is killed meanwhile
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{wizard.url}/wizard", "live": True})
    fake_provider.reply_text("GOOD")
    run = check_start_run(workspace=workspace, user=alice, agent="clerk", task="Fill in the wizard.")
    wait_for(lambda: len(fake_provider.requests) >= 2, timeout=60)  # call 1 answered: the page is left live
    profile = next(line for pid, line in live_browsers().items() if pid not in before).split("--user-data-dir=")[1]
    profile = profile.split()[0]
    killed = renderers_of(profile)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    assert killed
    done = finished(run)
    first, crashed, fresh = tool_results(done)
    assert done.status == "completed", done.error
    assert crashed == (
        "browse: the live page live crashed — its tab is gone, and what it held with it; it was "
        "closed, and the next call starts a fresh one (pass url= to open the page again)"
    )
    assert "Step two of two" not in fresh and "Name" in fresh  # a fresh page, on its first step
    assert [r["path"] for r in wizard.seen].count("/wizard") == 2
    time.sleep(0.5)
    assert set(live_browsers()) - before == set()


def test_a_live_page_on_an_engine_other_than_chromium_is_refused_in_checks_words_before_a_browser_opens(
    make_tool, site
):
    from foldrun.contract import web_engines as W
    from foldrun.web.errors import WebToolError

    before = set(live_browsers())
    on_call = make_tool({"browse": {"engine": "firefox"}})
    with pytest.raises(WebToolError) as refused:
        on_call.call({"action": "browse", "url": f"{site.url}/article", "live": True})
    assert str(refused.value) == f"browse: {W.engine_refusal('firefox', 'live')}"
    in_file = make_tool({"browse": {"engine": "firefox", "live": True}})
    with pytest.raises(WebToolError) as refused:
        in_file.call({"action": "browse", "url": f"{site.url}/article"})
    assert str(refused.value) == "web.browse: live needs Chromium; firefox is Firefox — use engine chrome"
    assert set(live_browsers()) == before and not on_call.live.pages and not in_file.live.pages


def test_a_live_page_left_unused_past_its_idle_time_closes_itself_without_a_next_call(make_tool, wizard):
    from foldrun.web.browse.live import IDLE_SECONDS, LivePages

    assert IDLE_SECONDS == 15 * 60
    before = set(live_browsers())
    tool = make_tool()
    tool.live = LivePages(idle_seconds=1.0)  # the spec's 15 minutes, shortened for the test
    answer = tool.call({"action": "browse", "url": f"{wizard.url}/wizard", "live": True})
    opened = set(live_browsers()) - before
    assert "Name" in answer and len(opened) == 1 and "live" in tool.live.pages
    wait_for(lambda: not tool.live.pages and not (set(live_browsers()) & opened), timeout=10)


def test_a_live_page_takes_the_files_cookies_when_it_opens_and_never_runs_script_after(make_tool, wizard):
    from foldrun.web.errors import WebToolError

    tool = make_tool(
        {"browse": {"live": True, "cookies": "SITE_COOKIES", "cookie_domain": "127.0.0.1"}},
        secret={"SITE_COOKIES": "sid=abc123"}.__getitem__,
    )
    assert "signed in as alice" in tool.call({"action": "browse", "url": f"{wizard.url}/account"})
    with pytest.raises(WebToolError) as refused:  # the next call, on the page those cookies signed in
        tool.call({"action": "browse", "js": "document.cookie"})
    assert str(refused.value) == (
        "browse: js does not run in a call that carries cookies from a secret, or in a "
        "session those cookies seeded — document.cookie is one expression away"
    )
