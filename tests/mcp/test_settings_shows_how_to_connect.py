"""Settings says where /mcp is and how to add it to a client — and what it says works."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client

from .conftest import token_for


def test_settings_shows_the_endpoint_and_both_snippets_without_any_token(alice, client, monkeypatch):
    monkeypatch.setattr(settings, "FOLDRUN_PUBLIC_URL", None)  # the address the page was asked on, then
    raw = token_for(alice)  # a token exists; its value must not appear
    client.force_login(alice)
    response = client.get("/settings/")
    page = response.content.decode()
    assert response.context["mcp_url"] == "http://testserver/mcp"
    assert 'value="http://testserver/mcp"' in page
    assert json.loads(response.context["mcp_http_snippet"]) == {
        "mcpServers": {
            "foldrun": {"url": "http://testserver/mcp", "headers": {"Authorization": "Bearer YOUR_API_TOKEN"}}
        }
    }
    assert json.loads(response.context["mcp_stdio_snippet"]) == {
        "mcpServers": {"foldrun": {"command": "foldrun", "args": ["mcp"]}}
    }
    assert "foldrun login --url http://testserver" in page
    assert raw not in page and raw[8:] not in page


def test_the_configured_public_url_wins_over_the_address_asked_on(alice, client, monkeypatch):
    monkeypatch.setattr(settings, "FOLDRUN_PUBLIC_URL", "https://runs.acme.test/")
    client.force_login(alice)
    assert client.get("/settings/").context["mcp_url"] == "https://runs.acme.test/mcp"


@pytest.mark.e2e
def test_a_token_made_on_settings_pasted_into_the_snippet_connects_a_client(mcp_server, alice, chromium, mcp_client):
    web = Client()
    web.force_login(alice)
    context = chromium.new_context()
    context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": web.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": mcp_server.base,
            }
        ]
    )
    page = context.new_page()
    page.goto(f"{mcp_server.base}/settings/")
    assert page.locator("#mcp-url").input_value() == mcp_server.url
    snippet = json.loads(page.locator("#mcp-http-snippet").inner_text())["mcpServers"]["foldrun"]

    page.fill("#token-name", "cursor")
    page.click("text=Create token")
    raw = page.locator("#raw-token").inner_text().strip()
    context.close()

    authorization = snippet["headers"]["Authorization"].replace("YOUR_API_TOKEN", raw)
    with mcp_client(authorization.removeprefix("Bearer "), url=snippet["url"]) as connected:
        assert connected.initialized.server_info.name == "foldrun"
