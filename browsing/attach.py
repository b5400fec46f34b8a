"""Reaching a session's live browser from a caller: `attach`, `fresh_session`, `navigate`.

    with attach(session) as page:          # a Playwright sync Page on the session's browser, over CDP
        navigate(page, "https://example.com")
    with fresh_session(account, {"viewport": {...}}) as (session, page):
        ...                                 # a session of its own, stopped when the block ends

The caller connects and disconnects; the keeper owns the browser, so the page, its cookies and storage are
there again at the next attach. Playwright's sync API holds an event loop in the caller's thread for the
length of the block: make no ORM call inside it (do it before or after), or run the block in a thread of
its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from django.db import connection
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, sync_playwright

from accounts.models import Account
from foldrun import net
from foldrun.web.net import scrub_url

from .actions import check_create_session, do_create_session, do_stop_session, wait_ended, wait_live
from .ending import touch
from .errors import SessionError
from .models import BrowserSession

REFUSED_PREFIX = "refused by foldrun: "
TOUCH_SECONDS = 5.0


class _Toucher(threading.Thread):
    """While a caller is attached, the session's idle clock restarts every TOUCH_SECONDS — from a thread of
    its own, since the caller's thread holds Playwright's loop (where the ORM may not run)."""

    def __init__(self, session_pk: int) -> None:
        super().__init__(name="foldrun-session-touch", daemon=True)
        self.session_pk = session_pk
        self._done = threading.Event()

    def run(self) -> None:
        try:
            while not self._done.wait(TOUCH_SECONDS):
                touch(self.session_pk)
        finally:
            connection.close()

    def stop(self) -> None:
        self._done.set()


@contextmanager
def attach(session: BrowserSession, *, timeout: float | None = None) -> Iterator[Page]:
    """The session's page (its first tab), once it is live. SessionError when it closed or never started."""
    session = wait_live(session, timeout)
    if not session.cdp_endpoint:
        raise SessionError("session_closed", f"Session {session.public_id} is not live.")
    touch(session.pk)
    still_here = _Toucher(session.pk)  # a long job on one attach (a crawl) is activity the whole time
    still_here.start()
    playwright = sync_playwright().start()
    try:
        try:
            browser = playwright.chromium.connect_over_cdp(session.cdp_endpoint, timeout=15_000)
        except PlaywrightError:
            raise SessionError(
                "session_closed", f"Session {session.public_id}'s browser did not answer; it has closed or is closing."
            ) from None
        context = browser.contexts[0]
        yield context.pages[0] if context.pages else context.new_page()
    finally:
        still_here.stop()
        # Stopping the driver only disconnects: the browser, its tabs and cookies stay with the keeper.
        playwright.stop()
    touch(session.pk)


@contextmanager
def fresh_session(
    account: Account, body: dict[str, Any] | None = None, *, user: Any = None
) -> Iterator[tuple[BrowserSession, Page]]:
    """A session of its own for one job (each quick tool): opened, attached, and stopped at the end."""
    opts = check_create_session(account, body or {})
    session = do_create_session(account, opts, user=user)
    try:
        with attach(session) as page:
            yield session, page
    finally:
        do_stop_session(account, session.public_id, who="the end of the call that opened it")
        wait_ended(session)


def navigate(page: Page, url: str, **goto: Any) -> Any:
    """`page.goto(url)`, with the guard's refusal as SessionError("navigation_blocked", why)."""
    try:
        response = page.goto(url, **goto)
    except PlaywrightError as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        if "ERR_TUNNEL_CONNECTION_FAILED" in first or "ERR_PROXY_CONNECTION_FAILED" in first:
            reason = _why_refused(url)
            if reason:
                raise SessionError(
                    "navigation_blocked", f"{scrub_url(url)} was not opened: {reason}.", {"url": scrub_url(url)}
                ) from None
        raise
    if response is not None and response.status == 403:
        try:
            body = response.text()
        except PlaywrightError:
            body = ""
        if body.startswith(REFUSED_PREFIX):
            raise SessionError(
                "navigation_blocked",
                f"{scrub_url(url)} was not opened: {body[len(REFUSED_PREFIX) :]}.",
                {"url": scrub_url(url)},
            )
    return response


def _why_refused(url: str) -> str:
    """The guard's sentence for an https URL whose tunnel it refused (it answers the tunnel, not the page)."""
    try:
        net.check_url(url)
    except (net.PrivateAddress, net.NoSuchHost) as exc:
        return str(exc)
    except ValueError:
        return f"{urlsplit(url).scheme or 'that'} addresses are not opened"
    return ""
