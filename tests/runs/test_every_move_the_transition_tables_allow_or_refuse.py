"""Every move the transition tables allow goes through, and every one they refuse raises naming it — each pair of
statuses of a Run, a Step and a Try (runs/lifecycle/states.py), the one-row moves and the many-row ones."""

from __future__ import annotations

import itertools

import pytest

from runs.lifecycle import IllegalMove, end_try, move_run, move_step, move_steps, move_try
from runs.lifecycle.states import RUN_MOVES, STEP_MOVES, TRY_MOVES
from runs.models import Run, RunStatus, Step, StepStatus, Try

RUN_PAIRS = [(a, b) for a, b in itertools.product(RunStatus.values, repeat=2) if a != b]
STEP_PAIRS = [(a, b) for a, b in itertools.product(StepStatus.values, repeat=2) if a != b]
TRY_STATUSES = sorted(TRY_MOVES)
TRY_PAIRS = [(a, b) for a, b in itertools.product(TRY_STATUSES, repeat=2) if a != b]


def test_the_tables_name_every_status_of_their_model():
    assert set(RUN_MOVES) == set(RunStatus.values)
    assert set(STEP_MOVES) == set(StepStatus.values)
    assert set(TRY_MOVES) == {"running", "completed", "failed", "parked", "lost"}


@pytest.mark.parametrize(("frm", "to"), RUN_PAIRS)
def test_a_run_moves_exactly_as_its_table_says(frm, to):
    run = Run(name="weekly", status=frm)
    if to in RUN_MOVES[frm]:
        assert "status" in move_run(run, to, "asked by the test")
        assert (run.status, run.status_reason) == (to, "asked by the test")
    else:
        with pytest.raises(IllegalMove) as refused:
            move_run(run, to, "asked by the test")
        assert str(refused.value) == f"run {run.public_id} cannot move from {frm} to {to} (asked by the test)"
        assert run.status == frm


@pytest.mark.parametrize(("frm", "to"), STEP_PAIRS)
def test_a_step_moves_exactly_as_its_table_says(frm, to):
    step = Step(index=2, agent="writer", status=frm)
    if to in STEP_MOVES[frm]:
        assert move_step(step, to, "asked by the test") == ["status", "status_reason"]
        assert (step.status, step.status_reason) == (to, "asked by the test")
    else:
        with pytest.raises(IllegalMove) as refused:
            move_step(step, to, "asked by the test")
        assert str(refused.value) == f"step 2 cannot move from {frm} to {to} (asked by the test)"
        assert step.status == frm


@pytest.mark.parametrize(("frm", "to"), TRY_PAIRS)
def test_a_try_moves_exactly_as_its_table_says(frm, to):
    attempt = Try(n=3, status=frm)
    if to in TRY_MOVES[frm]:
        assert move_try(attempt, to, "asked by the test") == ["status", "status_reason"]
        assert attempt.status == to
    else:
        with pytest.raises(IllegalMove) as refused:
            move_try(attempt, to, "asked by the test")
        assert str(refused.value) == f"try 3 cannot move from {frm} to {to} (asked by the test)"


def test_a_try_ended_by_key_is_refused_a_move_the_table_does_not_allow_a_running_one():
    refused_ends = [s for s in TRY_STATUSES if s != "running" and s not in TRY_MOVES["running"]] + ["running"]
    for to in refused_ends:
        with pytest.raises(IllegalMove) as refused:
            end_try(1, to, "asked by the test")
        assert str(refused.value) == f"a try cannot move from running to {to} (asked by the test)"


@pytest.mark.parametrize(("frm", "to"), STEP_PAIRS)
def test_steps_moved_together_move_exactly_as_the_table_says(db, account, workspace, frm, to):
    run = Run.objects.create(
        account=account, workspace=workspace, kind="flow", name="one", plan=[], inputs={}, status="running"
    )
    Step.objects.create(run=run, index=1, agent="a", task="t", status=frm)
    steps = Step.objects.filter(run=run)
    if to in STEP_MOVES[frm]:
        assert move_steps(steps, frm, to, "asked by the test") == 1
        assert steps.get().status == to
    else:
        with pytest.raises(IllegalMove) as refused:
            move_steps(steps, frm, to, "asked by the test")
        assert str(refused.value) == f"a step cannot move from {frm} to {to} (asked by the test)"
        assert steps.get().status == frm
