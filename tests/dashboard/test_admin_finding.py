"""Django admin for platform staff: it says foldrun, lists each app once,
names models properly, and finds any account, run or delivery by what staff
know (an email, a workspace, an id) — in a fixed number of queries per list."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from notify.models import Delivery
from runs.models import Run
from tests.dashboard.test_signin_and_admin import staff_web  # noqa: F401 - the signed-in superuser

pytestmark = pytest.mark.django_db


def rows(page: str) -> list[str]:
    return re.findall(r'<th class="field-public_id"><a href="[^"]+">([^<]+)</a>', page)


def test_the_admin_says_foldrun_and_lists_each_app_once_with_proper_names(staff_web):
    page = staff_web.get("/admin/").content.decode()
    assert "<title>Platform records | foldrun admin</title>" in page
    assert '<a href="/admin/">foldrun admin</a>' in page
    captions = re.findall(r'<caption>\s*<a href="/admin/[^"]+" class="section"[^>]*>([^<]+)</a>', page)
    assert len(captions) == len(set(captions)), captions
    assert {"Accounts, members and tokens", "Runs", "Notifications", "Vault", "Library"} <= set(captions)
    assert ">Deliveries</a>" in page and ">API tokens</a>" in page


def test_staff_find_an_account_by_a_members_email(staff_web, alice, account):
    from accounts.models import Account

    Account.objects.create(name="Other team")
    page = staff_web.get("/admin/accounts/account/", {"q": "alice@example.com"}).content.decode()
    assert "0 of 1 selected" in page and account.public_id in page and "Other team" not in page
    assert '<td class="field-member_count">1</td>' in page


def test_staff_find_a_run_by_its_workspace_and_a_delivery_by_its_run(staff_web, workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="failed")
    Run.objects.create(account=workspace.account, workspace=workspace, name="daily", status="completed")
    delivery = Delivery.objects.create(
        account=workspace.account, workspace=workspace, event="failed", body="{}", run_public_id=run.public_id
    )
    by_workspace = staff_web.get("/admin/runs/run/", {"q": "rank-desk", "status__exact": "failed"}).content.decode()
    by_run = staff_web.get("/admin/notify/delivery/", {"q": run.public_id}).content.decode()
    assert rows(by_workspace) == [run.public_id]
    assert rows(by_run) == [delivery.public_id]
    assert "Search by delivery id (dlv_…), run id, workspace or account." in by_run


def test_the_account_list_costs_the_same_queries_for_one_account_or_thirty(staff_web, account):
    from accounts.models import Account, Workspace

    with CaptureQueriesContext(connection) as one:
        assert staff_web.get("/admin/accounts/account/").status_code == 200
    for n in range(30):
        extra = Account.objects.create(name=f"team {n}")
        Workspace.objects.create(account=extra, name="desk")
    with CaptureQueriesContext(connection) as thirty:
        assert staff_web.get("/admin/accounts/account/").status_code == 200
    assert len(thirty.captured_queries) == len(one.captured_queries)
