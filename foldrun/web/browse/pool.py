"""The browser a worker process drives: one Chromium, launched on first use, in a thread of its own."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import WebToolError
from .driver import Driver
from .spare import Spares, closing_on
from .timing import mark

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # WebRTC held to proxied transports: no UDP around the guard proxy.
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
]

IDLE_SECONDS = 15 * 60
SETTLE_SECONDS = 10.0  # how long the driver waits, between calls, for the next call's context
# A call that comes sooner than this after the last one answered came back to back (no model turn between them):
# it takes a spare made before, and no spare is made beside it — they are made again in the first quiet gap.
QUIET_SECONDS = 0.25


class PodGone(Exception):
    """The browser pod's connection closed under a call."""


class PodUnreachable(Exception):
    """The browser pod could not be reached: the call never got there."""


class BrowserPool:
    """One Chromium for a worker process (or a test module), launched on first use.

    Playwright's sync objects belong to the thread that made them, and that
    thread may not use the ORM, so the pool drives its browser from a thread of
    its own (`Driver`): `run(job)` runs a browse call there, and `close` from
    any thread is carried there.
    """

    def __init__(
        self,
        executable: str | None = None,
        args: list[str] | None = None,
        idle_seconds: float = IDLE_SECONDS,
        pods: Any = None,
        cdp: str | None = None,
        headless: bool = True,
        env: dict | None = None,
    ) -> None:
        self.executable = executable
        self.headless = headless  # False: a window (launch.py), its pages the window's size
        self.env = dict(env or {})  # the browser's own additions (a window's DISPLAY)
        self.args = list(args or LAUNCH_ARGS)
        self.idle_seconds = idle_seconds
        self._playwright = None
        self._browser = None
        self._thread: int | None = None
        self._devices: dict | None = None
        self.last_used = 0.0
        self.launches = 0
        self.users = 0
        self.driver = Driver()
        self.pods = pods  # the account's AccountPool: connect to its pods instead of launching here
        self.pod: Any = None  # the pod the browser is connected to
        # A browser session's own Chromium (its CDP endpoint on loopback): this step browses *in* that session —
        # its page and cookies are the session's, and closing the pool only disconnects from it.
        self.cdp = cdp
        self.spares = Spares()  # the next calls' plain contexts, made between calls (spare.py)

    def browser(self):  # noqa: ANN201
        if self._thread is not None and self._thread != threading.get_ident():
            raise WebToolError("browse: the browser belongs to another thread of this worker")
        if self._browser is not None and not self._browser.is_connected():
            if self.pods is not None:  # the pod went: the call's caller reconnects, by the lost-pod rules
                raise PodGone("Browser closed: the browser pod's connection is gone")
            self.close()
        if self._browser is not None and not self._browser.is_connected() and self.cdp:
            raise WebToolError("browse: the browser session ended under this step; its browser is gone")
        if self._browser is None and self.cdp:
            self._connect_session()
        if self._browser is None and self.pods is not None:
            self._connect()
        if self._browser is None:
            executable = self.executable or find_chromium()
            if executable is not None and not Path(executable).exists():
                raise WebToolError(f"browse: no browser at {executable}. {INSTALL_SENTENCE}")
            self.playwright()
            try:  # no system Chromium: Playwright's own download, where `playwright install chromium` put one
                self._browser = self._playwright.chromium.launch(
                    executable_path=executable,
                    args=self.args,
                    headless=self.headless,
                    **({"env": {**os.environ, **self.env}} if self.env else {}),
                )
            except Exception as exc:  # noqa: BLE001 - closed, judged by its words, else raised as it was
                self.close()
                if "Executable doesn't exist" in str(exc) or "playwright install" in str(exc):
                    raise WebToolError(f"browse: no browser was found. {INSTALL_SENTENCE}") from None
                raise
            self.launches += 1
        self.last_used = time.monotonic()
        return self._browser

    def playwright(self):  # noqa: ANN201
        """This thread's Playwright, started without a browser (a vendor's browser is connected to with it, and a
        step's own launch for extensions or WebGPU is made with it)."""
        if self._playwright is None:
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._thread = threading.get_ident()
        return self._playwright

    def _connect(self) -> None:
        """A browser of this step's own on the account's pod, launched there with the in-step flags."""
        from playwright.sync_api import sync_playwright

        executable = self.executable or find_chromium()
        if self._playwright is None:
            self._playwright = sync_playwright().start()
            self._thread = threading.get_ident()
        if self.pod is not None:
            self.pods.done_with(self.pod)
        # A window is drawn on a windowed server's own screen (servers.py); the flags cross (`--unsafe`).
        self.pod = self.pods.pod(windowed=not self.headless)
        options = {
            "args": self.args,
            "headless": self.headless,
            **({"executablePath": executable} if executable else {}),
        }
        try:
            self._browser = self._playwright.chromium.connect(
                self.pod.ws, timeout=10_000, headers={"x-playwright-launch-options": json.dumps(options)}
            )
        except Exception as exc:  # noqa: BLE001 - the call never reached the pod
            raise PodUnreachable(f"the browser pod did not answer ({str(exc).splitlines()[0][:160]})") from None
        self.launches += 1

    def _connect_session(self) -> None:
        """The session's browser, over CDP: its default context and pages are the session's own."""
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._thread = threading.get_ident()
        try:
            self._browser = self._playwright.chromium.connect_over_cdp(self.cdp, timeout=10_000)
        except Exception as exc:  # noqa: BLE001 - the session's browser is gone or never answered
            self.close()
            raise WebToolError(
                f"browse: the browser session did not answer ({str(exc).splitlines()[0][:160]})"
            ) from None
        self.launches += 1

    def session_page(self):  # noqa: ANN201
        """The session's page: the first tab of its default context (opened when it has none)."""
        browser = self.browser()
        context = browser.contexts[0] if browser.contexts else browser.new_context()
        live = [p for p in context.pages if not p.is_closed()]
        return context, (live[0] if live else context.new_page())

    def take_spare(self, key: str, call: Any) -> tuple[Any, Any, dict, Any] | None:
        """A spare (context, page, holder, guard proxy) made with `key`'s options, for `call` alone; else None."""
        return self.spares.take(key, call, self._browser)

    def make_spare(self, key: str, options: dict, proxied: bool) -> None:
        """Ask for the next call's context with these options (made once this call has answered: no tab opens
        beside it)."""
        if self.cdp or self._browser is None or not self._browser.is_connected():
            return
        self.spares.wanted = (key, options, proxied)

    def foreground(self, page: Any) -> None:
        """The page the running call acts on: a spare's tab that opens beside the call hands it the foreground."""
        self.spares.front = page

    def drop_spare(self) -> None:
        self.spares.drop(self._browser is not None and self._browser.is_connected())

    def connected(self) -> bool:
        """Whether the browser still answers (in the browser's thread): asked once more, with a context —
        `is_connected()` alone is only news the event loop has already read."""
        if self._browser is None or not self._browser.is_connected():
            return False
        try:
            self._browser.new_context().close()
        except Exception:  # noqa: BLE001 - closed, or the connection is gone
            return False
        return self._browser.is_connected()

    def reconnect(self) -> None:
        """Drop the gone browser and connect again (a pod that died is replaced by the account's pool)."""
        self.drop_spare()
        old, self._browser = self._browser, None
        try:
            if old is not None:
                old.close()
        except Exception:  # noqa: BLE001 - it is already gone
            pass
        self._connect()

    def count_bytes(self, count: int) -> None:
        if self.pod is not None:
            self.pod.bytes += max(0, int(count))

    def devices(self) -> dict:
        """Playwright's device descriptors ("Pixel 7", "iPhone 15")."""
        if self._devices is None:
            self._devices = dict(self.playwright().devices)
        return self._devices

    def acquire(self) -> "BrowserPool":
        self.users += 1
        return self

    def release(self) -> None:
        """One user (a step's WebTool) is done; the last one out closes the browser."""
        self.users = max(0, self.users - 1)
        if self.users == 0:
            self.close()

    def holds(self, launch: int | None) -> bool:
        """True while the browser of that launch is still the one running."""
        return self._browser is not None and self._browser.is_connected() and launch == self.launches

    def alive(self) -> bool:
        """False when a browser was launched and has since gone (closed, crashed)."""
        return self._browser is None or self._browser.is_connected()

    def idle(self) -> bool:
        return self._browser is not None and time.monotonic() - self.last_used > self.idle_seconds

    def run(self, job):  # noqa: ANN001, ANN201
        """`job()` in the browser's thread; see `Driver.run`. After it, the next call's spare context is made
        and this call's own closed while the step goes on (its model's turn), not inside the next call."""

        def paused_spares_first():  # noqa: ANN202 - the job's own answer
            mark("on the driver")
            self.spares.pause()  # no spare's tab opens beside this call; the one it takes goes on (Spare.take)
            return job()

        return self.driver.run(paused_spares_first, after=self._settle)

    def _settle(self) -> None:
        self.spares.front = None  # the call has answered: no page of its is to be kept in front
        if self._browser is None:
            return
        # Until they are done, or a call comes: the call is put on the driver's queue and wakes this wait at once
        # (`Driver.wake`), takes a spare as it stands, and the closes go on under it.
        loop = self._browser._loop
        woken = loop.create_future()

        def wake() -> None:  # from the step's thread
            try:
                loop.call_soon_threadsafe(lambda: woken.done() or woken.set_result(None))
            except RuntimeError:  # the loop has closed: nothing is waiting
                pass

        self.driver.wake = wake
        try:
            if self.driver.queued():
                return
            # Calls back to back take the spares made before them: a spare made now would be made on the next
            # call's path (its tab may not open beside a call, so the call would wait for it).
            self._browser._sync(_until([], woken, QUIET_SECONDS))
            if woken.done() or self.driver.queued():
                return
            waiting = self.spares.top_up(self._browser) if self._browser.is_connected() else []
            # The last call's context closes here too (close_later), while the step's model takes its turn.
            waiting += closing_on(self._browser._loop)
            if waiting:
                self._browser._sync(_until(waiting, woken, SETTLE_SECONDS))
        except Exception:  # noqa: BLE001 - the call that takes it meets why it could not be made
            return
        finally:
            self.driver.wake = None
            woken.cancel()

    def hand(self, fn, *, wait: bool):  # noqa: ANN001, ANN201
        """From a job: `fn` in the waiting step's thread; see `Driver.hand`."""
        return self.driver.hand(fn, wait=wait)

    def close(self) -> None:
        if self._playwright is not None and not self.driver.inside():
            self.driver.run(self.close)  # Playwright's objects are closed in the thread that made them
            return
        self.drop_spare()
        try:
            if self._browser is not None and not self.cdp:  # a session's browser is the session's to close
                self._browser.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        try:
            if self._playwright is not None:
                self._playwright.stop()
        except Exception:  # noqa: BLE001 - its driver may already be gone: stopping is best effort
            pass
        self._browser = self._playwright = None
        self._thread = None
        if self.pod is not None and self.pods is not None:
            self.pods.done_with(self.pod)
            self.pod = None


