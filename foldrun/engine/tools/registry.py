"""Where the engine finds its tools: built-in declarations and transports, each registered by name.

A built-in tool is a declaration beside its handler (`@builtin(...)` in builtin.py): its name,
description, schema, limit group and whether a call acts outside the sandbox. `builtin_groups()` and
`builtin_tools(granted)` derive from those declarations.

A transport (`http`, `script`, `mcp`, a gallery tool such as `web`) registers one `plan(tool_file, ctx)`
that says how it names its secrets and how it builds its tools: it returns a `ToolPlan` whose
`secret_names` the step resolves with its others (one missing fails the step), then calls `build()`.
Adding a transport is one module and one `register_transport` (or `register_gallery_tool`) call, listed
in `TRANSPORT_MODULES` for the loader.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from .base import Tool

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

BUILTIN_MODULE = "foldrun.engine.tools.builtin"
# Imported once by `load()`: each registers its transport on import.
TRANSPORT_MODULES = (
    "foldrun.engine.tools.http",
    "foldrun.engine.tools.script",
    "foldrun.engine.tools.mcp",
    "foldrun.web.adapter",
)


@dataclass(frozen=True)
class Builtin:
    name: str
    group: str  # the grant (`builtin: [read]`) and the limit group
    description: str
    input_schema: dict
    handler: Callable[[dict, Any], str]
    limit_keys: list[str] | Callable[[dict], list[str]]
    acts: bool = False  # a call changes something outside the sandbox
    always: bool = False  # offered without its grant (Write/Edit, for memory/)

    def tool(self) -> Tool:
        keys = self.limit_keys if callable(self.limit_keys) else list(self.limit_keys)
        return Tool(self.name, self.description, self.input_schema, self.handler, keys, writes=self.acts)


_BUILTINS: dict[str, Builtin] = {}


def builtin(
    name: str,
    *,
    group: str,
    description: str,
    schema: dict,
    limit_keys: list[str] | Callable[[dict], list[str]] | None = None,
    acts: bool = False,
    always: bool = False,
) -> Callable:
    """Declare the decorated handler as the built-in tool `name` (offered in declaration order)."""

    def register(handler: Callable[[dict, Any], str]) -> Callable[[dict, Any], str]:
        keys = limit_keys if limit_keys is not None else [group, name]
        _BUILTINS[name] = Builtin(name, group, description, schema, handler, keys, acts, always)
        return handler

    return register


def builtins() -> list[Builtin]:
    importlib.import_module(BUILTIN_MODULE)  # its declarations register on import
    return list(_BUILTINS.values())


def builtin_groups() -> tuple[str, ...]:
    """Every grant a built-in tool answers to, in declaration order."""
    return tuple(dict.fromkeys(b.group for b in builtins()))


def builtin_tools(granted: set[str]) -> list[Tool]:
    """The built-in tools for the groups in `granted` (the `always` ones regardless)."""
    return [b.tool() for b in builtins() if b.always or b.group in granted]


@dataclass
class ToolPlan:
    """One tool file's part of a step: the vault names it needs and how to build its tools once they
    are resolved. `with_builtins` puts its tools beside the built-ins (a gallery tool, like `web`)."""

    secret_names: list[str]
    build: Callable[[], list[Tool]]
    outward: bool = False
    with_builtins: bool = False
    notes: list[str] = field(default_factory=list)


Planner = Callable[[Any, "ToolContext"], ToolPlan]
_TRANSPORTS: dict[str, Planner] = {}
_GALLERY: dict[str, Planner] = {}
_loaded = False


def register_transport(name: str, plan: Planner) -> None:
    """`transport: name` tool files are planned by `plan(tool_file, ctx)`."""
    _TRANSPORTS[name] = plan


def register_gallery_tool(name: str, plan: Planner) -> None:
    """The gallery tool `name` (`transport: builtin`/`gallery` in its tool.md) is planned by `plan`."""
    _GALLERY[name] = plan


def load() -> None:
    """Import every transport module once (each registers itself)."""
    global _loaded
    if not _loaded:
        for module in TRANSPORT_MODULES:
            importlib.import_module(module)
        _loaded = True


def transport(name: str) -> Planner | None:
    load()
    return _TRANSPORTS.get(name)


def gallery_tool(name: str) -> Planner | None:
    load()
    return _GALLERY.get(name)


def transport_names() -> list[str]:
    load()
    return list(_TRANSPORTS)
