"""Every Run, Step and Try status change goes through runs/lifecycle/states.py, the claim's and a waiting instance's
included: a move the table refuses raises with a sentence and writes nothing, and no module of runs/ writes a
status with a bare `.update(status=…)` of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from runs.lifecycle import IllegalMove, claim, move_steps
from runs.models import Run, Step, StepStatus

RUNS = Path(__file__).resolve().parents[2] / "runs"


def _run_with_step(account, workspace, status: str) -> tuple[Run, Step]:
    run = Run.objects.create(
        account=account, workspace=workspace, kind="flow", name="one", plan=[], inputs={}, status="running"
    )
    return run, Step.objects.create(run=run, index=1, agent="a", task="t", status=status)


def test_a_queued_step_is_taken_once_by_two_claims(db, account, workspace):
    _, step = _run_with_step(account, workspace, StepStatus.QUEUED)
    run, taken, attempt, _rows = claim(step.pk, "first")
    assert claim(step.pk, "second") == "held by a lease"
    step.refresh_from_db()
    assert (step.status, step.attempt, step.lease_holder, step.status_reason) == (
        "running",
        1,
        "first",
        "try 1 started",
    )
    assert (attempt.n, attempt.status, taken.status) == (1, "running", "running")


def test_a_claim_cancels_the_queued_step_of_a_run_that_ended_and_takes_nothing(db, account, workspace):
    run, step = _run_with_step(account, workspace, StepStatus.QUEUED)
    Run.objects.filter(pk=run.pk).update(status="cancelled")
    assert claim(step.pk, "h") == "run finished"
    step.refresh_from_db()
    assert (step.status, step.attempt, step.status_reason) == ("cancelled", 0, "the run had cancelled")


def test_a_move_the_table_refuses_raises_naming_it_and_writes_nothing(db, account, workspace):
    _, step = _run_with_step(account, workspace, StepStatus.COMPLETED)
    with pytest.raises(IllegalMove, match="a step cannot move from completed to queued"):
        move_steps(Step.objects.filter(pk=step.pk), StepStatus.COMPLETED, StepStatus.QUEUED, "again")
    assert Step.objects.get(pk=step.pk).status == StepStatus.COMPLETED


def test_a_waiting_instance_is_queued_only_while_it_is_pending(db, account, workspace):
    _, step = _run_with_step(account, workspace, StepStatus.PENDING)
    steps = Step.objects.filter(pk=step.pk)
    assert move_steps(steps, StepStatus.PENDING, StepStatus.QUEUED, "an earlier instance finished") == 1
    assert move_steps(steps, StepStatus.PENDING, StepStatus.QUEUED, "an earlier instance finished") == 0
    step.refresh_from_db()
    assert (step.status, step.status_reason) == ("queued", "an earlier instance finished")


def test_no_module_of_runs_writes_a_status_with_an_update_of_its_own():
    found = []
    for path in sorted(RUNS.rglob("*.py")):
        if path == RUNS / "lifecycle" / "states.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "update"
                and any(k.arg == "status" for k in node.keywords)
            ):
                found.append(f"{path.relative_to(RUNS)}:{node.lineno}")
    assert found == []
