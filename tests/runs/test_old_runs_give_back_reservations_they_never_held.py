"""The data migration that repairs reservations written before budgets booked only what a cap limits: a run
left below zero, and a finished run still holding a lost call's booking, both hold nothing after it; a run
going on keeps what it holds."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE, AFTER = [("runs", "0009_fewer_indexes")], [("runs", "0010_reservations_given_back")]


@pytest.mark.django_db(transaction=True)
def test_old_runs_hold_only_the_reservations_of_calls_still_going():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    apps = executor.loader.project_state(BEFORE).apps
    Account, Workspace, Run = (
        apps.get_model(*name) for name in (("accounts", "Account"), ("accounts", "Workspace"), ("runs", "Run"))
    )
    account = Account.objects.create(name="Old", public_id="acc_old")
    workspace = Workspace.objects.create(account=account, name="old-desk", public_id="ws_old")

    def run(public_id: str, status: str, reserved: str):
        return Run.objects.create(
            public_id=public_id,
            account=account,
            workspace=workspace,
            name="weekly",
            status=status,
            reserved_usd=Decimal(reserved),
        )

    below, ended, going = (
        run("run_below", "running", "-0.041920"),
        run("run_ended", "failed", "0.04"),
        run("run_going", "running", "0.04"),
    )
    executor = MigrationExecutor(connection)
    executor.migrate(AFTER)
    Run = executor.loader.project_state(AFTER).apps.get_model("runs", "Run")
    held = dict(Run.objects.filter(pk__in=[below.pk, ended.pk, going.pk]).values_list("public_id", "reserved_usd"))
    assert held == {"run_below": 0, "run_ended": 0, "run_going": Decimal("0.04")}
    # Every migration back, for the tests after this one: runs' later migrations (0011 on) were undone by BEFORE.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
