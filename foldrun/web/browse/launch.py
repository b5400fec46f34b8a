"""Which browser build a call launches, and whether it has a window (spec tools.md, `version:` and `headless:`).

`version:` for Chrome is a release channel — `stable` (the default), `beta`
or `dev`, each a Chrome of its own where it is installed. For any engine it
can name a build dropped at `/opt/browser/<engine>/<version>/`
(`FOLDRUN_BROWSER_BUILDS` names another root). A version that is not
installed falls back to the default build and says so on stderr.

`headless: false` is the same browser with a window, 1920×1080, its pages the
window's size. On the account's pool such a call is launched on a windowed
pod — a server under an Xvfb of its own (servers.py) — by the same lost-pod
rules as any call there. In the step (the CLI, a re-run after a lost pod) with
no screen (no `DISPLAY`), the browser starts an Xvfb of its own for the call
and stops it after. It is the file's setting, never a call's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import WebToolError
from .call import Call
from .limits import choose_engine
from .lost import run_on_pod
from .pool import LAUNCH_ARGS, BrowserPool, find_chromium
from .screen import WINDOW, Screen

BUILDS_ROOT = Path("/opt/browser")
CHANNELS = {  # Chrome's release channels where Google's packages put them on Linux
    "stable": "/opt/google/chrome/chrome",
    "beta": "/opt/google/chrome-beta/chrome",
    "dev": "/opt/google/chrome-unstable/chrome",
}
_IN_BUILD = ("chrome", "chromium", "chrome-linux/chrome", "chrome-linux64/chrome", "headless_shell")


def builds_root() -> Path:
    return Path(os.environ.get("FOLDRUN_BROWSER_BUILDS") or BUILDS_ROOT)


def headful(call: "Call") -> bool:
    """`headless: false` in the block or the identity (there is no call argument for it)."""
    return call.identity.get("headless", call.block.get("headless")) is False


def version_of(call: "Call") -> str | None:
    value = call.identity.get("version", call.block.get("version"))
    return None if value in (None, "") else str(value).strip()


def wants_own_launch(call: "Call") -> bool:
    """A call whose browser is not the usual one: a pinned version, or a window."""
    return headful(call) or version_of(call) is not None


def _build_binary(folder: Path) -> str | None:
    for name in _IN_BUILD:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def executable_for(call: "Call", engine: str) -> str:
    """The binary to launch for `version:`, or the default build (saying so when the version is not there)."""
    default = find_chromium() or "/usr/bin/chromium"
    version = version_of(call)
    if version is None:
        return default
    if "/" in version or version in (".", ".."):
        raise WebToolError(
            f"web.browse.version: {version} is a channel (stable, beta, dev) or a build's folder "
            f"name under {builds_root()}/{engine}/, not a path"
        )
    if engine == "chrome" and version in CHANNELS:
        if Path(CHANNELS[version]).is_file():
            return CHANNELS[version]
        call.tool.log(
            f"browse: Chrome's {version} channel is not installed in this image ({CHANNELS[version]}); "
            f"fell back to the default build"
        )
        return default
    folder = builds_root() / engine / version
    found = _build_binary(folder) if folder.is_dir() else None
    if found:
        return found
    call.tool.log(
        f"browse: {engine} version {version} is not installed in this image (no build at {folder}/); "
        f"fell back to the default build"
    )
    return default


def window_args() -> list[str]:
    return [f"--window-size={WINDOW[0]},{WINDOW[1]}", "--window-position=0,0", "--start-maximized"]


def choose_launch(tool: Any, call: "Call", in_step: bool = True) -> tuple[str, bool, list[str], dict]:
    """(executable, headless, extra flags, extra environment) for a browser of the call's own. With a window
    and no screen, an Xvfb is started and kept on `tool.screens` until the browser is gone."""
    engine = choose_engine(call, call.args, str(call.args.get("mode") or "text"), [])
    executable = executable_for(call, "chrome" if engine == "chrome" else "chromium")
    if not headful(call):
        return executable, True, [], {}
    env: dict = {}
    where = f"on this machine's screen ({os.environ['DISPLAY']})" if os.environ.get("DISPLAY") else ""
    if not where:
        screen = Screen()
        env["DISPLAY"] = screen.start()
        tool.screens.append(screen)
        where = f"on a virtual screen (Xvfb {env['DISPLAY']}, {WINDOW[0]}x{WINDOW[1]}) started for the call"
    tool.log(f"browser: with a window (headless: false) — {where}")
    return executable, False, window_args(), env


def run_on_pods(tool: Any, args: dict, run: Any) -> str:
    """A pinned `version:` or a window, on the account's pool: the build is launched on a pod, a window on a
    windowed pod (a server under an Xvfb of its own), by the same lost-pod rules as any call there."""
    call = Call(tool, args)
    engine = choose_engine(call, call.args, str(call.args.get("mode") or "text"), [])
    executable = executable_for(call, "chrome" if engine == "chrome" else "chromium")
    windowed = headful(call)
    browsers = tool.pods.call_browsers(executable, windowed, [*LAUNCH_ARGS, *(window_args() if windowed else [])])

    def job() -> str:
        if windowed:
            browsers.browser()  # connected first, so the line names the screen the window is on
            tool.log(
                f"browser: with a window (headless: false) — on the browser pod's virtual screen (Xvfb "
                f"{browsers.pod.screen.display}, {WINDOW[0]}x{WINDOW[1]})"
            )
        return run(tool, args)

    tool._call_browsers = browsers
    try:
        return run_on_pod(tool, args, job)
    finally:
        tool._call_browsers = None


def run_own(tool: Any, args: dict, run: Any) -> str:
    """A call on a browser of its own, launched in the step for it and closed after: a pinned `version:` or a
    window. Its Xvfb, when it started one, stops with it."""
    call = Call(tool, args)
    try:
        executable, headless, extra, env = choose_launch(tool, call)
        pool = BrowserPool(executable=executable, args=[*LAUNCH_ARGS, *extra], headless=headless, env=env)
        tool._call_browsers = pool
        try:
            return pool.run(lambda: run(tool, args))
        finally:
            tool._call_browsers = None
            pool.close()
    finally:
        while tool.screens:
            tool.screens.pop().stop()
