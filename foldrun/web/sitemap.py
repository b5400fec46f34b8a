"""`web action=map`, foldrun's own: every URL on a site, into `outputs/map.txt`.

Its sitemaps first — the `Sitemap:` lines of robots.txt, else the usual paths —
read with ultimate-sitemap-parser, which follows sitemap indexes, opens gzip
and stops at a sitemap that lists itself again. Its fetches come through
`SiteClient`, so every one meets the address guard and the size cap. When the
site has no sitemap, the links of its pages are followed instead (same host,
robots.txt honoured). `limit` URLs (500 by default).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from usp.tree import sitemap_tree_for_homepage
from usp.web_client.abstract_client import (
    AbstractWebClient,
    AbstractWebClientResponse,
    AbstractWebClientSuccessResponse,
    WebClientErrorResponse,
)

from . import site
from .errors import WebToolError
from .providers.actions import limit_arg, url_arg

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

SITEMAP_CAP = 50 * 1024 * 1024  # the sitemap protocol's own limit for one file, uncompressed
MAX_SITEMAPS = 200  # sitemaps read in one call, indexes included
LINK_PAGES = 100  # pages read for their links when there is no sitemap

logging.getLogger("usp").setLevel(logging.ERROR)  # its warnings are about the site, said in our own words


class _Ok(AbstractWebClientSuccessResponse):
    def __init__(self, got: site.Got) -> None:
        self.got = got

    def status_code(self) -> int:
        return self.got.status

    def status_message(self) -> str:
        return "OK"

    def header(self, case_insensitive_name: str) -> str | None:
        return self.got.content_type if case_insensitive_name.lower() == "content-type" else None

    def raw_data(self) -> bytes:
        return self.got.body

    def url(self) -> str:
        return self.got.url


class _Failed(WebClientErrorResponse):
    pass


class SiteClient(AbstractWebClient):
    """ultimate-sitemap-parser's fetches, through the guarded client; the same host only."""

    def __init__(self, tool: "WebTool", origin: str) -> None:
        self.tool = tool
        self.origin = origin
        self.fetched: list[str] = []
        self.problems: list[str] = []

    def set_max_response_data_length(self, max_response_data_length: int | None) -> None:
        return None

    def get(self, url: str) -> AbstractWebClientResponse:
        if len(self.fetched) >= MAX_SITEMAPS:
            return _Failed(f"more than {MAX_SITEMAPS} sitemaps", retryable=False)
        if not site.same_site(url, self.origin):
            self.problems.append(f"{url}: a sitemap on another host, not read")
            return _Failed("another host", retryable=False)
        hops = 0
        while True:
            self.fetched.append(url)
            got = site.get(self.tool, url, cap=SITEMAP_CAP, accept="application/xml,text/xml,text/plain,*/*;q=0.5")
            if got.location and hops < 5 and site.same_site(got.location, self.origin):
                url, hops = got.location, hops + 1
                continue
            break
        if got.error or got.location:
            return _Failed(got.error or f"redirects to {got.location}", retryable=False)
        if got.status >= 400:
            return _Failed(f"HTTP {got.status}", retryable=False)
        return _Ok(got)


def _from_sitemaps(
    tool: "WebTool", start: str, origin: str, robots: site.Robots, limit: int
) -> tuple[list[str], SiteClient]:
    client = SiteClient(tool, origin)
    tree = sitemap_tree_for_homepage(
        origin + "/", web_client=client, use_robots=True, use_known_paths=not robots.sitemaps()
    )
    urls: dict[str, None] = {}
    for page in tree.all_pages():
        url = site.normal(page.url)
        if site.same_site(url, origin) and robots.allows(url):
            urls.setdefault(url, None)
            if len(urls) >= limit:
                break
    return list(urls), client


def listed_urls(tool: "WebTool", origin: str, robots: site.Robots, limit: int) -> list[str]:
    """The pages the site's sitemaps list (same host, robots.txt honoured), at most `limit`."""
    return _from_sitemaps(tool, origin + "/", origin, robots, limit)[0]


def _from_links(tool: "WebTool", start: str, origin: str, robots: site.Robots, limit: int) -> list[str]:
    found: dict[str, None] = {start: None}
    queue, read = [start], 0
    while queue and read < LINK_PAGES and len(found) < limit:
        url = queue.pop(0)
        if not robots.allows(url):
            continue
        got = site.get(tool, url)
        read += 1
        if got.location and site.same_site(got.location, origin):
            target = site.normal(got.location)
            if target not in found:
                found[target] = None
                queue.append(target)
            continue
        if got.error or got.status >= 400 or not got.is_html():
            continue
        for link in site.links_of(got.text, url):
            if site.same_site(link, origin) and link not in found and robots.allows(link):
                found[link] = None
                queue.append(link)
                if len(found) >= limit:
                    break
    return list(found)[:limit]


def run(tool: "WebTool", args: dict) -> str:
    start = site.normal(url_arg(args, "map"))
    limit = limit_arg(args, "map")
    origin = site.origin_of(start)
    started = time.monotonic()
    robots = site.robots_for(tool, origin)
    if robots.note:
        tool.log(f"web map: {robots.note}")
    if not robots.allows(start):
        tool.emit({"event": "map", "url": start, "urls": 0, "robots": "disallowed"})
        raise WebToolError(f"{robots.url} disallows {start} for crawlers, so no URLs were listed")
    urls, client = _from_sitemaps(tool, start, origin, robots, limit)
    source = f"its sitemaps ({len(client.fetched)} read)"
    notes = list(client.problems)
    if not urls:
        if client.fetched and robots.sitemaps():
            notes.append(
                f"the sitemaps robots.txt names ({', '.join(robots.sitemaps()[:3])}) listed no pages "
                f"that could be read — broken, empty or only pointing at each other"
            )
        urls = _from_links(tool, start, origin, robots, limit)
        source = "the links on its pages (no sitemap listed any)"
    tool.write_file(tool.sandbox / "outputs" / "map.txt", ("\n".join(urls) + "\n").encode("utf-8"))
    tool.emit(
        {
            "event": "map",
            "url": start,
            "urls": len(urls),
            "sitemaps": len(client.fetched),
            "seconds": round(time.monotonic() - started, 3),
        }
    )
    head = f"{len(urls)} URL{'s' if len(urls) != 1 else ''} on {origin}, from {source} (outputs/map.txt)"
    if len(urls) >= limit:
        head += f"; stopped at limit={limit}"
    return "\n".join([head, *[f"note: {n}" for n in notes], *urls])
