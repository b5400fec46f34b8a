"""The keeper's own Playwright connection to its session's browser, in a thread of its own.

Playwright's sync API holds an event loop in the thread that starts it and answers the browser only while
that thread is inside one of its calls; the ORM refuses such a thread. So this thread does Playwright and
nothing else: it opens the start page, answers the routes that add per-host headers and block resource
kinds (a route left unanswered would stall the page, so it keeps pumping events until told to stop), and
collects the screencast frames of a recorded session. The keeper's own thread reads what it found.
"""
from __future__ import annotations

import base64
import threading
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

from foldrun.net.proxy import GuardProxy

START_TIMEOUT_MS = 30_000
TICK_MS = 100


def host_matches(host: str, pattern: str) -> bool:
    """`staging.example.com` names that host; `*.example.com` its subdomains."""
    host, pattern = host.lower(), pattern.lower()
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


class BrowserSide(threading.Thread):
    def __init__(self, cdp: str, proxy: GuardProxy, *, start_url: str = "", headers: list[dict] | None = None,
                 block: list[str] | None = None, record: bool = False, viewport: dict | None = None) -> None:
        super().__init__(name="foldrun-session-browser", daemon=True)
        self.cdp = cdp
        self.viewport = viewport
        self.proxy = proxy
        self.start_url = start_url
        self.headers = headers or []
        self.block = set(block or [])
        self.record = record
        self.ready = threading.Event()
        self.stopping = threading.Event()
        self.error = ""            # the connection itself failed
        self.blocked = ""          # the start URL was refused by the guard: why
        self.start_failed = ""     # the start URL did not open: why
        self.title = ""
        self.url = ""
        self.frames: list[tuple[bytes, float]] = []
        self._acks: list[int] = []

    # -- in this thread only ----------------------------------------------------------------------------
    def _hold_viewport(self, context: Any, page: Any) -> Any:
        if not self.viewport:
            return None
        cdp = context.new_cdp_session(page)
        cdp.send("Emulation.setDeviceMetricsOverride", {
            "width": int(self.viewport["width"]), "height": int(self.viewport["height"]),
            "deviceScaleFactor": float(self.viewport.get("deviceScaleFactor") or 1),
            "mobile": bool(self.viewport.get("mobile"))})
        return cdp

    def run(self) -> None:
        pw = sync_playwright().start()
        try:
            browser = pw.chromium.connect_over_cdp(self.cdp, timeout=15_000)
            context = browser.contexts[0]
            page = context.pages[0] if context.pages else context.new_page()
            # Headless Chromium's --window-size counts the window, not the page; the page gets exactly the
            # asked size from a metrics override, which lasts as long as this connection (the session's life).
            self._metrics = self._hold_viewport(context, page)
            if self.headers or self.block:
                context.route("**/*", self._route)
            screencast = self._start_screencast(context, page) if self.record else None
            if self.start_url:
                self._open(page, self.start_url)
            self._look(context)
            self.ready.set()
            while not self.stopping.is_set():
                try:
                    context.wait_for_event("page", timeout=TICK_MS)
                except PlaywrightTimeout:
                    pass
                self._ack(screencast)
                self._look(context)
            if screencast is not None:
                try:
                    screencast.send("Page.stopScreencast")
                except PlaywrightError:
                    pass
        except Exception as exc:  # noqa: BLE001 - the keeper closes the session with this sentence
            self.error = str(exc).split("\n", 1)[0][:300] or type(exc).__name__
        finally:
            self.ready.set()
            try:
                pw.stop()
            except Exception:  # noqa: BLE001 - the browser may already be gone
                pass

    def _open(self, page: Any, url: str) -> None:
        seen = len(self.proxy.refusals)
        host = (urlsplit(url).hostname or "").lower()
        try:
            response = page.goto(url, wait_until="load", timeout=START_TIMEOUT_MS)
        except PlaywrightError as exc:
            self.blocked = self._refusal(host, seen)
            if not self.blocked:
                self.start_failed = f"{url} did not open: {str(exc).splitlines()[0][:200]}"
            return
        if response is not None and response.status == 403:
            self.blocked = self._refusal(host, seen)

    def _refusal(self, host: str, seen: int) -> str:
        for refused, reason in self.proxy.refusals[seen:]:
            if refused.lower() == host:
                return reason
        return ""

    def _route(self, route: Any, request: Any) -> None:
        try:
            if request.resource_type in self.block:
                route.abort("blockedbyclient")
                return
            host = urlsplit(request.url).hostname or ""
            extra = {h["name"]: h["value"] for h in self.headers if host_matches(host, h["host"])}
            if extra:
                route.continue_(headers={**request.headers, **extra})
            else:
                route.continue_()
        except PlaywrightError:  # the page went away under the request
            pass

    def _start_screencast(self, context: Any, page: Any) -> Any:
        session = context.new_cdp_session(page)

        def frame(params: dict) -> None:
            meta = params.get("metadata") or {}
            self.frames.append((base64.b64decode(params["data"]), float(meta.get("timestamp") or 0.0)))
            self._acks.append(int(params["sessionId"]))

        session.on("Page.screencastFrame", frame)
        session.send("Page.startScreencast", {"format": "jpeg", "quality": 70, "everyNthFrame": 1})
        return session

    def _ack(self, session: Any) -> None:
        while session is not None and self._acks:
            try:
                session.send("Page.screencastFrameAck", {"sessionId": self._acks.pop(0)})
            except PlaywrightError:
                return

    def _look(self, context: Any) -> None:
        try:
            pages = context.pages
            if pages:
                self.url = pages[0].url
                self.title = pages[0].title()[:300]
        except PlaywrightError:
            pass

