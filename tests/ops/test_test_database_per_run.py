"""Two test runs in one checkout never share a SQLite test database: each test process names its own file, so a
second run's setup cannot delete or migrate the file under the first (foldrun/settings/test.py)."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import django; django.setup(); from django.conf import settings; "
         "print(settings.DATABASES['default']['TEST']['NAME'])")


def _test_database_of_a_run(env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_two_runs_on_one_data_folder_and_one_worker_id_name_two_test_databases():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "FOLDRUN_", "PYTEST_"))}
    env.update({"DJANGO_SETTINGS_MODULE": "foldrun.settings.test", "PYTEST_XDIST_WORKER": "gw0",
                "FOLDRUN_DATA_DIR": tempfile.mkdtemp(prefix="two-runs-")})
    first, second = _test_database_of_a_run(env), _test_database_of_a_run(env)
    assert first != second
    for name in (first, second):
        assert Path(name).parent == Path(env["FOLDRUN_DATA_DIR"]) / "gw0" and name.endswith(".sqlite3")
