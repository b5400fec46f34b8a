"""One account's calls in flight are capped, so a burst from one client cannot hold up the others."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings

from foldrun.mcp import registry
from foldrun.mcp.results import ok

from .conftest import token_for


@pytest.fixture
def held_tool(monkeypatch):
    """`probe_hold` waits until the test lets it go; `entered` says a call is inside it."""
    entered, release = threading.Event(), threading.Event()

    def hold(call, args):
        entered.set()
        release.wait(timeout=30)
        return ok("released")

    monkeypatch.setitem(
        registry._FIXED,
        "probe_hold",
        registry.McpTool(
            "probe_hold",
            "Waits for the test (tests only).",
            {"type": "object", "properties": {}},
            hold,
            waits_seconds=30,
        ),
    )
    yield entered, release
    release.set()


def test_a_call_past_the_accounts_cap_is_rate_limited_while_another_account_is_served(
    mcp_server, alice, charlie, mcp_client, held_tool, monkeypatch
):
    monkeypatch.setattr(settings, "FOLDRUN_MCP_CALLS_PER_ACCOUNT", 1)
    entered, release = held_tool
    first: list = []
    with mcp_client(token_for(alice)) as alices, mcp_client(token_for(charlie)) as charlies:
        holder = threading.Thread(target=lambda: first.append(alices.call_tool("probe_hold", {})))
        holder.start()
        assert entered.wait(timeout=20)

        refused = alices.call_tool("probe_hold", {})
        assert refused.is_error is True
        assert refused.content[0].text == (
            "[rate_limited] This account already has 1 tool call running on this "
            "server; wait for one to finish, then call again."
        )
        entered.clear()
        other = threading.Thread(target=lambda: first.append(charlies.call_tool("probe_hold", {})))
        other.start()
        assert entered.wait(timeout=20)  # charlie's account has its own room

        release.set()
        holder.join(timeout=20)
        other.join(timeout=20)
        assert [r.content[0].text for r in first] == ["released", "released"]
        assert alices.call_tool("probe_hold", {}).content[0].text == "released"  # the room is free again
