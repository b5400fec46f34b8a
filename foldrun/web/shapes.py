"""What the web actions and the vendors that answer them share: a search's
hits, a `site=` domain, a URL to read. Below search.py, fetch.py and
providers/, so the dispatch goes one way (an action → its vendor) and no
vendor imports an action back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from foldrun import net

from .errors import WebToolError
from .net import scrub_url


@dataclass
class Hit:
    title: str
    url: str
    snippet: str = ""
    date: str | None = None
    engines: list[str] = field(default_factory=list)


@dataclass
class Found:
    hits: list[Hit]
    answers: list[str] = field(default_factory=list)
    infoboxes: list[str] = field(default_factory=list)
    corrections: list[str] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)
    unresponsive: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def site_domain(raw: object) -> str | None:
    """`https://www.Example.com/` → `example.com`; a path is refused."""
    if raw in (None, ""):
        return None
    if not isinstance(raw, str):
        raise WebToolError("site= must be a domain such as example.com")
    text = raw.strip()
    parts = urlsplit(text if "://" in text else f"//{text}")
    if parts.path not in ("", "/") or parts.query:
        raise WebToolError(
            f"site={text} has a path; site= is a domain such as {parts.hostname or 'example.com'} — "
            f"its subdomains included, no path"
        )
    host = (parts.hostname or "").lower().rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    if "." not in host:
        raise WebToolError(f"site={text} is not a domain such as example.com")
    return host


def check_url(raw: object) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise WebToolError("fetch needs url= — the page to read")
    url = raw.strip()
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - read for its ValueError: a port that is not one
    except ValueError:  # `[::1`, `:99999`: what the guard says of it, not a parser's complaint
        raise WebToolError(f"{scrub_url(url)}: {net.refusal(url)}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise WebToolError(f"{scrub_url(url)}: fetch reads http and https URLs only")
    return url
