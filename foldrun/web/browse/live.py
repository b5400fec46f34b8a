"""`live: true` — a page that outlives the call (spec tools.md, "How this agent's browser presents itself").

A live page is a Chromium of the step's own, started as a process beside the
step with a DevTools port on loopback; each call reattaches to it over CDP,
drives the page as the last call left it, and lets go of the connection when
it returns — the browser and its page keep running. `session` names which
live page (default `live`). `live=end` closes it; one unused for 15 minutes
closes itself; the step's end closes every one. Its connections go through a
guard proxy the browser is started with, which reads the call now driving it,
so a live page is held to the same addresses as any other call.

Live pages run in the step rather than the account's browser pod: the pod
hands out a browser per connection and closes it with the connection.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import WebToolError
from ..net import GuardProxy
from .call import Call
from .launch import choose_launch
from .limits import choose_engine
from .pool import LAUNCH_ARGS, BrowserPool
from .util import safe_name, steps_of, stop_group

IDLE_SECONDS = 15 * 60
DEFAULT_NAME = "live"
UNSUPPORTED = ("video", "har", "auth", "device")  # said, and carried on without
START_SECONDS = 20.0


def wanted(tool: Any, args: dict) -> bool:
    """Whether this call drives a live page: `live` on the call, else the block's `live: true`."""
    value = args.get("live")
    if value not in (None, ""):
        return value is True or str(value).lower() in ("true", "end")
    block = tool.config.get("browse")
    return isinstance(block, dict) and block.get("live") is True


class LivePage:
    """One live browser: its process, its DevTools address, its guard proxy and the call now driving it."""

    def __init__(
        self, name: str, process: subprocess.Popen, ws: str, folder: Path, proxy: GuardProxy | None, holder: dict
    ) -> None:
        self.name, self.process, self.ws, self.folder, self.proxy, self.holder = (
            name,
            process,
            ws,
            folder,
            proxy,
            holder,
        )
        self.browsers = BrowserPool(cdp=ws)  # reattached for each call, let go after it
        self.last_used = time.monotonic()
        self.url = ""  # where the last call left the page
        self.calls = 0
        self.seeded: bool | str = False  # a secret's cookies signed it in: no script on it, ever
        self.busy = False  # a call drives it now: its idle clock is stopped
        self.screens: list = []  # its Xvfb, when it has a window and the machine no screen

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self.browsers.close()
        except Exception:  # noqa: BLE001 - its connection is already gone
            pass
        stop_group(self.process)
        if self.proxy is not None:
            self.proxy.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        for screen in self.screens:
            screen.stop()


class LivePages:
    """One step's live pages, by name (WebTool.live)."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self.idle_seconds = idle_seconds
        self.pages: dict[str, LivePage] = {}
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None

    def get(self, name: str) -> LivePage | None:
        with self._lock:
            page = self.pages.get(name)
        if page is not None and (not page.alive() or time.monotonic() - page.last_used > self.idle_seconds):
            self.end(name)
            return None
        return page

    def start(
        self,
        call: "Call",
        name: str,
        executable: str,
        headless: bool = True,
        extra_args: list[str] | None = None,
        env: dict | None = None,
    ) -> LivePage:
        """A Chromium of its own, its DevTools port on loopback, every connection through a guard proxy."""
        holder = {"call": call}
        tool = call.tool
        proxied = bool(call.allowed_domains() or not tool.allow_private)
        proxy = GuardProxy(lambda host, port: holder["call"].connect_policy(host, port)) if proxied else None
        folder = Path(tempfile.mkdtemp(prefix="foldrun-live-"))
        command = [
            executable,
            *LAUNCH_ARGS,
            *(extra_args or []),
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            f"--user-data-dir={folder}",
            "--no-default-browser-check",
        ]
        if headless:
            command += ["--headless=new", "--window-size=1366,900"]
        if proxy is not None:  # loopback too: the guard decides, as it does for a call's own context
            command += [f"--proxy-server={proxy.playwright_proxy()['server']}", "--proxy-bypass-list=<-loopback>"]
        command.append("about:blank")
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
        marker = folder / "DevToolsActivePort"
        until = time.monotonic() + START_SECONDS
        while time.monotonic() < until and process.poll() is None:
            lines = marker.read_text().splitlines() if marker.is_file() else []
            if len(lines) >= 2:
                page = LivePage(
                    name, process, f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}", folder, proxy, holder
                )
                with self._lock:
                    self.pages[name] = page
                self._arm()
                return page
            time.sleep(0.05)
        LivePage(name, process, "", folder, proxy, holder).close()
        raise WebToolError(
            f"browse: the live page {name} did not start — its browser never opened its DevTools "
            f"port within {START_SECONDS:.0f}s"
        )

    def end(self, name: str) -> bool:
        with self._lock:
            page = self.pages.pop(name, None)
        if page is None:
            return False
        page.close()
        return True

    def close(self) -> None:
        """The step's end: every live page goes."""
        if self._timer is not None:
            self._timer.cancel()
        for name in list(self.pages):
            self.end(name)

    def _arm(self) -> None:
        """A live page left idle closes itself, with or without a next call to notice."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = threading.Timer(min(60.0, max(0.2, self.idle_seconds / 4)), self._sweep)
        self._timer.daemon = True
        self._timer.start()

    def _sweep(self) -> None:
        now = time.monotonic()
        for name, page in list(self.pages.items()):
            if not page.alive() or (not page.busy and now - page.last_used > self.idle_seconds):
                self.end(name)
        if self.pages:
            self._arm()


class TabGone(WebToolError):
    """The live page's tab crashed or went: the page is closed, and the next call starts fresh."""


