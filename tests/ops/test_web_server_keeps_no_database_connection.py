"""The web server (foldrun.asgi) closes each request's database connection when the request ends — under ASGI
each request's code runs on a thread of its own, so a kept one would never be used again — and says so on its
own settings, not in the environment its children inherit (a worker started beside it keeps its connection)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.db import connection

from tests.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import os, foldrun.asgi; from django.conf import settings; "
         "print(settings.DATABASES['default']['CONN_MAX_AGE'], os.environ.get('FOLDRUN_DB_CONN_MAX_AGE'))")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


SERVER_APP = "foldrun-web-under-test"  # libpq's PGAPPNAME: the server's own connections, not another test's


def _server_backends() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND application_name = %s", [SERVER_APP])
        return cursor.fetchone()[0]


def test_importing_the_web_server_sets_no_connection_age_in_the_environment_its_children_inherit():
    env = {k: v for k, v in os.environ.items() if k != "FOLDRUN_DB_CONN_MAX_AGE"}
    # A PostgreSQL URL that is never connected to: reading settings and setting Django up open no connection.
    env.update({"DJANGO_SETTINGS_MODULE": "foldrun.settings.test",
                "DATABASE_URL": "postgres://nobody@127.0.0.1:9/nothing"})
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "None"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="connections are kept on PostgreSQL only")
def test_the_web_server_keeps_no_database_connection_once_its_requests_have_ended(transactional_db, tmp_path):
    port = _free_port()
    env = dict(os.environ, FOLDRUN_TEST_DB_NAME=connection.settings_dict["NAME"],
               DJANGO_SETTINGS_MODULE="foldrun.settings.test", PGAPPNAME=SERVER_APP)
    env.pop("FOLDRUN_DB_CONN_MAX_AGE", None)  # the web server's own setting, not one it was handed
    with open(tmp_path / "web.log", "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "uvicorn", "foldrun.asgi:application", "--host",
                                   "127.0.0.1", "--port", str(port), "--lifespan", "on", "--log-level", "warning"],
                                  cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/api/health"  # its answer reads the database

        def answered() -> bool:
            try:
                return httpx.get(url, timeout=5).status_code in {200, 503}
            except httpx.TransportError:
                assert server.poll() is None, (tmp_path / "web.log").read_text()
                return False

        wait_for(answered, timeout=60)
        with ThreadPoolExecutor(4) as pool, httpx.Client(timeout=30) as http:
            answers = list(pool.map(lambda _: http.get(url), range(12)))
        assert {answer.json()["checks"]["database"]["ok"] for answer in answers} == {True}
        # a connection kept past its request stays for CONN_MAX_AGE (60 s in a worker), idle
        assert wait_for(lambda: _server_backends() == 0, timeout=10)
    finally:
        server.terminate()
        server.wait(timeout=20)
