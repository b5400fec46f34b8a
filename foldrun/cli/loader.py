"""The CLI's second registry loader (the first, `main.build_parser`, loads the
`cmd_*` modules by name): `laptop()` imports `foldrun.cli.laptop` — the
engine, the laptop vault, the local notifier — when a command works on this
machine. A `cmd_*` module is imported by every `foldrun` call, so it names
that module here instead of importing it (see laptop.py's docstring).
"""
from __future__ import annotations

import importlib
from types import ModuleType

LAPTOP = "foldrun.cli.laptop"


def laptop() -> ModuleType:
    return importlib.import_module(LAPTOP)
