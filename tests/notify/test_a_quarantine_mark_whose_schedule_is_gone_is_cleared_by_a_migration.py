"""notify's migration 0007: a `quarantined` mark left by a schedule deleted before the Schedule post_delete
receiver existed is deleted, and every other mark stays. The migration's function is called on rows made
here (the current models stand in for the historical ones: neither model changed since)."""

from __future__ import annotations

from importlib import import_module

from django.apps import apps
from django.db import migrations

from accounts.models import Workspace
from notify.models import Mark
from runs.models import Schedule

MIGRATION = import_module("notify.migrations.0007_forget_orphaned_quarantine_marks")


def _marks() -> list[tuple[str, str, str]]:
    return sorted(Mark.objects.values_list("workspace__name", "event", "key"))


def test_a_quarantine_mark_whose_schedule_is_gone_goes_and_a_live_schedules_mark_stays(workspace):
    Schedule.objects.create(workspace=workspace, flow="rankings", cron="0 7 * * *")
    Mark.objects.create(workspace=workspace, event="quarantined", key="rankings")
    Mark.objects.create(workspace=workspace, event="quarantined", key="prices")  # its schedule went long ago
    assert MIGRATION.forget_orphaned_quarantine_marks(apps, None) == 1
    assert _marks() == [(workspace.name, "quarantined", "rankings")]


def test_a_schedule_of_the_same_flow_in_another_workspace_keeps_no_mark_alive(workspace):
    other = Workspace.objects.create(account=workspace.account, name="other-desk")
    Schedule.objects.create(workspace=other, flow="rankings", cron="0 7 * * *")
    Mark.objects.create(workspace=workspace, event="quarantined", key="rankings")
    assert MIGRATION.forget_orphaned_quarantine_marks(apps, None) == 1
    assert _marks() == []


def test_marks_of_other_events_are_not_the_migrations_to_delete(workspace):
    Mark.objects.create(workspace=workspace, event="sla", key="rankings")
    Mark.objects.create(workspace=workspace, event="budget", key="2026-12")
    assert MIGRATION.forget_orphaned_quarantine_marks(apps, None) == 0
    assert _marks() == [(workspace.name, "budget", "2026-12"), (workspace.name, "sla", "rankings")]


def test_going_back_over_the_migration_does_nothing():
    (operation,) = MIGRATION.Migration.operations
    assert operation.reversible and operation.reverse_code is migrations.RunPython.noop
