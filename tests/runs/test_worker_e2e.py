"""End to end through a real Celery worker process and the loopback model server."""

from __future__ import annotations

import time

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e


def test_a_two_step_flow_with_a_tool_call_completes_on_a_real_worker(
    celery_worker_process, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/researcher/agent.md": agent_file("researcher", fake_provider),
            "agents/reporter/agent.md": agent_file("reporter", fake_provider),
            "knowledge/targets.md": "---\ntype: Reference\ntitle: Targets\ndescription: d\n---\ninspections geelong\n",
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[researcher]] — Read the targets.\n"
            "2. [[reporter]] — Summarise: {{steps.1.output}}\n",
        },
    )
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


def test_a_fan_out_runs_its_instances_in_parallel_as_a_group_and_joins_them(
    celery_worker_process, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/lister/agent.md": agent_file("lister", fake_provider),
            "agents/reader/agent.md": agent_file("reader", fake_provider),
            "agents/reporter/agent.md": agent_file("reporter", fake_provider),
            "flows/fan.md": "---\nname: fan\n---\n1. [[lister]] — List.\n2. [[reader]] — Read {{item}}.\n   each: lines\n"
            "3. [[reporter]] — Report: {{steps.2.output}}\n",
        },
    )
    fake_provider.reply_text("a\nb\nc\nd")
    for _ in range(4):
        fake_provider.reply_text("read", delay=1.0)
    fake_provider.reply_text("GOOD — four read")
    started = time.monotonic()
    run = check_start_run(workspace=workspace, user=alice, flow="fan")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    assert done.status == "completed", done.error
    assert done.steps.filter(index=2, instance__isnull=False, status="completed").count() == 4
    assert done.steps.get(index=2, instance__isnull=True).output == "read\nread\nread\nread"
    assert time.monotonic() - started < 4 + 8  # two at a time (concurrency 2), not four in a row plus overhead


def test_a_gate_parks_on_the_worker_and_the_api_approval_resumes_it(
    celery_worker_process, workspace, alice, alice_api, fake_provider
):
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/gated.md": "---\nname: gated\n---\n1. [[publisher]] ! — Publish.\n",
        },
    )
    fake_provider.reply_text("BLOCKED — the draft has no title")
    run = check_start_run(workspace=workspace, user=alice, flow="gated")
    wait_for(lambda: Run.objects.filter(pk=run.pk, status="awaiting-approval").exists(), timeout=30)
    answer = alice_api.post(f"/api/workspaces/rank-desk/runs/{run.public_id}/steps/1/approve", {}, format="json")
    assert answer.status_code == 200
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=30)
    assert (done.status, done.verdict) == ("completed", "BLOCKED")
