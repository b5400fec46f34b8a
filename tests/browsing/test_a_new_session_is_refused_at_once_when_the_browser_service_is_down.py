"""A browser service that is down: a new session is refused at once with a sentence (start_failed), over MCP and
REST, instead of waiting FOLDRUN_SESSION_START_SECONDS (90 s) to fail. "Down" is /api/health's own judgement: its
heartbeat (foldrun/heartbeats.py) older than FOLDRUN_HEALTH_STALE_SECONDS, or never written. Once it answers
again, sessions open as before."""

from __future__ import annotations

import os
import time

import pytest

from browsing.actions import check_create_session
from browsing.models import BrowserSession
from foldrun.heartbeats import BROWSERS, beat_heartbeat, heartbeat_path

STALE = (
    "No browser can be started now: the browser service has not answered in the last 60 seconds (it was last "
    "heard from 600 seconds ago). Try again once it is back; /api/health says when it is."
)
NEVER = (
    "No browser can be started now: the browser service has not answered in the last 60 seconds (it never "
    "has). Try again once it is back; /api/health says when it is."
)


def age_browser_service(settings, folder, seconds: float):
    """This test's own heartbeats folder (the shared one is other tests'), the browser service's `seconds` old."""
    settings.DATA_DIR = folder
    settings.FOLDRUN_HEALTH_STALE_SECONDS = 60
    path = heartbeat_path(BROWSERS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


@pytest.fixture
def service_down(settings, tmp_path):
    return age_browser_service(settings, tmp_path, 600)


def test_a_rest_session_is_a_502_that_says_so_and_bad_options_are_still_named_first(service_down, alice_api):
    answer = alice_api.post("/v1/sessions", {"record": True}, format="json")
    assert answer.status_code == 502
    assert answer.json()["code"] == "start_failed" and answer.json()["message"] == STALE
    assert alice_api.post("/v1/sessions", {"idleTimeoutMs": 5}, format="json").status_code == 400
    assert not BrowserSession.objects.exists()


def test_a_service_never_heard_from_says_so_and_one_that_answers_again_is_not_refused(service_down, alice_api, account):
    service_down.unlink()
    answer = alice_api.post("/v1/sessions", {}, format="json")
    assert (answer.status_code, answer.json()["message"]) == (502, NEVER)
    beat_heartbeat(BROWSERS)  # the service is back: the check passes, and the session's options are read
    assert check_create_session(account, {"idleTimeoutMs": 10_000}).idle_timeout_ms == 10_000
