"""What every tool the model may call looks like to the engine.

A `Tool` has the name the model calls it by, a JSON schema, the limit keys a
call counts toward (besides `calls`) and a handler. `writes` says whether a
call changes something outside the sandbox: the step notes it on its record
*before* the call goes out, so a worker lost mid-step is never re-run after
it wrote (never sent twice).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from ..errors import Park, ToolError

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

__all__ = ["Park", "Tool", "ToolError", "check_arguments", "schema"]


@dataclass
class Tool:
    name: str
    description: str
    input_schema: dict
    handler: Callable[[dict, "ToolContext"], str]
    # The keys a call counts toward (besides `calls`); a callable when they depend on the call
    # (the gallery's `web`: `["web", "web.fetch"]` for a fetch).
    limit_keys: list[str] | Callable[[dict], list[str]] = field(default_factory=list)
    writes: bool | Callable[[dict], bool] = False
    outward: bool = False
    kind: str = "builtin"  # builtin | http | script | mcp
    source: str = ""       # the tool file it came from, for the trace

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def call_limit_keys(self, arguments: dict) -> list[str]:
        return list(self.limit_keys(arguments)) if callable(self.limit_keys) else list(self.limit_keys)

    def call_writes(self, arguments: dict) -> bool:
        return self.writes(arguments) if callable(self.writes) else bool(self.writes)


def schema(properties: dict[str, dict], required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}


def check_arguments(tool: Tool, arguments: Any) -> dict:
    """Validate arguments against the tool's schema; a ToolError the model can act on."""
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool.name}: the arguments must be a JSON object")
    props = tool.input_schema.get("properties", {})
    for name in tool.input_schema.get("required", []):
        if name not in arguments:
            raise ToolError(f"{tool.name}: the argument `{name}` is required")
    if tool.input_schema.get("additionalProperties") is False:
        extra = sorted(set(arguments) - set(props))
        if extra:
            raise ToolError(f"{tool.name}: unknown argument `{extra[0]}`; it takes {', '.join(props) or 'none'}")
    kinds = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list}
    for name, value in arguments.items():
        expected = props.get(name, {}).get("type")
        if expected in kinds and not isinstance(value, kinds[expected]):
            raise ToolError(f"{tool.name}: the argument `{name}` must be {expected}")
    return arguments
