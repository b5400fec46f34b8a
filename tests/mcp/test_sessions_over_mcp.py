"""The session tools over the real transport, from the SDK's own client, on a real worker and Chromium."""

from __future__ import annotations

import json
import re

import pytest
from django.utils import timezone

from browsing.models import BrowserSession
from browsing.tokens import token_ok
from tests.fakes.mcp_site import arena

from .conftest import token_for


@pytest.fixture
def site():
    with arena() as server:
        yield server


def structured(result) -> dict:
    assert json.loads(result.content[0].text) == result.structured_content  # the text is the same JSON
    return result.structured_content


@pytest.mark.e2e
def test_a_session_opens_reads_lists_and_stops_over_mcp(mcp_platform, mcp_client, alice, site, settings):
    settings.FOLDRUN_PUBLIC_URL = mcp_platform.base
    with mcp_client(token_for(alice)) as client:
        created = client.call_tool("create_session", {"startUrl": f"{site.url}/pricing/", "idleTimeoutMs": 60_000})
        assert not created.is_error, created.content[0].text
        record = structured(created)
        assert re.fullmatch(r"sess_us_[0-9a-z]{24}", record["id"])
        assert (record["status"], record["engine"], record["title"]) == ("live", "chromium", "Pricing · Test Arena")
        assert record["endpoints"]["http"].endswith(f"/v1/sessions/{record['id']}")
        assert record["endpoints"]["cdp"] == (
            f"ws://{mcp_platform.base.removeprefix('http://')}/v1/sessions/{record['id']}/cdp?token={record['token']}"
        )
        assert token_ok(record["id"], record["token"]) and record["tokenExpiresAt"].endswith("Z")
        assert record["options"]["idleTimeoutMs"] == 60_000

        read = structured(client.call_tool("get_session", {"sessionId": record["id"]}))
        assert (read["id"], read["status"]) == (record["id"], "live")
        assert structured(client.call_tool("get_session", {"id": record["id"]}))["id"] == record["id"]
        listed = structured(client.call_tool("list_sessions", {}))["sessions"]
        assert [s["id"] for s in listed] == [record["id"]]
        assert set(listed[0]) == {"id", "status", "engine", "createdAt", "endedAt", "endReason", "title"}

        assert structured(client.call_tool("stop_session", {"sessionId": record["id"]})) == {
            "deleted": True,
            "closed": True,
        }
        assert structured(client.call_tool("stop_session", {"sessionId": record["id"]})) == {
            "deleted": True,
            "closed": False,
        }
        ended = structured(client.call_tool("get_session", {"sessionId": record["id"]}))
    assert (ended["status"], ended["endReason"]) == ("closed", "stopped")
    assert "endpoints" not in ended and "token" not in ended


def test_a_session_of_another_account_is_not_found(mcp_server, mcp_client, alice, charlie):
    theirs = BrowserSession.objects.create(account=alice.memberships.first().account, status="live")
    with mcp_client(token_for(charlie)) as client:
        read = client.call_tool("get_session", {"sessionId": theirs.public_id})
        stopped = client.call_tool("stop_session", {"sessionId": theirs.public_id})
        unknown = client.call_tool("get_session", {"sessionId": "sess_us_" + "0" * 24})
    assert read.is_error and read.content[0].text == f"[not_found] No session {theirs.public_id} in this account."
    assert read.structured_content["error"]["code"] == "not_found"
    assert unknown.content[0].text == f"[not_found] No session sess_us_{'0' * 24} in this account."
    assert not stopped.is_error and stopped.structured_content == {"deleted": False, "closed": False}
    assert BrowserSession.objects.get(pk=theirs.pk).status == "live"


def test_url_is_refused_with_a_hint_to_use_start_url(mcp_server, mcp_client, alice):
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("create_session", {"url": "https://example.com"})
    assert result.is_error
    assert result.content[0].text == (
        "[invalid_input] Url is not an option of a session; use startUrl for the page the browser opens first."
    )
    assert result.structured_content["error"]["details"]["issues"] == [
        {
            "path": "url",
            "message": ("url is not an option of a session; use startUrl for the page the browser opens first"),
        }
    ]
    assert not BrowserSession.objects.exists()


def test_a_viewport_out_of_range_is_invalid_input_naming_the_field(mcp_server, mcp_client, alice):
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("create_session", {"viewport": {"width": 100, "height": 600}})
    assert result.is_error and result.structured_content["error"]["code"] == "invalid_input"
    assert [i["path"] for i in result.structured_content["error"]["details"]["issues"]] == ["viewport.width"]


def test_a_busy_pool_is_capacity_exceeded(mcp_server, mcp_client, alice, settings):
    settings.FOLDRUN_BROWSER_MAX_SESSIONS = 1
    BrowserSession.objects.create(account=alice.memberships.first().account, status="live", live_at=timezone.now())
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("create_session", {})
    assert result.is_error and result.content[0].text.startswith(
        "[capacity_exceeded] Every browser of this account is busy (1 of 1 sessions open)."
    )


def test_sessions_are_listed_newest_first_and_at_most_200(mcp_server, mcp_client, alice):
    account = alice.memberships.first().account
    now = timezone.now()
    BrowserSession.objects.bulk_create(
        [
            BrowserSession(account=account, status="closed", created_at=now - timezone.timedelta(seconds=n))
            for n in range(205)
        ]
    )
    with mcp_client(token_for(alice)) as client:
        listed = client.call_tool("list_sessions", {}).structured_content["sessions"]
    assert len(listed) == 200
    assert [s["createdAt"] for s in listed] == sorted((s["createdAt"] for s in listed), reverse=True)
