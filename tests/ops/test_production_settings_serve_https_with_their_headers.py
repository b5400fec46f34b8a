"""The production settings (foldrun/settings/prod.py) pass Django's deployment checks with no warning, redirect
plain HTTP to HTTPS behind the proxy's X-Forwarded-Proto, send HSTS and the Content-Security-Policy, and leave
`/api/health` (the load balancer's probe) and `/api/version` (compose's healthcheck) reachable over plain
HTTP. (Issue 29, item 8.)

Each runs in a process of its own on the production settings, with the environment production demands."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, django
django.setup()
from django.test import Client
client = Client()
def answer(path, **headers):
    r = client.get(path, headers=headers)
    return {"status": r.status_code, "location": r.get("Location"), "hsts": r.get("Strict-Transport-Security"),
            "csp": r.get("Content-Security-Policy")}
print(json.dumps({"plain": answer("/accounts/login/?next=/"), "https": answer("/accounts/login/", X_FORWARDED_PROTO="https"),
                  "health": answer("/api/health"), "version": answer("/api/version")}))
"""


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("FOLDRUN_", "DJANGO_"))}
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "foldrun.settings.prod",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            # Only read, never connected to, by the checks and these requests' settings.
            "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15",
            "FOLDRUN_VAULT_KEYS": "dGVzdC1rZXktZm9yLWZvbGRydW4tdGVzdHMtMzJieXQ=",
            "FOLDRUN_DATA_DIR": str(tmp_path),
            "DATABASE_URL": f"sqlite:///{tmp_path / 'prod.sqlite3'}",
        }
    )
    env.update(extra)
    return env


def test_check_deploy_on_the_production_settings_prints_no_warning(tmp_path):
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=production_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues (0 silenced)." in done.stdout


def ask(folder: Path, **extra: str) -> dict:
    """Three requests (plain HTTP, HTTPS as the proxy says, the health probe) to the production settings."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=production_env(folder, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def answers(tmp_path_factory) -> dict:
    return ask(tmp_path_factory.mktemp("prod"))


def test_plain_http_is_redirected_to_https_and_https_answers_with_hsts_and_the_policy(answers):
    seen = answers
    assert seen["plain"]["status"] == 301
    assert seen["plain"]["location"] == "https://testserver/accounts/login/?next=/"
    https = seen["https"]
    assert https["status"] == 200
    assert https["hsts"] == "max-age=31536000; includeSubDomains; preload"
    assert "script-src 'self'" in https["csp"] and "unsafe-inline" not in https["csp"]


def test_the_health_probes_answer_over_plain_http(answers):
    """The load balancer's probe and deploy/compose.yaml's healthcheck speak plain HTTP to the web process."""
    health = answers["health"]
    assert health["location"] is None
    assert health["status"] in (200, 503)  # its own verdict on this bare install, never a redirect
    assert (answers["version"]["status"], answers["version"]["location"]) == (200, None)


def test_hsts_lasts_the_seconds_set_and_the_redirect_can_be_left_to_the_proxy(tmp_path):
    seen = ask(tmp_path, FOLDRUN_HSTS_SECONDS="3600", FOLDRUN_HSTS_PRELOAD="0", FOLDRUN_SSL_REDIRECT="0")
    assert seen["plain"]["status"] == 200
    assert seen["https"]["hsts"] == "max-age=3600; includeSubDomains"
