"""GET /api/health: 200 when the database, the broker, a worker and beat all answer; 503 naming what does
not, with no login and no secret in the answer. The worker and beat are real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from browsing.models import BrowserSession
from foldrun.heartbeats import heartbeat_path
from tests.conftest import wait_for


def _age(role: str, seconds: float) -> None:
    path = heartbeat_path(role)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    then = time.time() - seconds
    os.utime(path, (then, then))


@pytest.mark.django_db
def test_a_worker_and_beat_not_heard_from_make_health_a_503_that_says_so(settings):
    settings.FOLDRUN_HEALTH_STALE_SECONDS = 60
    APIClient().get("/api/health")  # the URL conf loaded first, so the ages below are read within a second
    _age("worker", 120)
    _age("beat", 600)
    _age("browsers", 0)
    answer = APIClient().get("/api/health")  # no login: a load balancer has none
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "unhealthy"
    assert body["checks"]["database"] == {"ok": True}
    assert body["checks"]["broker"] == {"ok": True}
    assert body["checks"]["worker"]["ok"] is False
    assert body["problems"] == [
        "no worker has answered in the last 60 seconds (last 120 seconds ago)",
        "no beat has answered in the last 60 seconds (last 600 seconds ago)",
    ]
    assert answer["Cache-Control"] == "no-store"
    assert django_settings.SECRET_KEY not in answer.content.decode()


def test_a_real_worker_and_beat_make_health_a_200_and_keep_it_fresh(transactional_db, settings, tmp_path):
    settings.FOLDRUN_HEALTH_STALE_SECONDS = 3
    _age("worker", 3600)
    _age("beat", 3600)
    _age("browsers", 3600)
    assert APIClient().get("/api/health").status_code == 503
    env = dict(
        os.environ,
        FOLDRUN_TEST_DB_NAME=connection.settings_dict["NAME"],
        DJANGO_SETTINGS_MODULE="foldrun.settings.test",
        FOLDRUN_HEALTH_STALE_SECONDS="3",
    )
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        # -B: beat embedded in the worker, as the chaos test runs it; beat's ticks and the heartbeat task
        # it sends (every second at a 3-second staleness) keep both files fresh.
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "foldrun",
                "worker",
                "-B",
                "-l",
                "info",
                "--concurrency",
                "1",
                "--without-mingle",
                "--without-gossip",
                "-Q",
                f"{env['FOLDRUN_TEST_QUEUE']},{env['FOLDRUN_TEST_QUEUE']}.browsers",
                "-s",
                str(tmp_path / "beat-schedule"),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(lambda: APIClient().get("/api/health").status_code == 200, timeout=60)
        # Made stale by hand, the worker's and the browser service's files are written again by the heartbeat
        # tasks beat sends them, each on its own queue.
        _age("worker", 3600)
        _age("browsers", 3600)
        body = wait_for(lambda: (a := APIClient().get("/api/health")).status_code == 200 and a.json(), timeout=30)
        assert body["status"] == "ok" and body["problems"] == []
        assert body["checks"]["worker"]["last_seen_seconds_ago"] <= 3
        assert body["checks"]["beat"]["last_seen_seconds_ago"] <= 3
        assert body["checks"]["browsers"]["last_seen_seconds_ago"] <= 3
        assert (body["checks"]["browsers"]["open"], body["checks"]["browsers"]["capacity"]) == (
            0,
            django_settings.FOLDRUN_BROWSER_CAPACITY,
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
    assert b"foldrun.heartbeat" in log_path.read_bytes() and b"browsing.heartbeat" in log_path.read_bytes()


@pytest.mark.django_db
def test_the_browser_service_is_reported_apart_from_the_workers_with_its_capacity(settings, account):
    settings.FOLDRUN_HEALTH_STALE_SECONDS = 60
    settings.FOLDRUN_BROWSER_CAPACITY = 3
    APIClient().get("/api/health")
    _age("worker", 0)
    _age("beat", 0)
    _age("browsers", 0)
    BrowserSession.objects.create(account=account, status="live", live_at=timezone.now())
    BrowserSession.objects.create(account=account, status="closed")
    body = APIClient().get("/api/health").json()
    assert body["checks"]["browsers"]["ok"] is True
    assert (body["checks"]["browsers"]["open"], body["checks"]["browsers"]["capacity"]) == (1, 3)
    assert body["checks"]["worker"] == {
        "ok": True,
        "last_seen_seconds_ago": body["checks"]["worker"]["last_seen_seconds_ago"],
    }  # the workers' check carries no browser figures
    _age("browsers", 600)
    answer = APIClient().get("/api/health")
    assert answer.status_code == 503
    assert answer.json()["problems"] == [
        "no browser service worker has answered in the last 60 seconds (last 600 seconds ago)"
    ]
