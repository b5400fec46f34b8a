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
from .arguments import check_arguments

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
    source: str = ""  # the tool file it came from, for the trace
    # An argument the schema lacks because it belongs elsewhere -> the sentence saying where (the web tool's
    # `headless`, which is the file's setting): the call is refused in that sentence, not as unknown.
    misplaced: dict[str, str] = field(default_factory=dict)

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def call_limit_keys(self, arguments: dict) -> list[str]:
        return list(self.limit_keys(arguments)) if callable(self.limit_keys) else list(self.limit_keys)

    def call_writes(self, arguments: dict) -> bool:
        return self.writes(arguments) if callable(self.writes) else bool(self.writes)


def schema(properties: dict[str, dict], required: list[str] | None = None) -> dict:
    return {"type": "object", "properties": properties, "required": required or [], "additionalProperties": False}
