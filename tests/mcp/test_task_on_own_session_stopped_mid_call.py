"""A task on a session the caller opened (create_session, then run_task with sessionId) whose session the caller
stops while the agent's browse call is still loading a page: the task ends `aborted` (spec, "Results and errors":
a stoppedBy that means the agent could not test), with the session's reason — never `error` because the call
broke when its browser went. Through /mcp on a real worker and real Chromium.
"""

from __future__ import annotations

import pytest

from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.mcp.test_tasks_and_reports import browse, live, provider_desk, site, text_of  # noqa: F401

pytestmark = pytest.mark.e2e


def test_a_task_whose_own_session_is_stopped_while_a_page_loads_ends_aborted(live, provider_desk, site):  # noqa: F811
    site.trickle.add("/slow")  # a byte a second, forever: the call is mid-load when the session stops
    provider_desk.reply_tool_use("web", browse(f"{site.url}/slow"))
    provider_desk.reply_text("STUCK: the page went away")
    session_id = live.call_tool("create_session", {}).structured_content["id"]
    started = live.call_tool("run_task", {"goal": "Read the slow page", "sessionId": session_id, "waitSeconds": 1})
    assert started.structured_content["status"] == "running"
    wait_for(lambda: "/slow" in site.seen, timeout=60)
    stopped = live.call_tool("stop_session", {"sessionId": session_id})
    assert stopped.structured_content == {"deleted": True, "closed": True}
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 90})
    task = read.structured_content["task"]
    assert read.is_error is True, text_of(read)
    assert (task["ok"], task["stoppedBy"], task["reason"]) == (False, "aborted", "stopped by stop_session")
