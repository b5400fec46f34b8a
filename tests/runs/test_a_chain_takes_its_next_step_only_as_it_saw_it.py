"""A step ending in a worker task takes its run's next step for the same task only while that step's row is as the
task last saw it. On PostgreSQL the closing query reads the run's unfinished steps under the run's lock (every
change to a step's status is made under it), so the take goes out with the end's other writes and its COMMIT
rather than waiting for its own row count; a row found changed is left to `_move`, which reads the rows afresh."""
from __future__ import annotations

import threading

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from foldrun import batch
from runs import orchestrate
from runs.actions import check_start_run
from runs.models import Run, Step, StepStatus, Try
from runs.states import take_next_step
from tests.fakes.providers import Reply
from tests.runs.helpers import agent_file, push

THREE = "---\nname: three\n---\n1. [[a]] — One.\n2. [[a]] — Two.\n3. [[a]] — Three.\n"


@pytest.mark.django_db(transaction=True)
def test_a_next_step_queued_elsewhere_while_the_step_before_ran_is_not_taken_by_the_chain(workspace, fake_provider):
    push(workspace, {"agents/a/agent.md": agent_file("a", fake_provider, tools="[]"), "flows/three.md": THREE})
    calls: list[int] = []

    def model(body: dict) -> Reply:
        calls.append(1)
        if len(calls) == 1:  # while step 1 waits on its model call, step 2 is queued by another hand, under the lock
            def queue_elsewhere() -> None:
                with transaction.atomic():
                    Run.objects.select_for_update().get(pk=run.pk)
                    Step.objects.filter(run=run, index=2).update(status=StepStatus.QUEUED, queued_at=timezone.now(),
                                                                 status_reason="queued by another hand")
                connection.close()
            worker = threading.Thread(target=queue_elsewhere)
            worker.start()
            worker.join()
        return Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))

    fake_provider.responder = model
    run = check_start_run(workspace=workspace, flow="three")
    assert orchestrate.run_steps_from(run.steps.get(index=1).pk) == "completed"
    second = Step.objects.get(run=run, index=2)
    assert (second.status, second.attempt, second.status_reason) == ("queued", 0, "queued by another hand")
    assert not Try.objects.filter(step=second).exists()  # its message runs it, once
    assert Run.objects.get(pk=run.pk).status == "running"
    assert Try.objects.get(step__run=run, step__index=1).status == "completed"


@pytest.mark.django_db(transaction=True)
def test_a_take_sent_with_the_end_rolls_the_end_back_when_its_row_is_not_as_read(workspace, fake_provider):
    if connection.vendor != "postgresql":
        pytest.skip("elsewhere the take is made at once and its row count read there")
    push(workspace, {"agents/a/agent.md": agent_file("a", fake_provider, tools="[]"), "flows/three.md": THREE})
    run = check_start_run(workspace=workspace, flow="three")
    first, second = Step.objects.get(run=run, index=1), Step.objects.get(run=run, index=2)
    first.output = "ended here"
    second.status = StepStatus.RUNNING
    with pytest.raises(DatabaseError, match="the take of step 2 changed 0 rows, not 1"):
        with transaction.atomic(), batch.writes_together():
            Run.objects.select_for_update().get(pk=run.pk)
            # Told the row is as seen, with a seen attempt it does not have: the take finds no row.
            assert take_next_step(second, 5, ["status"], saving=first, known=True) is True
    assert Step.objects.get(pk=first.pk).output == ""  # the end was rolled back with it
    assert Step.objects.get(pk=second.pk).status == StepStatus.PENDING
