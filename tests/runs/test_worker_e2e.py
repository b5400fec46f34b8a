"""End to end through a real Celery worker process and the loopback model server."""
from __future__ import annotations

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e


def test_a_two_step_flow_with_a_tool_call_completes_on_a_real_worker(celery_worker_process, workspace, alice,
                                                                      fake_provider):
    push(workspace, {
        "agents/researcher/agent.md": agent_file("researcher", fake_provider),
        "agents/reporter/agent.md": agent_file("reporter", fake_provider),
        "knowledge/targets.md": "---\ntype: Reference\ntitle: Targets\ndescription: d\n---\ninspections geelong\n",
        "flows/weekly.md": "---\nname: weekly\n---\n1. [[researcher]] — Read the targets.\n"
                           "2. [[reporter]] — Summarise: {{steps.1.output}}\n",
    })
    fake_provider.reply_tool_use("Read", {"path": "knowledge/targets.md"})
    fake_provider.reply_text("the target is inspections geelong")
    fake_provider.reply_text("GOOD — one target tracked\ndetails")
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    assert done.status == "completed", done.error
    assert done.verdict == "GOOD"
    assert done.headline == "GOOD — one target tracked"
    assert [s.status for s in done.steps.all()] == ["completed", "completed"]
    results = TraceEvent.objects.filter(run=done, kind="tool_result")
    assert "inspections geelong" in results.get().data["content"]
    assert "Summarise: the target is inspections geelong" in fake_provider.requests[2].body["messages"][0]["content"]
