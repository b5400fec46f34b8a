from decimal import Decimal

import pytest

from runs.models import Approval, Run, Step, TraceEvent, Try
from runs.signals import emit, run_event


@pytest.fixture
def run(workspace, alice):
    return Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", created_by=alice)


def test_a_run_has_a_prefixed_public_id_and_starts_queued(run):
    assert run.public_id.startswith("run_")
    assert run.status == "queued"
    assert run.verdict is None
    assert run.cost_usd == Decimal("0")


def test_a_step_keeps_its_tries_trace_and_approvals(run):
    step = Step.objects.create(run=run, index=1, agent="researcher", task="Find pages.")
    Try.objects.create(step=step, n=1, status="completed", tokens_in=10, seconds=0.5)
    TraceEvent.objects.create(run=run, step=step, kind="tool_call", data={"name": "read"})
    approval = Approval.objects.create(run=run, step=step)
    assert step.public_id.startswith("stp_")
    assert approval.public_id.startswith("apr_")
    assert [t.n for t in step.tries.all()] == [1]
    assert [e.kind for e in step.trace.all()] == ["tool_call"]


def test_run_event_is_sent_after_the_transaction_commits(run, django_capture_on_commit_callbacks):
    seen: list[tuple[str, str]] = []

    def receiver(sender, run, event, **kwargs):
        seen.append((run.public_id, event))

    run_event.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            emit(run, "failed")
            assert seen == []
    finally:
        run_event.disconnect(receiver)
    assert seen == [(run.public_id, "failed")]
