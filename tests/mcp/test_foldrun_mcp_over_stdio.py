"""`foldrun mcp`: a stdio-only MCP client reaches the server's tools through the CLI's sign-in."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.utils import timezone
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from foldrun.cli import config as cli_config
from foldrun.mcp import registry
from foldrun.mcp.results import ok

from .conftest import token_for


def _env(tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDRUN_")}
    env["FOLDRUN_HOME"] = str(tmp_path / "home")  # no stored sign-in unless a test gives one
    env.update(extra)
    return env


async def _session_over_stdio(env: dict[str, str]):
    params = StdioServerParameters(command=sys.executable, args=["-m", "foldrun.cli.main", "mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = (await session.list_tools()).tools
        unknown = await session.call_tool("make_coffee", {})
        echo = await session.call_tool("probe_account", {})
        return init, tools, unknown, echo


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


def test_the_sdk_stdio_client_drives_the_server_through_foldrun_mcp(mcp_server, alice, tmp_path, probe_account_tool):
    env = _env(tmp_path, FOLDRUN_URL=mcp_server.base, FOLDRUN_TOKEN=token_for(alice))
    with start_blocking_portal() as portal:
        init, tools, unknown, echo = portal.call(_session_over_stdio, env)
    assert init.server_info.name == "foldrun"
    assert "probe_account" in {t.name for t in tools}
    assert unknown.is_error is True
    assert unknown.content[0].text.startswith("[not_found] There is no tool named 'make_coffee'")
    assert echo.is_error is False and echo.content[0].text == "Acme"
    assert echo.structured_content == {"account": alice.memberships.get().account.public_id}


def test_foldrun_mcp_uses_the_sign_in_foldrun_login_stored(mcp_server, alice, tmp_path, probe_account_tool):
    env = _env(tmp_path)
    cli_config.write_file({"url": mcp_server.base, "token": token_for(alice)}, tmp_path / "home")
    with start_blocking_portal() as portal:
        init, _, _, echo = portal.call(_session_over_stdio, env)
    assert init.server_info.name == "foldrun"
    assert echo.content[0].text == "Acme"


def test_foldrun_mcp_with_a_revoked_token_says_so_before_relaying(mcp_server, alice, tmp_path):
    raw = token_for(alice, revoked_at=timezone.now())
    env = _env(tmp_path, FOLDRUN_URL=mcp_server.base, FOLDRUN_TOKEN=raw)
    done = subprocess.run(
        [sys.executable, "-m", "foldrun.cli.main", "mcp"], env=env, input="", capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0 and done.stdout == ""
    assert "This API token is not valid; run `foldrun login` for a new one." in done.stderr


def test_foldrun_mcp_without_a_sign_in_says_so_and_writes_nothing_on_stdout(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "foldrun.cli.main", "mcp"],
        env=_env(tmp_path),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert done.stdout == ""
    assert "No foldrun server is configured; run `foldrun login --url URL`" in done.stderr
    assert "Traceback" not in done.stderr
