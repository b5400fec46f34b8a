"""The SDK's high-level client negotiates on its own: the modern protocol (server/discover, no handshake)
and the initialize handshake both reach the tools with the token's account."""

from __future__ import annotations

import httpx2
import pytest
from anyio.from_thread import start_blocking_portal
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

from foldrun.mcp import registry
from foldrun.mcp.results import ok

from .conftest import token_for


async def _use(url: str, token: str, mode: str):
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        unknown = await client.call_tool("make_coffee", {})
        echo = await client.call_tool("probe_account", {})
        return names, unknown, echo


@pytest.fixture
def probe_account_tool(monkeypatch):
    monkeypatch.setitem(
        registry._FIXED,
        "probe_account",
        registry.McpTool(
            "probe_account",
            "Names the account (tests only).",
            {"type": "object", "properties": {}},
            lambda call, args: ok(call.account.name, {"account": call.account.public_id}),
        ),
    )


@pytest.mark.parametrize("mode", ["auto", "2026-07-28", "legacy"])
def test_each_protocol_era_reaches_the_tools_on_the_tokens_account(mcp_server, alice, probe_account_tool, mode):
    with start_blocking_portal() as portal:
        names, unknown, echo = portal.call(_use, mcp_server.url, token_for(alice), mode)
    assert "probe_account" in names
    assert unknown.is_error and unknown.content[0].text.startswith("[not_found] There is no tool named 'make_coffee'")
    assert echo.content[0].text == "Acme"
    assert echo.structured_content == {"account": alice.memberships.get().account.public_id}
