"""The platform as an MCP client meets it: foldrun.asgi on a free loopback port (uvicorn, on the
test database), optionally with a real worker, and the `mcp` SDK's own Streamable HTTP client.

    def test_x(mcp_server, alice, mcp_client):
        with mcp_client(token_for(alice)) as client:
            result = client.call_tool("list_sessions", {})

`mcp_platform` is `mcp_server` plus the real Celery worker of tests/conftest.py, for tools that queue work.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import uvicorn
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from accounts.models import ApiToken, hash_token
from foldrun.asgi import App
from tests.e2e.conftest import chromium  # noqa: F401 - real Chromium for page tests, shared rather than copied


def token_for(user, *, account=None, **fields: Any) -> str:
    """A fresh raw API token of `user` on `account` (default: the user's first account)."""
    if account is None:
        account = user.memberships.order_by("created_at").first().account
    raw = ApiToken.mint()
    ApiToken.objects.create(
        user=user, account=account, name="mcp test", token_hash=hash_token(raw), hint=raw[:8], **fields
    )
    return raw


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LiveServer:
    url: str  # the /mcp endpoint

    @property
    def base(self) -> str:
        return self.url.removesuffix("/mcp")


@pytest.fixture
def mcp_server(transactional_db, monkeypatch) -> Iterator[LiveServer]:
    """foldrun.asgi served by uvicorn in a thread of this process (so it reads the test database); a fresh
    App each time, since an MCP session manager runs once."""
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(App(), host="127.0.0.1", port=port, lifespan="on", log_level="warning", ws="websockets-sansio")
    )  # the sessions' DevTools relay
    thread = threading.Thread(target=server.run, name="mcp-live-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the live MCP server did not start")
        time.sleep(0.02)
    yield LiveServer(url=f"http://127.0.0.1:{port}/mcp")
    server.should_exit = True
    thread.join(timeout=15)


@pytest.fixture
def mcp_platform(mcp_server, celery_worker_process) -> LiveServer:
    return mcp_server


class McpClient:
    """A connected, initialized MCP session, driven synchronously from the test's thread."""

    def __init__(self, portal: BlockingPortal, session: ClientSession, initialized: types.InitializeResult) -> None:
        self._portal = portal
        self.session = session
        self.initialized = initialized

    def list_tools(self) -> list[types.Tool]:
        return self._portal.call(self.session.list_tools).tools

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> types.CallToolResult:
        return self._portal.call(lambda: self.session.call_tool(name, arguments))


@contextlib.asynccontextmanager
async def _connected(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        initialized = await session.initialize()
        yield session, initialized


@pytest.fixture
def mcp_client(mcp_server):
    """mcp_client(token) -> a context manager giving an initialized `McpClient` on the live server."""

    @contextlib.contextmanager
    def connect(token: str | None, *, url: str | None = None) -> Iterator[McpClient]:
        with start_blocking_portal() as portal:
            with portal.wrap_async_context_manager(_connected(url or mcp_server.url, token)) as (session, init):
                yield McpClient(portal, session, init)

    return connect


def raw_post(url: str, token: str | None, body: dict[str, Any]) -> httpx2.Response:
    """One plain HTTP POST to /mcp, to see the status and body a client library would hide."""
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return anyio.run(_post, url, headers, body)


async def _post(url: str, headers: dict[str, str], body: dict[str, Any]) -> httpx2.Response:
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, headers=headers, json=body)
        await response.aread()
        return response


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "foldrun-tests", "version": "1"},
    },
}
