"""Signs in to a running foldrun as the demo user, reads the demo desk, and opens the MCP server at /mcp."""

from __future__ import annotations

import sys

import httpx

base = sys.argv[1]
with httpx.Client(base_url=base, timeout=20) as http:
    token = http.post(
        "/api/auth/token", json={"email": "demo@foldrun.dev", "password": "demo-password-123", "name": "smoke"}
    )
    token.raise_for_status()
    headers = {"Authorization": f"Bearer {token.json()['token']}"}
    workspaces = http.get("/api/workspaces", headers=headers).json()
    names = [w["name"] for w in workspaces]
    assert "rank-desk" in names, f"the demo desk is missing: {names}"
    login_page = http.get("/accounts/login/")
    assert login_page.status_code == 200, login_page.status_code
    # The MCP server is served by the same web server: an initialize with the token answers as foldrun.
    mcp_headers = {**headers, "Accept": "application/json, text/event-stream"}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "smoke-start", "version": "1"},
        },
    }
    answer = http.post("/mcp", json=initialize, headers=mcp_headers)
    assert answer.status_code == 200, (answer.status_code, answer.text[:500])
    assert '"name":"foldrun"' in answer.text, answer.text[:500]
    refused = http.post("/mcp", json=initialize, headers={"Accept": mcp_headers["Accept"]})
    assert refused.status_code == 401 and refused.json()["code"] == "unauthorized", (refused.status_code, refused.text)
print(f"smoke: signed in as demo@foldrun.dev, found {names}, and /mcp answered initialize as foldrun")
