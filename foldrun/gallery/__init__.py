"""The gallery shelf: platform-maintained tools shipped inside the package.

The shelf sits beneath every account library ("laid down on the box at
boot"), so a platform upgrade reaches every account at once. Its files are
read from this package, never from the database; an account's *copy* of a
gallery tool lives in its library as ordinary revisions.

`FOLDRUN_GALLERY_DIR` points at another shelf folder (a laptop's fetched copy
under ~/.foldrun/gallery/<host>/, or a test's); the package's own shelf is
read once per process, another folder on every call.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def _read(root: Path) -> tuple[tuple[str, str], ...]:
    files: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        # The loader itself and bytecode are not shelf files; a tool's own
        # program (tools/x/run.py) is.
        if not path.is_file() or "/" not in relative or path.suffix == ".pyc" or "__pycache__" in path.parts:
            continue
        files.append((relative, path.read_text(encoding="utf-8")))
    return tuple(files)


@lru_cache(maxsize=1)
def _packaged() -> tuple[tuple[str, str], ...]:
    return _read(_ROOT)


def _shelf() -> tuple[tuple[str, str], ...]:
    override = os.environ.get("FOLDRUN_GALLERY_DIR")
    return _read(Path(override)) if override else _packaged()


def gallery_files() -> dict[str, str]:
    """Every shelf file by its path relative to a desk root (`tools/web/tool.md`)."""
    return dict(_shelf())


def gallery_tools() -> dict[str, dict[str, str]]:
    """The shelf's tools by name, each with its files by desk-relative path."""
    tools: dict[str, dict[str, str]] = {}
    for path, text in _shelf():
        parts = path.split("/")
        if parts[0] != "tools" or len(parts) < 2:
            continue
        name = parts[1][:-3] if len(parts) == 2 and parts[1].endswith(".md") else parts[1]
        tools.setdefault(name, {})[path] = text
    return tools
