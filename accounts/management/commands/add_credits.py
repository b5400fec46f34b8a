"""`manage.py add_credits acc_… 25.00`: top up an account's platform credits."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.core.management.base import BaseCommand, CommandError

from accounts.credits import do_add_credits
from accounts.models import Account


class Command(BaseCommand):
    help = "Add USD credits to an account (by its acc_ id); a balance back above the warning level re-arms the warning."

    def add_arguments(self, parser) -> None:
        parser.add_argument("account", help="the account's public id, acc_…")
        parser.add_argument("amount", help="USD to add, e.g. 25.00")

    def handle(self, *args, account: str, amount: str, **options) -> None:
        try:
            value = Decimal(amount)
        except InvalidOperation:
            raise CommandError(f"amount: {amount!r} is not a number of dollars.") from None
        if value <= 0:
            raise CommandError("amount: give a positive number of dollars.")
        row = Account.objects.filter(public_id=account).first()
        if row is None:
            raise CommandError(f"account: there is no account {account}.")
        row = do_add_credits(row, value)
        self.stdout.write(f"{row.name} now has ${row.credits_usd:.2f} of credits.")
