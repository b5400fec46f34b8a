"""What crawl, map, extract, answer and monitor share: one guarded GET, robots.txt, a page's links.

Every request goes through the web role's client (foldrun.web.net → foldrun.net),
so each connection meets the address guard. A GET here follows no redirect:
crawl and map decide whether the next hop is the same site, and a redirect to
another host is reported, not followed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urldefrag, urljoin, urlsplit

import httpx
from protego import Protego
from selectolax.lexbor import LexborHTMLParser

from .body import USER_AGENT, Body
from .net import NoSuchHost, PrivateAddress, page_transport, scrub_url

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

ROBOTS_AGENT = "foldrun-web"
PAGE_CAP = 5 * 1024 * 1024  # a crawled page larger than this is recorded, never written cut


@dataclass
class Got(Body):
    url: str
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    location: str | None = None  # a redirect's absolute target, not followed
    error: str | None = None  # a sentence: why there is no page
    retried: bool = False


def get_once(
    tool: "WebTool",
    url: str,
    *,
    cap: int = PAGE_CAP,
    seconds: float | None = None,
    accept: str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
) -> Got:
    """One GET, no redirect followed; a body over `cap` or a page that never finishes is a sentence."""
    shown = scrub_url(url)
    got = Got(url=shown)
    limit = seconds or tool.fetch_timeout
    deadline = time.monotonic() + limit
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    try:
        # straight onto the web role's guarded pool: a crawl's page costs no client-layer work
        with page_transport(tool.allow_private).plain_get(url, headers, timeout=min(limit, 30.0)) as response:
            got.status = response.status_code
            got.content_type = response.headers.get("content-type", "")
            if response.is_redirect and response.headers.get("location"):
                got.location = urljoin(url, response.headers["location"])
                return got
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                chunks.append(chunk)
                size += len(chunk)
                if size > cap:
                    got.error = f"{shown}: larger than {cap // (1024 * 1024)} MB, so it was not kept"
                    return got
                if time.monotonic() > deadline:
                    got.error = f"{shown}: did not finish within {limit:g}s, so it was not kept"
                    return got
            got.body = b"".join(chunks)
    except (PrivateAddress, NoSuchHost) as exc:
        got.error = f"{shown}: {exc}"
    except httpx.TimeoutException:
        got.error = f"{shown}: timed out after {limit:g}s"
    except httpx.HTTPError as exc:
        detail = scrub_url(str(exc).split("\n", 1)[0])[:160]
        got.error = f"{shown}: the connection failed{' (' + detail + ')' if detail else ''}"
    return got


def retryable(got: Got) -> bool:
    """A wire error, a 5xx or a 429 is tried once more before it is recorded."""
    if got.error:
        return "connection failed" in got.error or "timed out" in got.error
    return got.status == 429 or got.status >= 500


def get(tool: "WebTool", url: str, *, pause: float = 0.2, **options: object) -> Got:
    got = get_once(tool, url, **options)  # type: ignore[arg-type]
    if retryable(got):
        time.sleep(pause)
        got = get_once(tool, url, **options)  # type: ignore[arg-type]
        got.retried = True
    return got


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.lower()}"


def same_site(url: str, origin: str) -> bool:
    """`origin_of(url) == origin`, read off the URL's head where that is sure to give the same answer.

    It is asked of every link of every crawled page, and splitting each whole URL cost a crawl more than
    the answer needs. The head decides when the URL is one urlsplit reads as written: ASCII (no
    case-folding or NFKC surprises in the host), nothing it strips (leading blanks, tabs and newlines
    anywhere) and no brackets (an IPv6 host it checks, or refuses). Anything else is split as before.
    """
    if _plain_origin(origin):
        n = len(origin)
        head = url[: n + 1]
        # the origin, any case, then where a host ends: not `:443`, `.evil.com`, `@evil.com`, `\\`
        if head[:n].lower() == origin and head[n:] in _HOST_ENDS and head.isascii():
            return True
        if (
            url.isascii()
            and url[:1] > " "
            and "\t" not in url
            and "\n" not in url
            and "\r" not in url
            and "[" not in url
            and "]" not in url
        ):
            return False
    return origin_of(url) == origin


_HOST_ENDS = ("", "/", "?", "#")


@lru_cache(maxsize=256)
def _plain_origin(origin: str) -> bool:
    """An origin as origin_of writes it (scheme and host lowercase, a host, no path), ASCII, no brackets."""
    if not origin.isascii() or "[" in origin or "]" in origin:
        return False
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    return bool(parts.scheme and parts.netloc) and origin == f"{parts.scheme}://{parts.netloc.lower()}"


def normal(url: str) -> str:
    """The URL as a crawl keys it: no fragment, and a bare host is its root (`/`)."""
    url = urldefrag(url)[0]
    parts = urlsplit(url)
    return url.replace(parts.netloc, parts.netloc + "/", 1) if not parts.path and not parts.query else url


def links_of(html: str, base: str) -> list[str]:
    """Every http(s) link on the page, absolute, fragment dropped, in order, once each."""
    tree = LexborHTMLParser(html)
    # tags(), not css(): lexbor sets up its selector engine for each tree a css() call meets, which cost
    # a crawled page more than parsing it; walking the elements by name costs next to nothing
    base_tag = next((node for node in tree.tags("base") if node.attrs.get("href") is not None), None)
    if base_tag is not None:
        base = urljoin(base, base_tag.attrs.get("href") or "")
    parts = urlsplit(base)
    origin = f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    seen: dict[str, None] = {}
    for node in tree.tags("a"):
        href = (node.attrs.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
            continue
        if origin and _plain_rooted(href):
            # "/p/4" is the origin and the href, as urljoin would make it: most links of a site are
            # such, and urljoin + normal + urlsplit cost a crawl more than the page's parse
            path = href.split("#", 1)[0]
            seen.setdefault(origin + (path[:-1] if path.find("?") == len(path) - 1 else path), None)
            continue
        target = normal(urljoin(base, href))
        if urlsplit(target).scheme in ("http", "https"):
            seen.setdefault(target, None)
    return list(seen)


def _plain_rooted(href: str) -> bool:
    """A path from the root that urljoin keeps as written (but for an empty `?`): no `//host`, no dot
    segment, no `;params`, no backslash, nothing urlsplit strips (whitespace, control characters)."""
    return (
        href[0] == "/"
        and href[1:2] != "/"
        and "/." not in href
        and "\\" not in href
        and ";" not in href
        and href.isprintable()
        and " " not in href
    )


@dataclass
class Robots:
    parser: Protego | None
    url: str
    note: str | None = None  # e.g. robots.txt could not be read: everything allowed

    def allows(self, url: str) -> bool:
        return self.parser is None or self.parser.can_fetch(url, ROBOTS_AGENT)

    def sitemaps(self) -> list[str]:
        return list(self.parser.sitemaps) if self.parser is not None else []

    def delay(self) -> float:
        if self.parser is None:
            return 0.0
        value = self.parser.crawl_delay(ROBOTS_AGENT)
        return min(float(value), 10.0) if value else 0.0


def robots_for(tool: "WebTool", origin: str) -> Robots:
    """robots.txt of `origin`: a 4xx means no rules (RFC 9309); a 5xx or no answer means none read."""
    url = origin + "/robots.txt"
    got = get(tool, url, cap=512 * 1024, accept="text/plain,*/*;q=0.5")
    if got.error or got.status >= 500:
        return Robots(None, url, note=f"robots.txt at {url} could not be read ({got.error or f'HTTP {got.status}'})")
    if got.status >= 400 or got.location:
        return Robots(None, url)
    return Robots(Protego.parse(got.text), url)
