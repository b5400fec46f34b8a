"""Two test runs never share a test database: on SQLite each test process names its own file, on PostgreSQL each
run its own database (the xdist workers of one run, suffixed by pytest-django, under one name), so a second run's
setup cannot delete or migrate the database under the first (foldrun/settings/test.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django; django.setup(); from django.conf import settings; "
    "print(settings.DATABASES['default']['TEST']['NAME'])"
)


def _test_database_of_a_run(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_two_runs_on_one_data_folder_and_one_worker_id_name_two_test_databases():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "FOLDRUN_", "PYTEST_"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "foldrun.settings.test",
            "PYTEST_XDIST_WORKER": "gw0",
            "FOLDRUN_DATA_DIR": tempfile.mkdtemp(prefix="two-runs-"),
        }
    )
    first, second = _test_database_of_a_run(env), _test_database_of_a_run(env)
    assert first != second
    for name in (first, second):
        assert Path(name).parent == Path(env["FOLDRUN_DATA_DIR"]) / "gw0" and name.endswith(".sqlite3")


def _on_postgresql(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "FOLDRUN_", "PYTEST_"))}
    # Never connected to: reading the settings opens no connection.
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "foldrun.settings.test",
            "DATABASE_URL": "postgres://nobody@127.0.0.1:9/shared",
            "FOLDRUN_DATA_DIR": tempfile.mkdtemp(prefix="two-runs-"),
            **extra,
        }
    )
    return env


def test_two_runs_on_one_postgresql_database_url_name_two_test_databases():
    first, second = _test_database_of_a_run(_on_postgresql()), _test_database_of_a_run(_on_postgresql())
    assert first != second
    assert first.startswith("test_shared_") and second.startswith("test_shared_")


def test_the_xdist_workers_of_one_run_share_its_name_and_another_run_has_its_own():
    run, other = "0f1e2d3c4b5a69788796a5b4c3d2e1f0", "aaaabbbbccccddddeeeeffff00001111"
    gw0 = _test_database_of_a_run(_on_postgresql(PYTEST_XDIST_WORKER="gw0", PYTEST_XDIST_TESTRUNUID=run))
    gw1 = _test_database_of_a_run(_on_postgresql(PYTEST_XDIST_WORKER="gw1", PYTEST_XDIST_TESTRUNUID=run))
    again = _test_database_of_a_run(_on_postgresql(PYTEST_XDIST_WORKER="gw0", PYTEST_XDIST_TESTRUNUID=other))
    assert gw0 == gw1 == "test_shared_0f1e2d3c"  # pytest-django adds _gw0 / _gw1 to it in each worker
    assert again == "test_shared_aaaabbbb"
