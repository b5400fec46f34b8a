"""`mode=map` and `mode=crawl` in the browser, for a site that needs JavaScript: the same host only, robots.txt
honoured (the plain crawl's own rules, foldrun/web/site.py), three tabs loading at a time.

`map` lists every URL: the sitemaps (read as `web action=map` reads them) plus the links on the rendered pages,
to `outputs/map.txt`. `crawl` writes each rendered page as markdown under `outputs/crawl/` with
`outputs/crawl/index.txt`, keeping its cursor where the plain crawl keeps one, so the same call again carries
on. `limit` is the most pages (500 for map, 50 for crawl, up to 5,000). A wire error, a 5xx or a 429 is tried
once more before it is recorded; a redirect to another host is recorded, its page never read. The walk stops
short of the call's deadline and says so, with what it found.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import pages, site
from ..crawl import cursor_path, read_cursor
from ..errors import WebToolError
from ..net import scrub_url
from ..providers.actions import url_slug
from ..sitemap import listed_urls
from .registry import mode

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

AT_ONCE = 3  # tabs loading at a time
LIMITS = {"map": 500, "crawl": 50}  # the default number of pages
MOST = 5000
STOP_SHORT_MS = 8000  # the walk ends this long before the call's deadline, to write what it has
_LINKS_JS = "() => Array.from(document.querySelectorAll('a[href]'), a => a.href)"


def check_walk_options(args: dict, mode_name: str) -> None:
    """Before a browser opens: limit goes with map and crawl, a whole number from 1 to 5,000."""
    raw = args.get("limit")
    if raw in (None, ""):
        return
    if mode_name not in LIMITS:
        raise WebToolError(f"browse: limit= goes with mode=map or mode=crawl; this call reads mode={mode_name}")
    if isinstance(raw, bool) or not str(raw).strip().isdigit() or not 1 <= int(str(raw).strip()) <= MOST:
        raise WebToolError(
            f"browse: limit= is the most pages to walk, a whole number from 1 to {MOST:,}; {json.dumps(raw)} is not"
        )


def _limit(args: dict, mode_name: str) -> int:
    raw = args.get("limit")
    return LIMITS[mode_name] if raw in (None, "") else int(str(raw).strip())


@dataclass
class Visit:
    url: str
    status: int | None = None
    final: str | None = None
    error: str | None = None
    links: list[str] = field(default_factory=list)
    markdown: str | None = None


class Walker:
    """Same-host pages read three tabs at a time in the call's own browser context (its guards hold)."""

    def __init__(self, call: "Call", page: "Page", origin: str, keep_markdown: bool) -> None:
        self.call, self.page, self.origin, self.keep_markdown = call, page, origin, keep_markdown
        self.robots = site.robots_for(call.tool, origin)
        self.tabs: list["Page"] = []

    def close(self) -> None:
        for tab in self.tabs:
            try:
                tab.close()
            except Exception:  # noqa: BLE001 - closed with its context already
                pass

    def short_of_time(self) -> bool:
        return self.call.deadline.remaining_ms() < STOP_SHORT_MS

    def allowed(self, url: str) -> bool:
        return site.same_site(url, self.origin) and self.robots.allows(url)

    def read_here(self, url: str) -> Visit:
        """The page the call already opened, read as a visit."""
        visit = Visit(url, status=self.call.main_response.get("status"), final=site.normal(self.page.url))
        self._read(self.page, visit)
        return visit

    def visit(self, urls: list[str]) -> list[Visit]:
        """Up to three pages at once: each tab's navigation is started (it returns once the page's answer is
        in), then each tab's load is waited for — the loads run side by side."""
        while len(self.tabs) < min(AT_ONCE, len(urls)):
            self.tabs.append(self.page.context.new_page())
        visits = [Visit(url) for url in urls]
        started: list[tuple["Page", Visit]] = []
        for tab, visit in zip(self.tabs, visits):
            reason = self.call.host_refusal(visit.url)
            if reason:
                visit.error = reason
                continue
            if self._start(tab, visit) and self._start_again(tab, visit):
                started.append((tab, visit))
        for tab, visit in started:
            try:
                tab.wait_for_load_state("load", timeout=self.call.deadline.clip(self.call.tool.browse_timeout * 1000))
            except WebToolError:
                raise
            except Exception as exc:  # noqa: BLE001 - read what arrived
                visit.error = f"did not finish loading ({str(exc).splitlines()[0][:120]})"
            self._read(tab, visit)
        return visits

    def _start(self, tab: "Page", visit: Visit) -> bool:
        try:
            response = tab.goto(
                visit.url, wait_until="commit", timeout=self.call.deadline.clip(self.call.tool.browse_timeout * 1000)
            )
        except WebToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a wire error: Playwright's reason, first line
            visit.error = self.call.proxy_refusal(visit.url) or str(exc).splitlines()[0][:160]
            return True  # tried again by _start_again
        visit.error = None
        visit.status = response.status if response is not None else None
        visit.final = site.normal(tab.url)
        return True

    def _start_again(self, tab: "Page", visit: Visit) -> bool:
        """A wire error, a 5xx or a 429 is tried once more; False when the page is not one to read."""
        if visit.error or (visit.status or 0) >= 500 or visit.status == 429:
            if self.call.proxy_refusal(visit.url):
                return False
            self._start(tab, visit)
            if visit.error:
                visit.error += " after a second try"
                return False
            if (visit.status or 0) >= 500 or visit.status == 429:
                visit.error = f"HTTP {visit.status} after a second try"
                return False
        if visit.final and not site.same_site(visit.final, self.origin):
            visit.error = f"redirects to another host ({scrub_url(visit.final)}), not followed"
            return False
        if (visit.status or 0) >= 400:
            visit.error = f"HTTP {visit.status}"
            return False
        return True

    def _read(self, tab: "Page", visit: Visit) -> None:
        if visit.error:
            return
        try:
            visit.links = [
                site.normal(link) for link in tab.evaluate(_LINKS_JS) if link.startswith(("http://", "https://"))
            ]
            if self.keep_markdown:
                visit.markdown = pages.to_markdown(tab.content(), tab.url)
        except WebToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a tab that navigated on its own or closed
            visit.error = f"could not be read ({str(exc).splitlines()[0][:120]})"


