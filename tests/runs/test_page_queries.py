"""The page bench's figure, held in a test: the Run page and the runs list
make the same number of SQL queries whatever the number of steps or runs
(tests/bench/page_bench.py prints the times at full size)."""

from __future__ import annotations

from django.test import Client

from tests.bench.page_bench import make_run, make_runs, measure
from tests.runs.helpers import push

AGENT = "---\nname: writer\ndescription: Writes.\ntools: [read]\n---\nWrite.\n"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_run_page_makes_the_same_queries_for_3_steps_or_40_and_loads_a_big_runs_traces_when_opened(
    alice, account, workspace
):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="big-desk")
    for ws in (workspace, other):
        push(ws, {"agents/writer/agent.md": AGENT, "flows/weekly.md": "---\nname: weekly\n---\n1. [[writer]] — W.\n"})
    small, big = make_run(workspace, 3), make_run(other, 40)
    client = signed_in(alice)
    _, few, _ = measure(client, f"/w/rank-desk/runs/{small.public_id}", 1)
    _, many, _ = measure(client, f"/w/big-desk/runs/{big.public_id}", 1)
    page = client.get(f"/w/big-desk/runs/{big.public_id}").content.decode()
    step = big.steps.get(index=40)
    trace = client.get(
        f"/w/big-desk/runs/{big.public_id}", {"trace": step.public_id}, headers={"HX-Request": "true"}
    ).content.decode()
    assert many == few
    # 480 events: each step's trace loads when opened, not with the page.
    assert page.count('<div class="trace-slot">') == 40 and "Model request ·" not in page
    assert trace.count('<span class="ev-title">Model request · claude-sonnet-4-5</span>') == 4


def test_the_runs_list_makes_the_same_queries_for_20_runs_or_600(alice, account, workspace):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="big-desk")
    for ws in (workspace, other):
        push(ws, {"agents/writer/agent.md": AGENT, "flows/weekly.md": "---\nname: weekly\n---\n1. [[writer]] — W.\n"})
    make_runs(workspace, 20)
    make_runs(other, 600)
    client = signed_in(alice)
    _, few, _ = measure(client, "/w/rank-desk/runs/", 1)
    _, many, _ = measure(client, "/w/big-desk/runs/", 1)
    page = client.get("/w/big-desk/runs/").content.decode()
    assert many == few
    assert page.count('<a href="/w/big-desk/runs/run_') == 50 and "page 1 of 12 · 600 runs" in page
