"""The laptop's copy of the gallery (tools.md, "On a laptop"): the shelf comes from the platform you are
signed in to and is kept under `~/.foldrun/gallery/<host>/`; `foldrun run --local` fetches it before it
starts, and offline the last copy is used and the run says so.

    pull(ctx)            fetch every shelf tool's files and replace the copy whole; returns the manifest
    for_run(ctx)         (files, note): the shelf a laptop run resolves against, and what it says about it
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit

from foldrun.gallery import gallery_files

from .client import CliError, quote_path

MANIFEST = ".pulled.json"


def host_of(url: str) -> str:
    """The folder name for a platform: its host (and port, as host_port)."""
    return urlsplit(url).netloc.replace(":", "_") or "unknown"


def folder(ctx) -> Path:
    return Path(ctx.config_dir) / "gallery" / host_of(ctx.config.url or "")


def pull(ctx) -> dict:
    """Fetch the shelf from the signed-in platform; the copy is replaced only once every file arrived."""
    listing = ctx.api.get("/api/gallery").get("results", [])
    files: dict[str, str] = {}
    tools = []
    for row in listing:
        name = str(row["name"])
        shelf = ctx.api.get(f"/api/gallery/{quote_path(name)}")
        for item in shelf.get("files", []):
            files[str(item["path"])] = str(item["content"])
        tools.append(
            {"name": name, "files": len(shelf.get("files", [])), "kept": bool(row.get("kept")), "mark": row.get("mark")}
        )
    target = folder(ctx)
    target.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for path, text in files.items():
            parts = Path(path).parts
            if Path(path).is_absolute() or ".." in parts:
                raise CliError(
                    f"the gallery from {ctx.config.url} names {path}, a path outside its folder; nothing was kept."
                )
            (building / path).parent.mkdir(parents=True, exist_ok=True)
            (building / path).write_text(text, encoding="utf-8")
        manifest = {
            "url": ctx.config.url,
            "pulled_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "tools": tools,
        }
        (building / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        old = target.with_name(f".{target.name}.old")
        if target.exists():
            os.replace(target, old)
        os.replace(building, target)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return {**manifest, "folder": str(target)}


def last_copy(ctx) -> tuple[dict[str, str], dict] | None:
    """The copy pulled before (its files and manifest), or None."""
    target = folder(ctx)
    try:
        manifest = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    files: dict[str, str] = {}
    for full in target.rglob("*"):
        if full.is_file() and full.name != MANIFEST:
            files[full.relative_to(target).as_posix()] = full.read_text(encoding="utf-8")
    return files, manifest


def for_run(ctx) -> tuple[dict[str, str], str | None]:
    """The shelf a laptop run uses, and the sentence it says about it (None when the fetch worked)."""
    if not ctx.signed_in:
        return gallery_files(), None  # a laptop that signed in nowhere runs the shelf the CLI carries
    try:
        pull(ctx)
    except CliError as exc:
        reason = exc.message.rstrip(".")
        kept = last_copy(ctx)
        if kept is not None:
            files, manifest = kept
            return files, (
                f"the gallery could not be fetched from {ctx.config.url} ({reason}); this run uses the "
                f"last copy, pulled {manifest.get('pulled_at')}"
            )
        return gallery_files(), (
            f"the gallery could not be fetched from {ctx.config.url} ({reason}) and no copy was "
            "pulled before; this run uses the copy packaged with the CLI"
        )
    kept = last_copy(ctx)
    assert kept is not None
    return kept[0], None
