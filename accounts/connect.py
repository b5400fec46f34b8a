"""Settings' "Connect an MCP client": the endpoint of this install and the snippets to paste.

The snippets carry a placeholder, never a token: a token's value is shown once, when it is made.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import HttpRequest

TOKEN_PLACEHOLDER = "YOUR_API_TOKEN"


def server_url(request: HttpRequest) -> str:
    """The address clients reach: the configured public URL, else the one this page was asked on."""
    return (settings.FOLDRUN_PUBLIC_URL or request.build_absolute_uri("/")).rstrip("/")


def mcp_setup(request: HttpRequest) -> dict[str, Any]:
    base = server_url(request)
    url = base + settings.FOLDRUN_MCP_PATH
    over_http = {"mcpServers": {"foldrun": {"url": url, "headers": {"Authorization": f"Bearer {TOKEN_PLACEHOLDER}"}}}}
    over_stdio = {"mcpServers": {"foldrun": {"command": "foldrun", "args": ["mcp"]}}}
    return {
        "mcp_url": url,
        "mcp_server_url": base,
        "mcp_http_snippet": json.dumps(over_http, indent=2),
        "mcp_stdio_snippet": json.dumps(over_stdio, indent=2),
        "mcp_token_placeholder": TOKEN_PLACEHOLDER,
    }
