"""Deliveries, mail and the key probe through the one lease primitive
(foldrun/leases.py): a worker lost mid-attempt is written down in the spec's
words, the next attempt carries the next number, a holder that lost its
lease records nothing, and run-event mail goes through an outbox that a
provider being down cannot empty."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone as dt_timezone
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone

from foldrun import leases
from notify.actions import LOST_ATTEMPT, do_record_delivery, perform_attempt, recover_lost_deliveries, sweep_deliveries
from notify.deliveries import _claim_many, _record_many, _Sent
from notify.models import Delivery, Kick, MailSend, OutgoingMail
from notify.outbox import LOST_MAIL, recover_lost_mail, send_outgoing
from notify.webhook import Outcome
from runs.models import Run
from runs.signals import emit
from vault.actions import do_set_secret

from .conftest import send_outbox, write_agents_md

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=dt_timezone.utc)
RESEND_DOWN = (500, "application_error", "An unexpected error occurred.")


@pytest.fixture
def hooked(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n  events: [failed]\n---\n")
    return workspace


def record_attempt(workspace, now=T0):
    return do_record_delivery(workspace, "failed", json.dumps({"text": "x"}), run_public_id="run_x", now=now)


def _lease_runs_out(now: datetime) -> datetime:
    return now + timedelta(seconds=leases.lease_seconds() + 1)


def test_an_attempt_in_flight_when_its_worker_dies_is_recorded_lost_and_the_next_carries_the_next_number(
    hooked, receiver
):
    delivery = record_attempt(hooked)
    # A worker claims attempt 1 and dies before it records anything.
    assert _claim_many([delivery.pk], T0, False, leases.new_holder())
    assert recover_lost_deliveries(T0 + timedelta(seconds=1)) == 0  # its lease is still live
    died = _lease_runs_out(T0)
    assert recover_lost_deliveries(died) == 1
    lost = Delivery.objects.get(pk=delivery.pk)
    assert lost.status == "pending" and lost.attempts_made == 1 and lost.lease_holder == ""
    assert list(lost.attempts.values_list("number", "lost", "ok", "error")) == [
        (1, True, False, "the worker was lost during this attempt")
    ]
    assert lost.next_attempt_at == died + timedelta(seconds=60)  # the spec's first retry delay
    result = perform_attempt(delivery.pk, now=lost.next_attempt_at)
    assert result.attempt.number == 2 and result.attempt.ok is True
    assert [r["headers"]["X-Foldrun-Attempt"] for r in receiver.requests] == ["2"]
    assert LOST_ATTEMPT == "the worker was lost during this attempt"


def test_two_sweeps_record_a_lost_attempt_once(hooked):
    delivery = record_attempt(hooked)
    _claim_many([delivery.pk], T0, False, leases.new_holder())
    died = _lease_runs_out(T0)
    assert recover_lost_deliveries(died) + recover_lost_deliveries(died) == 1
    assert Delivery.objects.get(pk=delivery.pk).attempts.count() == 1


def test_a_holder_that_lost_its_lease_records_nothing(hooked):
    delivery = record_attempt(hooked)
    holder = leases.new_holder()
    [claimed] = _claim_many([delivery.pk], T0, False, holder)
    # The worker stalls past its lease; the sweep judges it lost and takes the row.
    recover_lost_deliveries(_lease_runs_out(T0))
    late = _Sent(claimed, 1, Outcome(True, 200, 5, "ok", ""), "http://example.invalid/", T0, T0)
    assert _record_many([late], holder) == []
    row = Delivery.objects.get(pk=delivery.pk)
    assert list(row.attempts.values_list("number", "lost")) == [(1, True)] and row.status == "pending"


def test_a_live_lease_keeps_its_delivery_from_a_second_worker(hooked, receiver):
    delivery = record_attempt(hooked)
    _claim_many([delivery.pk], T0, False, leases.new_holder())
    assert perform_attempt(delivery.pk, now=T0 + timedelta(seconds=1)) is None
    assert receiver.requests == []


def test_a_retry_is_a_time_in_its_row_that_the_sweep_queues_when_it_is_due(hooked, receiver):
    receiver.answers = [(503, b"down", 0.0)]
    delivery = record_attempt(hooked)
    retry_at = perform_attempt(delivery.pk, now=T0, clock=lambda: T0).next_attempt_at
    assert retry_at == T0 + timedelta(seconds=60)
    Kick.objects.all().delete()
    assert sweep_deliveries(retry_at - timedelta(seconds=1)) == 0
    assert not Kick.objects.filter(pending=True).exists()
    assert sweep_deliveries(retry_at) == 1
    assert Kick.objects.get().pending is True  # a drain is on its way to a worker


def test_the_attempt_log_says_lost_in_the_api(hooked, alice_api):
    delivery = record_attempt(hooked)
    _claim_many([delivery.pk], T0, False, leases.new_holder())
    recover_lost_deliveries(_lease_runs_out(T0))
    answer = alice_api.get(f"/api/workspaces/{hooked.name}/notify/deliveries/{delivery.public_id}")
    assert answer.status_code == 200, answer.content
    [attempt] = answer.json()["attempts"]
    assert attempt["lost"] is True and attempt["error"] == "the worker was lost during this attempt"


# ---------------------------------------------------------------- mail outbox


@pytest.fixture
def own_key(account, fake_resend):
    do_set_secret(account, None, "RESEND_API_KEY", value="re_outbox_key")
    do_set_secret(account, None, "EMAIL_FROM", value="Rank Desk <desk@acme.example>")
    return fake_resend


def _failed_run(workspace) -> Run:
    return Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="rankings",
        status="failed",
        error="step 2 timed out",
        cost_usd=Decimal("0"),
    )


def test_a_run_s_mail_is_an_outbox_row_written_in_the_run_s_own_transaction(workspace):
    write_agents_md(workspace, "---\nnotify:\n  email: ops@example.com\n---\n")
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            emit(_failed_run(workspace), "failed")
            assert OutgoingMail.objects.count() == 1  # written with the run's change…
            raise RuntimeError("the run's transaction rolls back")
    assert OutgoingMail.objects.count() == 0  # …and gone with it
    with transaction.atomic():
        emit(_failed_run(workspace), "failed")
    mail = OutgoingMail.objects.get()
    assert (mail.to, mail.status, mail.subject) == ("ops@example.com", "pending", "rankings failed: step 2 timed out")
    assert MailSend.objects.count() == 0  # nothing was sent inline


def test_a_mail_provider_that_is_down_loses_nothing(workspace, own_key):
    write_agents_md(workspace, "---\nnotify:\n  email: ops@example.com\n---\n")
    own_key.refusals = [RESEND_DOWN]
    emit(_failed_run(workspace), "failed")
    send_outbox()
    mail = OutgoingMail.objects.get()
    assert (mail.status, mail.tries, mail.message) == ("pending", 1, "An unexpected error occurred.")
    assert own_key.sent == []
    assert send_outgoing(mail.pk, now=mail.next_try_at - timedelta(seconds=1)) is None  # not due yet
    done = send_outgoing(mail.pk, now=mail.next_try_at)
    assert (done.status, done.tries, done.body) == ("sent", 2, "")  # the body is not kept once sent
    assert [m["subject"] for m in own_key.sent] == ["rankings failed: step 2 timed out"]
    # Both tries carried the mail's own id, so Resend sends it once however often it is asked.
    assert own_key.idempotency_keys == [mail.public_id, mail.public_id]
    assert list(MailSend.objects.order_by("pk").values_list("sent", "status_code", "message")) == [
        (False, 500, "An unexpected error occurred."),
        (True, 200, "Resend accepted it (id re_0001)."),
    ]


def test_a_mail_the_provider_refuses_is_not_tried_again(workspace, own_key):
    write_agents_md(workspace, "---\nnotify:\n  email: ops@example.com\n---\n")
    own_key.refusals = [(403, "validation_error", "The acme.example domain is not verified.")]
    emit(_failed_run(workspace), "failed")
    send_outbox()
    mail = OutgoingMail.objects.get()
    assert (mail.status, mail.tries, mail.message) == ("failed", 1, "The acme.example domain is not verified.")


def test_a_mail_whose_worker_died_mid_send_is_recorded_lost_and_tried_again(workspace, own_key):
    write_agents_md(workspace, "---\nnotify:\n  email: ops@example.com\n---\n")
    emit(_failed_run(workspace), "failed")
    mail = OutgoingMail.objects.get()
    now = timezone.now()
    assert leases.claim(OutgoingMail, mail.pk, leases.new_holder(), now=now)  # a sender that then dies
    assert send_outgoing(mail.pk, now=now) is None  # a second worker leaves a held mail alone
    died = _lease_runs_out(now)
    assert recover_lost_mail(died) == 1
    mail.refresh_from_db()
    assert (mail.status, mail.tries, mail.message) == ("pending", 1, "the worker was lost while sending this mail")
    assert LOST_MAIL == "the worker was lost while sending this mail"
    assert send_outgoing(mail.pk, now=mail.next_try_at).status == "sent"
    assert len(own_key.sent) == 1


def test_a_mail_retry_is_a_time_in_its_row_that_the_sweep_hands_to_one_drain(workspace, own_key):
    from notify.outbox import drain_mail, sweep_mail

    write_agents_md(workspace, "---\nnotify:\n  email: ops@example.com\n---\n")
    own_key.refusals = [RESEND_DOWN]
    emit(_failed_run(workspace), "failed")
    send_outbox()
    mail = OutgoingMail.objects.get()
    assert sweep_mail(mail.next_try_at - timedelta(seconds=1)) == 0
    assert not Kick.objects.filter(name="mail", pending=True).exists()
    assert sweep_mail(mail.next_try_at) == 1 and sweep_mail(mail.next_try_at) == 1
    assert Kick.objects.get(name="mail").pending is True  # one drain on its way, however many sweeps
    OutgoingMail.objects.filter(pk=mail.pk).update(next_try_at=timezone.now())
    assert drain_mail() == 1
    assert OutgoingMail.objects.get().status == "sent" and len(own_key.sent) == 1


def test_a_key_probe_whose_worker_died_is_started_again_by_the_sweep(account):
    from vault.models import KeyProbe
    from vault.tasks import sweep_key_probes

    now = timezone.now()
    KeyProbe.objects.create(
        account=account,
        lease_holder=leases.new_holder(),
        lease_until=now - timedelta(seconds=1),
        started_at=now - timedelta(seconds=40),
    )
    assert sweep_key_probes() == 1
    KeyProbe.objects.update(lease_holder="", lease_until=None, finished_at=now)  # one that finished
    assert sweep_key_probes() == 0
