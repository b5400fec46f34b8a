"""How a task of the browser agent ended, read from its run's rows: stoppedBy, ok, reason, the steps' cost.

The runs and trace lines are written here as a worker writes them (the e2e tests in
tests/mcp/test_tasks_and_reports.py drive real ones); finish_task reads them once and only once.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from browsing.models import BrowserSession, Task
from runs.browser_tasks import finish_task
from runs.models import Run, Step, TraceEvent


def ended_task(
    workspace, *, status: str, reply: str = "", trace: list[tuple[str, dict]] = (), error: str = "", max_steps: int = 25
) -> Task:
    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        kind="adhoc",
        name="task:browser-agent",
        status=status,
        error=error,
        finished_at=timezone.now(),
        cost_usd="0.000617",
    )
    Step.objects.create(run=run, index=1, agent="browser-agent", status="completed", output=reply)
    for kind, data in trace:
        TraceEvent.objects.create(run=run, kind=kind, data=data)
    session = BrowserSession.objects.create(account=workspace.account, status="live")
    return Task.objects.create(account=workspace.account, session=session, run=run, goal="g", max_steps=max_steps)


BLOCKED_CALL = [
    ("model_request", {"cost_usd": "0.000472"}),
    ("tool_call", {"id": "t1", "name": "web", "input": {"action": "browse", "url": "http://10.0.0.1/"}}),
    (
        "tool_result",
        {
            "id": "t1",
            "name": "web",
            "error": True,
            "seconds": 0.2,
            "content": "browse: http://10.0.0.1/ was not opened — 10.0.0.1 is a private address",
        },
    ),
]


@pytest.mark.parametrize(
    ("reply", "trace", "stopped", "reason"),
    [
        ("CAPTCHA: a bot check on the sign-in page", [], "captcha", "a bot check on the sign-in page"),
        ("BLOCKED: access denied", [], "blocked", "access denied"),
        ("UNANSWERED: the site lists no prices", [], "unanswered", "the site lists no prices"),
        (
            "STUCK: could not open it",
            BLOCKED_CALL,
            "navigation_blocked",
            "browse: http://10.0.0.1/ was not opened — 10.0.0.1 is a private address",
        ),
        ("I am not sure what to do.", [], "stuck", "I am not sure what to do."),
    ],
)
def test_the_agents_last_word_says_how_a_completed_task_stopped(workspace, reply, trace, stopped, reason):
    task = ended_task(workspace, status="completed", reply=reply, trace=trace)
    assert finish_task(task.pk) is True
    task.refresh_from_db()
    assert (task.status, task.ok, task.stopped_by, task.reason) == ("finished", False, stopped, reason)


def test_a_blocked_call_is_a_step_that_failed_with_its_cost(workspace):
    task = ended_task(workspace, status="completed", reply="STUCK: no", trace=BLOCKED_CALL)
    finish_task(task.pk)
    task.refresh_from_db()
    assert task.steps == [
        {
            "op": "navigate",
            "ref": None,
            "provider": None,
            "ok": False,
            "ms": 200,
            "costMicros": 472,
            "error": "browse: http://10.0.0.1/ was not opened — 10.0.0.1 is a private address",
        }
    ]
    assert task.cost_micros == 617


def test_a_cancelled_run_is_aborted_and_a_failed_one_is_an_error(workspace):
    cancelled = ended_task(workspace, status="cancelled", error="cancelled by alice@example.com")
    failed = ended_task(workspace, status="failed", error="the provider answered 401")
    finish_task(cancelled.pk)
    finish_task(failed.pk)
    cancelled.refresh_from_db()
    failed.refresh_from_db()
    assert (cancelled.stopped_by, cancelled.reason) == ("aborted", "cancelled by alice@example.com")
    assert (failed.stopped_by, failed.reason) == ("error", "the provider answered 401")


def test_finishing_a_task_twice_changes_nothing_the_second_time(workspace):
    task = ended_task(workspace, status="completed", reply="DONE: it is open")
    assert finish_task(task.pk) is True
    assert finish_task(task.pk) is False
    task.refresh_from_db()
    assert (task.ok, task.stopped_by, task.answer) == (True, "done", "it is open")
