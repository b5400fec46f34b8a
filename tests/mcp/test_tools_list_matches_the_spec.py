"""`tools/list` against the spec's tool reference, so the server and the spec cannot drift.

The spec (`webagent-mcp-tools.md`, found by tests/conftest.py's `spec_file`) is parsed at test time:
each `### \\`name\\`` section is a tool, and its argument table (`| \\`arg\\` | type | required | … |`)
gives the argument names and which are required. `skill_<name>` is one tool per skill, not a fixed one.
"""

from __future__ import annotations

import re

import pytest

from foldrun.mcp import registry
from foldrun.mcp.call import McpCall
from foldrun.mcp.server import run_tool
from tests.conftest import spec_file

from .conftest import token_for

SECTION = re.compile(r"^### `([a-z_<>]+)` \[#[a-z_]+\]$", re.M)
# What the spec says of a tool outside its table, in its own words (checked to still be there).
SAYS_IT_TAKES_MORE = "The tool takes every field of the `POST /v1/sessions` body. The table lists the common ones."
ARGUMENT_IN_PROSE = {"run_skill": ("engineId", "`engineId` picks the engine for the run's session")}
# What foldrun adds beyond the spec's tables, each optional, and why: issue 34 item 2 asks for run_task to take
# an idempotency key as POST …/runs does (a client that gives up waiting and calls again starts one task).
BEYOND_THE_SPEC = {"run_task": {"idempotencyKey"}}


def _sections() -> dict[str, str]:
    text = spec_file("webagent-mcp-tools.md").read_text(encoding="utf-8")
    found = list(SECTION.finditer(text))
    return {
        m.group(1): text[m.end() : found[i + 1].start() if i + 1 < len(found) else len(text)]
        for i, m in enumerate(found)
    }


ALIAS = re.compile(r"^\| `([A-Za-z]+)` \|.*\| Deprecated alias of `([A-Za-z]+)`", re.M)


def _aliases(section: str) -> dict[str, str]:
    """Argument -> its deprecated alias (`id` for `sessionId`): the schema requires the argument as the
    spec's table does, and a call sending only the alias is checked as if it had sent the argument."""
    return {name: alias for alias, name in ALIAS.findall(section)}


def _arguments(section: str) -> dict[str, bool]:
    """Argument name -> required, from the section's table (a row may name several: `a`, `b`)."""
    args: dict[str, bool] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3:
            continue
        for name in re.findall(r"`([A-Za-z_.]+)`", cells[0]):
            args[name] = cells[2].lower().startswith("yes")
    return args


def _types(section: str) -> dict[str, set[str]]:
    """Argument -> the JSON types the Type column names (`string, integer` maps to `a`, `b` in order;
    `string or array` is either; literal words such as auto are strings; an empty cell says nothing)."""
    out: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("| `") or len(cells) < 3 or not cells[1]:
            continue
        names = re.findall(r"`([A-Za-z_.]+)`", cells[0])
        kinds = [k.strip() for k in cells[1].split(",")]
        if len(kinds) != len(names):
            kinds = kinds[:1] * len(names)
        for name, kind in zip(names, kinds):
            out[name] = {_json_type(part.strip()) for part in kind.split(" or ")}
    return out


def _json_type(word: str) -> str:
    if word.startswith("`"):
        return "string"  # an enum of literal words
    if word.endswith("array"):
        return "array"
    return {"string": "string", "integer": "integer", "boolean": "boolean", "object": "object"}[word]


def _schema_types(prop: dict) -> set[str]:
    kinds: set[str] = set()
    declared = prop.get("type")
    if isinstance(declared, str):
        kinds.add(declared)
    elif isinstance(declared, list):
        kinds.update(declared)
    if "enum" in prop and not declared:
        kinds.update(
            "string" if isinstance(v, str) else "boolean" if isinstance(v, bool) else "integer" for v in prop["enum"]
        )
    for branch in prop.get("oneOf", []) + prop.get("anyOf", []):
        kinds |= _schema_types(branch)
    return kinds


SPEC_TOOLS = {name: body for name, body in _sections().items() if name != "skill_<name>"}


