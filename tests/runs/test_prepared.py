"""Statements compiled once per process (foldrun/prepared.py) read and write exactly what the ORM would."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.forms.models import model_to_dict

from django.test.utils import CaptureQueriesContext

from foldrun import prepared
from foldrun.inserts import insert_rows
from foldrun.prepared import Prepared, update_params, update_sql
from runs.models import Run, Schedule, Step, TraceEvent, Try


def _closing(run: int, holder: str):
    return (Run.objects.select_for_update(of=("self",)).select_related("workspace__account")
            .annotate(quarantined=Exists(Schedule.objects.filter(workspace_id=OuterRef("workspace_id"),
                                                                  flow=OuterRef("name"), quarantined_at__isnull=False)))
            .filter(pk=run, steps__lease_holder=holder).order_by("pk")[:1])


CLOSING = Prepared(_closing, run=-8_000_000_000_000_000_001, holder="\x1fno holder\x1f")


@pytest.fixture
def run(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly",
                             plan=[{"number": 1, "task": "x"}], inputs={"topic": "é", "__flow__": {"timezone": "UTC"}},
                             budget_usd=Decimal("0.50"))
    Step.objects.create(run=run, index=1, agent="reader", status="running", lease_holder="h1")
    return run


def test_a_prepared_query_gives_the_rows_the_queryset_gives_with_other_values_each_time(run, workspace):
    other = Run.objects.create(account=workspace.account, workspace=workspace, name="other", plan=[])
    Step.objects.create(run=other, index=1, agent="reader", status="running", lease_holder="h2")
    with transaction.atomic():
        for pk, holder in ((run.pk, "h1"), (other.pk, "h2"), (run.pk, "h2"), (other.pk, "h2")):
            got = CLOSING.first(run=pk, holder=holder)
            want = _closing(pk, holder).first()
            if want is None:
                assert got is None
                continue
            assert model_to_dict(got) == model_to_dict(want)
            assert (got.inputs, got.plan, got.budget_usd) == (want.inputs, want.plan, want.budget_usd)
            assert got.quarantined is want.quarantined is False
            # select_related: the workspace and its account come with it, no query of their own
            assert got._state.fields_cache["workspace"].name == workspace.name
            assert got.workspace._state.fields_cache["account"].pk == workspace.account_id
            assert got._state.adding is False and got._state.db == "default"


def test_a_prepared_query_sees_an_annotation_change(run, workspace):
    Schedule.objects.create(workspace=workspace, flow="weekly", cron="0 9 * * 1", quarantined_at=dt.datetime.now(dt.UTC))
    with transaction.atomic():
        assert CLOSING.first(run=run.pk, holder="h1").quarantined is True


@pytest.mark.django_db(transaction=True)
def test_a_prepared_locking_query_outside_a_transaction_is_refused_as_the_orm_refuses_it(run):
    if not connection.features.has_select_for_update:
        pytest.skip("this database takes no row locks: the ORM refuses nothing either")
    with pytest.raises(transaction.TransactionManagementError):
        CLOSING.first(run=run.pk, holder="h1")


def test_rows_inserted_from_the_kept_sql_are_the_rows_bulk_create_writes(run):
    step = run.steps.get()
    for count in (3, 1, 5, 12):  # 12: more rows than are written as VALUES (the UNNEST form)
        mine = [TraceEvent(run_id=run.pk, step_id=step.pk, try_n=1, kind="log", data={"message": f"m{n}", "n": [n]})
                for n in range(count)]
        theirs = [TraceEvent(run_id=run.pk, step_id=step.pk, try_n=1, kind="log", data={"message": f"m{n}", "n": [n]})
                  for n in range(count)]
        insert_rows(mine)
        TraceEvent.objects.bulk_create(theirs)
        assert all(e.pk and not e._state.adding for e in mine)
        for a, b in zip(mine, theirs):
            a, b = TraceEvent.objects.get(pk=a.pk), TraceEvent.objects.get(pk=b.pk)
            assert (a.kind, a.data, a.try_n, a.step_id) == (b.kind, b.data, b.try_n, b.step_id)
            assert a.at is not None


def test_an_insert_that_meets_its_row_updates_it_as_bulk_create_does(run):
    step = run.steps.get()
    running = Try.objects.create(step=step, n=1, status="running")
    ended = Try(step=step, n=1, status="completed", status_reason="done", error="", cost_usd=Decimal("0.25"),
                tokens_in=3, tokens_out=4, seconds=1.5)
    new = Try(step=step, n=2, status="running")
    fields = ("status", "status_reason", "error", "cost_usd", "tokens_in", "tokens_out", "seconds")
    insert_rows([ended, new], update_conflicts=True, unique_fields=("step", "n"), update_fields=fields)
    assert ended.pk == running.pk and new.pk not in (None, running.pk)
    row = Try.objects.get(pk=running.pk)
    assert (row.status, row.cost_usd, row.tokens_in, row.seconds) == ("completed", Decimal("0.25"), 3, 1.5)
    assert Try.objects.get(pk=new.pk).status == "running"


def test_an_update_from_the_kept_sql_writes_what_save_writes(run):
    step = run.steps.get()
    step.output, step.approvers, step.finished_at = "ÉTÉ — done", ["a@example.com"], dt.datetime.now(dt.UTC)
    values = {f.name: f.pre_save(step, False) for f in Step._meta.local_concrete_fields if not f.primary_key}
    params = update_params(Step, values, {"id": step.pk})
    with prepared.cursor() as cursor:  # bound on the server on PostgreSQL, as the closing transaction's UPDATE is
        cursor.execute(update_sql(Step, tuple(values), ("id",), connection.vendor), params)
        assert cursor.rowcount == 1
    assert model_to_dict(Step.objects.get(pk=step.pk)) == model_to_dict(step)
    step.refresh_from_db()
    assert step.approvers == ["a@example.com"] and step.output == "ÉTÉ — done"


def test_the_kept_statements_are_prepared_on_the_server_once_and_still_counted_as_queries(run):
    if connection.vendor != "postgresql":
        pytest.skip("only PostgreSQL keeps a statement's plan for the connection")
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        for _ in range(3):
            assert CLOSING.first(run=run.pk, holder="h1").pk == run.pk
        with connection.cursor() as cursor:
            cursor.execute("SELECT statement FROM pg_prepared_statements")
            kept = [row[0] for row in cursor.fetchall() if '"runs_run"."id" = $' in row[0]]
    # One statement kept by the server for the three calls, its values sent apart ($1, $2), never in its text.
    assert len(kept) == 1 and "$2" in kept[0] and "h1" not in kept[0]
    assert sum('"runs_run"' in q["sql"] for q in queries.captured_queries) == 3


def test_save_fields_writes_what_save_writes_and_only_the_fields_named(run):
    step, twin = run.steps.get(), run.steps.get()
    step.output, step.approvers, step.status = "ÉTÉ — done", ["a@example.com"], "completed"
    step.finished_at = dt.datetime.now(dt.UTC)
    twin.output, twin.approvers, twin.status, twin.finished_at = step.output, step.approvers, "completed", step.finished_at
    with CaptureQueriesContext(connection) as queries:
        prepared.save_fields(step)
    assert len(queries.captured_queries) == 1
    assert model_to_dict(Step.objects.get(pk=step.pk)) == model_to_dict(step)
    twin.save()
    assert model_to_dict(Step.objects.get(pk=step.pk)) == model_to_dict(twin)
    # Named fields: those and no other, as save(update_fields=…) — the output changed here is not written.
    run.status, run.headline, run.summary = "completed", "GOOD — é", "a summary"
    run.finished_at = dt.datetime.now(dt.UTC)
    step.output = "not saved"
    prepared.save_fields(run, ("status", "finished_at", "headline"))
    row = Run.objects.get(pk=run.pk)
    assert (row.status, row.headline, row.summary, row.finished_at) == ("completed", "GOOD — é", "", run.finished_at)
    assert Step.objects.get(pk=step.pk).output == "ÉTÉ — done"


def test_save_fields_of_a_row_that_is_gone_says_so_as_save_does(run):
    step = run.steps.get()
    Step.objects.filter(pk=step.pk).delete()
    step.output = "late"
    with pytest.raises(Exception, match="did not affect any rows"):
        prepared.save_fields(step, ("output",))
