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
    from vault.probe import check_account_providers

    with transaction.atomic():
        # The claim is the account's row, held through the check: a second delivery of the same
        # day's task waits here, then finds the rows fresh and asks nothing — one question per
        # endpoint and key, one mail. (On SQLite, which has no row locks, the embedded default runs
        # one worker and a redelivery comes after the first has finished.)
        if Account.objects.select_for_update().filter(pk=account_id).first() is None:
            return 0
        if not force and _checked_recently(account_id):
            return 0
        return len(check_account_providers(account_id, report=True))


def _checked_recently(account_id: int) -> bool:
    """Every key of the account was asked within RECHECK_AFTER (and there is at least one)."""
    from vault.models import ProviderCheck

    cutoff = timezone.now() - RECHECK_AFTER
    rows = ProviderCheck.objects.filter(account_id=account_id)
    return rows.exists() and not rows.filter(checked_at__lt=cutoff).exists() and \
        not rows.filter(checked_at__isnull=True).exists()
