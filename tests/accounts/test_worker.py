import pytest

from accounts.models import Account
from tests.conftest import wait_for


@pytest.mark.e2e
def test_a_real_worker_runs_a_task_against_the_test_database(celery_worker_process):
    from foldrun.celery import app

    account = Account.objects.create(name="before")
    app.send_task("foldrun.tests.rename_account", args=[account.pk, "after"])
    wait_for(lambda: Account.objects.filter(pk=account.pk, name="after").exists(), timeout=30)