def _robots_note(call: "Call", walker: Walker, start: str, what: str) -> None:
    if walker.robots.note:
        call.tool.log(f"browse mode={what}: {walker.robots.note}; walking as if it allowed everything")
    if not walker.robots.allows(start):
        raise WebToolError(
            f"{walker.robots.url} disallows {scrub_url(start)} for crawlers, so no pages were "
            f"{'listed' if what == 'map' else 'crawled'}"
        )


@mode("map", acts=False)
def read_map(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    start = site.normal(page.url)
    origin = site.origin_of(start)
    limit = _limit(args, "map")
    walker = Walker(call, page, origin, keep_markdown=False)
    _robots_note(call, walker, start, "map")
    found: dict[str, None] = {start: None}
    listed = listed_urls(tool, origin, walker.robots, limit)
    for url in listed:
        found.setdefault(url, None)
    queue: deque[str] = deque()
    read, stopped = 0, None

    def take(links: list[str]) -> None:
        for link in links:
            if len(found) >= limit:
                return
            if link not in found and walker.allowed(link):
                found[link] = None
                queue.append(link)

    try:
        take(walker.read_here(start).links)
        read = 1
        while queue and len(found) < limit:
            if walker.short_of_time():
                stopped = "stopped short of the call's deadline"
                break
            batch = [queue.popleft() for _ in range(min(AT_ONCE, len(queue)))]
            for visit in walker.visit(batch):
                read += 1
                if visit.final and visit.final != visit.url and walker.allowed(visit.final):
                    found.setdefault(visit.final, None)
                take(visit.links)
    finally:
        walker.close()
    urls = list(found)[:limit]
    tool.write_file(tool.sandbox / "outputs" / "map.txt", ("\n".join(urls) + "\n").encode("utf-8"))
    head = (
        f"{len(urls)} URL{'s' if len(urls) != 1 else ''} on {origin}, from its sitemaps ({len(listed)} listed) and "
        f"the links on {read} rendered page{'s' if read != 1 else ''} (outputs/map.txt)"
    )
    if len(urls) >= limit:
        head += f"; stopped at limit={limit}"
    elif stopped:
        head += f"; {stopped} — pass timeout= for a longer one"
    return "\n".join([head, *urls])


@mode("crawl", acts=False)
def read_crawl(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    start = site.normal(page.url)
    origin = site.origin_of(start)
    limit = _limit(args, "crawl")
    where = cursor_path(tool, start, False)
    folder = tool.sandbox / "outputs" / "crawl"
    walker = Walker(call, page, origin, keep_markdown=True)
    _robots_note(call, walker, start, "crawl")
    cursor = read_cursor(where, start)
    resumed = cursor is not None
    if cursor is None:
        cursor = {"start": start, "queue": [start], "seen": [start], "pages": [], "skipped": []}
    seen, pending = set(cursor["seen"]), deque(cursor["queue"])
    used = {name.removesuffix(".md") for _u, name in cursor["pages"]}
    written: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    stopped = None

    def take(url: str) -> None:
        if url in seen or not site.same_site(url, origin):
            return
        seen.add(url)
        if walker.robots.allows(url):
            pending.append(url)
        else:
            skipped.append((url, "disallowed by robots.txt"))

    def keep(visit: Visit) -> None:
        if visit.error:
            skipped.append((visit.url, visit.error))
            return
        slug = url_slug(visit.url)
        name = slug if slug not in used else f"{slug}-{hashlib.sha256(visit.url.encode()).hexdigest()[:8]}"
        used.add(name)
        tool.write_file(folder / f"{name}.md", (visit.markdown or "").encode("utf-8"))
        written.append((visit.url, f"{name}.md"))
        if visit.final and visit.final != visit.url:
            take(visit.final)
        for link in visit.links:
            take(link)

    try:
        if pending and pending[0] == start and not resumed:
            pending.popleft()
            keep(walker.read_here(start))
        while pending and len(written) < limit:
            if walker.short_of_time():
                stopped = "stopped short of the call's deadline"
                break
            batch = [pending.popleft() for _ in range(min(AT_ONCE, len(pending), limit - len(written)))]
            for visit in walker.visit(batch):
                keep(visit)
    finally:
        walker.close()
        cursor["pages"] += [list(p) for p in written]
        cursor["skipped"] += [list(s) for s in skipped]
        cursor["queue"], cursor["seen"] = list(pending), sorted(seen)
        index = "".join(f"{u}\t{n}\n" for u, n in cursor["pages"]) + "".join(
            f"{u}\t-\t{why}\n" for u, why in cursor["skipped"]
        )
        tool.write_file(folder / "index.txt", index.encode("utf-8"))
        tool.write_file(where, json.dumps(cursor).encode("utf-8"))
    total = len(cursor["pages"])
    lines = [
        f"{'resumed the crawl of' if resumed else 'crawled'} {start} in the browser: {len(written)} page"
        f"{'s' if len(written) != 1 else ''} this call, {total} in all, in outputs/crawl/ (index: "
        f"outputs/crawl/index.txt)"
    ]
    lines += [f"- {u} → outputs/crawl/{n}" for u, n in written]
    if skipped:
        lines.append(f"not kept ({len(skipped)}):")
        lines += [f"- {u}: {why}" for u, why in skipped]
    if pending:
        lines.append(
            f"{len(pending)} more page{'s' if len(pending) != 1 else ''} found and not yet read"
            + (f" ({stopped})" if stopped else "")
            + f" — the same call again carries on (cursor: "
            f"{tool.relative(where)})"
        )
    else:
        lines.append("nothing left to read on the site: the crawl is complete")
    return "\n".join(lines)
