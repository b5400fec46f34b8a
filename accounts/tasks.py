from celery import shared_task

from .models import Account


@shared_task(name="foldrun.tests.rename_account")
def rename_account(account_pk: int, name: str) -> None:
    """Used by the worker smoke test: proves a worker reaches the same database."""
    Account.objects.filter(pk=account_pk).update(name=name)
