"""run_task against the account's capacity and the session's clock, through /mcp on a real worker and Chromium.

A task on a session that has no browser yet waits for it: its run starts when the session is live. A busy pool,
a queue that runs out, a caller's stop and a session past its maxDurationMs each end the task with the spec's
`stoppedBy` (capacity_exceeded, capacity_timeout, aborted, timeout) and `isError: true`.
"""

from __future__ import annotations

import time

import pytest
from django.utils import timezone

from browsing.actions import do_stop_session
from browsing.models import BrowserSession, Task
from browsing.sweep import sweep
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.mcp.conftest import token_for
from tests.mcp.test_tasks_and_reports import SUMMARY, browse, live, provider_desk, site, text_of  # noqa: F401

pytestmark = pytest.mark.e2e


@pytest.fixture
def full_pool(settings, alice):
    """One browser per account, taken by a live session of alice's."""
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    return BrowserSession.objects.create(
        account=alice.memberships.first().account, status="live", live_at=timezone.now()
    )


def test_a_task_on_a_full_pool_ends_capacity_exceeded_and_asks_no_model(live, full_pool, provider_desk):
    result = live.call_tool("run_task", {"goal": "Read the pricing page"})
    data = result.structured_content
    task = data["task"]
    assert result.is_error is True
    assert SUMMARY.match(text_of(result).splitlines()[0]).groups() == ("stopped", "capacity_exceeded", "0")
    assert task["stoppedBy"] == "capacity_exceeded" and task["ok"] is False
    assert task["reason"] == (
        "Every browser of this account is busy (1 of 1 sessions open). Stop a session with "
        "stop_session, pass waitForCapacityMs to wait for one, or queueForCapacity to queue"
    )
    assert data["sessionClosed"] is True
    session = BrowserSession.objects.get(public_id=data["sessionId"])
    assert (session.status, session.end_reason, session.live_at) == ("closed", "capacity_exceeded", None)
    assert not provider_desk.requests
    # The task is on the records like any other: get_task and get_report read it.
    read = live.call_tool("get_task", {"sessionId": data["sessionId"], "waitSeconds": 0})
    assert read.is_error is True and read.structured_content["task"]["stoppedBy"] == "capacity_exceeded"
    report = live.call_tool("get_report", {"id": task["taskId"], "waitSeconds": 0})
    assert report.structured_content["verdict"] == "error" and report.is_error is True


def _queued(live) -> str:
    created = live.call_tool("create_session", {"queueForCapacity": {"maxWaitSeconds": 1}})
    assert created.is_error is False and created.structured_content["status"] == "starting"
    return created.structured_content["id"]


def test_a_task_on_a_queued_session_whose_queue_runs_out_ends_capacity_timeout(live, full_pool, provider_desk):
    session_id = _queued(live)
    started = live.call_tool("run_task", {"goal": "Read the pricing page", "sessionId": session_id, "waitSeconds": 1})
    assert started.is_error is False and started.structured_content["status"] == "running"
    time.sleep(1.2)
    assert sweep()["capacity_timeout"] == 1  # the beat's sweep, run here at once
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 30})
    task = read.structured_content["task"]
    assert read.is_error is True and read.structured_content["status"] == "finished"
    assert SUMMARY.match(text_of(read).splitlines()[0]).groups() == ("stopped", "capacity_timeout", "0")
    assert task["reason"] == "no browser of the account became free within its queue wait (1 s)"
    assert Task.objects.get(public_id=task["id"]).run is None and not provider_desk.requests


def test_a_task_on_a_queued_session_starts_when_a_browser_frees(live, full_pool, provider_desk, site, alice):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"))
    provider_desk.reply_text("DONE: The Pro plan costs $12 a month.")
    created = live.call_tool("create_session", {"queueForCapacity": {"maxWaitSeconds": 120}})
    session_id = created.structured_content["id"]
    started = live.call_tool(
        "run_task", {"goal": "Read the Pro plan's price", "sessionId": session_id, "waitSeconds": 1}
    )
    assert started.structured_content["status"] == "running"
    assert not provider_desk.requests  # queued: nothing began
    do_stop_session(alice.memberships.first().account, full_pool.public_id)  # its browser is free now
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 90})
    task = read.structured_content["task"]
    assert read.is_error is False, text_of(read)
    assert (task["stoppedBy"], task["answer"]) == ("done", "The Pro plan costs $12 a month.")
    assert "/pricing/" in site.seen
    assert live.call_tool("stop_session", {"sessionId": session_id}).structured_content["closed"] is True


def test_a_task_whose_session_is_stopped_under_it_ends_aborted(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"), delay=4)
    provider_desk.reply_text("STUCK: the page went away")
    created = live.call_tool("create_session", {})
    session_id = created.structured_content["id"]
    started = live.call_tool("run_task", {"goal": "Read the pricing page", "sessionId": session_id, "waitSeconds": 1})
    assert started.structured_content["status"] == "running"
    stopped = live.call_tool("stop_session", {"sessionId": session_id})
    assert stopped.structured_content == {"deleted": True, "closed": True}
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 60})
    task = read.structured_content["task"]
    assert read.is_error is True
    assert (task["stoppedBy"], task["reason"]) == ("aborted", "stopped by stop_session")


def test_a_task_past_its_sessions_max_duration_ends_timeout(live, provider_desk, site):
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"), delay=12)
    provider_desk.reply_text("STUCK: the browser is gone")
    created = live.call_tool("create_session", {"maxDurationMs": 10_000})
    session_id = created.structured_content["id"]
    opened = time.monotonic()
    started = live.call_tool("run_task", {"goal": "Read the pricing page", "sessionId": session_id, "waitSeconds": 1})
    assert started.structured_content["status"] == "running"
    time.sleep(max(0.0, 10.5 - (time.monotonic() - opened)))
    assert sweep()["max_duration"] == 1  # the beat's sweep, run here at once
    read = live.call_tool("get_task", {"sessionId": session_id, "waitSeconds": 60})
    task = read.structured_content["task"]
    assert read.is_error is True
    assert SUMMARY.match(text_of(read).splitlines()[0]).group(2) == "timeout"
    assert task["reason"] == "it reached its maximum duration of 10 s (maxDurationMs)"


def test_a_task_of_another_accounts_session_is_not_found(live, mcp_client, charlie, full_pool):
    with mcp_client(token_for(charlie)) as other:
        result = other.call_tool("run_task", {"goal": "x", "sessionId": full_pool.public_id})
        read = other.call_tool("get_task", {"sessionId": full_pool.public_id})
    assert result.is_error is True and result.structured_content["error"]["code"] == "not_found"
    assert read.is_error is True and read.structured_content["error"]["code"] == "not_found"
