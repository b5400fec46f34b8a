"""run_skill's `placement` says whether the run's session took a browser at once or waits in the queue, and the
platform's smoke-uat takes smoke_test's ranges however it is started (run_skill, skill_smoke_uat)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from browsing.models import BrowserSession, SkillRun

from .conftest import token_for


@pytest.fixture
def client(mcp_server, mcp_client, alice):
    with mcp_client(token_for(alice)) as connected:
        yield connected


def test_a_skill_run_whose_session_waits_for_a_browser_is_placed_queued(client, alice, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    BrowserSession.objects.create(account=alice.memberships.first().account, status="live", live_at=timezone.now())
    started = client.call_tool(
        "run_skill",
        {
            "name": "smoke-uat",
            "inputs": {"url": "https://example.com/"},
            "session": {"queueForCapacity": {"maxWaitSeconds": 30}},
        },
    )
    data = started.structured_content
    assert started.is_error is False, started.content[0].text
    assert (data["status"], data["placement"]) == ("running", "queued")
    session = BrowserSession.objects.get(public_id=data["sessionId"])
    assert session.queued_until is not None
    read = client.call_tool("get_session", {"sessionId": data["sessionId"]}).structured_content
    assert read["placement"] == "queued"


def test_a_skill_run_on_a_busy_pool_without_a_queue_is_capacity_exceeded(client, alice, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    BrowserSession.objects.create(account=alice.memberships.first().account, status="live", live_at=timezone.now())
    started = client.call_tool("run_skill", {"name": "smoke-uat", "inputs": {"url": "https://example.com/"}})
    assert started.is_error is True
    assert started.structured_content["error"]["code"] == "capacity_exceeded"
    assert not SkillRun.objects.exists()


def test_run_skill_refuses_max_links_above_200_naming_the_input(client):
    result = client.call_tool(
        "run_skill", {"name": "smoke-uat", "inputs": {"url": "https://example.com/", "maxLinks": 201}}
    )
    error = result.structured_content["error"]
    assert result.is_error is True and error["code"] == "invalid_input"
    assert error["details"]["issues"] == [{"path": "inputs.maxLinks", "message": "Must be at most 200."}]
    assert result.content[0].text == (
        "[invalid_input] The inputs of the skill smoke-uat are not valid: inputs.maxLinks: Must be at most 200."
    )
    assert not SkillRun.objects.exists() and not BrowserSession.objects.exists()


def test_skill_smoke_uat_shows_and_keeps_the_max_links_range_of_smoke_test(client):
    tools = {tool.name: tool for tool in client.list_tools()}
    assert {
        k: tools["skill_smoke_uat"].input_schema["properties"]["maxLinks"].get(k)
        for k in ("minimum", "maximum", "default")
    } == {"minimum": 0, "maximum": 200, "default": 50}
    result = client.call_tool("skill_smoke_uat", {"url": "https://example.com/", "maxLinks": -1})
    error = result.structured_content["error"]
    assert result.is_error is True and error["code"] == "invalid_input"
    assert error["details"]["issues"] == [{"path": "maxLinks", "message": "Must be at least 0."}]
    assert not SkillRun.objects.exists() and not BrowserSession.objects.exists()
