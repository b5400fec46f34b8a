"""Issue 29, item 5, on the MCP endpoint: a JSON-RPC body nested 10,000 deep is a 400 parse error naming the
limit before the SDK reads it; numbers past any column, bytes that are not UTF-8 and JSON that is not a
message are the SDK's own 4xx — never a 5xx — and an ordinary call after them still works."""

from __future__ import annotations

import httpx
import pytest

from .conftest import token_for

DEEP = 10_000
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}


def _call(arguments: bytes) -> bytes:
    return (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_sessions", '
        b'"arguments": ' + arguments + b"}}"
    )


HOSTILE = {
    "arrays nested 10,000 deep": b"[" * DEEP + b"]" * DEEP,
    "arguments nested 10,000 deep": _call(b'{"a":' * DEEP + b"1" + b"}" * DEEP),
    "arguments 101 deep": _call(b"[" * 100 + b"]" * 100),
    "a float past any column": _call(b'{"limit": 1e999999}'),
    "an integer of 5,000 digits": _call(b'{"limit": ' + b"9" * 5000 + b"}"),
    "bytes that are not UTF-8": _call(b'{"name": "\xff\xfe"}'),
    "an array": b"[1, 2]",
    "a string": b'"x"',
    "null": b"null",
    "nothing": b"",
    "a lone brace": b"{",
}


@pytest.fixture
def post(mcp_server, alice):
    headers = {**HEADERS, "Authorization": f"Bearer {token_for(alice)}"}

    def send(body: bytes) -> httpx.Response:
        return httpx.post(mcp_server.url, content=body, headers=headers, timeout=30)

    return send


def test_no_hostile_body_is_answered_with_a_5xx(post):
    answers = {kind: post(body).status_code for kind, body in HOSTILE.items()}
    assert {k: v for k, v in answers.items() if v >= 500} == {}
    assert all(
        400 <= v < 500
        for k, v in answers.items()
        if k != "arguments 101 deep" and "past" not in k and "digits" not in k and "UTF-8" not in k
    ), answers


@pytest.mark.parametrize("kind", ["arrays nested 10,000 deep", "arguments nested 10,000 deep", "arguments 101 deep"])
def test_a_body_nested_past_the_limit_is_a_parse_error_naming_it(post, kind):
    answer = post(HOSTILE[kind])
    assert answer.status_code == 400
    assert answer.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32700,
            "data": {"limit": 100},
            "message": "Parse error: The JSON body is nested deeper than 100 levels (arrays and objects inside one "
            "another); at most 100 are read.",
        },
    }


def test_a_call_after_the_hostile_ones_is_answered(post):
    for body in HOSTILE.values():
        post(body)
    answer = post(_call(b"{}"))
    assert answer.status_code == 200
    assert '"result"' in answer.text
