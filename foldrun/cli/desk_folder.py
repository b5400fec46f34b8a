"""A desk folder on this machine, through the file contract: read it as the server would, check it, walk
it for a push, and read the findings a server answer carries. Loaded by `foldrun.cli.loader.desk_folder()`
only by the commands that read a desk (check, push, deploy, pull): the contract parses YAML and loads every
rule, which `foldrun --help` and the server commands never need.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path, PurePosixPath
from typing import Any

from foldrun.contract import Desk, Finding, check, platform_from_versions
from foldrun.engine.needs import secrets_needed
from foldrun.contract.paths import IGNORED_DIRS, PathError, is_ignored, normalise_path, read_folder
from foldrun.gallery import gallery_files

from vault.localfile import held_names

from .client import CliError, quote_path


def local_desk(root: Path, library: Path | None = None) -> Desk:
    """The desk in `root` as the server would see it: the gallery shelf shipped
    with this package beneath it, and a local copy of the account library
    when one is given."""
    library_files = read_folder(library) if library is not None else {}
    return Desk.from_folder(root, library=library_files, gallery=gallery_files())


def check_desk(desk: Desk, browser_versions: Any) -> list[Finding]:
    """check's findings; `browser_versions` are the signed-in server's (None offline: nothing said of them)."""
    return check(desk, mode="check", platform=platform_from_versions(browser_versions))


def pulled_path(raw: str) -> str:
    """A pulled file's path as the contract reads it; one it refuses is refused by name."""
    try:
        return normalise_path(raw)
    except PathError as exc:
        raise CliError(f"Refused to write a pulled file: {exc}") from None


def size_text(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{int(n)} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


# findings ------------------------------------------------------------------
def finding_from(data: Any) -> Finding | None:
    """A Finding from the server's JSON form of one."""
    if isinstance(data, Finding):
        return data
    if not isinstance(data, dict) or "message" not in data:
        return None
    return Finding(
        file=str(data.get("file") or data.get("path") or ""),
        line=data.get("line") or None,
        level=str(data.get("level") or "error"),  # type: ignore[arg-type]
        message=str(data["message"]),
        code=str(data.get("code") or ""),
    )


def findings_in(data: Any) -> list[Finding]:
    """Every finding a server answer carries, wherever it put them."""
    found: list[Finding] = []
    if isinstance(data, list):
        for item in data:
            finding = finding_from(item)
            if finding is not None:
                found.append(finding)
        return found
    if isinstance(data, dict):
        for key in ("findings", "errors", "warnings"):
            if isinstance(data.get(key), list):
                for finding in findings_in(data[key]):
                    if finding not in found:
                        found.append(finding)
    return found


# reading a folder for a push -----------------------------------------------
def read_desk_files(root: Path, out=None, skipped: list[str] | None = None) -> tuple[list[dict], int]:
    """Every file a push sends, as `{"path", "content", "encoding"}`, and their total size.

    Skips what `foldrun.contract.paths` never pushes (.git, .venv,
    node_modules, .foldrun …) and symlinks (named in `skipped`, when given, so
    the push can say so). UTF-8 text is sent as is, anything else
    base64-encoded. A path the contract refuses stops the push here, by name.
    """
    root = root.resolve()
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        # Prune in place: never walk into node_modules just to skip it.
        linked = sorted(d for d in dirs if d not in IGNORED_DIRS and os.path.islink(os.path.join(folder, d)))
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names + linked):
            path = Path(folder) / name
            if path.is_symlink():
                relative_link = path.relative_to(root).as_posix()
                if skipped is not None and not is_ignored(PurePosixPath(relative_link)):
                    skipped.append(relative_link + ("/" if name in linked else ""))
                continue
            if not path.is_file():
                continue
            if is_ignored(PurePosixPath(path.relative_to(root).as_posix())):
                continue
            found.append(path)
    files: list[dict] = []
    total = 0
    for index, path in enumerate(found, 1):
        raw = path.relative_to(root).as_posix()
        try:
            relative = normalise_path(raw)
        except PathError as exc:
            raise CliError(f"Cannot push: {exc}") from None
        data = path.read_bytes()
        total += len(data)
        try:
            files.append({"path": relative, "content": data.decode("utf-8"), "encoding": "utf-8"})
        except UnicodeDecodeError:
            files.append({"path": relative, "content": base64.b64encode(data).decode("ascii"), "encoding": "base64"})
        if out is not None:
            out.progress(f"Reading files: {index}/{len(found)} ({size_text(total)})")
    return files, total


# the secrets a desk needs ----------------------------------------------------
def vault_names(ctx, workspace: str | None) -> tuple[set[str] | None, str, str]:
    """The names the vault that runs will read holds, how a sentence names it, and the flag that sets one."""
    if workspace and ctx.signed_in:
        try:
            rows = ctx.api.list(f"/api/workspaces/{quote_path(workspace)}/secrets")
            return (
                {str(r.get("name")) for r in rows if isinstance(r, dict)},
                f"the {workspace} vault",
                f"--to {workspace}",
            )
        except CliError:
            return None, f"the {workspace} vault", f"--to {workspace}"
    try:
        return held_names(ctx.config_dir), "the laptop vault", "--local"
    except Exception:  # noqa: BLE001 - a laptop with no vault yet holds nothing
        return set(), "the laptop vault", "--local"


def needed_secrets(ctx, desk: Desk, workspace: str | None) -> list[dict[str, Any]]:
    """Each secret the desk needs (`check`): its name, who asks for it, the vault its runs read, whether that
    vault holds it (None when the vault could not be asked) and the command that sets it."""
    needed = secrets_needed(desk)
    if not needed:
        return []
    held, vault, flag = vault_names(ctx, workspace)
    return [
        {
            "name": name,
            "for": list(where),
            "vault": vault,
            "set": None if held is None else name in held,
            "fix": f"foldrun secrets set {name} {flag}",
        }
        for name, where in needed.items()
    ]
