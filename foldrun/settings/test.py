"""Tests: the same database and broker the environment names (PostgreSQL and
Redis in CI, SQLite and the filesystem broker by default)."""

import os
import uuid
from pathlib import Path

# Under pytest-xdist each test process gets its own data folder (its SQLite file, filesystem broker, workspaces,
# recordings) and its own Celery queue, so two processes never see each other's files or tasks. The Celery
# workers a test starts inherit both through the environment; the suffix is added once.
_XDIST = os.environ.get("PYTEST_XDIST_WORKER", "")
if _XDIST:
    _data = os.environ.get("FOLDRUN_DATA_DIR") or str(Path(__file__).resolve().parents[2] / "var" / "test-data")
    if Path(_data).name != _XDIST:
        os.environ["FOLDRUN_DATA_DIR"] = str(Path(_data) / _XDIST)
    _queue = os.environ.get("FOLDRUN_TEST_QUEUE", "")
    if not _queue.endswith(f"-{_XDIST}"):
        os.environ["FOLDRUN_TEST_QUEUE"] = f"{_queue or 'foldrun-test-' + uuid.uuid4().hex[:8]}-{_XDIST}"

from .base import *  # noqa: F401,F403,E402
from .base import DATA_DIR, DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ACCOUNT_EMAIL_VERIFICATION = "none"
# Loopback stand-ins for providers, receivers and search APIs live on 127.0.0.1. A test that proves a
# refusal starts its worker with FOLDRUN_TEST_ALLOW_PRIVATE_URLS=0.
FOLDRUN_ALLOW_PRIVATE_URLS = os.environ.get("FOLDRUN_TEST_ALLOW_PRIVATE_URLS", "1") != "0"
FOLDRUN_VAULT_KEYS = ["dGVzdC1rZXktZm9yLWZvbGRydW4tdGVzdHMtMzJieXQ="]
DATA_DIR.mkdir(parents=True, exist_ok=True)
(DATA_DIR / "static").mkdir(exist_ok=True)  # WhiteNoise warns about a missing STATIC_ROOT

# A real Celery worker started by a test must see the test database: SQLite
# tests use a file (not memory), and a worker subprocess is pointed at the
# test database by FOLDRUN_TEST_DB_NAME. The file is this test process's own
# (its pid in the name): two runs in one checkout, or on one data folder, never
# share one, which the second run's setup would otherwise delete under the first.
# A PostgreSQL test database carries the run in its name for the same reason:
# xdist's id of the run (shared by its workers, which pytest-django then suffix
# _gw0, _gw1…) or, in a run without xdist, the test process's pid. Each run's
# teardown drops its own; one killed before it leaves its database behind.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / f"test-{os.getpid()}.sqlite3")}
else:
    _run = os.environ.get("PYTEST_XDIST_TESTRUNUID", "")[:8] if _XDIST else ""
    DATABASES["default"]["TEST"] = {"NAME": f"test_{DATABASES['default']['NAME']}_{_run or f'p{os.getpid()}'}"}
# A test database is thrown away at the end, so no commit in it waits for the disk: PostgreSQL's
# synchronous_commit off and SQLite's synchronous OFF (each through the driver's public connection options,
# for every connection: this process's, its workers' and its web servers'). What a test proves is unchanged:
# a commit is visible at once either way, and a killed worker or server loses nothing the operating system
# already holds; only a crash of the machine could. Under load a flushed commit cost milliseconds each.
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA synchronous=OFF"
else:
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"
if os.environ.get("FOLDRUN_TEST_DB_NAME"):
    DATABASES["default"]["NAME"] = os.environ["FOLDRUN_TEST_DB_NAME"]

# One queue per test session, inherited by worker subprocesses, so nothing a
# previous session left in the broker reaches this one.
CELERY_TASK_DEFAULT_QUEUE = os.environ.setdefault("FOLDRUN_TEST_QUEUE", f"foldrun-test-{uuid.uuid4().hex[:8]}")
