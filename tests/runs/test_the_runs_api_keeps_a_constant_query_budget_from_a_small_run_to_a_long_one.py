"""Issue 31 item 1, "Proven by": the runs list page, one run and a trace page each make the same number of SQL
queries — within a fixed budget — for a small run as for a 300-step run with a 2,000-event step, and for a
workspace of a few runs as for one of hundreds (before, one run of a 2,000-call step took 4,055 queries)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Workspace
from runs.models import Approval, Artifact, Run, Step, TraceEvent, Try

# Queries for any one of these answers: the token, the membership, the workspace, then the rows (9 at most
# today: one run, with its steps, their tries, approvals, artifacts and its cache line).
BUDGET = 10


def make_run(workspace: Workspace, steps: int, calls: int) -> Run:
    """A finished run of `steps` steps with two tries each, an approval and an artifact per tenth step, six trace
    events per step and, on its last step, `calls` tool calls."""
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="completed")
    made = Step.objects.bulk_create(
        [Step(run=run, index=i, agent="writer", status="completed", output=f"part {i}") for i in range(1, steps + 1)]
    )
    Try.objects.bulk_create([Try(step=step, n=n, status="completed") for step in made for n in (1, 2)])
    Approval.objects.bulk_create([Approval(run=run, step=step, state="approved") for step in made[::10]])
    Artifact.objects.bulk_create(
        [Artifact(run=run, step=step, path=f"outputs/{step.index}.md", content=b"x" * 10_000) for step in made[::10]]
    )
    events = [
        TraceEvent(run=run, step=step, try_n=1, kind="log", data={"message": "m"}) for step in made for _ in "123456"
    ]
    events += [
        TraceEvent(run=run, step=made[-1], try_n=2, kind="tool_call", data={"name": "read"}) for _ in range(calls)
    ]
    TraceEvent.objects.bulk_create(events, batch_size=2000)
    return run


def queries(api, url: str) -> int:
    api.get(url)  # a warm-up: whatever is cached once per process is not the answer's cost
    with CaptureQueriesContext(connection) as captured:
        answer = api.get(url)
    assert answer.status_code == 200, answer.content
    return len(captured.captured_queries)


def test_one_run_and_its_first_trace_page_cost_the_same_queries_for_2_steps_or_300_with_2000_calls(
    alice_api, workspace, account
):
    small = make_run(workspace, steps=2, calls=0)
    Workspace.objects.create(account=account, name="big-desk")
    big = make_run(Workspace.objects.get(name="big-desk"), steps=300, calls=2000)
    for tail in ("", "/status", "/trace"):
        few = queries(alice_api, f"/api/workspaces/rank-desk/runs/{small.public_id}{tail}")
        many = queries(alice_api, f"/api/workspaces/big-desk/runs/{big.public_id}{tail}")
        assert (tail, many) == (tail, few)
        assert few <= BUDGET, tail
    detail = alice_api.get(f"/api/workspaces/big-desk/runs/{big.public_id}").json()
    assert len(detail["steps"]) == 300 and all(len(s["tries"]) == 2 for s in detail["steps"])
    assert len(detail["approvals"]) == 30 and len(detail["artifacts"]) == 30
    page = alice_api.get(f"/api/workspaces/big-desk/runs/{big.public_id}/trace").json()
    assert len(page["events"]) == 500 and page["next"]
    assert queries(alice_api, page["next"]) == queries(
        alice_api, f"/api/workspaces/rank-desk/runs/{small.public_id}/trace"
    )


def test_a_page_of_the_runs_list_costs_the_same_queries_for_5_runs_or_400(alice_api, workspace, account):
    now = timezone.now()
    big = Workspace.objects.create(account=account, name="big-desk")
    for ws, total in ((workspace, 5), (big, 400)):
        Run.objects.bulk_create(
            [
                Run(
                    account=account, workspace=ws, name="weekly", created_by=None, created_at=now - timedelta(seconds=i)
                )
                for i in range(total)
            ]
        )
    few = queries(alice_api, "/api/workspaces/rank-desk/runs")
    many = queries(alice_api, "/api/workspaces/big-desk/runs")
    last_page = alice_api.get("/api/workspaces/big-desk/runs?limit=50").json()
    for _ in range(6):
        last_page = alice_api.get(last_page["next"]).json()
    assert many == few <= BUDGET
    assert queries(alice_api, last_page["next"]) == few
