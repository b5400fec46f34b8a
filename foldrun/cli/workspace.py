"""Which workspace a command means: --to, else the one the desk folder was pushed to."""
from __future__ import annotations

from pathlib import Path, PurePosixPath

from .client import CliError

WORKSPACE_FILE = PurePosixPath(".foldrun") / "workspace"


def stored_workspace(root: Path) -> str | None:
    """The workspace `foldrun push` remembered in ROOT/.foldrun/workspace, if any."""
    try:
        name = (root / WORKSPACE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name or None


def desk_workspace(given: str | None, root: Path = Path("."), flag: str = "--to") -> str:
    """--to WS, else the workspace this desk folder was pushed to."""
    name = given or stored_workspace(root)
    if not name:
        shown = f"./{WORKSPACE_FILE}" if root == Path(".") else str(root / WORKSPACE_FILE)
        raise CliError(f"Name a workspace with {flag} WS; {shown} does not say one.")
    return name
