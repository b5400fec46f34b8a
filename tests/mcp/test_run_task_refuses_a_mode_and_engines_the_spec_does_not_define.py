"""run_task's `mode: full_auto` is named by the spec but defined nowhere in it, and `engineId` names a saved engine
while an account has none to save: each is refused with a sentence that says so and what to send instead —
never accepted and silently changed into something else. Through /mcp with the SDK's own client."""

from __future__ import annotations

import pytest

from browsing.models import BrowserSession, Task
from tests.mcp.conftest import token_for

pytestmark = pytest.mark.e2e

FULL_AUTO = (
    "mode full_auto is not offered here: a task runs in auto mode only (the agent acts until the goal is "
    "reached or it stops, and says why). Leave mode out or send auto."
)
NOT_SAVED = (
    "engineId 'firefox' is not a saved engine of this account: an account has no saved engines here, and "
    "a session runs on the built-in chromium. Leave engineId out or send chromium"
)
ONE_VERSION = "engineVersion picks a saved engine's version; the built-in chromium has version 1 only"


@pytest.fixture
def client(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as connected:
        yield connected


def error_of(result) -> dict:
    assert result.is_error is True
    return result.structured_content["error"]


def test_run_task_refuses_full_auto_in_a_sentence_and_opens_nothing(client):
    error = error_of(client.call_tool("run_task", {"goal": "Read the pricing page", "mode": "full_auto"}))
    assert (error["code"], error["message"]) == ("invalid_input", FULL_AUTO)
    assert error["details"]["issues"] == [{"path": "mode", "message": FULL_AUTO}]
    assert not BrowserSession.objects.exists() and not Task.objects.exists()


def test_create_session_and_run_task_refuse_an_engine_that_is_not_saved(client):
    for tool, args in (
        ("create_session", {"engineId": "firefox"}),
        ("run_task", {"goal": "Read the pricing page", "engineId": "firefox"}),
    ):
        error = error_of(client.call_tool(tool, args))
        assert error["code"] == "invalid_input"
        assert {"path": "engineId", "message": NOT_SAVED} in error["details"]["issues"], tool
    error = error_of(client.call_tool("create_session", {"engineId": "chromium", "engineVersion": 2}))
    assert {"path": "engineVersion", "message": ONE_VERSION} in error["details"]["issues"]
    assert not BrowserSession.objects.exists() and not Task.objects.exists()
