"""A caller who stops the session a skill run is using cancels the run: it ends `cancelled` (isError), its report
is verdict `error` naming who stopped it, and nothing the run's worker does afterwards writes over that — through
/mcp on a real worker and real Chromium, and over REST (DELETE /v1/sessions)."""

from __future__ import annotations

import time

import pytest

from browsing.models import BrowserSession, SkillRun, Task
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import html
from tests.mcp.test_tasks_and_reports import browse, live, provider_desk, site, text_of  # noqa: F401

pytestmark = pytest.mark.e2e


def test_stopping_a_smoke_tests_session_mid_flow_ends_the_run_cancelled(live, provider_desk, site):  # noqa: F811
    # The flow's first step is with the agent (its model answer held back) when the session is stopped.
    provider_desk.reply_tool_use("web", browse(actions=[{"click": "text=Sign in"}]), delay=8)
    provider_desk.reply_text("DONE: Sign in is open.")
    started = live.call_tool(
        "run_skill",
        {"name": "smoke-uat", "inputs": {"url": f"{site.url}/pricing/", "steps": ["click Sign in"], "maxLinks": 0}},
    )
    run_id, session_id = started.structured_content["runId"], started.structured_content["sessionId"]
    wait_for(lambda: provider_desk.requests, timeout=60)
    stopped = live.call_tool("stop_session", {"sessionId": session_id})
    assert stopped.structured_content == {"deleted": True, "closed": True}
    read = live.call_tool("get_skill_run", {"runId": run_id, "waitSeconds": 0})
    assert read.is_error is True and read.structured_content["status"] == "cancelled"
    said = f"The run was cancelled: its session {session_id} was stopped by stop_session."
    report = live.call_tool("get_report", {"id": run_id, "waitSeconds": 0})
    assert report.is_error is True and report.structured_content["verdict"] == "error"
    assert report.structured_content["error"] == {"code": "cancelled", "message": said}
    assert text_of(report).splitlines()[0] == f"Smoke test of {site.url}/pricing/ could not run: {said}"
    # The held-back answer arrives, the step's task ends on a closed browser, the run's phase comes back:
    # the verdict stands.
    wait_for(lambda: Task.objects.filter(skill_run__public_id=run_id, status="finished").exists(), timeout=60)
    run = SkillRun.objects.get(public_id=run_id)
    assert run.status == "cancelled" and run.report["error"]["message"] == said
    assert BrowserSession.objects.get(public_id=session_id).status == "closed"


def test_stopping_a_smoke_tests_session_while_its_start_page_loads_leaves_the_run_cancelled(live, provider_desk, site):  # noqa: F811
    # The start phase is loading the page (its answer held back) when the session is stopped; when the phase
    # comes back — with the page or without it — it writes nothing over the cancelled run.
    site.routes["/held"] = lambda _request: (time.sleep(4), html(b"<html><title>Held</title><p>late</p></html>"))[1]
    started = live.call_tool(
        "run_skill",
        {"name": "smoke-uat", "inputs": {"url": f"{site.url}/held", "steps": ["click Sign in"], "maxLinks": 0}},
    )
    run_id, session_id = started.structured_content["runId"], started.structured_content["sessionId"]
    wait_for(lambda: "/held" in site.seen, timeout=60)
    assert live.call_tool("stop_session", {"sessionId": session_id}).structured_content["closed"] is True
    said = f"The run was cancelled: its session {session_id} was stopped by stop_session."
    wait_for(lambda: SkillRun.objects.filter(public_id=run_id, lease_holder="").exists(), timeout=60)
    time.sleep(1)  # the held page has answered by now; the start phase has had its say
    run = SkillRun.objects.get(public_id=run_id)
    assert (run.status, run.phase) == ("cancelled", "done")
    assert run.state["error"] == {"code": "cancelled", "message": said}
    assert run.report["error"] == {"code": "cancelled", "message": said}
    assert not Task.objects.filter(skill_run=run).exists()  # no flow step was started after the cancel
    assert not provider_desk.requests