def tab_gone(name: str) -> TabGone:
    return TabGone(
        f"browse: the live page {name} crashed — its tab is gone, and what it held with it; it was "
        f"closed, and the next call starts a fresh one (pass url= to open the page again)"
    )


def check_tab(live_page: LivePage, page: Any) -> None:
    """In the browser's thread, on reattaching: the tab the last call left must still answer."""
    try:
        page.evaluate("1")
    except Exception:  # noqa: BLE001 - a crashed renderer ("Target crashed") or a closed target
        raise tab_gone(live_page.name) from None
    if live_page.url and page.url in ("", "about:blank") and live_page.url != "about:blank":
        raise tab_gone(live_page.name)  # the tab went, and this one is a new blank one


def run_live(tool: Any, args: dict, run: Any) -> str:
    """One call on a live page: started by the first call, reattached by the next, closed by `live=end`."""
    name = str(args.get("session") or DEFAULT_NAME)
    safe_name(name, "session")
    if tool.live is None:
        tool.live = LivePages()
    if str(args.get("live")).lower() == "end":
        if tool.live.end(name):
            tool.log(f"browse: live page {name} closed (live=end)")
            return f"live page {name} closed"
        return f"there is no live page {name} open in this step; nothing to close"
    dropped = [k for k in UNSUPPORTED if args.get(k) not in (None, "", False, "false")]
    block = tool.config.get("browse") if isinstance(tool.config.get("browse"), dict) else {}
    dropped += [k for k in UNSUPPORTED if k not in dropped and block.get(k) not in (None, "", False)]
    own = {k: v for k, v in args.items() if k not in ("live", "session", *UNSUPPORTED)}
    call = Call(tool, own)
    mode = str(args.get("mode") or "text").strip().lower()
    asked = {**own, "live": True} if args.get("live") not in (None, "") else own  # else the block's live: true
    choose_engine(call, asked, mode, steps_of(args.get("actions")))  # Chromium only, in check's own words
    notes = [f"live: {key} is not supported on a live page; carried on without it" for key in dropped]
    for line in notes:
        tool.log(f"browse: {line}")
    page = tool.live.get(name)
    if page is None:
        if args.get("url") in (None, ""):
            raise WebToolError(f"browse: there is no live page {name} in this step yet — the first call needs url=")
        try:
            executable, headless, extra, env = choose_launch(tool, call, in_step=True)
            page = tool.live.start(call, name, executable, headless, extra, env)
        except BaseException:  # however the start ends, its screens stop with it; raised again
            while tool.screens:
                tool.screens.pop().stop()
            raise
        page.screens, tool.screens = list(tool.screens), []  # its screen lives as long as it does
        tool.log(
            f"browse: live page {name} opened — kept beside the step until live=end, 15 minutes unused or "
            f"the step's end"
        )
    page.last_used, page.busy = time.monotonic(), True
    tool.live_page, tool._call_browsers = page, page.browsers
    try:
        answer = page.browsers.run(lambda: run(tool, own))
    except TabGone:
        tool.live.end(name)
        raise
    except WebToolError as exc:
        if "crash" in str(exc).lower() or not page.alive():
            tool.live.end(name)
            raise tab_gone(name) from None
        raise
    except Exception as exc:  # noqa: BLE001 - a crash mid-call is Playwright's own error
        if "crash" in str(exc).lower() or not page.alive():
            tool.live.end(name)
            raise tab_gone(name) from None
        raise
    finally:
        tool.live_page, tool._call_browsers = None, None
        page.last_used, page.busy = time.monotonic(), False
        page.calls += 1
        if name in tool.live.pages:
            page.browsers.close()  # let go of the connection; the browser and its page keep running
    return "\n".join(notes + [answer]) if notes else answer
