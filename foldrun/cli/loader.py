"""The CLI's second registry loader (the first, `main.build_parser`, loads the
`cmd_*` modules by name). A `cmd_*` module is imported by every `foldrun`
call, `--version` included, so it names what only some commands need here
instead of importing it:

- `laptop(ctx)` — `foldrun.cli.laptop`: the engine, the laptop vault, the
  local notifier, for a command that works on this machine;
- `desk_folder()` — `foldrun.cli.desk_folder`: the file contract (YAML, every
  rule), for the commands that read a desk folder (check, push, deploy, pull);
- `mcp_bridge(ctx)` — `foldrun.cli.mcp_bridge`: the MCP SDK, for `foldrun mcp`;
- `gallery_copy()` — `foldrun.cli.gallery_copy`: the laptop's copy of the gallery shelf (tempfile, the
  shipped shelf), for `foldrun gallery pull`;
- `trace_view()` — `foldrun.trace_view`: a run's trace as the Run page shows it, for `foldrun logs`;
- `foldrun.net` (httpx and the connect-time guard) comes with either, and is
  opened to this machine's own addresses for that command (`Context.close`
  puts the policy back).

tests/cli/test_the_cli_answers_at_once.py holds `--version` to importing
neither Django nor Celery.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

LAPTOP = "foldrun.cli.laptop"
DESK_FOLDER = "foldrun.cli.desk_folder"
MCP_BRIDGE = "foldrun.cli.mcp_bridge"
GALLERY_COPY = "foldrun.cli.gallery_copy"
TRACE_VIEW = "foldrun.trace_view"
NET = "foldrun.net"


def net() -> ModuleType:
    return importlib.import_module(NET)


def on_this_machine(ctx: Any) -> None:
    """The command works here: it may call the user's own ollama, receiver or server on a private address."""
    ctx.open_network(net())


def laptop(ctx: Any) -> ModuleType:
    on_this_machine(ctx)
    return importlib.import_module(LAPTOP)


def mcp_bridge(ctx: Any) -> ModuleType:
    on_this_machine(ctx)
    return importlib.import_module(MCP_BRIDGE)


def desk_folder() -> ModuleType:
    return importlib.import_module(DESK_FOLDER)


def gallery_copy() -> ModuleType:
    return importlib.import_module(GALLERY_COPY)


def trace_view() -> ModuleType:
    return importlib.import_module(TRACE_VIEW)
