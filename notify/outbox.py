"""The mail outbox: notification mail is a row first, written in the
transaction of what caused it, and sent afterwards by a task that holds the
row's lease (foldrun/leases.py) — so a mail provider that is down, or a
worker lost mid-send, loses nothing.

Each try is recorded (a MailSend, in the provider's own words). A passing
fault (the provider answering 5xx or 429, no answer at all) is tried again
on MAIL_RETRY_DELAYS; a refusal (any other 4xx: an unverified domain, a bad
address) is final. Every try of one mail carries the same Resend
`Idempotency-Key`, so a retry after a lost worker cannot send it twice.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun import leases

from . import kicks
from .email import SendResult, attempt_mail, remember
from .enqueue import enqueue
from .models import Kick, MailStatus, OutgoingMail

log = logging.getLogger(__name__)

SEND_TASK = "notify.send_mail"
# Try n+1 comes this many seconds after try n met a passing fault (n = 1..5).
MAIL_RETRY_DELAYS = (30, 2 * 60, 10 * 60, 60 * 60, 6 * 60 * 60)
MAX_TRIES = len(MAIL_RETRY_DELAYS) + 1
LOST_MAIL = "the worker was lost while sending this mail"


def queue_mail(
    *,
    to: str,
    subject: str,
    body: str,
    category: str,
    account: Account | None = None,
    workspace: Workspace | None = None,
    platform: bool = False,
) -> OutgoingMail:
    """Write the mail into the outbox (in the caller's transaction) and queue
    its first try once that commits."""
    row = OutgoingMail.objects.create(
        account=account,
        workspace=workspace,
        platform=platform or account is None,
        to=to,
        category=category,
        subject=subject[:300],
        body=body,
        next_try_at=timezone.now(),
    )
    transaction.on_commit(lambda pk=row.pk: enqueue(SEND_TASK, pk))
    return row


def passing_fault(result: SendResult) -> bool:
    """A fault worth another try: no answer, a 5xx, or a 429."""
    if result.sent or result.skipped:
        return False
    return result.status_code is None or result.status_code >= 500 or result.status_code == 429


def send_outgoing(pk: int, *, now: datetime | None = None) -> OutgoingMail | None:
    """Take the mail's lease, try it once and record the try. None when it was
    not ours to send (finished, not due, or another worker holds it) or when
    the lease was lost meanwhile (then nothing is written)."""
    now = now or timezone.now()
    holder = leases.new_holder()
    if not leases.claim(OutgoingMail, pk, holder, now=now, status=MailStatus.PENDING, next_try_at__lte=now):
        return None
    row = OutgoingMail.objects.select_related("account", "workspace").get(pk=pk)
    with leases.Heartbeat(OutgoingMail, pk, holder) as beat:
        result = attempt_mail(
            to=row.to,
            subject=row.subject,
            body=row.body,
            category=row.category,
            account=row.account,
            workspace=row.workspace,
            platform=row.platform,
            idempotency_key=row.public_id,
        )
        try:
            beat.check()
        except leases.LeaseLost:
            log.warning("lost the lease on mail %s while sending it; recording nothing", row.public_id)
            return None
        return _finish(row, holder, result, timezone.now())


def _finish(row: OutgoingMail, holder: str, result: SendResult, finished: datetime) -> OutgoingMail | None:
    number = row.tries + 1
    if result.sent:
        status, next_at = MailStatus.SENT, None
    elif result.skipped:
        status, next_at = MailStatus.SKIPPED, None
    elif passing_fault(result) and number < MAX_TRIES:
        status, next_at = MailStatus.PENDING, finished + timedelta(seconds=MAIL_RETRY_DELAYS[number - 1])
    else:
        status, next_at = MailStatus.FAILED, None
    done = status != MailStatus.PENDING
    with transaction.atomic():
        updated = OutgoingMail.objects.filter(pk=row.pk, lease_holder=holder).update(
            tries=number,
            status=status,
            next_try_at=next_at,
            message=result.message[:500],
            lease_holder="",
            lease_until=None,
            finished_at=finished if done else None,
            # The body can carry approve/reject links: kept only while it may still be sent.
            **({"body": ""} if done else {}),
        )
        if not updated:
            transaction.set_rollback(True)
            return None
        remember(
            result,
            to=row.to,
            subject=row.subject,
            category=row.category,
            account=row.account,
            workspace=row.workspace,
            outgoing=row,
        )
    row.refresh_from_db()
    return row


def due_mail_ids(now: datetime | None = None, limit: int = 2000) -> list[int]:
    now = now or timezone.now()
    return list(
        OutgoingMail.objects.filter(status=MailStatus.PENDING, next_try_at__lte=now, lease_until__isnull=True)
        .order_by("next_try_at")
        .values_list("pk", flat=True)[:limit]
    )


def recover_lost_mail(now: datetime | None = None) -> int:
    """Mail whose sender's lease ran out unrenewed: that worker died mid-try.
    The try is recorded in those words and the next one is scheduled (the
    idempotency key keeps a mail Resend already took from going twice)."""
    now = now or timezone.now()
    lost = 0
    for pk in leases.expired(OutgoingMail.objects.filter(status=MailStatus.PENDING), now).values_list("pk", flat=True)[
        :500
    ]:
        holder = leases.new_holder()
        with transaction.atomic():
            if not leases.claim(
                OutgoingMail, pk, holder, now=now, status=MailStatus.PENDING, lease_until__isnull=False
            ):
                continue  # another sweep took it, or its holder renewed in time
            row = OutgoingMail.objects.select_related("account", "workspace").get(pk=pk)
            _finish(row, holder, SendResult(False, "platform" if row.platform else "resend", LOST_MAIL), now)
            lost += 1
    return lost


MAIL_KICK = "mail"
DRAIN_TASK = "notify.drain_mail"


def drain_mail(max_seconds: float = 30.0) -> int:
    """Try every mail that is due, one after another (mail is a trickle beside
    webhooks), for up to `max_seconds`. Returns how many were tried."""
    Kick.objects.filter(name=MAIL_KICK).update(pending=False)
    started = time.monotonic()
    tried = 0
    for pk in due_mail_ids():
        if time.monotonic() - started > max_seconds:
            kick_mail_drain()  # hand the rest on to a fresh drain
            break
        if send_outgoing(pk) is not None:
            tried += 1
    return tried


# See that one drain of due mail is on its way (kicks.kicker).
kick_mail_drain = kicks.kicker(MAIL_KICK, DRAIN_TASK)


def sweep_mail(now: datetime | None = None) -> int:
    """What the beat sweep does for mail: record tries lost with their worker,
    then see that a drain is on its way when any mail is due (a retry whose
    time came, a first try whose message a dead worker took)."""
    return kicks.sweep(now, recover=recover_lost_mail, kick_name=MAIL_KICK, due=due_mail_ids, kick=kick_mail_drain)
