"""approve, reject, answer, cancel — the dashboard's decisions from the command line, on a real server."""

from __future__ import annotations

import pytest

from runs.actions import check_start_run
from runs.models import Approval, Run
from tests.runs.helpers import agent_file, drive, push

pytestmark = pytest.mark.django_db(transaction=True)

FLOWS = {
    "flows/gated.md": "---\nname: gated\n---\n1. [[publisher]] ! — Publish.\n",
    "flows/asking.md": "---\nname: asking\n---\n1. [[publisher]] — Write the post.\n   ask: Which tone?\n",
}


@pytest.fixture
def desk(workspace, fake_provider):
    push(workspace, {"agents/publisher/agent.md": agent_file("publisher", fake_provider), **FLOWS})
    return workspace


def parked(desk, alice, flow: str = "gated") -> Run:
    run = drive(check_start_run(workspace=desk, user=alice, flow=flow))
    assert run.status == "awaiting-approval"
    return run


def test_alice_approves_a_gated_step_and_the_run_goes_on(cli, desk, alice, signed_in_as):
    run = parked(desk, alice)
    signed_in_as(alice)
    result = cli("approve", run.public_id, "1", "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.out.strip() == (
        f"Approved step 1 of {run.public_id} in rank-desk; the run goes on. "
        f"See it with `foldrun report {run.public_id} --to rank-desk`."
    )
    approval = Approval.objects.get(run=run)
    assert (approval.state, approval.decided_by_label) == ("approved", "alice@example.com")


def test_alice_rejects_and_a_second_decision_is_refused_saying_by_whom(cli, desk, alice, signed_in_as):
    run = parked(desk, alice)
    signed_in_as(alice)
    result = cli("reject", run.public_id, "1", "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.out.startswith(f"Rejected step 1 of {run.public_id} in rank-desk; the run stops there.")
    assert Approval.objects.get(run=run).state == "rejected"
    again = cli("approve", run.public_id, "1", "--to", "rank-desk")
    assert again.code == 1
    assert again.err == "Step 1 was already rejected by alice@example.com; a decision is made once.\n"


def test_answer_gives_the_question_step_its_answer(cli, desk, alice, signed_in_as):
    run = parked(desk, alice, "asking")
    signed_in_as(alice)
    result = cli("answer", run.public_id, "1", "Warm and short", "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.out.startswith(
        f"Answered step 1 of {run.public_id} in rank-desk; the step runs again with the answer."
    )
    approval = Approval.objects.get(run=run)
    assert (approval.state, approval.answer) == ("answered", "Warm and short")


def test_approving_a_question_says_to_answer_it_instead(cli, desk, alice, signed_in_as):
    run = parked(desk, alice, "asking")
    signed_in_as(alice)
    result = cli("approve", run.public_id, "1", "--to", "rank-desk")
    assert result.code == 2
    assert result.err == (
        f'Step 1 of {run.public_id} asked a question; answer it with `foldrun answer {run.public_id} 1 "TEXT"`.\n'
    )
    assert Approval.objects.get(run=run).state == "pending"


def test_cancel_stops_a_parked_run_and_a_second_cancel_says_it_has_finished(cli, desk, alice, signed_in_as):
    run = parked(desk, alice)
    signed_in_as(alice)
    result = cli("cancel", run.public_id, "--to", "rank-desk")
    assert result.code == 0, result.err
    assert result.out.strip() == f"Cancelled {run.public_id} (gated in rank-desk); it is cancelled."
    run.refresh_from_db()
    assert run.status == "cancelled"
    again = cli("cancel", run.public_id, "--to", "rank-desk")
    assert (again.code, again.err) == (1, f"{run.public_id} has already cancelled.\n")


def test_the_workspace_comes_from_the_desk_folder(cli, desk, alice, signed_in_as, tmp_path, monkeypatch):
    run = parked(desk, alice)
    (tmp_path / ".foldrun").mkdir()
    (tmp_path / ".foldrun" / "workspace").write_text("rank-desk\n")
    monkeypatch.chdir(tmp_path)
    signed_in_as(alice)
    assert cli("approve", run.public_id, "1").code == 0
    assert Approval.objects.get(run=run).state == "approved"


def test_bob_the_viewer_is_refused_as_on_the_dashboard(cli, desk, alice, bob, signed_in_as):
    run = parked(desk, alice)
    signed_in_as(bob)
    for argv in (
        ("approve", run.public_id, "1"),
        ("reject", run.public_id, "1"),
        ("answer", run.public_id, "1", "x"),
        ("cancel", run.public_id),
    ):
        result = cli(*argv, "--to", "rank-desk")
        assert result.code == 1, argv
        assert "Your role (viewer)" in result.err and "Error" not in result.err, argv
    assert Approval.objects.get(run=run).state == "pending"
    assert Run.objects.get(pk=run.pk).status == "awaiting-approval"


def test_charlie_is_told_the_workspace_is_not_there(cli, desk, alice, charlie, signed_in_as):
    run = parked(desk, alice)
    signed_in_as(charlie)
    for argv in (("approve", run.public_id, "1"), ("answer", run.public_id, "1", "x"), ("cancel", run.public_id)):
        result = cli(*argv, "--to", "rank-desk")
        assert (result.code, result.err) == (
            1,
            "There is no workspace called rank-desk in this account; this token "
            "sees none yet; `foldrun workspaces create NAME` makes one.\n",
        ), argv
    assert Approval.objects.get(run=run).state == "pending"


def test_a_run_that_is_not_there_is_named(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("cancel", "run_nothere", "--to", "rank-desk")
    assert (result.code, result.err) == (
        1,
        "There is no run run_nothere in rank-desk; it has no runs yet (`foldrun runs --to rank-desk` lists them).\n",
    )
