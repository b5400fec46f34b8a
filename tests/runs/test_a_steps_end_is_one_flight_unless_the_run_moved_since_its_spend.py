"""A plain step's end is decided from the run as its last spend left it and sent in one flight, behind the run's
lock and a guard (runs/closing.py); when the run moved since that spend, the guard stops the flight, nothing of it
is committed, and the end is made again from fresh rows."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from decimal import Decimal
from typing import Iterator

import psycopg
import pytest
from django.db import connection, transaction

from foldrun import batch
from foldrun.celery import app
from foldrun.prepared import save_fields
from runs import budget, closing
from runs.actions import check_start_run
from runs.models import Run, Schedule, Step, TraceEvent, Try
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)  # real commits, and a second connection that sees them

HOLDER = "h" * 32


def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the one-flight end is PostgreSQL's (elsewhere the end reads the run, as before)")


def other_connection() -> psycopg.Connection:
    s = connection.settings_dict
    return psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"], autocommit=True)


def a_spent_try(workspace) -> tuple[Run, Step, Try, closing.Snapshot]:
    """A running step of a two-step run under HOLDER's lease, its try, and the snapshot its spend returned."""
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="f", status="running")
    step = Step.objects.create(run=run, index=1, agent="a", task="t", status="running", attempt=1, lease_holder=HOLDER)
    Step.objects.create(run=run, index=2, agent="a", task="t", status="pending")
    attempt = Try.objects.create(step=step, n=1, status="running", started_at=run.created_at)
    budget.settle(run, Decimal("0"), Decimal("0.01"), 5, 5, attempt_pk=attempt.pk, seconds=0.1)
    snap = closing.snapshot(run, attempt.pk)
    assert snap is not None and snap.run.cost_usd == Decimal("0.01")  # the row as the spend left it
    return run, step, attempt, snap


@contextmanager
def another_hand_queues_step_2_under_the_runs_lock(run: Run) -> Iterator[None]:
    """Another connection holds the run's lock and queues step 2; it commits 0.3 s into the block, while the
    block waits for the lock."""
    locked, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:
        with other_connection() as other, other.transaction():
            other.execute("SELECT 1 FROM runs_run WHERE id = %s FOR UPDATE", (run.pk,))
            other.execute("UPDATE runs_step SET status = 'queued' WHERE run_id = %s AND index = 2", (run.pk,))
            locked.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert locked.wait(10)
    threading.Timer(0.3, release.set).start()
    try:
        yield
    finally:
        holder.join(10)


def end_with_guard(snap: closing.Snapshot, step: Step, headline: str) -> None:
    """A closing transaction in one flight: the lock, the guard, one write (the run's headline), the COMMIT."""
    with transaction.atomic(), batch.writes_together():
        for sql, values in closing.guard(snap, step, HOLDER):
            batch.send(sql, values)
        snap.run.headline = headline
        save_fields(snap.run, ["headline"])


def test_the_guard_lets_the_end_through_when_nothing_moved_since_the_spend(workspace):
    postgres_only()
    run, step, _attempt, snap = a_spent_try(workspace)
    end_with_guard(snap, step, "ended")
    assert Run.objects.get(pk=run.pk).headline == "ended"


def test_a_run_changed_after_the_spend_stops_the_flight_and_nothing_of_it_is_committed(workspace):
    postgres_only()
    run, step, _attempt, snap = a_spent_try(workspace)
    with other_connection() as other:
        other.execute("UPDATE runs_run SET status = 'cancelled' WHERE id = %s", (run.pk,))
    with pytest.raises(Exception) as raised:
        end_with_guard(snap, step, "ended")
    assert closing.is_stale(raised.value)
    assert Run.objects.get(pk=run.pk).headline == ""


def test_a_step_taken_by_another_holder_stops_the_flight(workspace):
    postgres_only()
    run, step, _attempt, snap = a_spent_try(workspace)
    Step.objects.filter(pk=step.pk).update(lease_holder="another")
    with pytest.raises(Exception) as raised:
        end_with_guard(snap, step, "ended")
    assert closing.is_stale(raised.value)
    assert Run.objects.get(pk=run.pk).headline == ""


def test_a_step_moved_by_the_holder_of_the_runs_lock_is_seen_by_the_guard_that_waited_for_it(workspace):
    # The guard is a statement of its own after the lock's: had it taken the lock itself, it would have seen the
    # steps as they were when it started waiting, before the holder's change.
    postgres_only()
    run, step, _attempt, snap = a_spent_try(workspace)
    started = time.monotonic()
    with another_hand_queues_step_2_under_the_runs_lock(run), pytest.raises(Exception) as raised:
        end_with_guard(snap, step, "ended")
    assert time.monotonic() - started >= 0.25  # it did wait for the lock
    assert closing.is_stale(raised.value)
    assert Run.objects.get(pk=run.pk).headline == ""


def test_a_quarantine_set_while_the_step_ran_is_still_forgotten_by_its_success(workspace, fake_provider):
    # The quarantine is set by a trigger as the step's spend runs: after the spend's row came back, before the
    # end. The end's guard sees it, the end is made again from fresh rows, and the run's success clears the
    # quarantine as any success does — its trace written once, nothing lost from the first attempt.
    postgres_only()
    push(workspace, {"agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
                     "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n"})
    schedule = Schedule.objects.create(workspace=workspace, flow="one", cron="0 9 * * *")
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION quarantine_on_spend() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "UPDATE runs_schedule SET quarantined_at = now() WHERE flow = NEW.name; RETURN NULL; END $$")
        cursor.execute("CREATE TRIGGER quarantine_on_spend AFTER UPDATE OF cost_usd ON runs_run FOR EACH ROW "
                       "WHEN (NEW.cost_usd <> OLD.cost_usd) EXECUTE FUNCTION quarantine_on_spend()")
    fake_provider.reply_text("GOOD", usage=(1, 1))
    app.conf.task_always_eager = True
    try:
        run = check_start_run(workspace=workspace, flow="one")
    finally:
        app.conf.task_always_eager = False
    run.refresh_from_db()
    assert (run.status, run.verdict) == ("completed", "GOOD")
    schedule.refresh_from_db()
    assert schedule.quarantined_at is None
    kinds = list(TraceEvent.objects.filter(run=run, kind__in=["limit", "model_request"]).values_list("kind", flat=True))
    assert sorted(kinds) == ["limit", "limit", "model_request"]
    assert Try.objects.get(step__run=run).status == "completed"


def test_the_two_flight_end_reads_what_the_holder_of_the_runs_lock_wrote_before_it(workspace):
    # Where there is no spend to decide from, the end reads the run: its lock is a statement of its own there too,
    # so the read (the run's unfinished steps, for the next step's take) starts once the lock is held.
    postgres_only()
    from runs.execute import _CLOSING

    run, step, _attempt, _snap = a_spent_try(workspace)
    with another_hand_queues_step_2_under_the_runs_lock(run), transaction.atomic(), batch.writes_together():
        closing.take_lock(run.pk)
        read = _CLOSING.first(run=run.pk, step=step.pk, holder=HOLDER)
    second = Step.objects.get(run=run, index=2)
    assert f"{second.pk}:queued:0" in read.unfinished.split(",")
