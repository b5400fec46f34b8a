"""A flight (foldrun/pgengine `send_flight`: a step's claim and its end) sends its statements, their PREPAREs and
the COMMIT in one write and waits once; what each statement returns, what fails and what is kept must be what
the same statements made one by one through a cursor would give."""
from __future__ import annotations

import psycopg
import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction

from accounts.models import Account

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: what the server committed is the point


@pytest.fixture(autouse=True)
def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("flights are PostgreSQL's pipeline mode")


def committed_names() -> list[str]:
    """Account names as a second connection reads them: what the server has committed."""
    s = connection.settings_dict
    with psycopg.connect(host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"]) as other:
        return [r[0] for r in other.execute("SELECT name FROM accounts_account ORDER BY id").fetchall()]


NEW = ("INSERT INTO accounts_account (public_id, name, created_at, low_balance_usd, search_engine_url) "
       "VALUES (%s, %s, now(), 5, '')")


def flight(statements, *, commit: bool):
    connection.ensure_connection()
    with connection.wrap_database_errors:
        return connection.connection.send_flight(statements, commit=commit)


def kept_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'foldrun_flight_%%'")
        return [row[0] for row in cursor.fetchall()]


def test_each_statement_returns_its_rows_and_count_and_the_commit_rides_with_them():
    with transaction.atomic():
        inserted, updated, read = flight([
            (NEW + ", (%s, %s, now(), 5, '') RETURNING name", ["acc_alice", "alice's", "acc_bob", "bob's"]),
            ("UPDATE accounts_account SET name = name || %s WHERE public_id = %s", [" team", "acc_bob"]),
            ("SELECT count(*), max(name) FROM accounts_account WHERE name LIKE %s", ["%team"]),
        ], commit=True)
        assert committed_names() == ["alice's", "bob's team"]  # committed before the block's end
    assert [inserted.fetchone(), inserted.fetchone(), inserted.fetchone()] == [("alice's",), ("bob's",), None]
    assert (inserted.rowcount, updated.rowcount) == (2, 1)
    assert read.fetchall() == [(1, "bob's team")]
    assert Account.objects.count() == 2  # the connection goes on as Django left it


def test_the_first_statement_that_fails_raises_and_nothing_after_it_is_made():
    alice = Account.objects.create(name="alice's")
    with pytest.raises(IntegrityError, match="duplicate key"):
        with transaction.atomic():
            flight([
                ("UPDATE accounts_account SET name = %s WHERE id = %s", ["changed", alice.pk]),
                (NEW, [alice.public_id, "again"]),
                (NEW, ["acc_bob", "bob's"]),
            ], commit=True)
    assert committed_names() == ["alice's"]  # the update before it rolled back, the COMMIT was never made
    assert list(Account.objects.values_list("name", flat=True)) == ["alice's"]


def test_a_statement_is_prepared_once_and_bound_by_name_after_even_past_a_rollback():
    sql = "UPDATE accounts_account SET name = %s WHERE id = %s"
    account = Account.objects.create(name="alice's")
    for name in ("one", "two"):
        with transaction.atomic():
            flight([(sql, [name, account.pk])], commit=True)
    assert len([s for s in kept_statements() if "UPDATE accounts_account SET name" in s]) == 1
    with pytest.raises(DatabaseError):
        with transaction.atomic():
            flight([("SELECT 1 / %s", [0])], commit=False)
    with transaction.atomic():
        flight([(sql, ["three", account.pk])], commit=True)
    assert committed_names() == ["three"]


def test_a_count_past_a_small_integer_follows_a_small_one_on_the_same_text():
    # psycopg types an integer by its size: the statement kept for a small one must not refuse a large one.
    sql = "SELECT %s + 1"
    with transaction.atomic():
        small, = flight([(sql, [1])], commit=False)
        large, = flight([(sql, [2**40])], commit=False)
    assert (small.fetchone(), large.fetchone()) == ((2,), (2**40 + 1,))


def test_a_flight_made_outside_a_transaction_is_one_implicit_transaction():
    with pytest.raises(IntegrityError):
        flight([
            (NEW, ["acc_same", "a"]),
            (NEW, ["acc_same", "b"]),
        ], commit=False)
    assert committed_names() == []


def test_a_value_that_cannot_be_sent_stops_the_flight_before_anything_goes_and_the_connection_stays_usable():
    alice = Account.objects.create(name="alice's")
    with pytest.raises(DatabaseError, match="cannot adapt"):
        with transaction.atomic():
            flight([("UPDATE accounts_account SET name = %s WHERE id = %s", ["changed", alice.pk]),
                    ("SELECT %s", [object()])], commit=True)
    assert committed_names() == ["alice's"]
    assert Account.objects.get().name == "alice's"  # the same connection, still in working order
