"""A run's start reads the workspace's head revision and starts there: a start after a push runs the flow as
pushed, finds a flow pushed since, and writes every step of a longer one."""

from __future__ import annotations

import pytest
from library.models import Changeset
from runs.actions import check_start_run
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)  # a start outside any transaction is the case in point


def flow(name: str, steps: list[str]) -> str:
    return f"---\nname: {name}\n---\n" + "".join(f"{n}. [[a]] — {text}\n" for n, text in enumerate(steps, 1))


@pytest.fixture
def desk(workspace, fake_provider, monkeypatch):
    monkeypatch.setattr("foldrun.celery.send", lambda *args: None)  # no worker here: the rows are the point
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
            "flows/two.md": flow("two", ["First.", "Second."]),
        },
    )
    return workspace


def newest(workspace) -> int:
    return Changeset.objects.filter(workspace=workspace).order_by("-number").values_list("number", flat=True)[0]


def test_a_start_after_a_push_runs_the_flow_as_pushed(desk):
    check_start_run(workspace=desk, flow="two")
    push(desk, {"flows/two.md": flow("two", ["First.", "Second, as pushed later."])})
    run = check_start_run(workspace=desk, flow="two")
    assert run.changeset_number == newest(desk)
    assert [spec["task"] for spec in run.plan] == ["First.", "Second, as pushed later."]


def test_a_flow_pushed_since_the_last_start_is_found(desk):
    check_start_run(workspace=desk, flow="two")
    push(desk, {"flows/fresh.md": flow("fresh", ["New."])})
    run = check_start_run(workspace=desk, flow="fresh")
    assert (run.name, run.changeset_number) == ("fresh", newest(desk))


def test_a_long_flow_pushed_since_starts_at_the_new_head(desk):
    check_start_run(workspace=desk, flow="two")
    push(desk, {"flows/two.md": flow("two", [f"Step {n}." for n in range(1, 13)])})
    run = check_start_run(workspace=desk, flow="two")
    assert run.changeset_number == newest(desk) and run.steps.count() == 12
    assert [s.task for s in run.steps.order_by("index")][1:] == [f"Step {n}." for n in range(2, 13)]
