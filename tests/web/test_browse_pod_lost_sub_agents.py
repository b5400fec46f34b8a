"""The lost-pod judgement counts a consulted colleague's calls (spec tools.md, "Slim steps and a lost pod": "Read or
write is judged from the calls the step had made, its sub-agents' included"), on a real worker with real Chromium
and a pod server killed with -9 until the three reconnects fail."""

from __future__ import annotations

import pytest

from accounts.models import Workspace
from runs.actions import check_start_run
from runs.models import Step
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.test_browse_pod_lost import PodKiller, assert_three_failed_reconnects_then_lost, pod_lines
from tests.web.test_browse_worker import finished

pytestmark = pytest.mark.e2e


def test_a_step_whose_consulted_colleague_wrote_fails_naming_the_colleagues_write_and_is_not_run_again(
    celery_worker_process, workspace, alice, fake_provider, site
):
    site.seen.clear()
    other = Workspace.objects.create(account=workspace.account, name="notes-desk")
    push(other, {"agents/scribe/agent.md": agent_file("scribe", fake_provider, tools="[read]")})
    push(workspace, {"agents/lead/agent.md": agent_file("lead", fake_provider, tools="[web, desks]")})
    fake_provider.reply_tool_use("consult", {"desk": "notes-desk", "agent": "scribe", "question": "Note it."})
    fake_provider.reply_tool_use("Write", {"path": "memory/notes.md", "content": "noted"})  # the colleague's call
    fake_provider.reply_text("noted")  # … and its answer
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_text("BAD — not reached")
    with PodKiller(celery_worker_process, site, "/slow", until=lambda: False):
        done = finished(check_start_run(workspace=workspace, user=alice, agent="lead", task="Consult, then read."))
    step = Step.objects.get(run=done)
    assert done.status == "failed"
    assert step.error == (
        'browser pod died after the step had written Write {"path": "memory/notes.md", "content": "noted"}'
    )
    assert_three_failed_reconnects_then_lost(pod_lines(done))
    assert [(t.n, t.status, t.image) for t in step.tries.all()] == [(1, "failed", "slim")]
    assert [r["path"] for r in site.seen].count("/slow") == 1  # never asked again: the colleague had written


def test_a_step_whose_consulted_colleague_only_read_runs_again_with_a_browser_of_its_own(
    celery_worker_process, workspace, alice, fake_provider, site
):
    site.seen.clear()
    other = Workspace.objects.create(account=workspace.account, name="notes-desk")
    push(
        other,
        {
            "agents/scribe/agent.md": agent_file("scribe", fake_provider, tools="[read]"),
            "knowledge/n.md": "---\ntype: Reference\ntitle: n\ndescription: d\n---\nseven\n",
        },
    )
    push(workspace, {"agents/lead/agent.md": agent_file("lead", fake_provider, tools="[web, desks]")})
    for _go in range(2):  # the slim go, then the re-run with a browser in the step
        fake_provider.reply_tool_use("consult", {"desk": "notes-desk", "agent": "scribe", "question": "Look it up."})
        fake_provider.reply_tool_use("Read", {"path": "knowledge/n.md"})
        fake_provider.reply_text("seven")
        fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_text("GOOD — read it in the step's own browser")
    asked_twice = lambda: [r["path"] for r in site.seen].count("/slow") >= 2  # noqa: E731 - the re-run's ask
    with PodKiller(celery_worker_process, site, "/slow", until=asked_twice):
        done = finished(check_start_run(workspace=workspace, user=alice, agent="lead", task="Consult, then read."))
    step = Step.objects.get(run=done)
    assert done.status == "completed", done.error
    assert pod_lines(done)[-1] == "browser pod lost; re-ran on full"
    assert [(t.n, t.status, t.image) for t in step.tries.order_by("n")] == [
        (1, "lost", "slim"),
        (2, "completed", "full"),
    ]
