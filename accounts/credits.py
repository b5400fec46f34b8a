"""Platform credits: each finished run's cost is drawn once, and owners get
one low-balance warning — the platform's own mail, never through an
account's key — when the balance falls below the warning level."""

from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone

from foldrun import mail

from .models import Account, CreditCharge, Membership, Role

ENDING_EVENTS = {"completed", "failed", "cancelled"}


def do_charge_run(run) -> CreditCharge | None:
    """Draw `run.cost_usd` from its account's credits, once per run.

    Returns the charge, or None when the account is not metered or the run
    was charged already. Queues the low-balance mail on commit."""
    with transaction.atomic():
        account = Account.objects.select_for_update().get(pk=run.account_id)
        if account.credits_usd is None:
            return None
        amount = Decimal(run.cost_usd or 0)
        balance = account.credits_usd - amount
        try:
            with transaction.atomic():
                charge = CreditCharge.objects.create(
                    account=account, run_public_id=run.public_id, amount_usd=amount, balance_after_usd=balance
                )
        except IntegrityError:  # this run's end was announced before
            return None
        account.credits_usd = balance
        fields = ["credits_usd"]
        if balance < account.low_balance_usd and account.low_balance_warned_at is None:
            account.low_balance_warned_at = timezone.now()
            fields.append("low_balance_warned_at")
        account.save(update_fields=fields)
        if "low_balance_warned_at" in fields:
            # Into the mail outbox in this same transaction: the warning commits with the charge or not at all.
            _send_low_balance_mail(account.pk)
        return charge


def do_add_credits(account: Account, amount: Decimal) -> Account:
    """Top up; a balance back above the warning level arms the next warning."""
    with transaction.atomic():
        account = Account.objects.select_for_update().get(pk=account.pk)
        account.credits_usd = (account.credits_usd or Decimal(0)) + amount
        if account.credits_usd >= account.low_balance_usd:
            account.low_balance_warned_at = None
        account.save(update_fields=["credits_usd", "low_balance_warned_at"])
        return account


def _send_low_balance_mail(account_pk: int) -> None:
    account = Account.objects.get(pk=account_pk)
    subject = f"foldrun: {account.name} is low on credits"
    body = (
        f"{account.name} has ${account.credits_usd:.2f} of foldrun credits left, below the warning level of "
        f"${account.low_balance_usd:.2f}. Runs go on drawing from it; add credits before it runs out.\n"
    )
    owners = Membership.objects.filter(account=account, role=Role.OWNER).select_related("user")
    for membership in owners:
        # Into notify's outbox, in this transaction; notify sits above accounts, so asked through foldrun.mail.
        mail.queue_platform_mail(to=membership.user.email, subject=subject, body=body, category="low-balance")


def charge_finished_run(sender, run, event: str, **kwargs) -> None:
    # `metered`: set by the transaction that ended the run when it read the account there (runs/lifecycle/execute.py). An
    # account unmetered as the run ended is charged nothing — no transaction, no lock; any other end is looked up.
    if event in ENDING_EVENTS and getattr(run, "metered", True):
        do_charge_run(run)
