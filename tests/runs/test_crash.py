"""A worker killed mid-step: re-run when the step had only read, failed naming what it wrote when it had written."""
from __future__ import annotations

import json
import os
import signal

import pytest

from runs.actions import check_start_run
from runs.models import Run, Step
from tests.conftest import wait_for
from tests.runs.helpers import agent_file, push
from tests.runs.test_tool_files import Receiver

pytestmark = pytest.mark.e2e


def kill_the_worker_running(step: Step) -> int:
    step = wait_for(lambda: Step.objects.filter(pk=step.pk, status="running").exclude(claim="").first(), timeout=30)
    pid = int(step.claim.split(":")[1])
    os.kill(pid, signal.SIGKILL)
    return pid


def test_a_step_that_had_only_read_runs_again_after_its_worker_is_killed(celery_worker_process, workspace, alice,
                                                                         fake_provider):
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider),
                     "flows/weekly.md": "---\nname: weekly\n---\n1. [[reader]] — Read.\n"})
    fake_provider.reply_text("never delivered", delay=20)
    fake_provider.reply_text("GOOD — read it on the second try")
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    wait_for(lambda: len(fake_provider.requests) == 1, timeout=30)
    kill_the_worker_running(Step.objects.get(run=run, index=1))
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    step = done.steps.get(index=1)
    assert done.status == "completed", done.error
    assert done.headline == "GOOD — read it on the second try"
    assert [(t.n, t.status) for t in step.tries.all()] == [(1, "lost"), (2, "completed")]


def test_a_step_that_had_written_fails_naming_what_it_wrote_and_is_never_sent_twice(celery_worker_process, workspace,
                                                                                    alice, fake_provider):
    receiver = Receiver()
    try:
        push(workspace, {
            "agents/sender/agent.md": agent_file("sender", fake_provider, tools="[mail]"),
            "tools/mail.md": f"---\ntransport: http\nname: mail\nbase: {receiver.url}\nmethods: [POST]\noutward: true\n---\n",
            "flows/weekly.md": "---\nname: weekly\n---\n1. [[sender]] — Send it.\n   verify: reply ^GOOD\n",
        })
        fake_provider.reply_tool_use("mail", {"method": "POST", "path": "/slow/send", "body": {"to": "ann"}})
        fake_provider.reply_text("GOOD sent")
        run = check_start_run(workspace=workspace, user=alice, flow="weekly")
        wait_for(lambda: len(receiver.requests) == 1, timeout=30)
        kill_the_worker_running(Step.objects.get(run=run, index=1))
        done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
        step = done.steps.get(index=1)
        assert done.status == "failed"
        assert step.error == ('the worker running step 1 ([[sender]]) was lost after it had written: mail '
                              + json.dumps({"method": "POST", "path": "/slow/send", "body": {"to": "ann"}})
                              + ' — it is not run again, so nothing is sent twice')
        assert len(receiver.requests) == 1
    finally:
        receiver.server.shutdown()
