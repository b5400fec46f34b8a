"""Deliveries lost with their worker: what the beat sweep does for webhooks, every FOLDRUN_SWEEP_SECONDS — the
attempt a dead worker had in flight written down as lost, and a drain queued whenever something is due."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from foldrun import leases

from . import kicks
from .deliveries import KICK, due_delivery_ids, kick_drain
from .models import MAX_ATTEMPTS, RETRY_DELAYS, Attempt, Delivery, DeliveryStatus

# What the log says of an attempt whose worker died with it in flight.
LOST_ATTEMPT = "the worker was lost during this attempt"


def recover_lost_deliveries(now: datetime | None = None, limit: int = 1000) -> int:
    """Pending deliveries whose lease ran out unrenewed: the worker holding
    them died with the attempt in flight. Each such attempt is written down
    (`lost`, in those words) with its number, and the next attempt — the
    next number — is due on the retry schedule. Two sweeps never record one
    twice: each takes the row with the lease's conditional claim first."""
    now = now or timezone.now()
    expired = leases.expired(Delivery.objects.filter(status=DeliveryStatus.PENDING), now)
    recovered = 0
    for pk in list(expired.values_list("pk", flat=True)[:limit]):
        holder = leases.new_holder()
        with transaction.atomic():
            if not leases.claim(
                Delivery, pk, holder, now=now, status=DeliveryStatus.PENDING, lease_until__isnull=False
            ):
                continue
            d = Delivery.objects.get(pk=pk)
            number = d.attempts_made + 1
            Attempt.objects.create(
                delivery_id=pk,
                number=number,
                started_at=now - timedelta(seconds=leases.lease_seconds()),
                ok=False,
                lost=True,
                error=LOST_ATTEMPT,
            )
            if number >= MAX_ATTEMPTS:
                changes = {"status": DeliveryStatus.FAILED, "next_attempt_at": None, "finished_at": now}
            else:
                changes = {"next_attempt_at": now + timedelta(seconds=RETRY_DELAYS[number - 1])}
            Delivery.objects.filter(pk=pk, lease_holder=holder).update(
                attempts_made=number, lease_holder="", lease_until=None, **changes
            )
            recovered += 1
    return recovered


def sweep_deliveries(now: datetime | None = None) -> int:
    """What the beat sweep does for webhooks, every FOLDRUN_SWEEP_SECONDS:
    record attempts lost with their worker, then see that a drain is on its
    way when anything is due (a retry whose time came, an attempt a lost
    worker or a restarted broker dropped). Returns how many are due."""
    return kicks.sweep(now, recover=recover_lost_deliveries, kick_name=KICK, due=due_delivery_ids, kick=kick_drain)
