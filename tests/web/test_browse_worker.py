"""`web action=browse` through a real run on a real Celery worker, with real Chromium.

The step's trace and run log are written by the worker's ORM while Playwright's
sync API holds an event loop in the browsing thread; these runs prove the two
never meet (a SynchronousOnlyOperation fails the step).
"""
from __future__ import annotations

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e


def finished(run) -> Run:
    return wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(),
                    timeout=120)


def tool_results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("pk")]


def test_a_browse_call_on_a_real_worker_completes_and_its_trace_reaches_the_run(
        celery_worker_process, workspace, alice, fake_provider, site):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/app", "mode": "text"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/broken", "mode": "text"})
    fake_provider.reply_text("GOOD — read both pages")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the listings."))
    results = tool_results(done)
    events = [e.data for e in TraceEvent.objects.filter(run=done, kind="web").order_by("pk")]
    assert done.status == "completed", done.error
    assert results[0].startswith("Rendered listings\nHarbour flat")
    assert [e["event"] for e in events] == ["browse", "browse"]
    assert events[0]["url"] == f"{site.url}/app"
    assert done.headline == "GOOD — read both pages"
