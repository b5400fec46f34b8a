"""`crawl`: pages reached from a start URL, read one after another in the call's own browser session.

Breadth first, so each page is met at its least depth. robots.txt and the
sitemaps are read as `web action=crawl` and `map` read them (foldrun/web/site.py,
sitemap.py: plain guarded HTTP, Protego); links are the web tool's `links_of`.
A crawl that stops early (`maxPages`, `maxMs`) hands back a `cursor`: what is
left to read and what was seen, signed for the account, so the next call carries
on where this one stopped and nothing is read twice.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from django.core import signing
from playwright.sync_api import Page

from browsing.errors import SessionError
from foldrun.web import site, sitemap
from foldrun.web.net import scrub_url

from ..results import ToolError
from . import read
from .load import invalid, load

PAGE_TIMEOUT_MS = 30_000
MAX_SKIPPED_SHOWN = 200
MAX_SEEN = 20_000
MAX_CONTENT = 100_000
_HTML = ("text/html", "application/xhtml+xml")


class _Reader:
    """What site.get needs of a caller: the install's address policy and a deadline per request."""

    allow_private = None  # follow foldrun.net's policy at each connect
    fetch_timeout = 10.0


@dataclass
class Plan:
    start: str
    scope: str | list[str] = "host"
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    max_pages: int = 25
    max_depth: int = 2
    delay_ms: int = 500
    respect_robots: bool = True
    sitemap: bool = False
    content: list[str] = field(default_factory=list)
    max_ms: int = 300_000

    @classmethod
    def of(cls, start: str, args: dict[str, Any]) -> "Plan":
        scope = args.get("scope", "host")
        if isinstance(scope, list):
            scope = [str(h).strip().lower() for h in scope]
        return cls(
            start=site.normal(start),
            scope=scope,
            include=list(args.get("include") or []),
            exclude=list(args.get("exclude") or []),
            max_pages=int(args.get("maxPages", 25)),
            max_depth=int(args.get("maxDepth", 2)),
            delay_ms=int(args.get("delayMs", 500)),
            respect_robots=bool(args.get("respectRobots", True)),
            sitemap=bool(args.get("sitemap", False)),
            content=list(dict.fromkeys(args.get("content") or [])),
            max_ms=int(args.get("maxMs", 300_000)),
        )

    def in_scope(self, url: str) -> bool:
        parts = urlsplit(url)
        host, start = (parts.hostname or "").lower(), urlsplit(self.start)
        if self.scope == "host":
            return parts.netloc.lower() == start.netloc.lower()
        if self.scope == "subdomains":
            base = (start.hostname or "").lower().removeprefix("www.")
            return host == base or host.endswith("." + base)
        hosts = self.scope if isinstance(self.scope, list) else []
        netloc = parts.netloc.lower()
        return any(
            h == host or h == netloc or (h.startswith("*.") and (host == h[2:] or host.endswith(h[1:]))) for h in hosts
        )

    def why_not(self, url: str) -> str | None:
        """Why a link found on a page is not crawled, or None."""
        if not self.in_scope(url):
            return "outside the scope" + (f" ({self.scope})" if isinstance(self.scope, str) else "")
        if self.exclude and _matches(url, self.exclude):
            return "matches an exclude pattern"
        if self.include and not _matches(url, self.include):
            return "matches no include pattern"
        return None


