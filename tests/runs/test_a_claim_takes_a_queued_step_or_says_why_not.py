"""A step's message is claimed once: a queued step of a run going on is taken — moved to running under the
claimant's lease, with its running try — and anything else is left as it is, with a word saying why. On
PostgreSQL the take is one flight (runs/lifecycle/claim.py); when it takes nothing, the claim is decided again the
two-flight way, which says why. Both leave the same rows."""

from __future__ import annotations

import pytest
from django.db import connection

from runs.actions import check_start_run, do_cancel_run
from runs.lifecycle import claim
from runs.models import Run, Step, StepStatus, Try
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)  # the claim's transaction its own, as in a worker


@pytest.fixture
def queued(workspace, fake_provider, monkeypatch) -> Step:
    monkeypatch.setattr("foldrun.celery.send", lambda *args: None)  # no worker: the claim is made here
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
            "flows/two.md": "---\nname: two\n---\n1. [[a]] — One.\n2. [[a]] — Two.\n",
        },
    )
    run = check_start_run(workspace=workspace, flow="two")
    return run.steps.get(index=1)


def test_a_queued_step_is_taken_with_its_running_try_and_the_rows_say_what_the_objects_say(queued):
    run, step, attempt, rows = claim(queued.pk, "holder-a")
    row = Step.objects.get(pk=queued.pk)
    assert (row.status, row.status_reason, row.attempt, row.lease_holder, row.error) == (
        "running",
        "try 1 started",
        1,
        "holder-a",
        "",
    )
    assert (step.status, step.status_reason, step.attempt, step.lease_holder) == (
        row.status,
        row.status_reason,
        row.attempt,
        row.lease_holder,
    )
    assert step.lease_until == row.lease_until and step.started_at == row.started_at
    assert row.lease_until > row.started_at
    saved = Try.objects.get(step=row)
    assert (saved.pk, saved.n, saved.status, saved.started_at) == (attempt.pk, 1, "running", row.started_at)
    assert run.pk == row.run_id and run.workspace.account.pk == run.account_id  # joined in, no query later
    assert sorted(s.index for s in rows) == [1, 2] and step in rows


def test_a_second_message_for_a_running_step_takes_nothing(queued):
    claim(queued.pk, "holder-a")
    assert claim(queued.pk, "holder-b") == "held by a lease"
    row = Step.objects.get(pk=queued.pk)
    assert (row.lease_holder, row.attempt) == ("holder-a", 1) and Try.objects.filter(step=row).count() == 1


def test_a_finished_step_is_never_run_again(queued):
    Step.objects.filter(pk=queued.pk).update(status=StepStatus.COMPLETED)
    assert claim(queued.pk, "holder-a") == "already finished"
    assert not Try.objects.filter(step=queued).exists()


def test_a_step_of_a_cancelled_run_is_cancelled_saying_so(queued):
    # A run cancelled after its step was queued: do_cancel_run ends the unstarted steps itself, so the step is
    # put back to queued here, as a message racing the cancel would find it.
    do_cancel_run(Run.objects.get(pk=queued.run_id))
    Step.objects.filter(pk=queued.pk).update(status=StepStatus.QUEUED)
    assert claim(queued.pk, "holder-a") == "run finished"
    row = Step.objects.get(pk=queued.pk)
    assert (row.status, row.status_reason) == ("cancelled", "the run had cancelled")
    assert not Try.objects.filter(step=row).exists()


def test_a_step_that_is_gone_is_missing(queued):
    assert claim(queued.pk + 1000, "holder-a") == "missing"


def test_a_pending_step_is_not_runnable(queued):
    second = Step.objects.get(run_id=queued.run_id, index=2)
    assert claim(second.pk, "holder-a") == "not runnable (pending)"
    assert Step.objects.get(pk=second.pk).attempt == 0 and connection.in_atomic_block is False
