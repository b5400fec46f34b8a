"""A worker killed mid-step: re-run when the step had only read, failed naming what it wrote when it had written."""

from __future__ import annotations

import json
import pytest

from foldrun.celery import app
from runs.actions import check_start_run
from runs.models import Run, Step
from tests.conftest import wait_for
from tests.runs.helpers import agent_file, push
from tests.fakes.json_api import JsonApi
from tests.runs.workers import WorkerGroup

pytestmark = pytest.mark.e2e


@pytest.fixture
def workers(transactional_db, tmp_path):
    group = WorkerGroup(tmp_path).start()
    yield group
    group.stop()


def kill_the_worker_running(step: Step, workers: WorkerGroup) -> None:
    """Wait until the step holds a lease, then kill -9 its whole worker and start a new one."""
    wait_for(lambda: Step.objects.filter(pk=step.pk, status="running").exclude(lease_holder="").first(), timeout=30)
    workers.kill()
    workers.start()


def test_a_step_that_had_only_read_runs_again_after_its_worker_is_killed(workers, workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/reader/agent.md": agent_file("reader", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[reader]] — Read.\n",
        },
    )
    fake_provider.reply_tool_use("nothing", {})  # a paid request: the lost try keeps its cost
    fake_provider.reply_text("never delivered", delay=20)
    fake_provider.reply_text("GOOD — read it on the second try")
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    wait_for(lambda: len(fake_provider.requests) == 2, timeout=30)
    kill_the_worker_running(Step.objects.get(run=run, index=1), workers)
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    step = done.steps.get(index=1)
    assert done.status == "completed", done.error
    assert done.headline == "GOOD — read it on the second try"
    lost, second = step.tries.all()
    assert [(t.n, t.status) for t in (lost, second)] == [(1, "lost"), (2, "completed")]
    assert lost.error == "the worker was lost during this try"
    assert lost.tokens_in == 12 and lost.cost_usd > 0 and lost.seconds > 0
    assert step.cost_usd == lost.cost_usd + second.cost_usd
    assert step.tokens_in == lost.tokens_in + second.tokens_in
    assert done.trace.filter(
        data__message="the worker running step 1 (reader) was lost; it had only read, so the step runs again"
    ).exists()


def test_a_second_message_for_a_step_whose_lease_is_live_is_dropped(workers, workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/reader/agent.md": agent_file("reader", fake_provider),
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[reader]] — Read.\n",
        },
    )
    # Longer than the lease (3 s): only the heartbeat keeps the step with its first holder.
    fake_provider.reply_text("GOOD — once", delay=6)
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    step = wait_for(lambda: Step.objects.filter(run=run, index=1, status="running").first(), timeout=30)
    app.send_task("runs.run_step", args=[step.pk])  # what a broker redelivering the message would do
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    assert done.status == "completed", done.error
    assert [(t.n, t.status) for t in done.steps.get(index=1).tries.all()] == [(1, "completed")]
    assert len(fake_provider.requests) == 1


def test_a_step_that_had_written_fails_naming_what_it_wrote_and_is_never_sent_twice(
    workers, workspace, alice, fake_provider
):
    receiver = JsonApi()
    try:
        push(
            workspace,
            {
                "agents/sender/agent.md": agent_file("sender", fake_provider, tools="[mail]"),
                "tools/mail.md": f"---\ntransport: http\nname: mail\nbase: {receiver.url}\nmethods: [POST]\noutward: true\n---\n",
                "flows/weekly.md": "---\nname: weekly\n---\n1. [[sender]] — Send it.\n   verify: reply ^GOOD\n",
            },
        )
        fake_provider.reply_tool_use("mail", {"method": "POST", "path": "/slow/send", "body": {"to": "ann"}})
        fake_provider.reply_text("GOOD sent")
        run = check_start_run(workspace=workspace, user=alice, flow="weekly")
        wait_for(lambda: len(receiver.requests) == 1, timeout=30)
        kill_the_worker_running(Step.objects.get(run=run, index=1), workers)
        done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
        step = done.steps.get(index=1)
        assert done.status == "failed"
        assert step.error == (
            "the worker running step 1 (sender) was lost after it had written: mail "
            + json.dumps({"method": "POST", "path": "/slow/send", "body": {"to": "ann"}})
            + " — it is not run again, so nothing is sent twice"
        )
        assert len(receiver.requests) == 1
    finally:
        receiver.server.shutdown()
