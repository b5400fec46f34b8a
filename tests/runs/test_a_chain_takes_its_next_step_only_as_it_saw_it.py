"""A step ending in a worker task takes its run's next step for the same task only while that step's row is as the
task last saw it: the take is a conditional UPDATE (runs/lifecycle/states.py `take_step`), and a row found changed — its
count 0 — is left to `_move`, which reads the rows afresh."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from django.utils import timezone

from runs import lifecycle
from runs.actions import check_start_run
from runs.models import Run, Step, StepStatus, Try
from runs.lifecycle import take_step
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
                    Step.objects.filter(run=run, index=2).update(
                        status=StepStatus.QUEUED, queued_at=timezone.now(), status_reason="queued by another hand"
                    )
                connection.close()

            worker = threading.Thread(target=queue_elsewhere)
            worker.start()
            worker.join()
        return Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))

    fake_provider.responder = model
    run = check_start_run(workspace=workspace, flow="three")
    assert lifecycle.run_steps_from(run.steps.get(index=1).pk) == "completed"
    second = Step.objects.get(run=run, index=2)
    assert (second.status, second.attempt, second.status_reason) == ("queued", 0, "queued by another hand")
    assert not Try.objects.filter(step=second).exists()  # its message runs it, once
    assert Run.objects.get(pk=run.pk).status == "running"
    assert Try.objects.get(step__run=run, step__index=1).status == "completed"


def test_a_take_changes_nothing_when_the_row_is_not_as_seen(workspace, fake_provider):
    push(workspace, {"agents/a/agent.md": agent_file("a", fake_provider, tools="[]"), "flows/three.md": THREE})
    run = check_start_run(workspace=workspace, flow="three")
    second = Step.objects.get(run=run, index=2)
    second.status = StepStatus.RUNNING
    assert take_step(second, StepStatus.PENDING, 5, ["status"]) is False  # seen with an attempt it does not have
    assert Step.objects.get(pk=second.pk).status == StepStatus.PENDING
    assert take_step(second, StepStatus.PENDING, 0, ["status"]) is True
    assert Step.objects.get(pk=second.pk).status == StepStatus.RUNNING
