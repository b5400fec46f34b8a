"""foldrun/batch.py: writes a transaction holds go out together, with its COMMIT, and the transaction stays the
one it was — a read sees the held writes, a failing write rolls everything back, RETURNING reaches the sender."""
from __future__ import annotations

import psycopg
import pytest
from django.db import DatabaseError, connection, transaction

from accounts.models import Account
from foldrun import batch
from foldrun.prepared import save_fields, update_params, update_sql

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: the COMMIT riding with the writes is the point


def rename(account: Account, name: str) -> None:
    account.name = name
    save_fields(account, ["name"])


def seen_from_another_connection(pk: int) -> str | None:
    """The account's name as a second connection reads it (what is committed), or None off PostgreSQL."""
    if connection.vendor != "postgresql":
        return None
    s = connection.settings_dict
    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"]) as other:
        return other.execute("SELECT name FROM accounts_account WHERE id = %s", (pk,)).fetchone()[0]


def test_held_writes_are_committed_with_the_block_and_the_transaction_ends_there():
    alice = Account.objects.create(name="alice")
    with transaction.atomic(), batch.writes_together():
        rename(alice, "alice-renamed")
        assert batch.holding() is (connection.vendor == "postgresql")
    assert Account.objects.get(pk=alice.pk).name == "alice-renamed"
    if connection.vendor == "postgresql":
        assert seen_from_another_connection(alice.pk) == "alice-renamed"


def test_the_commit_rides_with_the_writes_inside_the_outermost_block():
    if connection.vendor != "postgresql":
        pytest.skip("pipeline mode is PostgreSQL's")
    alice = Account.objects.create(name="alice")
    with transaction.atomic():
        with batch.writes_together():
            rename(alice, "in-one-flight")
        # The block's end sent the UPDATE and the COMMIT together: the server's transaction is over already,
        # before Django's atomic ends, and another connection sees the write.
        assert connection.connection.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
        assert seen_from_another_connection(alice.pk) == "in-one-flight"


def test_a_read_in_the_transaction_sees_the_writes_held_before_it():
    alice = Account.objects.create(name="alice")
    with transaction.atomic(), batch.writes_together():
        rename(alice, "held")
        assert Account.objects.get(pk=alice.pk).name == "held"  # the read sent the held write first
        if connection.vendor == "postgresql":  # sent, not committed: still one transaction
            assert seen_from_another_connection(alice.pk) == "alice"
    assert Account.objects.get(pk=alice.pk).name == "held"


def test_a_held_write_that_fails_rolls_the_whole_transaction_back():
    if connection.vendor != "postgresql":
        pytest.skip("held writes are PostgreSQL's (elsewhere each write is made, and fails, where it is sent)")
    alice = Account.objects.create(name="alice")
    bob = Account.objects.create(name="bob")
    params = update_params(Account, {"name": "x" * 10_000}, {"id": bob.pk})  # longer than the column allows
    with pytest.raises(DatabaseError):
        with transaction.atomic(), batch.writes_together():
            rename(alice, "never-committed")
            batch.send(update_sql(Account, ("name",), ("id",), connection.vendor), params)
    assert Account.objects.get(pk=alice.pk).name == "alice"
    assert Account.objects.get(pk=bob.pk).name == "bob"


def test_a_write_that_must_change_one_row_and_changes_none_raises_and_commits_nothing():
    if connection.vendor != "postgresql":
        pytest.skip("held writes are PostgreSQL's")
    alice = Account.objects.create(name="alice")
    ghost = Account(pk=987654321, name="ghost")
    ghost._state.adding = False
    with pytest.raises(DatabaseError, match="saving accounts.Account 987654321 changed 0 rows, not 1"):
        with transaction.atomic(), batch.writes_together():
            rename(alice, "never-committed")
            save_fields(ghost, ["name"])  # held: it fails in the flight that carries the COMMIT
    assert Account.objects.get(pk=alice.pk).name == "alice"


def test_returning_keys_reach_the_sender_before_the_block_ends():
    from accounts.models import Workspace
    from foldrun.inserts import insert_rows
    from runs.models import Run, TraceEvent

    alice = Account.objects.create(name="alice")
    run = Run.objects.create(account=alice, workspace=Workspace.objects.create(account=alice, name="desk"),
                             kind="flow", name="one")
    lines = [TraceEvent(run_id=run.pk, kind="limit", data={"line": f"line {n}"}) for n in range(3)]
    with transaction.atomic(), batch.writes_together():
        insert_rows(lines)
    assert all(line.pk for line in lines)
    assert sorted(TraceEvent.objects.filter(run=run).values_list("pk", flat=True)) == sorted(l.pk for l in lines)
