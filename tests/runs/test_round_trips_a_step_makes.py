"""The round trips to PostgreSQL a run's step makes, counted from libpq's own trace of the protocol (every message
the client sent and the server answered): a flight is what the client sends before it waits for an answer.

A transaction's BEGIN goes with its first statement (foldrun/pgengine), the claim's two locking reads go
together (prepared.together), a read made while writes are held goes in their flight (foldrun/batch.py), and the
last step's closing query names AGENTS.md's heads so the run's end reads a text already parsed without a query.
"""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from typing import Iterator

import psycopg
import pytest
from django.db import connection, transaction

from accounts.models import Account
from foldrun import batch, prepared
from foldrun.celery import app
from foldrun.prepared import Prepared, save_fields
from notify.models import Delivery
from runs.actions import check_start_run
from runs.models import Run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: the runs' claims and ends are the point


def postgres_only() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("round trips are counted on PostgreSQL's wire protocol")


@contextmanager
def flights() -> Iterator[list[list[str]]]:
    """The flights made inside the block on Django's connection: each a list of the messages the client sent
    before the server's answer came (as libpq traces them: `Parse "" "BEGIN"`, `Query "…"`); none elsewhere
    than PostgreSQL."""
    out: list[list[str]] = []
    if connection.vendor != "postgresql":
        yield out
        return
    connection.ensure_connection()
    pgconn = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as log:
        pgconn.trace(log.fileno())
        pgconn.set_trace_flags(psycopg.pq.Trace.SUPPRESS_TIMESTAMPS | psycopg.pq.Trace.REGRESS_MODE)
        try:
            yield out
        finally:
            pgconn.untrace()
            log.seek(0)
            answered = True
            for line in log.read().splitlines():
                direction, _length, message = line.split("\t")[:3]
                text = "".join(line.split("\t")[2:])
                if direction == "F":
                    if answered:
                        out.append([])
                        answered = False
                    if message not in ("Sync", "Flush", "Describe"):
                        out[-1].append(text)
                else:
                    answered = True


def _account_named(name: str):
    return Account.objects.select_for_update().filter(name=name)


ACCOUNT_NAMED = Prepared(_account_named, name="\x1fno account is named this\x1f")


def test_a_transactions_begin_goes_in_the_flight_of_its_first_statement():
    postgres_only()
    Account.objects.create(name="alice")
    with flights() as sent:
        with transaction.atomic():
            assert [a.name for a in ACCOUNT_NAMED.all(name="alice")] == ["alice"]
    begin_and_read, commit = sent
    assert begin_and_read[0].startswith('Parse "" "BEGIN"')
    assert len([m for m in begin_and_read if m.startswith("Execute")]) == 2  # BEGIN's and the read's
    assert any("COMMIT" in message for message in commit)


def test_a_statement_whose_begin_rode_with_it_is_inside_the_transaction():
    postgres_only()
    alice = Account.objects.create(name="alice")
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            ACCOUNT_NAMED.all(name="alice")  # the transaction's first statement, BEGIN in its flight
            alice.name = "never-committed"
            save_fields(alice, ["name"])
            raise RuntimeError("the block fails")
    assert Account.objects.get(pk=alice.pk).name == "alice"  # rolled back: the write was in the transaction


def test_reads_sent_together_come_back_as_each_alone_would_in_one_flight():
    postgres_only()
    for name in ("alice", "bob"):
        Account.objects.create(name=name)
    with flights() as sent:
        with transaction.atomic():
            alices, bobs, nobody = prepared.together((ACCOUNT_NAMED, {"name": "alice"}), (ACCOUNT_NAMED, {"name": "bob"}),
                                                     (ACCOUNT_NAMED, {"name": "charlie"}))
    assert ([a.name for a in alices], [b.name for b in bobs], nobody) == (["alice"], ["bob"], [])
    assert len(sent) == 2  # BEGIN and the three reads; then the COMMIT
    assert len([m for m in sent[0] if m.startswith("Execute")]) == 1 + 3


def test_a_read_made_while_writes_are_held_goes_in_their_flight_and_sees_them():
    postgres_only()
    alice = Account.objects.create(name="alice")
    with transaction.atomic():
        ACCOUNT_NAMED.all(name="alice")
        with flights() as sent, batch.writes_together():
            alice.name = "held"
            save_fields(alice, ["name"])
            assert Account.objects.filter(pk=alice.pk).values_list("name", flat=True).get() == "held"
    executes = [m for m in sent[0] if m.startswith("Execute")]
    assert len(sent) == 1 and len(executes) == 2  # the held UPDATE's and the read's
    assert any("SELECT" in m for m in sent[0])


def one_step_desk(workspace, fake, agents_md: str = "") -> None:
    push(workspace, {
        **({"AGENTS.md": agents_md} if agents_md else {}),
        "agents/a/agent.md": agent_file("a", fake, tools="[]"),
        "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
        "flows/three.md": "---\nname: three\n---\n1. [[a]] — One.\n2. [[a]] — Two.\n3. [[a]] — Say GOOD.\n",
    })


def run_eagerly(workspace, fake, flow: str, steps: int) -> tuple[Run, int]:
    """The run started and its steps made in this process (Celery eager), and the flights it took."""
    for _ in range(steps):
        fake.reply_text("GOOD", usage=(1, 1))
    app.conf.task_always_eager = True
    try:
        with flights() as sent:
            run = check_start_run(workspace=workspace, flow=flow)
    finally:
        app.conf.task_always_eager = False
    run.refresh_from_db()
    assert run.status == "completed", run.error
    return run, len(sent)


def test_a_one_step_run_takes_four_round_trips_and_each_further_step_two(workspace, fake_provider):
    # The start's one (the run and its steps in one statement, written while the head this process read last is
    # still the head: no read of it); the claim's one (BEGIN, both locking reads, the take of the queued step
    # with its try, COMMIT: runs/claim.py); the model call's spend (sent without waiting; it returns the run's
    # row as it leaves it); the end's one (BEGIN, the run's lock, the guard that the row is still what the
    # spend returned, every write of the end, COMMIT: runs/closing.py). A further step: its spend, then its
    # end — the next step's take and its try among its writes.
    postgres_only()
    one_step_desk(workspace, fake_provider, agents_md="---\ndescription: the desk\n---\nHow we work.\n")
    for _ in range(2):  # this process's caches warmed, and its statements prepared, as a worker's are
        run_eagerly(workspace, fake_provider, "one", 1)
        run_eagerly(workspace, fake_provider, "three", 3)
    assert run_eagerly(workspace, fake_provider, "one", 1)[1] == 4
    assert run_eagerly(workspace, fake_provider, "three", 3)[1] == 4 + 2 * 2


def test_a_runs_end_reads_the_agents_md_pushed_since_its_last_run(workspace, fake_provider):
    # The end of a run names AGENTS.md by its hash: a text parsed before is not fetched again, and a new text is.
    def agents(events: str) -> str:
        return f"---\nnotify:\n  url: http://127.0.0.1:9/hook\n  events: [{events}]\n---\n"

    one_step_desk(workspace, fake_provider, agents_md=agents("completed"))
    first, _ = run_eagerly(workspace, fake_provider, "one", 1)
    push(workspace, {"AGENTS.md": agents("failed")})
    second, _ = run_eagerly(workspace, fake_provider, "one", 1)
    push(workspace, {"AGENTS.md": agents("completed")})
    third, _ = run_eagerly(workspace, fake_provider, "one", 1)
    sent_for = set(Delivery.objects.filter(event="completed").values_list("run_public_id", flat=True))
    assert sent_for == {first.public_id, third.public_id}