async def _until(tasks: list, woken: Any, seconds: float) -> None:
    """Wait for every task (with none, for `seconds`), but no longer than `seconds`, and not at all once `woken` is
    done."""
    pending = set(tasks)
    until = time.monotonic() + seconds
    if not pending:
        await asyncio.wait({woken}, timeout=seconds)
        return
    while pending and not woken.done() and time.monotonic() < until:
        done, pending = await asyncio.wait(
            pending | {woken}, timeout=until - time.monotonic(), return_when=asyncio.FIRST_COMPLETED
        )
        pending.discard(woken)


_process_pool: BrowserPool | None = None
_process_lock = threading.Lock()


def thread_pool() -> BrowserPool:
    """This process's browser: every WebTool shares it (acquire/release), and the last to finish closes it."""
    global _process_pool
    with _process_lock:
        if _process_pool is None:
            _process_pool = BrowserPool()
        return _process_pool


INSTALL_SENTENCE = (
    "Install Chromium (`apt-get install -y chromium` on a worker), or on a laptop "
    "`npm i -g playwright@1.63.0` then `npx playwright install chromium`; FOLDRUN_CHROMIUM names "
    "another binary"
)


def find_chromium() -> str | None:
    """The browser to drive: FOLDRUN_CHROMIUM, the system Chromium, else None (Playwright's own download)."""
    named = os.environ.get("FOLDRUN_CHROMIUM")
    if named:
        return named
    for candidate in (CHROMIUM, "chromium", "chromium-browser"):
        found = (
            shutil.which(candidate)
            if not candidate.startswith("/")
            else (candidate if Path(candidate).exists() else None)
        )
        if found:
            return found
    return None
