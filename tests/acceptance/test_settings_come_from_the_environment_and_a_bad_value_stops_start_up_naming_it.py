"""The settings come from the environment (the embedded default, PostgreSQL from DATABASE_URL, Redis from
CELERY_BROKER_URL, production's demands); a bad value stops start-up with a sentence naming the variable.
(Issue 2, item 1.)"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django; django.setup(); from django.conf import settings; "
    "print(settings.DATABASES['default']['ENGINE']); print(settings.CELERY_BROKER_URL)"
)


def start(settings_module: str = "foldrun.settings.dev", **env: str) -> subprocess.CompletedProcess:
    """`django.setup()` in a fresh interpreter with only the given variables set."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "FOLDRUN_", "DJANGO_"))}
    base.update(
        {"DJANGO_SETTINGS_MODULE": settings_module, "FOLDRUN_DATA_DIR": tempfile.mkdtemp(prefix="audit2-start-")}
    )
    base.update(env)
    return subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=base, capture_output=True, text=True, timeout=60)


def test_the_embedded_default_is_a_sqlite_file_and_the_filesystem_broker():
    done = start()
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["django.db.backends.sqlite3", "filesystem://"]


def test_postgresql_is_read_from_database_url_with_psycopg_3():
    done = start(DATABASE_URL="postgres://foldrun:pw@127.0.0.1:5432/foldrun")
    assert done.returncode == 0, done.stderr
    # Django's own PostgreSQL backend, on psycopg 3.
    assert done.stdout.splitlines()[0] == "django.db.backends.postgresql"
    import psycopg

    assert psycopg.__version__.startswith("3.")


def test_redis_is_read_from_celery_broker_url():
    done = start(CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "redis://127.0.0.1:6379/15"


def test_a_database_url_of_another_kind_stops_start_up_naming_the_variable():
    done = start(DATABASE_URL="mysql://x")
    assert done.returncode != 0
    assert (
        "DATABASE_URL='mysql://x' is not a valid URL; it must start with sqlite:// or postgres:// or postgresql://."
        in done.stderr
    )


def test_a_password_in_a_bad_database_url_is_not_printed():
    done = start(DATABASE_URL="mysql://u:hunter2secret@db/x")
    assert done.returncode != 0
    assert "DATABASE_URL=" in done.stderr
    assert "hunter2secret" not in done.stderr


def test_a_public_url_that_is_not_http_stops_start_up_naming_the_variable():
    done = start(FOLDRUN_PUBLIC_URL="ftp://x")
    assert done.returncode != 0
    assert "FOLDRUN_PUBLIC_URL='ftp://x' is not a valid URL; it must start with http:// or https://." in done.stderr


def test_a_debug_flag_that_is_not_a_boolean_stops_start_up_naming_the_variable():
    done = start(DJANGO_DEBUG="maybe")
    assert done.returncode != 0
    assert "DJANGO_DEBUG='maybe' is not a boolean; use one of 1, 0, true, false, yes, no, on, off." in done.stderr


def test_an_unknown_broker_stops_start_up_naming_the_variable():
    done = start(CELERY_BROKER_URL="bogus://x")
    assert done.returncode != 0
    assert "CELERY_BROKER_URL='bogus://x' is not a valid URL" in done.stderr


def test_production_without_a_secret_key_stops_start_up_naming_the_variable():
    done = start("foldrun.settings.prod", CELERY_BROKER_URL="redis://127.0.0.1:6379/15")
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY is not set; it is required." in done.stderr


def test_production_without_redis_stops_start_up_naming_the_variable():
    done = start("foldrun.settings.prod", DJANGO_SECRET_KEY="a-real-secret-for-this-test-only")
    assert done.returncode != 0
    assert "CELERY_BROKER_URL is not set; production needs Redis." in done.stderr


def test_production_starts_with_a_secret_key_and_redis():
    done = start(
        "foldrun.settings.prod",
        DJANGO_SECRET_KEY="a-real-secret-for-this-test-only",
        CELERY_BROKER_URL="redis://127.0.0.1:6379/15",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[1] == "redis://127.0.0.1:6379/15"


@pytest.mark.django_db
def test_the_celery_app_reads_the_settings_broker(settings):
    from foldrun.celery import app

    assert app.conf.broker_url == settings.CELERY_BROKER_URL


def test_a_log_level_python_does_not_know_stops_start_up_naming_the_variable():
    done = start(FOLDRUN_LOG_LEVEL="LOUD")
    assert done.returncode != 0
    assert (
        "FOLDRUN_LOG_LEVEL='LOUD' is not a log level; use one of CRITICAL, ERROR, WARNING, INFO, DEBUG." in done.stderr
    )


def test_a_log_level_in_lower_case_is_read():
    assert start(FOLDRUN_LOG_LEVEL="debug").returncode == 0


def test_a_resend_address_that_is_not_http_stops_start_up_naming_the_variable():
    done = start(FOLDRUN_RESEND_API_URL="notaurl")
    assert done.returncode != 0
    assert "FOLDRUN_RESEND_API_URL='notaurl' is not a valid URL; it must start with http:// or https://." in done.stderr


def test_malformed_vault_keys_stop_the_server_naming_the_variable():
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "FOLDRUN_", "DJANGO_"))}
    base.update(
        {
            "DJANGO_SETTINGS_MODULE": "foldrun.settings.dev",
            "FOLDRUN_DATA_DIR": tempfile.mkdtemp(prefix="audit2-"),
            "FOLDRUN_VAULT_KEYS": "garbage",
        }
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "(vault.E001) FOLDRUN_VAULT_KEYS: entry 1 is not base64;" in done.stderr


def test_a_database_url_with_a_broken_host_or_port_stops_start_up_with_a_sentence():
    for broken in (
        "postgres://u:hunter2secret@[::1/x",
        "postgres://u:hunter2secret@db:99999/x",
        "postgres://u:hunter2secret@db:port/x",
    ):
        done = start(DATABASE_URL=broken)
        assert done.returncode != 0
        assert "DATABASE_URL is not a valid URL (" in done.stderr, done.stderr
        assert "check the host and port." in done.stderr
        # The settings' own error (a sentence naming the variable), not urllib's ValueError from deep inside.
        assert done.stderr.strip().splitlines()[-1].startswith("django.core.exceptions.ImproperlyConfigured: ")
        assert "hunter2secret" not in done.stderr
