"""Issue 31 item 1 from the CLI: `foldrun runs` pages (it says the command for the older runs), and `foldrun logs`
reads a long trace page by page from the trace endpoint — the run's own answer no longer carries it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.signals import request_started
from django.utils import timezone

from runs.models import Run, Step, TraceEvent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def paths_asked():
    """The path (and query) of every request the live server answers, in order."""
    asked: list[str] = []

    def record(sender, environ, **kwargs) -> None:
        query = environ.get("QUERY_STRING")
        asked.append(environ["PATH_INFO"] + (f"?{query}" if query else ""))

    request_started.connect(record)
    yield asked
    request_started.disconnect(record)


def test_runs_prints_a_page_and_the_command_for_the_older_runs(cli, signed_in_as, alice, workspace):
    now = timezone.now()
    Run.objects.bulk_create(
        [
            Run(account=workspace.account, workspace=workspace, name=f"flow-{i}", created_at=now - timedelta(minutes=i))
            for i in range(5)
        ]
    )
    signed_in_as(alice)
    first = cli("runs", "--to", "rank-desk", "--limit", "2")
    assert first.code == 0, first.err
    assert [line.split()[1] for line in first.lines[1:]] == ["flow-0", "flow-1"]
    command = first.err.strip().removeprefix("Older runs: foldrun ").split()
    assert command[:5] == ["runs", "--to", "rank-desk", "--limit", "2"] and command[5] == "--before"
    second = cli(*command)
    assert [line.split()[1] for line in second.lines[1:]] == ["flow-2", "flow-3"]
    third = cli("runs", "--to", "rank-desk", "--limit", "2", "--before", second.err.split()[-1])
    assert [line.split()[1] for line in third.lines[1:]] == ["flow-4"]
    assert third.err == ""


def test_logs_prints_a_trace_longer_than_a_page_reading_it_from_the_trace_endpoint(
    cli, signed_in_as, alice, workspace, paths_asked
):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="completed")
    step = Step.objects.create(run=run, index=1, agent="writer", status="completed", task="Read everything.")
    TraceEvent.objects.bulk_create(
        [TraceEvent(run=run, step=step, try_n=1, kind="log", data={"message": f"line {i}"}) for i in range(1100)]
    )
    signed_in_as(alice)
    result = cli("logs", run.public_id, "--to", "rank-desk")
    assert result.code == 0, result.err
    printed = [line.strip() for line in result.lines if line.strip().startswith("line ")]
    assert printed == [f"line {i}" for i in range(1100)]
    base = f"/api/workspaces/rank-desk/runs/{run.public_id}"
    assert [p.split("?")[0] for p in paths_asked] == [base, f"{base}/trace", f"{base}/trace", f"{base}/trace"]
