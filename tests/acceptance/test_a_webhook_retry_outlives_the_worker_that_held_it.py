"""Issue 5, item 3 (audit5): the retry schedule is durable.

A real Celery worker makes the first attempt and holds the second (a minute
away); it is killed. The clock moves past the retry time. A new worker with
the real beat (`-B`, the install's own `DatabaseScheduler`, the sweep's
entry from settings at a 1-second interval so the test is short) picks the
attempt up from the database: it is sent once, as attempt 2, with the same
delivery id — however many sweeps run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from notify.actions import do_record_delivery
from notify.models import Delivery
from tests.conftest import wait_for
from tests.acceptance.test_webhooks_signed_timed_out_and_guarded_as_the_spec_says import node_receiver  # noqa: F401
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.notify.conftest import receiver, write_agents_md  # noqa: F401

REPO = Path(__file__).resolve().parents[2]

SETTINGS = """from foldrun.settings.test import *  # noqa: F401,F403
from foldrun.settings.test import CELERY_BEAT_SCHEDULE

# The install's own sweep entry, only quicker; nothing else fires.
CELERY_BEAT_SCHEDULE = {"notify-sweep-due-deliveries": dict(CELERY_BEAT_SCHEDULE["notify-sweep-due-deliveries"],
                                                            schedule=1.0)}
"""


def _worker_with_beat(tmp_path: Path) -> subprocess.Popen:
    from django.db import connection

    (tmp_path / "audit5_beat_settings.py").write_text(SETTINGS)
    env = dict(os.environ)
    env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["DJANGO_SETTINGS_MODULE"] = "audit5_beat_settings"
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(REPO)])
    log_path = tmp_path / "worker-with-beat.log"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "foldrun",
            "worker",
            "-B",
            "-s",
            str(tmp_path / "beat-schedule"),
            "-l",
            "info",
            "--concurrency",
            "2",
            "--without-mingle",
            "--without-gossip",
            "--without-heartbeat",
            "-Q",
            env["FOLDRUN_TEST_QUEUE"],
        ],
        env=env,
        stdout=open(log_path, "wb"),
        stderr=subprocess.STDOUT,
        cwd=REPO,
    )
    process.log_path = log_path  # type: ignore[attr-defined]
    wait_for(lambda: b"ready." in log_path.read_bytes() or process.poll() is not None, timeout=60)
    return process


def test_the_beat_sweep_entry_is_in_the_install_s_schedule(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["notify-sweep-due-deliveries"]
    assert entry["task"] == "notify.sweep_due_deliveries" and entry["schedule"] <= 60
    assert settings.CELERY_BEAT_SCHEDULE["notify-purge-old-deliveries"]["task"] == "notify.purge_old_deliveries"


@pytest.mark.e2e
def test_a_worker_killed_between_attempts_loses_nothing_and_the_real_beat_sends_it_once(
    celery_worker_process, workspace, receiver, tmp_path
):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(503, b"down", 0.0), (200, b"ok", 0.0)]
    delivery = do_record_delivery(workspace, "failed", '{"text": "x"}')
    from notify.actions import kick_drain

    kick_drain()  # what the commit of a new delivery does
    wait_for(lambda: Delivery.objects.get(pk=delivery.pk).attempts_made == 1, timeout=30)
    pending = Delivery.objects.get(pk=delivery.pk)
    assert pending.status == "pending" and pending.next_attempt_at > timezone.now() + timedelta(seconds=50)
    celery_worker_process.kill()  # attempt 2 was waiting in that worker
    celery_worker_process.wait()
    # A controlled clock: the minute has passed.
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    worker = _worker_with_beat(tmp_path)
    try:
        wait_for(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded", timeout=60)
        time.sleep(4.0)  # several more sweeps run: none sends it again
        log = worker.log_path.read_text(errors="replace")
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    assert "notify.sweep_due_deliveries" in log
    assert [r["headers"]["X-Foldrun-Attempt"] for r in receiver.requests] == ["1", "2"]
    assert {r["headers"]["X-Foldrun-Delivery"] for r in receiver.requests} == {delivery.public_id}
    assert list(Delivery.objects.get(pk=delivery.pk).attempts.values_list("number", "ok")) == [(1, False), (2, True)]


@pytest.mark.e2e
def test_a_run_ended_by_a_real_worker_reaches_the_spec_s_node_receiver_signed(
    celery_worker_process, workspace, alice, fake_provider, node_receiver
):
    from runs.actions import check_start_run
    from tests.acceptance.test_webhooks_signed_timed_out_and_guarded_as_the_spec_says import SECRET
    from tests.runs.helpers import agent_file, push
    from vault.actions import do_set_secret

    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value=SECRET)
    push(
        workspace,
        {
            "AGENTS.md": f"---\nnotify:\n  url: {node_receiver}\n  events: [completed]\n"
            "  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n",
            "agents/reporter/agent.md": agent_file("reporter", fake_provider),
            "flows/rankings.md": "---\nname: rankings\n---\n1. [[reporter]] — Summarise the week.\n",
        },
    )
    fake_provider.reply_text("GOOD — every target held\nnothing moved")
    run = check_start_run(workspace=workspace, user=alice, flow="rankings")
    delivery = wait_for(
        lambda: Delivery.objects.filter(run_public_id=run.public_id, status="succeeded").first(), timeout=60
    )
    attempt = delivery.attempts.get()
    assert (attempt.number, attempt.status_code, attempt.response_excerpt) == (1, 200, "verified")
    assert delivery.event == "completed"
