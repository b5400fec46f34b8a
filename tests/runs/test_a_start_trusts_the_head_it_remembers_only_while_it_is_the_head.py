"""A run's start tries the workspace head this process last read, writing its run only if that is still the
newest revision of the workspace and of the account library (runs/desks.py: head_guard); when either moved, or
the start was refused, it starts again from the head read afresh. Nothing is started at a revision that was not
the head when the run was written."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from library.actions.writes import FileWrite, do_write_files
from library.models import Changeset
from runs.actions import _holds, check_start_run
from runs.desks import head_changeset, head_guard, remembered_head
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)  # a start outside any transaction is the case in point


def flow(name: str, steps: list[str]) -> str:
    return f"---\nname: {name}\n---\n" + "".join(f"{n}. [[a]] — {text}\n" for n, text in enumerate(steps, 1))


@pytest.fixture
def desk(workspace, fake_provider, monkeypatch):
    monkeypatch.setattr("foldrun.celery.send", lambda *args: None)  # no worker here: the rows are the point
    push(workspace, {"agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
                     "flows/two.md": flow("two", ["First.", "Second."])})
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
    push(desk, {"flows/two.md": flow("two", [f"Step {n}." for n in range(1, 13)])})  # its steps as arrays (UNNEST)
    run = check_start_run(workspace=desk, flow="two")
    assert run.changeset_number == newest(desk) and run.steps.count() == 12
    assert [s.task for s in run.steps.order_by("index")][1:] == [f"Step {n}." for n in range(2, 13)]


def test_the_guard_fails_once_the_workspace_or_its_library_moves(desk):
    head = head_changeset(desk)
    if connection.vendor == "postgresql":
        assert remembered_head(desk) == head
    assert _holds(head_guard(desk, head))
    push(desk, {"notes.md": "a later revision\n"})
    assert not _holds(head_guard(desk, head))
    head = head_changeset(desk)
    do_write_files(account=desk.account, workspace=None, kind="push", message="library push",
                   writes=[FileWrite("knowledge/shared.md", "shared\n")])
    assert not _holds(head_guard(desk, head))
    assert _holds(head_guard(desk, head_changeset(desk)))


def test_a_start_at_the_remembered_head_writes_its_run_in_one_statement_and_reads_nothing(desk):
    if connection.vendor != "postgresql":
        pytest.skip("elsewhere the run and its steps are written in a transaction, after the head is read")
    check_start_run(workspace=desk, flow="two")
    with CaptureQueriesContext(connection) as queries:
        run = check_start_run(workspace=desk, flow="two")
    assert [q["sql"][:28] for q in queries.captured_queries] == ['WITH p AS (INSERT INTO "runs']
    assert run.changeset_number == newest(desk) and run.steps.count() == 2
    push(desk, {"flows/long.md": flow("long", [f"Step {n}." for n in range(1, 31)])})
    check_start_run(workspace=desk, flow="long")
    with CaptureQueriesContext(connection) as queries:
        run = check_start_run(workspace=desk, flow="long")
    assert [q["sql"][:28] for q in queries.captured_queries] == ['WITH p AS (INSERT INTO "runs']
    assert run.steps.count() == 30
