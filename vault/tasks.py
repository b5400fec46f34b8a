"""The daily key probe on Celery beat. Tasks take ids, never secrets."""
from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from django.db import transaction
from django.utils import timezone

from accounts.models import Account

log = logging.getLogger(__name__)
# A second delivery of the same day's task (acks_late, a worker restart)
# finds the account checked this recently and does nothing.
RECHECK_AFTER = dt.timedelta(hours=20)


@shared_task(name="vault.probe_all_accounts")
def probe_all_accounts() -> int:
    """Beat's entry: one task per account, so one slow endpoint delays nobody else."""
    ids = list(Account.objects.values_list("pk", flat=True))
    for account_id in ids:
        probe_account_providers.delay(account_id)
    return len(ids)


@shared_task(name="vault.probe_account_providers", acks_late=True)
def probe_account_providers(account_id: int, force: bool = False) -> int:
    from vault.models import ProviderCheck
    from vault.probe import check_account_providers

    if not Account.objects.filter(pk=account_id).exists():
        return 0
    if not force:
        cutoff = timezone.now() - RECHECK_AFTER
        rows = ProviderCheck.objects.filter(account_id=account_id)
        if rows.exists() and not rows.filter(checked_at__lt=cutoff).exists() and \
                not rows.filter(checked_at__isnull=True).exists():
            return 0
    with transaction.atomic():
        # Serialise two deliveries for one account: the second waits, then sees fresh rows.
        Account.objects.select_for_update().filter(pk=account_id).first()
    return len(check_account_providers(account_id, report=True))
