"""A browser of the step's own, for what the pool's Chromium was not launched with: `extensions` and `webgpu`.

spec/tools.md, "What this agent's browser may do": `extensions:` loads unpacked Chrome extensions from the
workspace, and "the browser then runs in the step rather than the account's pod, in Chromium"; `webgpu: true`
gives the page WebGPU, on a software GPU where there is none. Both are launch flags, so the call gets a Chromium
launched for it (a persistent context: Chromium loads extensions only into one), closed with the call or its
session, its profile folder removed with it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import paths
from ..errors import WebToolError
from .pool import LAUNCH_ARGS, find_chromium

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext

    from .call import Call

# Debian's Chromium has no GPU here: WebGPU is behind --enable-unsafe-webgpu on Linux, and SwiftShader is the
# software adapter it then answers with (tried on this image: without the first flag requestAdapter() is null).
WEBGPU_FLAGS = ["--enable-unsafe-webgpu", "--use-angle=swiftshader", "--enable-features=Vulkan"]
EXAMPLE = "extensions/my-extension"


def _listed(raw: Any, where: str) -> list[str]:
    if raw in (None, "", []):
        return []
    if isinstance(raw, str):
        return [p.strip() for p in raw.split(",") if p.strip()]
    if isinstance(raw, list) and all(isinstance(p, str) for p in raw):
        return [p.strip() for p in raw if p.strip()]
    raise WebToolError(f"browse: {where} takes workspace paths of unpacked extensions, such as {EXAMPLE}")


def extension_folders(call: "Call") -> list[Path]:
    """The block's extensions and then the call's, each checked to be an unpacked extension in the workspace."""
    wanted = _listed(call.block.get("extensions"), "web.browse.extensions") + _listed(
        call.args.get("extensions"), "extensions="
    )
    folders: list[Path] = []
    for raw in dict.fromkeys(wanted):
        folder = paths.save_path(call.tool.sandbox, raw, arg="extensions", for_write=False)
        if not folder.is_dir():
            raise WebToolError(
                f"browse: extensions: {raw} is not a folder in the agent directory; extensions "
                f"takes workspace paths of unpacked extensions, such as {EXAMPLE}"
            )
        manifest = folder / "manifest.json"
        if not manifest.is_file():
            raise WebToolError(f"browse: extensions: {raw} is not an unpacked extension — it has no manifest.json")
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise WebToolError(
                f"browse: extensions: {raw}/manifest.json is not JSON ({str(exc)[:120]}) — an "
                f"unpacked extension's manifest is a JSON object"
            ) from None
        if not isinstance(data, dict) or not isinstance(data.get("manifest_version"), int):
            raise WebToolError(
                f"browse: extensions: {raw}/manifest.json has no manifest_version — it is not a "
                f"Chrome extension's manifest"
            )
        if any(p.is_symlink() for p in folder.rglob("*")):  # Chromium would read through it, out of the workspace
            raise WebToolError(
                f"browse: extensions: {raw} holds a symlink; an extension's files stay inside the agent directory"
            )
        folders.append(folder)
    return folders


def webgpu_on(call: "Call") -> bool:
    value = call.setting("webgpu")
    if value in (None, "", False, "false"):
        return False
    if value is True or value == "true":
        return True
    raise WebToolError("browse: webgpu= is true or false")


def own_flags(call: "Call") -> list[str] | None:
    """The extra launch flags this call needs, or None when the pool's browser will do."""
    folders = extension_folders(call)
    flags: list[str] = []
    if folders:
        joined = ",".join(str(f) for f in folders)
        flags += [f"--disable-extensions-except={joined}", f"--load-extension={joined}"]
    if webgpu_on(call):
        flags += WEBGPU_FLAGS
    return flags or None


@lru_cache(maxsize=4)
def chromium_version(executable: str) -> str:
    """`Chromium 156.0.7435.0 built on Debian …` → `156.0.7435.0` (for the user agent, before a launch)."""
    try:
        words = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=10).stdout.split()
    except (OSError, subprocess.SubprocessError):
        return "0"
    return next((w for w in words if w[:1].isdigit()), "0")


# id(context) -> the Playwright that launched it: a session's own browser is alive while both are (stopping the
# pool's Playwright, when it idles out, ends the browser without a close event).
_LIVE: dict[int, Any] = {}


def alive(pool: Any, context: "BrowserContext") -> bool:
    return _LIVE.get(id(context)) is not None and _LIVE.get(id(context)) is pool._playwright


def launch(call: "Call", flags: list[str], options: dict) -> "BrowserContext":
    """Chromium launched for this call with `flags`, as one persistent context with the call's options."""
    pool = call.tool.browsers
    executable = pool.executable or find_chromium()
    profile = tempfile.mkdtemp(prefix="foldrun-browse-")
    args = [a for a in LAUNCH_ARGS if not (a == "--disable-gpu" and "--enable-unsafe-webgpu" in flags)] + flags
    stored = options.pop("storage_state", None)  # a persistent context takes no storage_state: added below
    try:
        context = pool.playwright().chromium.launch_persistent_context(
            profile,
            executable_path=executable,
            args=args,
            headless=getattr(pool, "headless", True),
            **({"env": {**os.environ, **pool.env}} if getattr(pool, "env", None) else {}),
            **options,
        )
    except Exception as exc:  # noqa: BLE001 - a launch that failed is a sentence, its profile removed
        shutil.rmtree(profile, ignore_errors=True)
        raise WebToolError(
            f"browse: Chromium with {'extensions' if '--load-extension' in ' '.join(flags) else 'WebGPU'}"
            f" did not start: {str(exc).splitlines()[0][:200]}"
        ) from None
    _LIVE[id(context)] = pool.playwright()

    def closed(_context: Any) -> None:
        _LIVE.pop(id(context), None)
        shutil.rmtree(profile, ignore_errors=True)

    context.on("close", closed)
    if stored and stored.get("cookies"):
        context.add_cookies(stored["cookies"])
    if stored and any(o.get("localStorage") for o in stored.get("origins") or []):
        call.tool.log(
            "browse: a browser launched for extensions or WebGPU takes the saved login's cookies, not its localStorage"
        )
    return context
