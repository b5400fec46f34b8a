"""`foldrun mcp` ends when its client closes stdin — at once with nothing sent, and within a second when the
client goes away in the middle of a call — so no client has to kill it, and nothing of it is left running."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest

from foldrun.mcp import registry
from foldrun.mcp.results import ok

from .conftest import token_for
from .test_foldrun_mcp_over_stdio import _env

PROTOCOL = "2025-06-18"


@pytest.fixture
def slow_tool(monkeypatch):
    """A tool that answers only after 30 s (or when the test ends): a call the client will not wait for."""
    started, release = threading.Event(), threading.Event()

    def handler(call, args):
        started.set()
        release.wait(30)
        return ok("late")

    monkeypatch.setitem(
        registry._FIXED,
        "slow_probe",
        registry.McpTool(
            "slow_probe", "Answers after 30 s (tests only).", {"type": "object", "properties": {}}, handler
        ),
    )
    yield started
    release.set()


def _bridge(env: dict[str, str], stdin=subprocess.PIPE) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "foldrun.cli.main", "mcp"],
        env=env,
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _send(bridge: subprocess.Popen, message: dict) -> None:
    bridge.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    bridge.stdin.flush()


def test_foldrun_mcp_with_stdin_at_its_end_exits_by_itself(mcp_server, alice, tmp_path):
    bridge = _bridge(
        _env(tmp_path, FOLDRUN_URL=mcp_server.base, FOLDRUN_TOKEN=token_for(alice)), stdin=subprocess.DEVNULL
    )
    try:
        out, err = bridge.communicate(timeout=15)  # `timeout 15 foldrun mcp </dev/null` must not be what ends it
    finally:
        if bridge.poll() is None:
            bridge.kill()
    assert bridge.returncode == 0, err
    assert out == "" and "Traceback" not in err


def test_a_client_that_closes_stdin_mid_call_ends_the_bridge_within_a_second(mcp_server, alice, tmp_path, slow_tool):
    bridge = _bridge(_env(tmp_path, FOLDRUN_URL=mcp_server.base, FOLDRUN_TOKEN=token_for(alice)))
    try:
        _send(
            bridge,
            {
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "closing-client", "version": "1"},
                },
            },
        )
        assert json.loads(bridge.stdout.readline())["result"]["serverInfo"]["name"] == "foldrun"
        _send(bridge, {"method": "notifications/initialized"})
        _send(bridge, {"id": 2, "method": "tools/call", "params": {"name": "slow_probe", "arguments": {}}})
        assert slow_tool.wait(30), "the call never reached the server"
        closed = time.monotonic()
        bridge.stdin.close()
        bridge.wait(timeout=10)
        took = time.monotonic() - closed
    finally:
        if bridge.poll() is None:
            bridge.kill()
    err = bridge.stderr.read()
    assert bridge.returncode == 0, err
    # The bridge gives its goodbye to the server at most 0.5 s and then exits: about a second on a quiet machine.
    # The bound is the second with room for a CI machine running two suites (1.4 s seen there); a bridge
    # that waits on the server, as before, never ends at all.
    assert took < 2.5, f"the bridge took {took:.2f} s to end after stdin closed"
    assert "Traceback" not in err
