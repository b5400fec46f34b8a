"""One webhook POST, guarded: no redirects, 8 seconds in all, and no
loopback/private/link-local destination unless the install opts in.

The connection is foldrun.net's "webhook" client: the address check happens
at connect time on the address actually connected to, so a name that
resolves to 127.0.0.1 — or re-resolves between a check and a connect —
cannot slip through, and every read and write ends by the attempt's deadline.

No database here: a laptop install calls `post_once` directly (one attempt,
the same headers, no log).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from urllib.parse import urlsplit

import httpx

from foldrun import net

ATTEMPT_TIMEOUT_SECONDS = 8.0
RESPONSE_EXCERPT_CHARS = 500

# Read at most this much of an answer: a 2 MB body costs us nothing.
MAX_READ_BYTES = 64 * 1024


@dataclass
class Outcome:
    ok: bool
    status_code: int | None
    duration_ms: int
    excerpt: str
    error: str


class RefusedDestination(Exception):
    """The URL may not be posted to; the message says why."""


def check_url(url: str) -> None:
    """RefusedDestination for a URL that cannot be posted to at all (before any connect)."""
    try:
        parts = urlsplit(url)
        hostname, _port = parts.hostname, parts.port
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535": no URL in the words
        raise RefusedDestination(f"the webhook URL is not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise RefusedDestination("the webhook URL must start with http:// or https:// and name a host.")
    try:
        httpx.URL(url)
        hostname.encode("idna")
    except (httpx.InvalidURL, UnicodeError):  # an empty or over-long label: the IDNA codec refuses it
        refused = net.refusal(url)
        if isinstance(refused, net.PrivateAddress):  # `0177.0.0.1`: loopback as the resolver reads it
            raise RefusedDestination(str(refused)) from None
        raise RefusedDestination("the webhook host is not a valid host name.") from None


def post_once(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST `body` to `url` once and say what happened. Never raises for the
    receiver's faults: they are the outcome."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    try:
        check_url(url)
    except RefusedDestination as exc:
        return Outcome(False, None, elapsed(), "", str(exc))
    client = net.client("webhook", deadline=ATTEMPT_TIMEOUT_SECONDS)
    data = bytearray()
    try:
        with client.stream("POST", url, content=body, headers=headers) as response:
            for chunk in response.iter_bytes():
                data.extend(chunk)
                if len(data) >= MAX_READ_BYTES:
                    break
    except (net.PrivateAddress, net.NoSuchHost) as exc:
        return Outcome(False, None, elapsed(), "", str(exc))
    except net.ResolveTimeout:
        return Outcome(
            False,
            None,
            elapsed(),
            "",
            f"timed out after {ATTEMPT_TIMEOUT_SECONDS:g} seconds resolving the webhook's host name",
        )
    except httpx.TimeoutException:
        return Outcome(False, None, elapsed(), "", f"timed out after {ATTEMPT_TIMEOUT_SECONDS:g} seconds")
    except httpx.HTTPError as exc:
        return Outcome(False, None, elapsed(), "", _error_words(exc, (url, urlsplit(url).path)))
    text = bytes(data[: RESPONSE_EXCERPT_CHARS * 4]).decode("utf-8", errors="replace")[:RESPONSE_EXCERPT_CHARS]
    status = response.status_code
    ok = 200 <= status < 300
    error = (
        ""
        if ok
        else (
            f"answered {status} with a redirect, which foldrun does not follow"
            if 300 <= status < 400
            else f"answered {status}"
        )
    )
    return Outcome(ok, status, elapsed(), text, error)


def _error_words(exc: Exception, hide: tuple[str, ...] = ()) -> str:
    """The failure as a sentence (never the class name), with the URL taken out: it can be a credential."""
    words = net.describe(exc)
    for secret in sorted((h for h in hide if h and h != "/"), key=len, reverse=True):
        words = words.replace(secret, "[url]")
    return words[:500]