def test_the_spec_names_fifteen_fixed_tools():
    assert len(SPEC_TOOLS) == 15, sorted(SPEC_TOOLS)


def test_the_spec_notes_this_test_relies_on_are_still_there():
    assert SAYS_IT_TAKES_MORE in SPEC_TOOLS["create_session"]
    for tool, (_, sentence) in ARGUMENT_IN_PROSE.items():
        assert sentence in SPEC_TOOLS[tool]


def test_the_fixed_tools_are_exactly_the_fifteen_the_spec_names():
    assert sorted(t.name for t in registry.fixed_tools()) == sorted(SPEC_TOOLS)


@pytest.mark.parametrize("name", sorted(SPEC_TOOLS))
def test_a_registered_tool_takes_the_spec_arguments_and_requires_the_spec_required_ones(name):
    tool = next((t for t in registry.fixed_tools() if t.name == name), None)
    assert tool is not None, f"{name} is not registered"
    spec_args = _arguments(SPEC_TOOLS[name])
    spec_args.update({arg: False for t, (arg, _) in ARGUMENT_IN_PROSE.items() if t == name})
    properties = set(tool.input_schema.get("properties", {})) - BEYOND_THE_SPEC.get(name, set())
    if SAYS_IT_TAKES_MORE in SPEC_TOOLS[name]:
        assert set(spec_args) <= properties
    else:
        assert properties == set(spec_args)
    required = {arg for arg, needed in spec_args.items() if needed}
    assert set(tool.input_schema.get("required", [])) == required
    assert dict(tool.aliases) == {alias: arg for arg, alias in _aliases(SPEC_TOOLS[name]).items()}


@pytest.mark.parametrize("name", sorted(SPEC_TOOLS))
def test_a_registered_tool_types_each_argument_as_the_spec_does(name):
    tool = next((t for t in registry.fixed_tools() if t.name == name), None)
    assert tool is not None, f"{name} is not registered"
    properties = tool.input_schema.get("properties", {})
    differ = {
        arg: (sorted(kinds), sorted(_schema_types(properties[arg])))
        for arg, kinds in _types(SPEC_TOOLS[name]).items()
        if arg in properties and _schema_types(properties[arg]) != kinds
    }
    assert differ == {}, "argument: (the spec's types, the schema's types)"


@pytest.mark.parametrize("name", sorted(n for n, body in SPEC_TOOLS.items() if _aliases(body)))
def test_a_required_argument_with_an_alias_is_still_required_by_the_handler(name, alice):
    tool = next((t for t in registry.fixed_tools() if t.name == name), None)
    assert tool is not None, f"{name} is not registered"
    call = McpCall(account=alice.memberships.get().account, user=alice, token_id="tok_test")
    for arg in _aliases(SPEC_TOOLS[name]):
        result = run_tool(call, name, {})
        assert result.is_error and result.structured["error"]["code"] == "invalid_input"
        assert {"path": arg, "message": "This argument is required."} in result.structured["error"]["details"]["issues"]


def test_tools_list_over_the_wire_is_the_registry(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        listed = {t.name: t.input_schema for t in client.list_tools()}
    assert {name: schema for name, schema in listed.items() if name in SPEC_TOOLS} == {
        t.name: t.input_schema for t in registry.fixed_tools()
    }


def test_get_and_stop_session_require_session_id_over_the_wire_and_still_take_the_alias(mcp_server, alice, mcp_client):
    with mcp_client(token_for(alice)) as client:
        listed = {t.name: t.input_schema for t in client.list_tools()}
        by_alias = client.call_tool("get_session", {"id": "sess_us_nosuchsessionxxxxxxxxx"})
        neither = client.call_tool("stop_session", {})
    assert listed["get_session"]["required"] == listed["stop_session"]["required"] == ["sessionId"]
    assert by_alias.structured_content["error"]["code"] == "not_found"  # checked as if sessionId had been sent
    assert neither.structured_content["error"]["code"] == "invalid_input"
    assert neither.structured_content["error"]["details"]["issues"] == [
        {"path": "sessionId", "message": "This argument is required."}
    ]
