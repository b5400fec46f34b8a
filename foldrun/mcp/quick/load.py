"""Opening the page a quick tool reads: the URL checked, the page loaded as asked, each failure a code and a sentence.

The session's browser reaches the web through its guard proxy, which refuses a
private address at connect time (a redirect hop included; `browsing.attach.navigate`
says so as `navigation_blocked`). The URL is also put
to `foldrun.net.check_url` first, so the usual case — a start URL that names a
private host — is refused with the guard's own sentence before a page opens.
With `proxyUrl` the caller reaches a private host through a proxy of their own,
so that check is left to the session's proxy rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from browsing.attach import navigate
from browsing.options import MAX_URL
from foldrun import net
from foldrun.web.net import scrub_url

from ..results import ToolError

WAIT_UNTIL = ("domcontentloaded", "load", "networkidle")
TIMEOUT_MS = (1_000, 120_000)
DEFAULT_TIMEOUT_MS = 30_000
MAX_WAIT_TEXT = 500
# The arguments a quick tool hands to the session it opens ("same meaning as in create_session").
SESSION_KEYS = ("engine", "device", "viewport", "block", "allowHosts", "proxyUrl")
# A page that is in fact a download: Chromium never renders it.
_DOWNLOAD = "Download is starting"
_TEXT_ON_PAGE = "t => !!document.body && document.body.innerText.includes(t)"


def invalid(path: str, message: str) -> ToolError:
    """`invalid_input` naming one argument, the way the argument check names them."""
    return ToolError("invalid_input", f"{path}: {message}", {"issues": [{"path": path, "message": message}]})


def checked_url(args: dict[str, Any], key: str = "url") -> str:
    """The URL to open: http or https, at most 2,048 characters, not a private address (unless a proxy is named)."""
    url = str(args.get(key) or "").strip()
    if len(url) > MAX_URL:
        raise invalid(key, f"The URL is {len(url):,} characters long; at most {MAX_URL:,} are allowed.")
    try:
        parts = urlsplit(url)
    except ValueError:
        raise invalid(key, "Must be an http or https URL, such as https://example.com/pricing.") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise invalid(key, "Must be an http or https URL, such as https://example.com/pricing.")
    if not args.get("proxyUrl"):
        try:
            net.check_url(url)
        except net.PrivateAddress as exc:
            raise ToolError("navigation_blocked", f"{scrub_url(url)} was not opened: {exc}.") from None
        except (net.NoSuchHost, net.ResolveTimeout) as exc:
            raise ToolError("navigation_failed", f"{scrub_url(url)} could not be opened: {exc}.") from None
        except ValueError:
            raise invalid(key, "Must be an http or https URL, such as https://example.com/pricing.") from None
    return url


def session_body(args: dict[str, Any]) -> dict[str, Any]:
    """The body of the fresh session a quick tool opens: the session options it was given, nothing else."""
    return {key: args[key] for key in SESSION_KEYS if key in args}


@dataclass
class Loaded:
    """The page once it has loaded as asked."""

    url: str  # where the page ended up, after redirects
    status: int | None  # the main document's HTTP status (None: served from memory)
    content_type: str = ""
    ms: int = 0
    requests: list[tuple[str, str]] = field(default_factory=list)  # (url, resource type) it asked for


def load(
    page: Page,
    url: str,
    *,
    wait_until: str = "load",
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    wait_for_text: str | None = None,
    requests: list[tuple[str, str]] | None = None,
) -> Loaded:
    """Open `url` in `page` and wait as asked; `timeoutMs` bounds the load and the text wait together.
    The requests the page makes meanwhile are recorded (the inventory's third-party hosts)."""
    seen: list[tuple[str, str]] = [] if requests is None else requests

    def record(request: Any) -> None:
        seen.append((request.url, request.resource_type))

    page.on("request", record)
    try:
        return _load(page, url, wait_until, timeout_ms, wait_for_text, seen)
    finally:
        page.remove_listener("request", record)  # a crawl loads many pages on one page: one listener at a time


def _load(
    page: Page, url: str, wait_until: str, timeout_ms: int, wait_for_text: str | None, seen: list[tuple[str, str]]
) -> Loaded:
    shown = scrub_url(url)
    started = time.monotonic()
    try:
        # navigate: the session's guard proxy refusing a hop (a redirect to a private address) is
        # SessionError("navigation_blocked") with the guard's sentence, answered as a failure 1:1.
        response = navigate(page, url, wait_until=wait_until, timeout=timeout_ms)
    except PlaywrightTimeout:
        raise ToolError(
            "timeout",
            f"{shown} did not finish loading ({wait_until}) within {timeout_ms:,} ms; "
            f"raise timeoutMs (at most {TIMEOUT_MS[1]:,}) or wait for less.",
        ) from None
    except PlaywrightError as exc:
        raise _load_failure(shown, exc) from None
    if wait_for_text:
        left = max(1, int(timeout_ms - (time.monotonic() - started) * 1000))
        try:
            page.wait_for_function(_TEXT_ON_PAGE, arg=wait_for_text, timeout=left)
        except PlaywrightTimeout:
            raise ToolError(
                "timeout", f"The text {wait_for_text!r} was not on {shown} within {timeout_ms:,} ms (timeoutMs)."
            ) from None
        except PlaywrightError as exc:
            raise ToolError(
                "navigation_failed", f"{shown} went away while waiting for the text: {_first_line(exc)}."
            ) from None
    headers = response.headers if response is not None else {}
    return Loaded(
        url=page.url,
        status=response.status if response is not None else None,
        content_type=headers.get("content-type", ""),
        ms=int((time.monotonic() - started) * 1000),
        requests=seen,
    )


def _first_line(exc: Exception) -> str:
    return str(exc).strip().split("\n", 1)[0].removeprefix("Page.goto: ").strip()


def _load_failure(shown: str, exc: PlaywrightError) -> ToolError:
    message = _first_line(exc)
    if _DOWNLOAD in message:
        return ToolError("navigation_failed", f"{shown} is a file to download, not a page a browser shows.")
    # Chromium names the network error first ("net::ERR_NAME_NOT_RESOLVED at https://…").
    code = message.split(" at ", 1)[0]
    return ToolError("navigation_failed", f"{shown} could not be opened ({code}).")
