"""The web server draws its database connections from a pool of FOLDRUN_DB_POOL_MAX (issue 29 item 4): 500
authenticated API requests at once against one web process, started as ./scripts/start starts it (gunicorn, one
uvicorn worker), are every one answered, none with a 5xx — they queue for a connection — and the server never
holds more PostgreSQL connections than its pool. The pool is the web process's own: set on its settings, not in
the environment a worker started beside it inherits, which keeps its one connection."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from django.db import connection

from accounts.models import ApiToken, hash_token
from tests.bench.web_burst import fire, summary
from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
SERVER_APP = "foldrun-web-under-test"  # libpq's PGAPPNAME: the server's own connections, not another test's
POOL_MAX = 4
REQUESTS = 500
# Importing the server's module changes nothing; its start (the ASGI lifespan gunicorn's uvicorn worker runs before
# the first request) pools this process's connections.
PROBE = """
import asyncio, os
import foldrun.asgi
from django.conf import settings
d = settings.DATABASES["default"]
print(d["CONN_MAX_AGE"], d.get("OPTIONS", {}).get("pool"))
said = []
async def start_and_stop():
    messages = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
    async def receive():
        return messages.pop(0)
    async def send(message):
        said.append(message["type"])
    await foldrun.asgi.application({"type": "lifespan"}, receive, send)
asyncio.run(start_and_stop())
print(d["CONN_MAX_AGE"], d.get("OPTIONS", {}).get("pool"), os.environ.get("FOLDRUN_DB_CONN_MAX_AGE"), said)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = %s",
            [SERVER_APP],
        )
        return cursor.fetchone()[0]


def test_the_web_server_pools_its_own_connections_at_its_start_and_leaves_its_childrens_environment_alone():
    env = {k: v for k, v in os.environ.items() if k != "FOLDRUN_DB_CONN_MAX_AGE"}
    # A PostgreSQL URL that is never connected to: reading settings and setting Django up open no connection.
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "foldrun.settings.test",
            "DATABASE_URL": "postgres://nobody@127.0.0.1:9/x",
            "FOLDRUN_DB_POOL_MAX": "7",
            "FOLDRUN_DB_POOL_TIMEOUT": "12",
        }
    )
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    imported, started = done.stdout.strip().splitlines()
    assert imported == "60 None"
    assert started == (
        "0 {'min_size': 2, 'max_size': 7, 'timeout': 12} None "
        "['lifespan.startup.complete', 'lifespan.shutdown.complete']"
    )


def test_a_pool_smaller_than_its_minimum_stops_start_up_naming_the_setting():
    env = dict(
        os.environ, DJANGO_SETTINGS_MODULE="foldrun.settings.test", FOLDRUN_DB_POOL_MIN="5", FOLDRUN_DB_POOL_MAX="2"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "FOLDRUN_DB_POOL_MIN must not be more than FOLDRUN_DB_POOL_MAX." in done.stderr


@pytest.mark.e2e
@pytest.mark.skipif(connection.vendor != "postgresql", reason="the pool is PostgreSQL's; SQLite opens a file")
def test_500_api_requests_at_once_are_all_answered_without_a_5xx_from_a_pool_of_4(
    transactional_db, alice, workspace, tmp_path
):
    membership = alice.memberships.first()
    raw = ApiToken.mint()
    ApiToken.objects.create(
        user=alice, account=membership.account, name="load", token_hash=hash_token(raw), hint=raw[:8]
    )
    port = _free_port()
    env = dict(
        os.environ,
        FOLDRUN_TEST_DB_NAME=connection.settings_dict["NAME"],
        PGAPPNAME=SERVER_APP,
        DJANGO_SETTINGS_MODULE="foldrun.settings.test",
        FOLDRUN_DB_POOL_MIN="1",
        FOLDRUN_DB_POOL_MAX=str(POOL_MAX),
        FOLDRUN_DB_POOL_TIMEOUT="60",
    )
    with open(tmp_path / "web.log", "wb") as log:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "foldrun.asgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--worker-class",
                "uvicorn_worker.UvicornWorker",
                "--workers",
                "1",
                "--backlog",
                "2048",
                "--error-logfile",
                "-",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    most = [0]
    stop = threading.Event()

    def watch() -> None:  # the most connections the server held at once, while the requests ran
        while not stop.is_set():
            most[0] = max(most[0], _server_backends())
            time.sleep(0.02)
        connection.close()  # this thread's own

    try:
        url = f"http://127.0.0.1:{port}/api/workspaces/{workspace.name}/runs"

        def answered() -> bool:
            try:
                return httpx.get(url, headers={"Authorization": f"Bearer {raw}"}, timeout=5).status_code == 200
            except httpx.TransportError:
                assert server.poll() is None, (tmp_path / "web.log").read_text()
                return False

        wait_for(answered, timeout=60)
        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            results = asyncio.run(fire(url, raw, REQUESTS))
        finally:
            stop.set()
            watcher.join()
        found = summary(results)
        statuses = [status for status, _ in results]
        print(
            f"\n{REQUESTS} requests at once, pool of {POOL_MAX}: p50 {found['p50_ms']:.0f} ms, "
            f"p95 {found['p95_ms']:.0f} ms, 5xx {found['5xx']}, most server connections {most[0]}"
        )
        assert found["answered"] == REQUESTS
        assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}
        assert 1 <= most[0] <= POOL_MAX
    finally:
        server.terminate()
        server.wait(timeout=30)
