"""A remote MCP server (`url:`) meets the same guard: the MCP SDK's client is foldrun.net's."""

from __future__ import annotations

import pytest

from foldrun import net
from foldrun.engine.tools.base import ToolError
from foldrun.engine.tools.mcp import McpConnection

from .conftest import private_urls, refusal


def test_an_mcp_server_at_any_non_public_form_is_refused_at_connect_with_the_one_sentence(site, guarded):
    said = {}
    for url, (host, address) in private_urls(site.port).items():
        with pytest.raises(ToolError) as caught:
            McpConnection("crm", {"url": url}, {}, None)
        said[url] = str(caught.value)
        assert said[url] == f"crm: the MCP server could not be reached: {refusal(host, address)}", url
    assert site.seen == []


def test_an_mcp_server_on_loopback_is_reached_when_the_install_opts_in(site):
    old = net.configure(allow_private=True)
    try:
        with pytest.raises(ToolError):  # the stand-in is no MCP server: the handshake fails, after the connect
            McpConnection("crm", {"url": f"{site.url}/mcp"}, {}, None)
    finally:
        net.restore(old)
    assert site.seen[0] == "POST /mcp"
