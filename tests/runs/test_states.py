"""Item 8: state in one place — one transition function per model, skipped steps, GET pages that never write,
a flow naming a missing agent refused at the start, schedules in their own timezone beside UTC."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from runs.actions import check_start_run
from runs.models import Run, RunStatus, Schedule, Step, StepStatus, Try
from runs.lifecycle import IllegalMove, end_try, move_run, move_step
from runs.triggers import fire_due_schedules
from tests.runs.helpers import agent_file, drive, push


def test_a_finished_step_refuses_to_move_again_and_says_why(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])
    step = Step.objects.create(run=run, index=1, agent="writer", status=StepStatus.COMPLETED)
    with pytest.raises(IllegalMove) as refused:
        move_step(step, StepStatus.RUNNING, "a second delivery of its message")
    assert str(refused.value) == "step 1 cannot move from completed to running (a second delivery of its message)"
    assert move_run(run, RunStatus.RUNNING, "its first step is due") == ["status", "status_reason"]
    assert (run.status, run.status_reason) == ("running", "its first step is due")
    with pytest.raises(IllegalMove):
        move_run(run, RunStatus.QUEUED, "back in the queue")


def test_an_ended_try_is_never_ended_again(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])
    step = Step.objects.create(run=run, index=1, agent="writer")
    attempt = Try.objects.create(step=step, n=1)
    assert end_try(attempt.pk, "lost", "its lease ran out") is True
    assert end_try(attempt.pk, "completed", "a late result") is False
    attempt.refresh_from_db()
    assert (attempt.status, attempt.status_reason) == ("lost", "its lease ran out")


def test_a_failed_runs_unstarted_steps_end_skipped_saying_why(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[a]] — Go.\n   verify: reply ^GOOD\n"
            "2. [[a]] — Then.\n3. [[a]] — And then.\n",
        },
    )
    fake_provider.reply_text("BAD")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "failed"
    assert [(s.index, s.status) for s in run.steps.order_by("index")] == [(1, "failed"), (2, "skipped"), (3, "skipped")]
    assert run.steps.get(index=2).status_reason == "the run failed before this step started"
    assert run.status_reason == run.error.splitlines()[0]


@pytest.fixture
def scheduled(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/daily.md": '---\nname: daily\nschedule: "0 7 * * *"\ntimezone: Australia/Sydney\n---\n'
            "1. [[a]] — Go.\n",
        },
    )
    return workspace


def _writes(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]


@pytest.mark.parametrize("url", ["/w/rank-desk/runs/", "/w/rank-desk/triggers/"])
def test_the_runs_and_triggers_pages_never_write(scheduled, alice, url):
    client = Client()
    client.force_login(alice)
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url)
    assert page.status_code == 200
    assert "daily" in page.content.decode()
    assert [w for w in _writes(queries) if "django_session" not in w] == []
    assert Schedule.objects.count() == 0  # beat keeps the rows, not a page


def test_the_schedules_api_never_writes(scheduled, alice):
    from tests.conftest import client_for

    client = client_for(alice)
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(f"/api/workspaces/{scheduled.name}/schedules")
    assert answer.status_code == 200
    assert answer.json()["schedules"][0]["timezone"] == "Australia/Sydney"
    assert [w for w in _writes(queries) if "accounts_apitoken" not in w] == []  # a token's last use aside


def test_the_triggers_page_shows_the_next_fire_in_the_flows_timezone_beside_utc(scheduled, alice):
    client = Client()
    client.force_login(alice)
    html = client.get("/w/rank-desk/triggers/").content.decode()
    cell = html.split('<td class="next-fire">', 1)[1].split("</td>", 1)[0]
    # 07:00 in Sydney is 20:00 or 21:00 UTC the day before (daylight saving).
    assert " 07:00 AE" in cell
    assert ("20:00 UTC" in cell) or ("21:00 UTC" in cell)


def test_a_schedule_fires_within_seconds_of_its_minute(scheduled):
    assert settings.CELERY_BEAT_SCHEDULE["runs-fire-schedules"]["schedule"] <= 5
    fire_due_schedules()
    row = Schedule.objects.get()
    assert fire_due_schedules(now=row.next_fire_at - dt.timedelta(seconds=1)) == 0
    assert fire_due_schedules(now=row.next_fire_at + dt.timedelta(seconds=4)) == 1
    assert Run.objects.get().trigger == "schedule"
