"""A run's start: outside a transaction on PostgreSQL its run and steps are one statement (no BEGIN, no COMMIT);
what it writes, when it queues the first step and how a repeated delivery id is answered are as in a transaction."""
from __future__ import annotations

import contextlib
import threading

import pytest
from django.db import connection, connections, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from foldrun import celery as foldrun_celery
from foldrun.inserts import VALUES_MAX_ROWS, insert_with_rows
from runs.actions import DuplicateDelivery, check_start_run
from runs.models import Run, Step, StepStatus
from tests.runs.helpers import agent_file, push

SKIPPED = {"id", "public_id", "run"}  # a row's own key and random public id, and its run's key


@pytest.fixture
def desk(workspace, fake_provider):
    push(workspace, {
        "agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
        "flows/three.md": "---\nname: three\n---\n1. [[a]] — Read {{topic}}.\n2. [[a]] — Two.\n3. [[a]] — Three.\n",
        "flows/gated.md": "---\nname: gated\n---\n1. [[a]] ! — First.\n2. [[a]] — Then.\n",
    })
    return workspace


@pytest.fixture
def sent(monkeypatch):
    """The tasks sent, each with whether its step (or run) was then visible to another connection."""
    messages: list[tuple[str, tuple, bool]] = []

    def seen_elsewhere(name: str, pk: int) -> bool:
        found: list[bool] = []

        def look() -> None:
            try:
                model = Step if name == "runs.run_step" else Run
                found.append(model.objects.filter(pk=pk).exists())
            finally:
                connections.close_all()

        thread = threading.Thread(target=look)
        thread.start()
        thread.join()
        return found[0]

    monkeypatch.setattr(foldrun_celery, "send", lambda name, *args: messages.append(
        (name, args, seen_elsewhere(name, args[0]))))
    return messages


def _rows(run: Run) -> tuple[dict, list[dict]]:
    row = Run.objects.get(pk=run.pk)
    return ({k: v for k, v in model_to_dict(row).items() if k not in SKIPPED | {"created_at", "started_at"}},
            [{k: v for k, v in model_to_dict(s).items() if k not in SKIPPED | {"queued_at"}}
             | {"queued_at": s.queued_at == row.created_at if s.queued_at else None} for s in row.steps.all()])


@pytest.mark.parametrize("count", [1, 3, VALUES_MAX_ROWS, VALUES_MAX_ROWS + 1, 50])
def test_a_run_and_its_steps_written_in_one_statement_are_the_rows_save_and_bulk_create_write(workspace, count):
    def rows() -> tuple[Run, list[Step]]:
        run = Run(account=workspace.account, workspace=workspace, name="weekly", status="running",
                  plan=[{"number": 1}], inputs={"topic": "é", "__flow__": {"timezone": "UTC"}})
        return run, [Step(run=run, index=n + 1, agent="a", task=f"Step {n + 1} — é", wait_event="go" if n else "",
                          status=StepStatus.QUEUED if n == 0 else StepStatus.PENDING) for n in range(count)]

    mine, my_steps = rows()
    if not insert_with_rows(mine, my_steps, "run"):
        assert connection.vendor != "postgresql"  # elsewhere it writes nothing and the caller writes as before
        assert mine.pk is None and not Run.objects.exists() and not Step.objects.exists()
        return
    theirs, their_steps = rows()
    theirs.save()
    Step.objects.bulk_create(their_steps)
    assert not mine._state.adding and all(s.pk and s.run_id == mine.pk and not s._state.adding for s in my_steps)
    assert [s.index for s in Step.objects.filter(run=mine)] == list(range(1, count + 1))
    assert [Step.objects.get(pk=s.pk).index for s in my_steps] == [s.index for s in my_steps]  # keys in order
    assert _rows(mine) == _rows(theirs)


def test_rows_past_the_values_form_are_one_statement_too(workspace):
    if connection.vendor != "postgresql":
        pytest.skip("one statement is PostgreSQL's form; elsewhere the caller writes the rows")
    run = Run(account=workspace.account, workspace=workspace, name="long", plan=[])
    steps = [Step(run=run, index=n + 1, agent="a", task=f"Step {n + 1}") for n in range(VALUES_MAX_ROWS * 3)]
    with CaptureQueriesContext(connection) as queries:
        assert insert_with_rows(run, steps, "run") is True
    [statement] = [q["sql"] for q in queries.captured_queries]
    assert "UNNEST(" in statement and "VALUES" not in statement.split('INSERT INTO "runs_step"')[1]
    assert [s.task for s in Step.objects.filter(run=run).order_by("pk")] == [s.task for s in steps]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("flow", ["three", "gated"])
def test_a_start_outside_a_transaction_writes_what_a_start_inside_one_writes(desk, sent, flow):
    with CaptureQueriesContext(connection) as queries:
        outside = check_start_run(workspace=desk, flow=flow, inputs={"topic": "tides"})
    with transaction.atomic():
        inside = check_start_run(workspace=desk, flow=flow, inputs={"topic": "tides"})
    assert _rows(outside) == _rows(inside)
    assert [s.status for s in outside.steps.all()][:1] == (["queued"] if flow == "three" else ["awaiting-approval"])
    if connection.vendor == "postgresql":
        # Reads, then one statement writing the run and its steps: no BEGIN, COMMIT or savepoint around it (the
        # gated run's first move, made at once after it, is a transaction of its own).
        writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]
        assert writes[0].startswith('WITH p AS (INSERT INTO "runs_run"') and 'INSERT INTO "runs_step"' in writes[0]
        if flow == "three":
            assert writes == writes[:1]


@pytest.mark.django_db(transaction=True)
def test_the_first_step_is_sent_once_its_rows_are_visible_to_another_connection(desk, sent):
    run = check_start_run(workspace=desk, flow="three", inputs={"topic": "tides"})
    first = run.steps.get(index=1)
    assert sent == [("runs.run_step", (first.pk,), True)]
    with transaction.atomic():
        later = check_start_run(workspace=desk, flow="three", inputs={"topic": "tides"})
        assert len(sent) == 1  # nothing sent before the caller's transaction commits
    assert sent[1:] == [("runs.run_step", (later.steps.get(index=1).pk,), True)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("in_transaction", [False, True])
def test_a_second_start_with_the_same_delivery_id_is_answered_with_the_first_run(desk, sent, in_transaction):
    first = check_start_run(workspace=desk, flow="three", delivery_id="dlv_1", inputs={"topic": "tides"})
    runs, steps = Run.objects.count(), Step.objects.count()
    with transaction.atomic() if in_transaction else contextlib.nullcontext():
        with pytest.raises(DuplicateDelivery) as duplicate:
            check_start_run(workspace=desk, flow="three", delivery_id="dlv_1", inputs={"topic": "tides"})
        assert duplicate.value.run.pk == first.pk
        assert (Run.objects.count(), Step.objects.count()) == (runs, steps)  # the caller's transaction still works
    assert (Run.objects.count(), Step.objects.count()) == (runs, steps) and len(sent) == 1
