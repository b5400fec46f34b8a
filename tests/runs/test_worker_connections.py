"""A worker's database connection, through a real Celery worker on PostgreSQL: kept from one task to the
next (Celery's Django fixup would close it around every task, so each step paid a new connection and a new
server process), and replaced at a task's first use when the server dropped it."""

from __future__ import annotations

import pytest
from django.db import connection

from runs.actions import check_start_run
from runs.models import Run
from tests.conftest import WORKER_APP, start_worker, stop_worker, wait_for
from tests.runs.helpers import agent_file, push

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(connection.vendor != "postgresql", reason="connections are kept on PostgreSQL only"),
]

# The test worker's own connections (start_worker names them), not every other backend on the database: a
# thread or server of another test in this process may hold one, and terminating it broke that test.
OTHERS = (
    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
    f"AND backend_type = 'client backend' AND application_name = '{WORKER_APP}'"
)


def _now():
    with connection.cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        return cursor.fetchone()[0]


def _other_backends() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pid, backend_start, state_change {OTHERS}")
        return cursor.fetchall()


def _one_run(workspace, fake_provider) -> Run:
    fake_provider.reply_text("GOOD")
    run = check_start_run(workspace=workspace, flow="one")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=30)
    assert done.status == "completed", done.error
    return done


@pytest.fixture
def one_slot_worker(transactional_db, tmp_path):
    process = start_worker(tmp_path / "worker.log", concurrency=1)
    yield process
    stop_worker(process)


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[]"),
            "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
        },
    )
    return workspace


def test_a_worker_keeps_its_database_connection_from_one_run_to_the_next(one_slot_worker, desk, fake_provider):
    _one_run(desk, fake_provider)
    before_the_second = _now()
    _one_run(desk, fake_provider)
    before_the_third = _now()
    _one_run(desk, fake_provider)
    # One pool process ran all three: a server process that was already connected before the second run
    # was still working after the third one started.
    kept = [
        pid
        for pid, started, changed in _other_backends()
        if started < before_the_second and changed is not None and changed > before_the_third
    ]
    assert kept, _other_backends()


def test_a_run_after_the_database_dropped_the_workers_connection_still_completes(one_slot_worker, desk, fake_provider):
    _one_run(desk, fake_provider)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(pg_terminate_backend(pid)) {OTHERS}")
        assert cursor.fetchone()[0] >= 1  # the worker's kept connection, dropped as a server restart drops it
    wait_for(lambda: not _other_backends(), timeout=10)
    # No beat runs here, so no sweep would resend a step whose task failed on the dead connection: the run
    # completes only because the task's first use of the connection found it gone and opened another.
    done = _one_run(desk, fake_provider)
    assert done.steps.get().status == "completed"


@pytest.mark.django_db
def test_a_connection_the_server_ended_fails_its_health_check_and_is_replaced():
    import time

    import psycopg

    # A connection of its own, as a worker keeps one: ending the test process's own connection would leave every
    # later test in this process on a dead one.
    from django.db import DEFAULT_DB_ALIAS, connections

    # A worker's connection is never pooled: no pool option, and an alias of its own (Django keeps a pool per alias).
    own = connections[DEFAULT_DB_ALIAS]
    options = {key: value for key, value in own.settings_dict.get("OPTIONS", {}).items() if key != "pool"}
    kept = type(own)(
        dict(own.settings_dict, CONN_HEALTH_CHECKS=True, CONN_MAX_AGE=None, OPTIONS=options), alias="a_workers_own"
    )
    try:
        with kept.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        s = connection.settings_dict
        with psycopg.connect(
            host=s["HOST"], port=s["PORT"] or 5432, user=s["USER"], dbname=s["NAME"], autocommit=True
        ) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)  # the server's goodbye reaches the socket
        assert not kept.is_usable()
        kept.health_check_done = False
        kept.close_if_health_check_failed()
        with kept.cursor() as cursor:  # a new connection, at once
            cursor.execute("SELECT pg_backend_pid()")
            assert cursor.fetchone()[0] != pid
    finally:
        kept.close()
