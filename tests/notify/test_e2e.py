"""End to end: runs started and moved by the runs engine's own actions, and
deliveries signed and verified the way the spec tells a receiver to."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import subprocess
import sys
import threading
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.notify.conftest import send_outbox
from notify.actions import do_record_delivery, perform_attempt
from notify.models import Delivery, Endpoint
from runs.actions import check_start_run
from runs.models import Run
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, drive, push
from vault.actions import do_set_secret

SECRET = "e2e-signing-secret"
SPEC_FIELDS = [
    "text",
    "workspace",
    "runId",
    "flow",
    "status",
    "verdict",
    "summary",
    "costUsd",
    "startedAt",
    "finishedAt",
    "approveUrl",
    "rejectUrl",
    "links",
]


def verify_foldrun(raw_body: bytes, headers, secret: str, tolerance=300) -> bool:
    """From spec/notifications.md, "Verifying a delivery" (Python), as written there."""
    ts = headers.get("X-Foldrun-Timestamp")
    sig = (headers.get("X-Foldrun-Signature") or "").removeprefix("sha256=")
    if not ts or not sig or abs(time.time() - int(ts)) > tolerance:
        return False
    want = hmac.new(secret.encode(), f"{ts}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig, want)


def _desk(workspace, fake, receiver, *, flow: str, events: str = "[failed, completed, awaiting-approval]") -> None:
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value=SECRET)
    push(
        workspace,
        {
            "AGENTS.md": f"---\nnotify:\n  url: {receiver.url}\n  events: {events}\n"
            "  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n",
            "agents/reporter/agent.md": agent_file("reporter", fake),
            "agents/publisher/agent.md": agent_file("publisher", fake),
            "flows/rankings.md": flow,
        },
    )


@pytest.mark.e2e
def test_a_run_ended_by_a_real_worker_sends_a_signed_delivery_the_receiver_verifies(
    celery_worker_process, workspace, alice, fake_provider, receiver
):
    _desk(workspace, fake_provider, receiver, flow="---\nname: rankings\n---\n1. [[reporter]] — Summarise the week.\n")
    fake_provider.reply_text("BAD — 3 targets fell out of the top 20\ngeelong, ballarat and bendigo dropped")
    run = check_start_run(workspace=workspace, user=alice, flow="rankings")
    wait_for(lambda: receiver.requests, timeout=60)
    request = receiver.requests[0]
    assert verify_foldrun(request["body"], request["headers"], SECRET) is True
    assert request["headers"]["X-Foldrun-Event"] == "completed"
    body = json.loads(request["body"])
    assert list(body) == SPEC_FIELDS
    assert body["runId"] == run.public_id and body["verdict"] == "BAD" and body["status"] == "completed"
    assert body["text"] == f"BAD — 3 targets fell out of the top 20 · rank-desk/{run.public_id} · $0.00"
    assert body["summary"] == "geelong, ballarat and bendigo dropped"
    delivery = wait_for(lambda: Delivery.objects.filter(status="succeeded").first(), timeout=30)
    assert request["headers"]["X-Foldrun-Delivery"] == delivery.public_id
    assert delivery.run_public_id == run.public_id


def test_a_gate_mails_links_whose_page_asks_and_whose_post_decides_once(
    workspace, alice, fake_provider, receiver, client, public_url, django_capture_on_commit_callbacks
):
    _desk(
        workspace,
        fake_provider,
        receiver,
        flow="---\nname: rankings\napprovers: [owner@example.com]\napprove_within: 2d\n---\n"
        "1. [[reporter]] — Draft it.\n2. [[publisher]] ! — Publish the draft.\n",
    )
    fake_provider.reply_text("draft ready")
    fake_provider.reply_text("GOOD — published")
    with django_capture_on_commit_callbacks(execute=True):
        run = check_start_run(workspace=workspace, user=alice, flow="rankings")
        run = drive(run)
    assert run.status == "awaiting-approval"
    delivery = Delivery.objects.get(event="awaiting-approval")
    body = json.loads(delivery.body)
    assert body["links"][0]["step"] == 2 and body["links"][0]["agent"] == "publisher"
    # The approver's own mail carries links bound to their address.
    approver_mail = next(m for m in send_outbox() if m.to == ["owner@example.com"])
    approve_url = next(
        line.split(": ", 1)[1] for line in approver_mail.body.splitlines() if line.strip().startswith("approveUrl:")
    )
    path = approve_url.replace(public_url, "")
    page = client.get(path)
    assert page.status_code == 200 and "Approve step 2 (publisher)?" in page.content.decode()
    assert Run.objects.get(pk=run.pk).status == "awaiting-approval"  # a GET never decides
    with django_capture_on_commit_callbacks(execute=True):
        decided = client.post(path)
    assert decided.status_code == 200
    run.refresh_from_db()
    assert run.status == "running"
    assert run.approvals.get().decided_by_label == "owner@example.com"
    spent = client.get(path)
    assert spent.status_code == 409
    assert "This link has been used: step 2 was already approved by owner@example.com." in spent.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        run = drive(run)
    assert run.status == "completed" and run.verdict == "GOOD"


def _start_worker(log_path):
    from django.db import connection

    env = dict(os.environ)
    env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["DJANGO_SETTINGS_MODULE"] = "foldrun.settings.test"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "foldrun",
            "worker",
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
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    wait_for(lambda: b"ready." in log_path.read_bytes() or process.poll() is not None, timeout=60)
    return process


@pytest.mark.e2e
def test_a_worker_killed_between_attempts_loses_nothing_and_sends_nothing_twice(
    celery_worker_process, workspace, receiver, tmp_path
):
    push(workspace, {"AGENTS.md": f"---\nnotify:\n  url: {receiver.url}\n---\n"})
    receiver.answers = [(503, b"down", 0.0), (200, b"ok", 0.0)]
    delivery = do_record_delivery(workspace, "failed", '{"text": "x"}')
    from notify.tasks import attempt_delivery

    attempt_delivery.delay(delivery.pk)
    wait_for(lambda: Delivery.objects.get(pk=delivery.pk).attempts_made == 1, timeout=30)
    celery_worker_process.kill()  # attempt 2 was waiting in that worker, a minute away
    celery_worker_process.wait()
    # The clock moves on past the retry time; a new worker and the beat sweep pick it up.
    Delivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=1))
    worker = _start_worker(tmp_path / "second-worker.log")
    try:
        from notify.tasks import sweep_due_deliveries

        sweep_due_deliveries.delay()
        sweep_due_deliveries.delay()  # a second sweep racing the first sends nothing more
        wait_for(lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded", timeout=30)
        time.sleep(1.0)
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    assert [r["headers"]["X-Foldrun-Attempt"] for r in receiver.requests] == ["1", "2"]
    assert {r["headers"]["X-Foldrun-Delivery"] for r in receiver.requests} == {delivery.public_id}


@pytest.mark.django_db(transaction=True)
def test_the_switch_off_mail_is_sent_once_when_two_workers_give_up_at_once(workspace, alice, receiver, settings):
    push(workspace, {"AGENTS.md": f"---\nnotify:\n  url: {receiver.url}\n---\n"})
    receiver.answers = [(500, b"", 0.3)]
    now = timezone.now()
    deliveries = [do_record_delivery(workspace, "failed", "{}", now=now) for _ in range(2)]
    Endpoint.objects.filter(workspace=workspace).update(failing_since=now - timedelta(days=4))
    Delivery.objects.filter(pk__in=[d.pk for d in deliveries]).update(attempts_made=5)
    barrier = threading.Barrier(2)

    def give_up(pk):
        from django.db import connection

        barrier.wait()
        try:
            perform_attempt(pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=give_up, args=(d.pk,)) for d in deliveries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert list(Delivery.objects.values_list("status", flat=True)) == ["failed", "failed"]
    assert Endpoint.objects.get(workspace=workspace).disabled_at is not None
    assert [m.subject for m in send_outbox()] == ["The notification webhook of rank-desk has been switched off"]
