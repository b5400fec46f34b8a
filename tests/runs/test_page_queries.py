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


def test_the_run_page_makes_the_same_queries_for_3_steps_or_40(alice, account, workspace):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="big-desk")
    for ws in (workspace, other):
        push(ws, {"agents/writer/agent.md": AGENT, "flows/weekly.md": "---\nname: weekly\n---\n1. [[writer]] — W.\n"})
    small, big = make_run(workspace, 3), make_run(other, 40)
    client = signed_in(alice)
    _, few, _ = measure(client, f"/w/rank-desk/runs/{small.public_id}", 1)
    _, many, size = measure(client, f"/w/big-desk/runs/{big.public_id}", 1)
    assert many == few
    assert size > 100_000  # the 40 steps, their tries and trace are all on the page


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
