"""What a site did with a sign-in's submit, as the browser saw it — read by the `login` step (signin.py).

`SubmitWatch` waits for the site's answer: the request the submit caused (the one carrying the password, else the
page's navigation or its first non-GET fetch), its answer, and the navigation that answer brings, then a short
quiet. A form posted by the browser and one a script posts with fetch() a moment later are waited for alike, so
neither is judged before the site has answered. `Kept` is what the site keeps for the browser — cookies, and the
keys of the page's localStorage and sessionStorage — before and after, to tell whether the submit left anything
behind; none of it depends on the site's language.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page, Request, Response

# After the sign-in's answer (and any navigation it started) this long with nothing more: the page's script has
# had the time to act on the answer — set location, show its message.
QUIET_SECONDS = 0.4
_POLL_MS = 50
_EVENTS = ("request", "response", "requestfinished", "requestfailed")


class SubmitWatch:
    """The page's requests from the submit on (a context manager: it listens while open)."""

    def __init__(self, page: "Page", password: str) -> None:
        self.page = page
        self._marks = tuple(
            m for m in {password, quote_plus(password), quote(password, safe=""), json.dumps(password)[1:-1]} if m
        )
        self.signin: "Request | None" = None  # the request that carried the sign-in
        self._carried = False  # … and it carried the password (not a guess)
        self._chain: list["Request"] = []  # it and the redirects it led to, last one last
        self.finished = False  # the last of the chain has its whole answer (or failed)
        self.status: int | None = None  # the HTTP status of the chain's last answer
        self.navigations: list[int] = []  # the status of each page the main frame was answered, last one last
        self.answers: list["Response"] = []  # pages and fetches answered since: where Set-Cookie can come from
        self._moving: set[Any] = set()  # the main frame's navigations asked for and not yet answered
        self._last = time.monotonic()  # when the sign-in or a navigation last moved

    def __enter__(self) -> "SubmitWatch":
        for event, handler in zip(_EVENTS, (self._request, self._response, self._done, self._done)):
            self.page.on(event, handler)
        return self

    def __exit__(self, *_exc: object) -> None:
        for event, handler in zip(_EVENTS, (self._request, self._response, self._done, self._done)):
            self.page.remove_listener(event, handler)

    def _main_navigation(self, request: "Request") -> bool:
        try:
            return request.is_navigation_request() and request.frame == self.page.main_frame
        except Exception:  # noqa: BLE001 - a service worker's request has no frame
            return False

    def _carries(self, request: "Request") -> bool:
        try:
            body = request.post_data or ""
        except Exception:  # noqa: BLE001 - a binary body: it is not a form's or a JSON's text
            body = ""
        return any(mark in request.url or mark in body for mark in self._marks)

    def _request(self, request: "Request") -> None:
        navigation = self._main_navigation(request)
        if navigation:
            self._moving.add(request)
            self._last = time.monotonic()
        if self._chain and request.redirected_from is self._chain[-1]:  # the sign-in's answer was a redirect
            self._chain.append(request)
            self.finished = False
            return
        carries = self._carries(request)
        asked = request.method != "GET" and request.resource_type in ("xhr", "fetch", "document")
        if (self.signin is None and (carries or navigation or asked)) or (carries and not self._carried):
            self.signin, self._carried, self._chain, self.finished = request, carries, [request], False
            self._last = time.monotonic()

    def _response(self, response: "Response") -> None:
        request = response.request
        if request in self._chain:
            self.status = response.status
        if self._main_navigation(request):
            self.navigations.append(response.status)
        if request.resource_type in ("document", "xhr", "fetch"):
            self.answers.append(response)

    def _done(self, request: "Request") -> None:
        if self._chain and request is self._chain[-1]:
            self.finished = True
            self._last = time.monotonic()
        if request in self._moving:
            self._moving.discard(request)
            self._last = time.monotonic()

    def wait(self, timeout_ms: float, blocked: Callable[[], bool]) -> None:
        """Until the sign-in is answered and the page has settled on what the answer brought, or `timeout_ms`.
        `blocked()` is asked once, at the start, while nothing was sent: a form its own validation stopped sends
        nothing, and is not waited for."""
        deadline = time.monotonic() + timeout_ms / 1000
        asked_blocked = False
        try:
            while time.monotonic() < deadline:
                self.page.wait_for_timeout(_POLL_MS)  # the page's events are handled meanwhile
                if self.signin is None and not asked_blocked:
                    asked_blocked = True
                    if blocked():
                        return
                if self.finished and not self._moving and time.monotonic() - self._last >= QUIET_SECONDS:
                    break
            self.page.wait_for_load_state("load", timeout=max(1.0, (deadline - time.monotonic()) * 1000))
        except Exception:  # noqa: BLE001 - the page closed or is still loading at the deadline: judged as it is
            pass

    def cookies_set(self) -> set[str]:
        """The names of the cookies the site's own answers set (Set-Cookie) since the submit."""
        names: set[str] = set()
        for response in self.answers:
            try:
                values = response.header_values("set-cookie")
            except Exception:  # noqa: BLE001 - its page is gone: its headers with it
                continue
            for value in values:
                for line in value.split("\n"):  # Chromium may join several Set-Cookie lines into one value
                    names.add(line.split("=", 1)[0].strip())
        return names


_STORAGE_JS = """() => {
  const keys = get => { try { return Object.keys(get()); } catch (e) { return []; } };
  return {origin: location.origin, local: keys(() => localStorage), session: keys(() => sessionStorage)};
}"""


@dataclass
class Kept:
    """What the browser keeps for the site at one moment: its cookies (by name, domain and path → value) and the
    keys of the page's web storage."""

    cookies: dict[tuple[str, str, str], str] = field(default_factory=dict)
    origin: str = ""
    local: set[str] = field(default_factory=set)
    session: set[str] = field(default_factory=set)

    @classmethod
    def now(cls, page: "Page") -> "Kept":
        kept = cls()
        try:
            kept.cookies = {(c["name"], c["domain"], c["path"]): c["value"] for c in page.context.cookies()}
        except Exception:  # noqa: BLE001 - the context is closing: nothing to read
            pass
        try:
            storage = page.main_frame.evaluate(_STORAGE_JS)
            kept.origin, kept.local, kept.session = storage["origin"], set(storage["local"]), set(storage["session"])
        except Exception:  # noqa: BLE001 - the page is between documents, or its storage is closed to it
            pass
        return kept

    def new_since(self, before: "Kept", set_by_site: set[str]) -> list[str]:
        """What is kept now that was not before, each as words ("the cookie sid", "localStorage token"). A cookie
        counts when it is new, or when the site's answer set it to a new value; a cookie the page's script rewrote
        (an analytics timestamp) does not, nor does a storage key that was there already."""
        cookies = [
            key[0]
            for key, value in self.cookies.items()
            if key not in before.cookies or (value != before.cookies[key] and key[0] in set_by_site)
        ]
        same = self.origin == before.origin
        local = sorted(self.local - before.local) if same else sorted(self.local)
        session = sorted(self.session - before.session) if same else sorted(self.session)
        said = [f"the cookie{'s' if len(cookies) > 1 else ''} {', '.join(dict.fromkeys(cookies))}"] if cookies else []
        said += [
            f"{where} {', '.join(keys)}"
            for where, keys in (("localStorage", local), ("sessionStorage", session))
            if keys
        ]
        return said
