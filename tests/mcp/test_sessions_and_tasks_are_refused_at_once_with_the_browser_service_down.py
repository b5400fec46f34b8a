"""A browser service that is down, as an MCP client meets it: create_session and run_task are refused at once
with a sentence (start_failed) — no session left `starting` for 90 s, no task. The REST side and the judgement of
"down" are in tests/browsing/test_a_new_session_is_refused_at_once_when_the_browser_service_is_down.py."""

from __future__ import annotations

import time

import pytest

from browsing.models import BrowserSession, Task
from tests.browsing.test_a_new_session_is_refused_at_once_when_the_browser_service_is_down import (
    STALE,
    age_browser_service,
)
from tests.mcp.conftest import token_for


@pytest.fixture
def service_down(settings, tmp_path):
    return age_browser_service(settings, tmp_path, 600)


def test_create_session_and_run_task_over_mcp_are_refused_at_once(service_down, mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        began = time.monotonic()
        created = client.call_tool("create_session", {"startUrl": "https://example.com/"})
        task = client.call_tool("run_task", {"goal": "Read the pricing page"})
        took = time.monotonic() - began
    for result in (created, task):
        assert result.is_error is True
        assert result.structured_content["error"] == {"code": "start_failed", "message": STALE}
        assert result.content[0].text == f"[start_failed] {STALE}"
    assert took < 5  # at once, not after FOLDRUN_SESSION_START_SECONDS
    assert not BrowserSession.objects.exists() and not Task.objects.exists()