def _matches(url: str, patterns: list[str]) -> bool:
    """A pattern is a glob (`*`, `?`, `[…]`) on the whole URL, or on its path and query when it starts with `/`."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return any(fnmatchcase(path if p.startswith("/") else url, p) for p in patterns)


def check_scope(args: dict[str, Any]) -> None:
    scope = args.get("scope")
    if isinstance(scope, list):
        for n, host in enumerate(scope):
            name = str(host).strip().lower()
            if not name or "/" in name or " " in name:
                raise invalid(f"scope[{n}]", "Must be a host name, such as docs.example.com (no scheme or path).")


def _salt(account_key: object) -> str:
    return f"foldrun.mcp.crawl.cursor:{account_key}"


def read_cursor(raw: str, start: str, account_key: object) -> dict[str, Any]:
    try:
        state = signing.loads(raw, salt=_salt(account_key))
    except signing.BadSignature:
        raise invalid(
            "cursor",
            "This is not a cursor a crawl of this account returned (or it was changed); start again without cursor.",
        ) from None
    if not isinstance(state, dict):
        raise invalid("cursor", "This is not a cursor a crawl returned; start again without cursor.")
    if state.get("start") != site.normal(start):
        raise invalid(
            "cursor",
            f"This cursor continues the crawl of {scrub_url(str(state.get('start')))}; call "
            f"crawl with that url, or leave cursor out.",
        )
    return state


class Crawl:
    """One call's crawl: `prepare()` (robots, sitemap; no browser), then `visit(page)`, then `result()`."""

    def __init__(self, plan: Plan, account_key: object, state: dict[str, Any] | None = None) -> None:
        self.plan = plan
        self.account_key = account_key
        self.started = time.monotonic()
        self.resumed = state is not None
        self.queue: deque[tuple[str, int]] = deque((u, d) for u, d in (state or {}).get("queue", []))
        self.seen: set[str] = set((state or {}).get("seen", []))
        self.visited: set[str] = set((state or {}).get("visited", []))  # pages read, under their final URL
        self.pages: list[dict[str, Any]] = []
        self.skipped: list[dict[str, str]] = []
        self.skipped_total = 0
        self.stopped_by = "complete"
        self._robots: dict[str, site.Robots] = {}

    # -- the parts that need no browser -------------------------------------------------------
    def robots(self, url: str) -> site.Robots:
        origin = site.origin_of(url)
        if origin not in self._robots:
            self._robots[origin] = site.robots_for(_Reader(), origin)  # type: ignore[arg-type]
        return self._robots[origin]

    def prepare(self) -> None:
        if self.resumed:
            return
        start = self.plan.start
        self.seen.add(start)
        if self.plan.respect_robots and not self.robots(start).allows(start):
            self.skip(start, "disallowed by robots.txt")
            return
        self.queue.append((start, 0))
        if self.plan.sitemap:
            robots = self.robots(start) if self.plan.respect_robots else site.Robots(None, "")
            for url in sitemap.listed_urls(
                _Reader(),
                site.origin_of(start),
                robots,  # type: ignore[arg-type]
                self.plan.max_pages * 4 + 100,
            ):
                self.found(url, 1)

    def skip(self, url: str, reason: str) -> None:
        self.skipped_total += 1
        if len(self.skipped) < MAX_SKIPPED_SHOWN:
            self.skipped.append({"url": scrub_url(url), "reason": reason})

    def found(self, url: str, depth: int) -> None:
        """A link (or a sitemap entry) at `depth`: queued, or skipped with the reason."""
        if url in self.seen:
            return
        if len(self.seen) < MAX_SEEN:
            self.seen.add(url)
        why = self.plan.why_not(url)
        if why is None and depth > self.plan.max_depth:
            why = f"deeper than maxDepth ({self.plan.max_depth})"
        if why is None and self.plan.respect_robots and not self.robots(url).allows(url):
            why = "disallowed by robots.txt"
        if why:
            self.skip(url, why)
        else:
            self.queue.append((url, depth))

    def left_ms(self) -> int:
        return int(self.plan.max_ms - (time.monotonic() - self.started) * 1000)

    # -- the browser's part -------------------------------------------------------------------
    def visit(self, page: Page) -> None:
        # maxMs counts from here, once the browser is ready: a session's start is not the crawl's time.
        self.started = time.monotonic()
        delay = self.plan.delay_ms / 1000
        if self.plan.respect_robots:
            delay = max(delay, self.robots(self.plan.start).delay())
        first = True
        while self.queue:
            if len(self.pages) >= self.plan.max_pages:
                self.stopped_by = "maxPages"
                return
            if not first and delay:
                time.sleep(min(delay, max(0, self.left_ms()) / 1000))
            if self.left_ms() <= 0:
                self.stopped_by = "timeout"
                return
            first = False
            url, depth = self.queue.popleft()
            if url in self.visited:  # a redirect of an earlier page already landed on it
                continue
            if not self.one(page, url, depth):
                self.queue.appendleft((url, depth))
                self.stopped_by = "timeout"
                return

    def one(self, page: Page, url: str, depth: int) -> bool:
        """Read one page; False when the crawl's own time ran out under it (it goes back in the queue)."""
        budget = min(PAGE_TIMEOUT_MS, self.left_ms())
        try:
            loaded = load(page, url, wait_until="load", timeout_ms=max(1, budget))
        except (ToolError, SessionError) as exc:  # a blocked or broken page is a finding of the crawl
            if exc.code == "timeout" and budget < PAGE_TIMEOUT_MS:
                return False
            if exc.code == "navigation_blocked" and url == self.plan.start:
                raise  # the address the caller named is refused: the call fails, as a scrape of it would
            self.skip(url, exc.message)
            return True
        media_type = loaded.content_type.split(";")[0].strip().lower()
        if media_type and media_type not in _HTML and (loaded.status or 200) < 400:
            self.skip(url, f"{media_type}, not a page")
            return True
        final = site.normal(loaded.url)
        if final != url and not self.plan.in_scope(final):
            self.skip(url, f"redirects to {scrub_url(final)}, outside the scope")
            return True
        if final != url and final in self.visited:
            self.skip(url, f"redirects to {scrub_url(final)}, already crawled")
            return True
        self.seen.add(final)
        self.visited.add(final)
        html = page.content()
        links = site.links_of(html, final)
        entry: dict[str, Any] = {
            "url": scrub_url(final),
            "depth": depth,
            "status": loaded.status,
            "title": page.title(),
            "linksFound": len(links),
            "ms": loaded.ms,
        }
        if self.plan.content:
            entry["content"] = {k: v[:MAX_CONTENT] for k, v in read.contents(html, final, self.plan.content).items()}
        self.pages.append(entry)
        for link in links:
            self.found(link, depth + 1)
        return True

    def result(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "start": scrub_url(self.plan.start),
            "pages": self.pages,
            "skipped": self.skipped,
            "skippedTotal": self.skipped_total,
            "stoppedBy": self.stopped_by,
            "pending": len(self.queue) if self.stopped_by != "complete" else 0,
        }
        if self.stopped_by != "complete" and self.queue:
            state = {
                "start": self.plan.start,
                "queue": [list(q) for q in self.queue],
                "seen": sorted(self.seen),
                "visited": sorted(self.visited),
            }
            out["cursor"] = signing.dumps(state, salt=_salt(self.account_key), compress=True)
        return out
