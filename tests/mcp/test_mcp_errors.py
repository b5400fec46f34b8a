"""A failed call is a result, in the spec's shape: `[code] message`, `structuredContent.error`,
`isError: true` — over the real transport, from the SDK's own client."""

from __future__ import annotations

import logging

import pytest

from foldrun.mcp import registry
from foldrun.mcp.results import ToolError, ok

from .conftest import token_for

PROBE_SCHEMA = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "minLength": 1, "maxLength": 2000},
        "viewport": {"type": "object", "properties": {"width": {"type": "integer", "minimum": 200, "maximum": 7680}}},
        "steps": {"type": "integer", "minimum": 0, "maximum": 1000},
        "fail": {"enum": ["long", "crash"]},
    },
    "required": ["goal"],
    "additionalProperties": False,
}


def _probe(call, args):
    if args.get("fail") == "long":
        raise ToolError("navigation_blocked", "b" * 5000)
    if args.get("fail") == "crash":
        raise KeyError("a bug of ours")
    steps = [
        {
            "index": i,
            "path": str(i),
            "kind": "act",
            "label": f"step {i}",
            "ok": True,
            "ms": 3,
            "error": None,
            "detail": "d" * 600,
        }
        for i in range(args.get("steps", 0))
    ]
    return ok(f"{call.account.name}: {args['goal']}", {"account": call.account.public_id, "steps": steps})


@pytest.fixture
def probe_tools(monkeypatch):
    """Two tools that exist only for these tests (the registry is restored after)."""
    monkeypatch.setitem(
        registry._FIXED,
        "probe_echo",
        registry.McpTool("probe_echo", "Echoes a goal (tests only).", PROBE_SCHEMA, _probe),
    )
    monkeypatch.setitem(
        registry._FIXED,
        "probe_act",
        registry.McpTool(
            "probe_act",
            "Changes something (tests only).",
            {"type": "object", "properties": {}},
            lambda c, a: ok("changed"),
            acts=True,
        ),
    )


def _error(result):
    assert result.is_error is True
    return result.content[0].text, result.structured_content["error"]


def test_an_unknown_tool_is_not_found(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        text, error = _error(client.call_tool("make_coffee", {}))
    assert text == "[not_found] There is no tool named 'make_coffee' on this server; tools/list names them."
    assert error == {
        "code": "not_found",
        "message": "There is no tool named 'make_coffee' on this server; tools/list names them.",
    }


def test_a_tool_answers_on_the_tokens_account(mcp_server, alice, mcp_client, probe_tools):
    with mcp_client(token_for(alice)) as client:
        result = client.call_tool("probe_echo", {"goal": "read the price"})
    assert result.is_error is False
    assert result.content[0].text == "Acme: read the price"
    assert result.structured_content["account"] == alice.memberships.get().account.public_id


def test_invalid_arguments_are_invalid_input_with_the_issues(mcp_server, alice, mcp_client, probe_tools):
    with mcp_client(token_for(alice)) as client:
        text, error = _error(client.call_tool("probe_echo", {"viewport": {"width": 90000}, "url": "https://x"}))
    assert error["code"] == "invalid_input"
    assert error["details"]["issues"] == [
        {"path": "goal", "message": "This argument is required."},
        {"path": "url", "message": "This argument is not known to this tool."},
        {"path": "viewport.width", "message": "Must be at most 7680."},
    ]
    assert (
        text
        == "[invalid_input] The arguments of probe_echo are not valid: goal: This argument is required. (and 2 more)"
    )
    assert text == f"[{error['code']}] {error['message']}"


def test_a_long_error_message_is_cut_at_2000_characters(mcp_server, alice, mcp_client, probe_tools):
    with mcp_client(token_for(alice)) as client:
        text, error = _error(client.call_tool("probe_echo", {"goal": "g", "fail": "long"}))
    assert error["code"] == "navigation_blocked"
    assert len(error["message"]) == 2000 and error["message"].endswith("…")
    assert text == f"[navigation_blocked] {error['message']}"


def test_a_result_over_100000_bytes_comes_back_with_one_line_steps(mcp_server, alice, mcp_client, probe_tools):
    with mcp_client(token_for(alice)) as client:
        small = client.call_tool("probe_echo", {"goal": "g", "steps": 10})
        large = client.call_tool("probe_echo", {"goal": "g", "steps": 300})
    assert small.structured_content["steps"][0]["detail"] == "d" * 600
    assert len(large.structured_content["steps"]) == 300
    assert large.structured_content["steps"][299] == {
        "index": 299,
        "path": "299",
        "kind": "act",
        "label": "step 299",
        "ok": True,
        "ms": 3,
        "error": None,
    }
    assert large.is_error is False


def test_a_bug_in_a_handler_is_one_sentence_and_a_logged_error(mcp_server, alice, mcp_client, probe_tools, caplog):
    with caplog.at_level(logging.INFO, logger="foldrun.mcp"), mcp_client(token_for(alice)) as client:
        text, error = _error(client.call_tool("probe_echo", {"goal": "my password is hunter2", "fail": "crash"}))
    incident = error["details"]["incident"]
    assert text == (
        f"[server_error] The tool probe_echo stopped on an internal error (incident {incident}; "
        "the platform's log has the details)."
    )
    assert "KeyError" not in text and "Traceback" not in text and "a bug of ours" not in text
    assert any(r.levelno == logging.ERROR and incident in r.getMessage() and r.exc_info for r in caplog.records)


def test_each_call_is_logged_with_tool_time_and_outcome_but_no_arguments(
    mcp_server, alice, mcp_client, probe_tools, caplog
):
    with caplog.at_level(logging.INFO, logger="foldrun.mcp"), mcp_client(token_for(alice)) as client:
        client.call_tool("probe_echo", {"goal": "sign in with hunter2"})
        client.call_tool("probe_echo", {"goal": "x", "viewport": {"width": 1}})
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("mcp call ")]
    account = alice.memberships.get().account.public_id
    assert len(lines) == 2
    assert lines[0].startswith(f"mcp call probe_echo account={account} token=tok_") and lines[0].endswith(" ok")
    assert lines[1].endswith(" isError invalid_input")
    assert not any("hunter2" in r.getMessage() for r in caplog.records)


def test_a_read_only_member_cannot_call_a_tool_that_changes_things(mcp_server, bob, mcp_client, probe_tools):
    with mcp_client(token_for(bob)) as client:
        text, error = _error(client.call_tool("probe_act", {}))
        assert client.call_tool("probe_echo", {"goal": "read"}).is_error is False
    assert text == "[forbidden] Your role (viewer) can read this account but not change it, and probe_act changes it."


def test_tools_list_reads_the_registry(mcp_server, alice, mcp_client, probe_tools):
    with mcp_client(token_for(alice)) as client:
        tools = {t.name: t for t in client.list_tools()}
    assert tools["probe_echo"].input_schema == PROBE_SCHEMA
    assert tools["probe_act"].annotations.read_only_hint is False
    assert tools["probe_echo"].annotations.read_only_hint is True
    # Besides the fixed tools, only the per-account skill_<name> tools (foldrun/mcp/tools/skills.py).
    assert {n for n in tools if not n.startswith("skill_")} == {t.name for t in registry.fixed_tools()}
