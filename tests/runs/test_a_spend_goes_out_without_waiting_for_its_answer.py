"""A step's spend after each model call is sent to PostgreSQL without waiting for its answer (foldrun/pgengine:
`send_unawaited`, runs/budget.py: `settle`): the server commits it whatever becomes of the worker after the
send, the answer is read at the connection's next use, and an error the statement met is raised there."""
from __future__ import annotations

import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import psycopg
import pytest
from django.db import DatabaseError, DataError, connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Account
from runs import budget
from runs.models import Run, Step, Try

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: what the server committed is the point


def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("sending without waiting is PostgreSQL's (elsewhere the spend is written as before)")


def committed_name(pk: int) -> str:
    """The account's name as a second connection reads it: what the server has committed."""
    s = connection.settings_dict
    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"]) as other:
        return other.execute("SELECT name FROM accounts_account WHERE id = %s", (pk,)).fetchone()[0]


def a_running_try(workspace) -> tuple[Run, Try]:
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="f", status="running")
    step = Step.objects.create(run=run, index=1, agent="a", task="t", status="running")
    return run, Try.objects.create(step=step, n=1, status="running", started_at=run.created_at)


def test_a_spend_is_committed_and_read_back_before_anything_else_uses_the_connection(workspace):
    postgres_only()
    run, attempt = a_running_try(workspace)
    with CaptureQueriesContext(connection) as seen:
        budget.settle(run, Decimal("0"), Decimal("0.0125"), 40_000, 7, attempt_pk=attempt.pk, seconds=1.5)
        assert connection.connection._unawaited  # on its way; its answer not read yet
    assert len(seen.captured_queries) == 1 and "UPDATE" in seen.captured_queries[0]["sql"]  # counted as any
    run.refresh_from_db()
    attempt.refresh_from_db()
    assert (run.cost_usd, run.tokens_in, run.tokens_out) == (Decimal("0.0125"), 40_000, 7)
    assert (attempt.cost_usd, attempt.tokens_in, attempt.seconds) == (Decimal("0.0125"), 40_000, 1.5)
    assert not connection.connection._unawaited


def test_counts_of_any_size_follow_small_ones_on_the_same_prepared_statement(workspace):
    # psycopg types an integer by its size; the statement is prepared with its types left to the server, so a
    # count past a smallint after a first call of 1 token is taken as it is.
    postgres_only()
    run, attempt = a_running_try(workspace)
    budget.settle(run, Decimal("0"), Decimal("0.001"), 1, 1, attempt_pk=attempt.pk, seconds=0.1)
    budget.settle(run, Decimal("0"), Decimal("0.002"), 3_000_000_000, 70_000, attempt_pk=attempt.pk, seconds=0.2)
    run.refresh_from_db()
    assert (run.cost_usd, run.tokens_in, run.tokens_out) == (Decimal("0.003"), 3_000_000_001, 70_001)


def test_a_statement_that_fails_raises_at_the_next_use_and_the_connection_goes_on():
    postgres_only()
    alice = Account.objects.create(name="alice")
    connection.ensure_connection()
    sent = connection.connection.send_unawaited("UPDATE accounts_account SET name = %s WHERE id = %s / 0",
                                                ["bob", alice.pk])
    assert isinstance(sent, int)  # its ticket
    # Django's error, raised where the connection is next used, and the connection answers again afterwards.
    with pytest.raises(DataError, match="division by zero"):
        Account.objects.filter(pk=alice.pk).exists()
    assert Account.objects.get(pk=alice.pk).name == "alice"


def test_a_statement_with_a_percent_sign_besides_its_placeholders_is_refused_unsent():
    postgres_only()
    alice = Account.objects.create(name="alice")
    connection.ensure_connection()
    with pytest.raises(ValueError, match="only % are its %s placeholders"):
        connection.connection.send_unawaited("UPDATE accounts_account SET name = %s WHERE id = %s AND name LIKE 'a%'",
                                             ["bob", alice.pk])
    assert committed_name(alice.pk) == "alice" and Account.objects.get(pk=alice.pk).name == "alice"


def test_inside_a_transaction_nothing_is_sent_without_waiting():
    postgres_only()
    alice = Account.objects.create(name="alice")
    with transaction.atomic():
        connection.ensure_connection()
        assert connection.connection.send_unawaited("UPDATE accounts_account SET name = %s WHERE id = %s",
                                                    ["alice-2", alice.pk]) is None
    assert committed_name(alice.pk) == "alice"


def test_the_server_commits_what_was_sent_though_the_process_died_right_after_sending():
    postgres_only()
    alice = Account.objects.create(name="alice")
    root = Path(__file__).resolve().parents[2]
    script = (
        "import os, django; django.setup()\n"
        "from django.db import connection\n"
        "connection.ensure_connection()\n"
        f"assert connection.connection.send_unawaited('UPDATE accounts_account SET name = %s WHERE id = %s', "
        f"['alice-sent', {alice.pk}])\n"
        "os.kill(os.getpid(), 9)\n"
    )
    env = {**os.environ, "FOLDRUN_TEST_DB_NAME": connection.settings_dict["NAME"], "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, timeout=60)
    assert done.returncode == -9, done.stderr.decode()[-2000:]
    assert committed_name(alice.pk) == "alice-sent"


def test_a_spend_made_inside_a_transaction_is_written_there_and_rolls_back_with_it(workspace):
    run, attempt = a_running_try(workspace)
    with pytest.raises(DatabaseError), transaction.atomic():
        budget.settle(run, Decimal("0"), Decimal("0.5"), 10, 10, attempt_pk=attempt.pk, seconds=1.0)
        assert Run.objects.get(pk=run.pk).cost_usd == Decimal("0.5")  # written at once, in the transaction
        raise DatabaseError("the caller's transaction fails")
    assert Run.objects.get(pk=run.pk).cost_usd == Decimal("0")


def test_a_failure_read_back_as_a_transaction_begins_stops_that_transaction_only():
    postgres_only()
    alice = Account.objects.create(name="alice")
    connection.ensure_connection()
    connection.connection.send_unawaited("UPDATE accounts_account SET name = %s WHERE id = %s / 0", ["x", alice.pk])
    with pytest.raises(DataError, match="division by zero"), transaction.atomic():
        Account.objects.filter(pk=alice.pk).update(name="never")
    with transaction.atomic():
        Account.objects.filter(pk=alice.pk).update(name="alice-2")
    assert committed_name(alice.pk) == "alice-2"


def test_a_spend_after_a_rollback_is_prepared_again(workspace):
    # psycopg answers a ROLLBACK with DEALLOCATE ALL once it has prepared statements (foldrun's kept cursors
    # prepare theirs): the spend's prepared statement goes too, and the next spend prepares it again.
    postgres_only()
    from foldrun.prepared import save_fields

    run, attempt = a_running_try(workspace)
    budget.settle(run, Decimal("0"), Decimal("0.001"), 1, 1, attempt_pk=attempt.pk, seconds=0.1)
    with pytest.raises(RuntimeError), transaction.atomic():
        run.headline = "never"
        save_fields(run, ["headline"])  # a statement psycopg prepares
        raise RuntimeError("the transaction rolls back")
    budget.settle(run, Decimal("0"), Decimal("0.002"), 1, 1, attempt_pk=attempt.pk, seconds=0.2)
    run.refresh_from_db()
    assert (run.cost_usd, run.headline) == (Decimal("0.003"), "")
