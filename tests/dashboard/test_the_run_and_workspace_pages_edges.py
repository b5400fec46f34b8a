"""Issue 35 item 9, as the pages render: the Run page titles a step by its agent's name, says a failed run's
error once, shows no "0/0 tokens · $0.0000" on a step that has used nothing yet; Triggers shows a UTC time
once when the flow's zone is UTC; the Tools page has a breadcrumb."""

from __future__ import annotations

import datetime as dt
import html
import re
from decimal import Decimal

import pytest

from runs.models import Run, Step, Try
from tests.runs.helpers import push

pytestmark = pytest.mark.django_db

ERROR = "step 1 (assistant) failed: the provider answered HTTP 400: prompt is too long"


def page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_a_failed_runs_page_titles_the_step_by_its_agent_and_says_the_error_once(alice_web, workspace):
    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="hello",
        status="failed",
        error=ERROR,
        headline=ERROR,
        finished_at=dt.datetime.now(dt.timezone.utc),
    )
    step = Step.objects.create(
        run=run,
        index=1,
        agent="assistant",
        task="Say hello.",
        status="failed",
        error="the provider answered HTTP 400: prompt is too long",
        attempt=2,
    )
    for n in (1, 2):
        Try.objects.create(step=step, n=n, status="failed", error=step.error)
    shown = page(alice_web, f"/w/rank-desk/runs/{run.public_id}")
    assert '<strong class="agent">assistant</strong>' in shown
    assert "[[assistant]]</strong>" not in shown
    # The headline says the run's error; the step says its own; the tries point at it rather than repeat it.
    assert shown.count("prompt is too long") == 2
    assert shown.count("as above") == 2


def test_a_running_step_that_has_used_nothing_says_it_is_working_not_0_tokens(alice_web, workspace):
    run = Run.objects.create(
        account=workspace.account, workspace=workspace, name="hello", status="running", cost_usd=Decimal("0.0123")
    )
    Step.objects.create(run=run, index=1, agent="assistant", task="Say hello.", status="running")
    shown = page(alice_web, f"/w/rank-desk/runs/{run.public_id}")
    assert "0/0 tokens" not in shown
    assert "working…" in shown


def test_triggers_shows_a_utc_time_once_when_the_zone_is_utc_and_twice_otherwise(alice_web, workspace):
    agent = "---\nname: a\ndescription: d\ntools: [read]\n---\nDo it.\n"
    push(
        workspace,
        {
            "agents/a/agent.md": agent,
            "flows/daily.md": '---\nname: daily\nschedule: "59 14 * * *"\ntimezone: UTC\n---\n1. [[a]] — Go.\n',
            "flows/sydney.md": (
                '---\nname: sydney\nschedule: "59 1 * * *"\ntimezone: Australia/Sydney\n---\n1. [[a]] — Go.\n'
            ),
        },
    )
    shown = page(alice_web, "/w/rank-desk/triggers/")
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r'<td class="next-fire">(.*?)</td>', shown)]
    utc, sydney = cells
    assert re.fullmatch(r"\d{4}-\d\d-\d\d 14:59 UTC", utc), utc
    assert re.fullmatch(r"\d{4}-\d\d-\d\d 01:59 AE[DS]T · \d{4}-\d\d-\d\d 1[45]:59 UTC", sydney), sydney


def test_the_tools_page_has_a_breadcrumb(alice_web, workspace):
    shown = page(alice_web, "/w/rank-desk/tools/")
    assert '<div class="breadcrumb"><a href="/">Home</a> / <a href="/w/rank-desk/">rank-desk</a> / tools</div>' in shown
