"""A task's browse calls are actions on its session: the session's idle clock (idleTimeoutMs) starts again at
each, so a task that acts every few seconds for longer than the idle limit keeps its session open — and once the
task ends, the clock runs again as before. Through /mcp, on a real worker and real Chromium, the beat's sweep run
here every second.
"""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.utils import timezone

from browsing.models import BrowserSession, Task
from browsing.sweep import sweep
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.mcp.test_tasks_and_reports import browse, live, provider_desk, site, text_of  # noqa: F401

pytestmark = pytest.mark.e2e

NAV = [
    "header a[href='/pricing/']",
    "header a[href='/login']",
    "header a[href='/blog/']",
    "header a[href='/']",
    "header a[href='/pricing/']",
]


def test_a_task_clicking_every_four_seconds_for_24_s_keeps_a_10_s_idle_session_open(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/"))
    for selector in NAV:  # the model thinks 4 s before each click: never 10 s without an action
        provider_desk.reply_tool_use("web", browse(actions=[{"click": selector}]), delay=4)
    provider_desk.reply_text("DONE: Five pages visited.", delay=4)
    created = live.call_tool("create_session", {"idleTimeoutMs": 10_000})
    session_id = created.structured_content["id"]
    started = live.call_tool("run_task", {"goal": "Visit five pages", "sessionId": session_id, "waitSeconds": 1})
    assert started.structured_content["status"] == "running", text_of(started)
    began, idle = time.monotonic(), 0
    while Task.objects.filter(session__public_id=session_id, status="running").exists():
        assert time.monotonic() - began < 90, "the task did not end"
        idle += sweep()["idle"]
        time.sleep(1)
    took = time.monotonic() - began
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 0})
    task = read.structured_content["task"]
    assert read.is_error is False, text_of(read)
    assert took > 20  # well past the idle limit, acting all along
    assert (task["stoppedBy"], [s["op"] for s in task["steps"]]) == ("done", ["navigate"] + ["click"] * 5)
    assert idle == 0
    session = BrowserSession.objects.get(public_id=session_id)
    assert (session.status, session.end_reason) == ("live", "")
    # The task is over: ten more seconds with no actions and the sweep closes the session, in the spec's words.
    assert sweep(now=timezone.now() + dt.timedelta(seconds=11))["idle"] == 1
    session.refresh_from_db()
    assert (session.status, session.end_reason, session.status_reason) == (
        "closed",
        "idle_timeout",
        "it had no actions for 10 s (idleTimeoutMs)",
    )
