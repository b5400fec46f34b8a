"""Which browser build a call launches, and whether it has a window (spec tools.md, `version:` and `headless:`).

`version:` for Chrome is a release channel — `stable` (the default), `beta`
or `dev`, each a Chrome of its own where it is installed. For any engine it
can name a build dropped at `/opt/browser/<engine>/<version>/`
(`FOLDRUN_BROWSER_BUILDS` names another root). A version that is not
installed falls back to the default build and says so on stderr.

`headless: false` is the same browser with a window, 1920×1080, its pages the
window's size. With no screen (no `DISPLAY`), an in-step browser starts an
Xvfb of its own for the call and stops it after. It is the file's setting,
never a call's.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from ..errors import WebToolError
from .call import Call
from .limits import choose_engine
from .pool import LAUNCH_ARGS, BrowserPool, find_chromium

BUILDS_ROOT = Path("/opt/browser")
CHANNELS = {  # Chrome's release channels where Google's packages put them on Linux
    "stable": "/opt/google/chrome/chrome", "beta": "/opt/google/chrome-beta/chrome",
    "dev": "/opt/google/chrome-unstable/chrome",
}
WINDOW = (1920, 1080)
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
        raise WebToolError(f"web.browse.version: {version} is a channel (stable, beta, dev) or a build's folder "
                           f"name under {builds_root()}/{engine}/, not a path")
    if engine == "chrome" and version in CHANNELS:
        if Path(CHANNELS[version]).is_file():
            return CHANNELS[version]
        call.tool.log(f"browse: Chrome's {version} channel is not installed in this image ({CHANNELS[version]}); "
                      f"fell back to the default build")
        return default
    folder = builds_root() / engine / version
    found = _build_binary(folder) if folder.is_dir() else None
    if found:
        return found
    call.tool.log(f"browse: {engine} version {version} is not installed in this image (no build at {folder}/); "
                  f"fell back to the default build")
    return default


class Screen:
    """An Xvfb of the call's own, 1920×1080, started before the browser and stopped after it."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.display = ""

    def start(self) -> str:
        binary = shutil.which("Xvfb")
        if binary is None:
            raise WebToolError("browse: headless: false needs a screen, and this machine has neither one (no "
                               "DISPLAY) nor Xvfb to make one — install Debian's xvfb, or leave headless unset")
        for number in range(99, 160):  # :99 first, as the spec's pod has it; the next free one beside others
            if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
                continue
            process = subprocess.Popen([binary, f":{number}", "-screen", "0", f"{WINDOW[0]}x{WINDOW[1]}x24",
                                        "-nolisten", "tcp"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
            until = time.monotonic() + 10
            while time.monotonic() < until and process.poll() is None:
                if Path(f"/tmp/.X11-unix/X{number}").exists():
                    self.process, self.display = process, f":{number}"
                    return self.display
                time.sleep(0.05)
            if process.poll() is None:
                process.kill()
            process.wait()
        raise WebToolError("browse: headless: false could not start a virtual screen (Xvfb) for the call")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


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
