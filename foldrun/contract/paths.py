"""Paths inside a desk: normalised, relative, and never outside it."""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from .payload import BINARY_MARKER, decode  # the server's own rule for what is text  # noqa: F401 - read from here by library.actions

MAX_PATH = 400
# Matched with fullmatch: `$` alone also matches before a trailing newline.
_SEGMENT = re.compile(r"[A-Za-z0-9._@+-][A-Za-z0-9 ._@+-]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# Never pushed: version control, environments, editor and OS litter.
IGNORED_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".foldrun", ".mypy_cache", ".pytest_cache"}
IGNORED_FILES = {".DS_Store", "Thumbs.db"}


class PathError(ValueError):
    """A path that may not be written; the message names it."""


def normalise_path(raw: str) -> str:
    """Return the canonical relative path, or raise PathError saying why not."""
    if not isinstance(raw, str) or raw == "":
        raise PathError("a file path is empty.")
    shown = raw if len(raw) <= 120 else raw[:117] + "…"
    if "\x00" in raw:
        raise PathError(f"{shown!r}: a path may not contain a NUL byte.")
    if _CONTROL.search(raw):
        # Shown with repr so a newline or tab in it stays visible on one line.
        raise PathError(f"{shown!r}: a path may not contain a control character (a newline, a tab).")
    if raw.startswith("/") or raw.startswith("\\") or re.match(r"^[A-Za-z]:[\\/]", raw):
        raise PathError(f"{shown}: absolute paths are refused; give a path relative to the desk.")
    path = raw.replace("\\", "/")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise PathError(f"{shown}: '..' is refused; a path must stay inside the desk.")
    if not parts:
        raise PathError(f"{shown!r}: not a file path.")
    for part in parts:
        if not _SEGMENT.fullmatch(part) or part.endswith(" "):
            raise PathError(
                f"{shown}: {part!r} has characters foldrun does not accept in a path; use letters, digits, '.', '-', '_', '@', '+' and spaces."
            )
    normal = str(PurePosixPath(*parts))
    if len(normal) > MAX_PATH:
        raise PathError(f"{shown}: the path is longer than {MAX_PATH} characters.")
    return normal


def is_ignored(relative: PurePosixPath) -> bool:
    return any(part in IGNORED_DIRS for part in relative.parts[:-1]) or relative.name in IGNORED_FILES


def walk_folder(root: Path):
    """(relative posix path, absolute Path) for every file a desk holds, in
    path order: ignored folders are pruned, never walked; symlinks skipped."""
    root = Path(root).resolve()
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and not os.path.islink(os.path.join(folder, d))]
        for name in names:
            path = Path(folder) / name
            if name in IGNORED_FILES or path.is_symlink() or not path.is_file():
                continue
            found.append((PurePosixPath(path.relative_to(root).as_posix()), path))
    found.sort(key=lambda item: str(item[0]))
    return found


def read_folder(root: Path) -> dict[str, str]:
    """Every text file under `root` by relative path. A file that is not UTF-8
    text is kept as BINARY_MARKER so `check` can name it rather than skip it."""
    return {
        str(relative): decode(path.read_bytes()) for relative, path in walk_folder(root) if not is_ignored(relative)
    }
