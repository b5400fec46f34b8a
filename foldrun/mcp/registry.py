"""The MCP tools: one declaration beside each handler, and the checking of arguments.

A tool module registers its tools at import (`@mcp_tool(...)`); `tools/__init__.py`
imports the modules. `tools/list` is read from here, so no list of names is typed
twice. Arguments are checked against the tool's JSON Schema before its handler
runs; a handler adds the refusals a schema cannot say by raising `ToolError`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from foldrun import incidents

from .call import McpCall
from .results import ToolError, ToolResult

log = logging.getLogger("foldrun.mcp")

Handler = Callable[[McpCall, dict[str, Any]], ToolResult]


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Handler
    # How long the handler may wait for a result (the spec's caps: 90 s, 120 s); 0 = it does not wait.
    waits_seconds: int = 0
    # Whether the tool changes something (opens a session, starts a run) — the `readOnlyHint`.
    acts: bool = False
    # Deprecated alias -> the argument it stands for (`id` for `sessionId`): the schema requires the argument,
    # as the spec's table does, and a call that sends only the alias is checked as if it had sent the argument.
    aliases: tuple[tuple[str, str], ...] = ()


_FIXED: dict[str, McpTool] = {}
_DYNAMIC: list[Callable[[McpCall], list[McpTool]]] = []
_VALIDATORS: dict[str, Draft202012Validator] = {}


# The spec's longest wait ("Limits that apply to tools": 120 s for the skill tools, 90 s for the others).
MAX_WAIT_SECONDS = 120


def register(tool: McpTool) -> McpTool:
    if tool.name in _FIXED:
        raise ValueError(f"the MCP tool {tool.name!r} is registered twice")
    if not 0 <= tool.waits_seconds <= MAX_WAIT_SECONDS:
        raise ValueError(f"the MCP tool {tool.name!r} waits {tool.waits_seconds} s; the cap is {MAX_WAIT_SECONDS} s")
    Draft202012Validator.check_schema(tool.input_schema)
    _FIXED[tool.name] = tool
    return tool


def mcp_tool(
    *,
    name: str,
    description: str,
    input_schema: dict[str, Any],
    waits_seconds: int = 0,
    acts: bool = False,
    aliases: dict[str, str] | None = None,
) -> Callable[[Handler], Handler]:
    def decorate(handler: Handler) -> Handler:
        register(McpTool(name, description, input_schema, handler, waits_seconds, acts, tuple((aliases or {}).items())))
        return handler

    return decorate


def register_dynamic(fn: Callable[[McpCall], list[McpTool]]) -> Callable[[McpCall], list[McpTool]]:
    """`fn(call)` gives the tools only this account has (one `skill_<name>` per skill it can see)."""
    _DYNAMIC.append(fn)
    return fn


_ERROR_TYPES: list[type[Exception]] = []


def register_error_type(cls: type[Exception]) -> type[Exception]:
    """An app's own error with `.code`, `.message`, `.details` (browsing's `SessionError`) that the
    server answers 1:1 as a failure, so a handler need not catch and re-raise it."""
    _ERROR_TYPES.append(cls)
    return cls


def as_tool_error(exc: Exception) -> ToolError | None:
    if isinstance(exc, ToolError):
        return exc
    if isinstance(exc, tuple(_ERROR_TYPES)):
        return ToolError(str(getattr(exc, "code")), str(getattr(exc, "message")), getattr(exc, "details", None))
    return None


def fixed_tools() -> list[McpTool]:
    return list(_FIXED.values())


def tools_for(call: McpCall) -> list[McpTool]:
    tools = fixed_tools()
    seen = set(_FIXED)
    for fn in _DYNAMIC:
        try:
            dynamic = fn(call)
        except Exception:  # noqa: BLE001 — one broken provider must not take tools/list (or any call) down
            incidents.record(log, "mcp: the dynamic tools of %s failed", getattr(fn, "__qualname__", fn))
            continue
        for tool in dynamic:
            if tool.name not in seen:  # a fixed tool's name always wins
                seen.add(tool.name)
                tools.append(tool)
    return tools


def find(call: McpCall, name: str) -> McpTool | None:
    if name in _FIXED:
        return _FIXED[name]
    return next((t for t in tools_for(call) if t.name == name), None)


def _validator(tool: McpTool) -> Draft202012Validator:
    # A fixed tool's validator is built once; a dynamic tool is built per call, and so is its validator.
    if _FIXED.get(tool.name) is not tool:
        return Draft202012Validator(tool.input_schema)
    if tool.name not in _VALIDATORS:
        _VALIDATORS[tool.name] = Draft202012Validator(tool.input_schema)
    return _VALIDATORS[tool.name]


def _dotted(parts: list[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _issues_of(error: ValidationError) -> list[dict[str, str]]:
    """One error of jsonschema as issues naming the argument (`viewport.width`) and a sentence
    that never repeats the value sent (it may be long, or a secret)."""
    where = list(error.absolute_path)
    v, limit, instance = error.validator, error.validator_value, error.instance
    if v == "required" and isinstance(instance, dict):
        return [
            {"path": _dotted([*where, p]), "message": "This argument is required."} for p in limit if p not in instance
        ]
    if v == "additionalProperties" and isinstance(instance, dict):
        known = set(error.schema.get("properties", {}))
        return [
            {"path": _dotted([*where, p]), "message": "This argument is not known to this tool."}
            for p in instance
            if p not in known
        ]
    return [{"path": _dotted(where), "message": _sentence(v, limit) or _NO_MATCH}]


def _sentence(v: str, limit: Any) -> str | None:
    if v in _BOUNDS:
        return _BOUNDS[v].format(limit)
    if v == "type":
        return f"Must be {_type_words(limit)}."
    if v == "enum" and isinstance(limit, list):
        return "Must be one of: " + ", ".join(map(str, limit)) + "."
    if v == "const":
        return f"Must be {limit!r}."
    if v == "uniqueItems":
        return "Must not repeat an entry."
    if v == "pattern":
        return "Does not have the expected form."
    if v == "format":
        return f"Must be a valid {limit}."
    return None


# jsonschema's own message repeats the value sent; this one does not.
_NO_MATCH = "Is not a value this argument takes; see the tool's input schema in tools/list."

_BOUNDS = {
    "minimum": "Must be at least {}.",
    "maximum": "Must be at most {}.",
    "exclusiveMinimum": "Must be more than {}.",
    "exclusiveMaximum": "Must be less than {}.",
    "minLength": "Must be at least {} characters.",
    "maxLength": "Must be at most {} characters.",
    "minItems": "Must have at least {} entries.",
    "maxItems": "Must have at most {} entries.",
    "minProperties": "Must have at least {} keys.",
    "maxProperties": "Must have at most {} keys.",
}


def _type_words(kind: Any) -> str:
    words = {
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "object": "an object",
        "array": "an array",
        "null": "null",
    }
    kinds = kind if isinstance(kind, list) else [kind]
    return " or ".join(words.get(k, str(k)) if isinstance(k, str) else str(k) for k in kinds)


def check_arguments(tool: McpTool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The arguments, or `ToolError("invalid_input", …, {"issues": [...]})` naming every problem."""
    args = {} if arguments is None else arguments
    if not isinstance(args, dict):
        raise ToolError(
            "invalid_input",
            "The arguments must be a JSON object.",
            {"issues": [{"path": "", "message": "Must be an object."}]},
        )
    checked = dict(args)
    for alias, name in tool.aliases:  # the handler still refuses both sent with different values
        if name not in checked and alias in checked:
            checked[name] = checked[alias]
    issues: list[dict[str, str]] = []
    for error in sorted(_validator(tool).iter_errors(checked), key=lambda e: list(map(str, e.absolute_path))):
        issues.extend(_issues_of(error))
    if issues:
        first = issues[0]
        where = f"{first['path']}: " if first["path"] else ""
        more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
        raise ToolError(
            "invalid_input",
            f"The arguments of {tool.name} are not valid: {where}{first['message']}{more}",
            {"issues": issues},
        )
    return args
