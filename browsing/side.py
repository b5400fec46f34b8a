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
from foldrun.web.browse.util import allow_host_match

START_TIMEOUT_MS = 30_000
TICK_MS = 100
FILL_TIMEOUT_MS = 5_000
# The user name field of a login form: what names itself one, else the form's first text-like field.
USER_FIELDS = (
    "input[autocomplete=username]:visible, input[type=email]:visible, input[name*=user i]:visible, "
    "input[name*=email i]:visible, input[name*=login i]:visible, input[type=text]:visible"
)
MAX_CONSOLE = 200  # a page that logs in a loop fills no more than this of the session's record


host_matches = allow_host_match  # `staging.example.com` names that host; `*.example.com` its subdomains


class BrowserSide(threading.Thread):
    def __init__(
        self,
        cdp: str,
        proxy: GuardProxy,
        *,
        start_url: str = "",
        headers: list[dict] | None = None,
        block: list[str] | None = None,
        record: bool = False,
        viewport: dict | None = None,
        logins: list[Any] | None = None,
        auto_submit: bool = False,
    ) -> None:
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
        self.error = ""  # the connection itself failed
        self.blocked = ""  # the start URL was refused by the guard: why
        self.start_failed = ""  # the start URL did not open: why
        self.title = ""
        self.url = ""
        self.frames: list[tuple[bytes, float]] = []
        self._acks: list[int] = []
        # Console errors and uncaught errors of every page, for the session's whole life (the keeper stores
        # them): appended here, read by the keeper's thread, so only appends and slices touch it.
        self.console: list[dict] = []
        # `credentials`: the vault's logins of the session's namespace (vault.logins.OpenLogin), filled into a
        # login form on a page of a matching host once it loads. The password goes from here into the field and
        # nowhere else: `filled` records the host and page, never a value.
        self.logins = list(logins or [])
        self.auto_submit = auto_submit
        self.filled: list[dict] = []
        self._loaded: list[Any] = []
        self._submitted: set[str] = set()

    # -- in this thread only ----------------------------------------------------------------------------
    def _hold_viewport(self, context: Any, page: Any) -> Any:
        if not self.viewport:
            return None
        cdp = context.new_cdp_session(page)
        cdp.send(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": int(self.viewport["width"]),
                "height": int(self.viewport["height"]),
                "deviceScaleFactor": float(self.viewport.get("deviceScaleFactor") or 1),
                "mobile": bool(self.viewport.get("mobile")),
            },
        )
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
            context.on("console", self._console)
            context.on("weberror", self._uncaught)
            if self.logins:
                page.on("load", self._on_load)
                context.on("page", lambda new: new.on("load", self._on_load))
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
                self._fill_loaded()
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

    def _console(self, message: Any) -> None:
        if len(self.console) >= MAX_CONSOLE or message.type != "error":
            return
        if str((message.location or {}).get("url", "")).endswith("/favicon.ico"):
            return  # the browser's own guess at an icon is no error of the page
        page = message.page
        self.console.append({"level": "error", "text": message.text[:2000], "url": page.url if page else ""})

    def _uncaught(self, error: Any) -> None:
        if len(self.console) >= MAX_CONSOLE:
            return
        page = error.page
        self.console.append(
            {
                "level": "error",
                "text": f"uncaught: {str(error.error).splitlines()[0][:2000]}",
                "url": page.url if page else "",
            }
        )

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
        if not self.blocked and self.logins:
            self._loaded.clear()
            self._fill(page)  # before the session is live: the caller's first look finds the form done

    def _on_load(self, page: Any) -> None:
        self._loaded.append(page)  # filled from the loop, outside Playwright's event dispatch

    def _fill_loaded(self) -> None:
        while self._loaded:
            self._fill(self._loaded.pop(0))

    def _fill(self, page: Any) -> None:
        """Fill the page's login form from the login of its host: the user name and password fields, then the
        form sent when autoSubmit (once per host and session: a refused password is not sent again and again)."""
        try:
            host = (urlsplit(page.url).hostname or "").lower()
            login = next((entry for entry in self.logins if host_matches(host, entry.host)), None)
            if login is None:
                return
            password = page.locator("input[type=password]:visible").first
            if not password.count():
                return
            form = password.locator("xpath=ancestor::form[1]")
            scope = form if form.count() else page
            user = scope.locator(USER_FIELDS).first
            if user.count():
                user.fill(login.username, timeout=FILL_TIMEOUT_MS)
            password.fill(login.password, timeout=FILL_TIMEOUT_MS)
            submit = self.auto_submit and host not in self._submitted
            self.filled.append({"host": host, "url": page.url, "submitted": submit})
            if submit:
                self._submitted.add(host)
                with page.expect_navigation(wait_until="load", timeout=START_TIMEOUT_MS):
                    password.press("Enter")
                self._loaded.clear()  # the page the submit opened is this fill's own
        except PlaywrightError:  # the page went away, or the form was not one a login fills
            pass

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
