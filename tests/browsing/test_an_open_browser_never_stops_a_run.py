"""On the start command's worker settings — a worker of two slots on the main queue, the browser service on its own
queue with FOLDRUN_BROWSER_CAPACITY slots, and beat, each a real process — one browser session open and a smoke
test running do not stop the platform: ten runs started then all finish, a due schedule fires and its run
finishes, and /api/health answers 200 throughout. The keepers ran on the browser service only."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from browsing.actions import check_create_session, do_create_session, do_stop_session, wait_ended, wait_live
from browsing.models import BrowserSession, SkillRun
from runs.actions import check_start_run
from runs.models import Run, Schedule
from tests.conftest import start_worker, stop_worker
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401 - the loopback model server
from tests.mcp.conftest import mcp_client, mcp_server, token_for  # noqa: F401 - the platform on a live port
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.e2e
STALE = "6"  # /api/health's staleness here: a worker that cannot run its heartbeat for 6 s makes it a 503
RUNS = 10
FINISHED = ["completed", "failed", "cancelled"]


@pytest.fixture
def start_command_processes(transactional_db, tmp_path, settings):
    """The worker, the browser service and beat as scripts/start runs them (queues and slots), on the test
    database."""
    settings.FOLDRUN_HEALTH_STALE_SECONDS = int(STALE)
    env = {"FOLDRUN_HEALTH_STALE_SECONDS": STALE, "FOLDRUN_BROWSER_CAPACITY": str(settings.FOLDRUN_BROWSER_CAPACITY)}
    worker = start_worker(tmp_path / "worker.log", env, concurrency=2, queues="main")
    browsers = start_worker(
        tmp_path / "browsers.log", env, concurrency=settings.FOLDRUN_BROWSER_CAPACITY, queues="browsers"
    )
    beat_env = dict(
        os.environ,
        FOLDRUN_TEST_DB_NAME=connection.settings_dict["NAME"],
        DJANGO_SETTINGS_MODULE="foldrun.settings.test",
        **env,
    )
    with open(tmp_path / "beat.log", "wb") as log:
        beat = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "foldrun",
                "beat",
                "-l",
                "info",
                "-s",
                str(tmp_path / "beat-schedule"),
            ],
            env=beat_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    yield {"worker": worker, "browsers": browsers, "beat_log": tmp_path / "beat.log"}
    for process in (beat, worker, browsers):
        stop_worker(process)


def tail(path, lines: int = 15) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def test_one_open_session_and_a_smoke_test_leave_the_runs_schedules_and_health_alone(
    start_command_processes, mcp_server, mcp_client, workspace, alice, site, fake_provider, settings
):  # noqa: F811
    settings.FOLDRUN_PUBLIC_URL = mcp_server.base
    push(
        workspace,
        {
            "agents/ticker/agent.md": agent_file("ticker", fake_provider),
            "flows/tick.md": "---\nname: tick\n---\n1. [[ticker]] — Say it is done.\n",
            "flows/hourly.md": '---\nname: hourly\nschedule: "0 * * * *"\n---\n1. [[ticker]] — Say the hour is done.\n',
        },
    )
    for _ in range(RUNS + 5):
        fake_provider.reply_text("GOOD — done")
    health: list[int] = []

    def healthy() -> None:
        health.append(APIClient().get("/api/health").status_code)

    # Health first turns 200 once the worker, the browser service and beat are heard from.
    deadline = time.monotonic() + 60
    while APIClient().get("/api/health").status_code != 200:
        assert time.monotonic() < deadline, APIClient().get("/api/health").json()["problems"]
        time.sleep(0.5)

    # One session open, holding a browser for the whole test.
    session = wait_live(
        do_create_session(
            alice.memberships.first().account, check_create_session(alice.memberships.first().account, {})
        ),
        timeout=60,
    )
    # A smoke test running: its own recorded session on the browser service, its checks on the worker.
    with mcp_client(token_for(alice)) as client:
        smoke = client.call_tool("run_skill", {"name": "smoke-uat", "inputs": {"url": f"{site.url}/"}})
    assert not smoke.is_error, smoke.content[0].text
    smoke_id = smoke.structured_content["runId"]

    # Ten runs, and the hourly schedule made due now: beat's next tick fires it.
    runs = [check_start_run(workspace=workspace, user=alice, flow="tick") for _ in range(RUNS)]
    # Beat's tick makes the schedule's row once it sees the push (on a busy worker that tick may wait its turn);
    # made due before then, the update would touch nothing and the row come later due in an hour.
    deadline = time.monotonic() + 90
    while not Schedule.objects.filter(workspace=workspace, flow="hourly").update(next_fire_at=timezone.now()):
        assert time.monotonic() < deadline, (
            f"beat never made the hourly schedule's row: {tail(start_command_processes['beat_log'])}"
        )
        time.sleep(0.5)
    # Generous: on a loaded CI machine the smoke test's browser and checks share two cores with all of this.
    deadline = time.monotonic() + 240
    while True:
        healthy()
        done = Run.objects.filter(pk__in=[r.pk for r in runs], status__in=FINISHED).count()
        scheduled = Run.objects.filter(
            workspace=workspace, name="hourly", trigger="schedule", status__in=FINISHED
        ).count()
        if done == RUNS and scheduled:
            break
        assert time.monotonic() < deadline, (
            f"{done} of {RUNS} runs and {scheduled} scheduled runs finished; hourly runs: "
            f"{list(Run.objects.filter(workspace=workspace, name='hourly').values_list('status', 'trigger'))}; "
            f"schedule: {list(Schedule.objects.filter(workspace=workspace).values_list('flow', 'next_fire_at'))}; "
            f"beat's log ends: {tail(start_command_processes['beat_log'])}"
        )
        time.sleep(0.5)

    assert (
        list(Run.objects.filter(pk__in=[r.pk for r in runs]).values_list("status", flat=True)) == ["completed"] * RUNS
    )
    assert Run.objects.get(workspace=workspace, name="hourly").status == "completed"
    assert BrowserSession.objects.get(pk=session.pk).status == "live"  # open the whole time
    smoke_run = SkillRun.objects.get(public_id=smoke_id)
    deadline = time.monotonic() + 90
    while smoke_run.status == "running" and time.monotonic() < deadline:
        healthy()
        time.sleep(0.5)
        smoke_run.refresh_from_db()
    assert smoke_run.status in ("passed", "failed"), (smoke_run.status, smoke_run.report)
    assert health and set(health) == {200}, f"{health.count(503)} of {len(health)} health checks were 503"

    do_stop_session(alice.memberships.first().account, session.public_id)
    assert wait_ended(session)
    worker_log = start_command_processes["worker"].log_path.read_bytes()
    browsers_log = start_command_processes["browsers"].log_path.read_bytes()
    # Celery logs "Task <name>[<id>] received" for each message a worker takes.
    assert b"Task browsing.keep_session[" not in worker_log and b"Task browsing.keep_session[" in browsers_log
    assert b"Task runs." in worker_log
    assert b"Task runs." not in browsers_log  # the browser service ran no step, sweep or schedule
