"""The daily key probe on Celery beat. Tasks take ids, never secrets.

Each account's probe is a leased piece of work (foldrun/leases.py, the
KeyProbe row): the worker asking holds the lease through the whole check,
renewed by a heartbeat, and writes verdicts and mail only while it holds it.
A second delivery of the same day's task finds the lease held (or the keys
freshly checked) and asks nothing; a probe whose worker died is started
again by the sweep once its lease has run out.
"""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.db import IntegrityError
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account
from foldrun import leases
from vault.models import KeyProbe, ProviderCheck
from vault.probe import check_account_providers

log = logging.getLogger(__name__)
# A second delivery of the same day's task (acks_late, a worker restart)
# finds the account checked this recently and does nothing.
RECHECK_AFTER = dt.timedelta(hours=20)
PROBE_TASK = "vault.probe_account_providers"


@shared_task(name="vault.probe_all_accounts")
def probe_all_accounts() -> int:
    """Beat's entry: one task per account, so one slow endpoint delays nobody else."""
    ids = list(Account.objects.values_list("pk", flat=True))
    for account_id in ids:
        probe_account_providers.delay(account_id)
    return len(ids)


def _probe_row(account_id: int) -> KeyProbe:
    try:
        return KeyProbe.objects.get_or_create(account_id=account_id)[0]
    except IntegrityError:  # two deliveries creating it at once: the other's row
        return KeyProbe.objects.get(account_id=account_id)


@shared_task(name="vault.probe_account_providers", acks_late=True)
def probe_account_providers(account_id: int, force: bool = False) -> int:
    if not Account.objects.filter(pk=account_id).exists():
        return 0
    probe = _probe_row(account_id)
    holder = leases.new_holder()
    if not leases.claim(KeyProbe, probe.pk, holder):
        return 0  # another worker is asking these keys right now
    try:
        if not force and _checked_recently(account_id):
            return 0
        KeyProbe.objects.filter(pk=probe.pk, lease_holder=holder).update(started_at=timezone.now())
        with leases.Heartbeat(KeyProbe, probe.pk, holder) as beat:
            try:
                rows = check_account_providers(account_id, report=True, lease=beat, daily=True)
            except leases.LeaseLost:
                log.warning("the key probe of account %s lost its lease; it wrote nothing", account_id)
                return 0
        KeyProbe.objects.filter(pk=probe.pk, lease_holder=holder).update(finished_at=timezone.now())
        return len(rows)
    finally:
        leases.release(KeyProbe, probe.pk, holder)


@shared_task(name="vault.sweep_key_probes", ignore_result=True)
def sweep_key_probes() -> int:
    """Probes whose worker died mid-check (the lease ran out, the check never
    finished) are asked again — the broker may never redeliver that message."""
    stranded = list(
        leases.expired(KeyProbe)
        .filter(Q(finished_at__isnull=True) | Q(finished_at__lt=F("started_at")))
        .values_list("account_id", flat=True)
    )
    for account_id in stranded:
        probe_account_providers.delay(account_id)
    return len(stranded)


def _checked_recently(account_id: int) -> bool:
    """Every key of the account was asked within RECHECK_AFTER (and there is at least one)."""
    cutoff = timezone.now() - RECHECK_AFTER
    rows = ProviderCheck.objects.filter(account_id=account_id)
    return (
        rows.exists()
        and not rows.filter(checked_at__lt=cutoff).exists()
        and not rows.filter(checked_at__isnull=True).exists()
    )
