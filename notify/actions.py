"""Notification actions: the API's verbs (redeliver, the test send, the
retention purge) and the public names of what the rest of foldrun calls.

`check_*` validates and scopes; `do_*` changes data in one transaction and
queues work by task NAME after the commit (never importing notify.tasks).
The pieces live beside this module, each importing only downwards:
events.py (what an event sends) and sweep.py (lost workers) → deliveries.py
(webhooks, leases) → endpoints.py and outbox.py (mail) → destination.py,
email.py, webhook.py.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from django.utils import timezone

from accounts.models import Workspace
from foldrun import leases
from foldrun.api import ApiError, NotFound

from .config import notify_config_for
from .deliveries import (  # noqa: F401 — the public names callers and tests use
    BATCH,
    DRAIN_TASK,
    AttemptResult,
    claim,
    do_record_delivery,
    drain,
    due_delivery_ids,
    kick_drain,
    perform_attempt,
    perform_batch,
)
from .deliveries import record_attempt
from .destination import MissingSecret, send_attempt, signing_secrets  # noqa: F401
from .email import SendResult, send_mail
from .events import (  # noqa: F401
    REDACTED,
    check_budget,
    dispatch,
    handle_run_event,
    headline_for,
    notify_quarantined,
    once,
    redact_body,
    render_body,
    run_payload,
    subject_for,
    workspace_payload,
)
from .models import LOG_RETENTION_DAYS, Attempt, Delivery, DeliveryStatus, MailSend, MailStatus, OutgoingMail
from .outbox import drain_mail, queue_mail, send_outgoing, sweep_mail  # noqa: F401
from .sweep import LOST_ATTEMPT, recover_lost_deliveries, sweep_deliveries  # noqa: F401


# --------------------------------------------------------------- redelivery


def check_redeliver(workspace: Workspace, delivery_id: str) -> Delivery:
    delivery = Delivery.objects.filter(workspace=workspace, public_id=delivery_id).first()
    if delivery is None:
        raise NotFound()
    if delivery.status == DeliveryStatus.PENDING:
        raise ApiError(
            f"Delivery {delivery.public_id} is still being retried on its schedule; redeliver it once it has finished.",
            code="delivery_pending",
            status_code=409,
        )
    return delivery


def do_redeliver(delivery: Delivery) -> Attempt:
    """One attempt now: the same id and body, signed afresh. Goes even to a
    switched-off endpoint — an accepted redelivery is how it comes back on."""
    started = timezone.now()
    # Hold the row's lease while sending so two presses make two ordered attempts, not one number twice.
    holder = leases.new_holder()
    if not leases.claim(Delivery.objects.exclude(status=DeliveryStatus.PENDING), delivery.pk, holder, now=started):
        raise ApiError(
            f"Delivery {delivery.public_id} is being sent right now; try again in a moment.",
            code="delivery_busy",
            status_code=409,
        )
    delivery.refresh_from_db()
    number = delivery.attempts_made + 1
    with leases.Heartbeat(Delivery, delivery.pk, holder):
        outcome, url = send_attempt(delivery, number, started)
    finished = started + timedelta(milliseconds=outcome.duration_ms)
    result = record_attempt(
        delivery.pk, number, outcome, url, started=started, finished=finished, redelivery=True, holder=holder
    )
    if result is None:
        raise ApiError(
            f"Delivery {delivery.public_id} was taken over while it was being sent; see its log.",
            code="delivery_busy",
            status_code=409,
        )
    return result.attempt


# ------------------------------------------------------------------ test send


def do_send_test(workspace: Workspace) -> dict:
    """Send one real message to the saved destination and report what came back."""
    config = notify_config_for(workspace)
    if config is None:
        raise ApiError(
            f"{workspace.name} has no notify: destination; add notify: to its AGENTS.md or the account's.",
            code="no_destination",
            status_code=409,
        )
    text = f"✅ Test notification from foldrun for {workspace.name}"
    payload = workspace_payload(workspace, text)
    result: dict = {"workspace": workspace.name}
    if config.is_webhook:
        started = timezone.now()
        holder = leases.new_holder()
        delivery = Delivery.objects.create(
            account=workspace.account,
            workspace=workspace,
            event="test",
            body=json.dumps(payload, ensure_ascii=False),
            status=DeliveryStatus.FAILED,
            lease_holder=holder,
            lease_until=started + timedelta(seconds=leases.lease_seconds()),
        )
        with leases.Heartbeat(Delivery, delivery.pk, holder):
            outcome, url = send_attempt(delivery, 1, started)
        finished = started + timedelta(milliseconds=outcome.duration_ms)
        attempt = record_attempt(
            delivery.pk, 1, outcome, url, started=started, finished=finished, redelivery=True, holder=holder
        ).attempt
        result.update(
            {
                "destination": "webhook",
                "ok": attempt.ok,
                "deliveryId": delivery.public_id,
                "statusCode": attempt.status_code,
                "durationMs": attempt.duration_ms,
                "response": attempt.response_excerpt,
                "message": (
                    f"The receiver answered {attempt.status_code}."
                    if attempt.ok
                    else f"The receiver did not accept it: {attempt.error.rstrip('.')}."
                    + (f" It said: {attempt.response_excerpt}" if attempt.response_excerpt else "")
                ),
            }
        )
    if config.email:
        sent: SendResult = send_mail(
            to=config.email,
            subject=text,
            body=render_body(payload),
            category="run-alerts",
            account=workspace.account,
            workspace=workspace,
        )
        result.update(
            {
                "destination": "email",
                "ok": sent.sent,
                "to": config.email,
                **{
                    "provider": sent.provider,
                    "statusCode": sent.status_code,
                    "messageId": sent.message_id,
                    "message": sent.message,
                },
            }
        )
    return result


# ---------------------------------------------------------------- retention


def do_purge_old_deliveries(now: datetime | None = None) -> int:
    """Drop deliveries older than the 30-day log (finished ones only)."""
    cutoff = (now or timezone.now()) - timedelta(days=LOG_RETENTION_DAYS)
    deleted, _ = Delivery.objects.filter(created_at__lt=cutoff).exclude(status=DeliveryStatus.PENDING).delete()
    MailSend.objects.filter(created_at__lt=cutoff).delete()
    OutgoingMail.objects.filter(created_at__lt=cutoff).exclude(status=MailStatus.PENDING).delete()
    return deleted
