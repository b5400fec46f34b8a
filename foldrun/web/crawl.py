"""`web action=crawl`, foldrun's own: plain HTTP, the same site, robots.txt honoured.

Each page is written as markdown, one file each, under `outputs/crawl/`, with
`outputs/crawl/index.txt` (URL, tab, file) beside them. A few pages are read at
a time; a wire error, a 5xx or a 429 is tried once more before it is recorded.
`limit` pages per call (50 by default, up to 5,000); the cursor — what is left
to read and what was seen — is kept in `outputs/crawl/.cursor.json`, or under
`state/crawl/` with `state=true`, so the same call again carries on where the
last one stopped. A redirect to another host is recorded, never followed.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from . import pages, site
from .errors import WebToolError
from .net import scrub_url
from .paths import FolderWriter
from .providers.actions import limit_arg, url_slug, url_arg

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

AT_ONCE = 4


def _truthy(raw: object) -> bool:
    return raw is True or str(raw).strip().lower() in ("true", "1", "yes")


def cursor_path(tool: "WebTool", start: str, in_state: bool):  # noqa: ANN201 - a Path
    if in_state:
        key = hashlib.sha256(start.encode()).hexdigest()[:12]
        return tool.sandbox / "state" / "crawl" / f"{url_slug(site.origin_of(start))}-{key}.json"
    return tool.sandbox / "outputs" / "crawl" / ".cursor.json"


def read_cursor(path, start: str) -> dict | None:  # noqa: ANN001 - a Path
    """A crawl's kept cursor for `start`, or None (none, unreadable, another site, or finished) — the HTTP
    crawl's and the browser walk's alike."""
    try:
        cursor = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(cursor, dict) or cursor.get("start") != start or not cursor.get("queue"):
        return None  # another site, or a crawl that had finished: this call starts afresh
    return cursor


def run(tool: "WebTool", args: dict) -> str:
    start = site.normal(url_arg(args, "crawl"))
    limit = limit_arg(args, "crawl")
    in_state = _truthy(args.get("state"))
    origin = site.origin_of(start)
    where = cursor_path(tool, start, in_state)
    folder = tool.sandbox / "outputs" / "crawl"
    cursor = read_cursor(where, start)
    resumed = cursor is not None
    if cursor is None:
        cursor = {"start": start, "queue": [start], "seen": [start], "pages": [], "skipped": []}
    robots = site.robots_for(tool, origin)
    if robots.note:
        tool.log(f"web crawl: {robots.note}; crawling as if it allowed everything")
    if not robots.allows(start):
        tool.emit({"event": "crawl", "url": start, "pages": 0, "robots": "disallowed"})
        raise WebToolError(f"{robots.url} disallows {start} for crawlers, so no pages were crawled")
    delay = robots.delay()
    seen = set(cursor["seen"])
    pending: deque[str] = deque(cursor["queue"])
    used = {name for _u, name in cursor["pages"]}
    written: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    started = time.monotonic()

    def take(url: str) -> None:
        if url in seen or not site.same_site(url, origin):
            return
        seen.add(url)
        if robots.allows(url):
            pending.append(url)
        else:
            skipped.append((url, "disallowed by robots.txt"))

    def name_for(url: str) -> str:
        slug = url_slug(url)
        name = f"{slug}.md" if slug not in used else f"{slug}-{hashlib.sha256(url.encode()).hexdigest()[:8]}.md"
        used.add(name.removesuffix(".md"))
        used.add(slug)
        return name

    def work(url: str, name: str) -> tuple[site.Got, list[str] | None]:
        """In a worker thread: read, convert and write one page (its file I/O overlaps the others' reads)."""
        got = site.get(tool, url)
        if got.location or got.error or got.status >= 400 or not got.is_html():
            return got, None
        html = got.text
        text = pages.to_markdown(html, url)
        # a shell has next to no words; only then is the (slower) shell check worth making
        # (split stops at the 60th word: a long page is not split whole to learn it is long)
        why = pages.javascript_shell(html) if len(text.split(None, 60)) < 60 else None
        if why:
            text = f"<!-- {url} builds itself with JavaScript ({why}); read it with web action=browse -->\n\n" + text
        writer.write(name, text.encode("utf-8"))
        return got, site.links_of(html, url)

    def handle(url: str, name: str, got: site.Got, links: list[str] | None) -> None:
        if links is not None:
            written.append((url, name))
            for link in links:
                take(link)
        elif got.location:
            target = site.normal(got.location)
            if site.same_site(target, origin):
                take(target)
                skipped.append((url, f"redirects to {scrub_url(target)}"))
            else:
                skipped.append((url, f"redirects to another host ({scrub_url(target)}), not followed"))
        elif got.error:
            skipped.append((url, got.error.removeprefix(f"{got.url}: ")))
        elif got.status >= 400:
            skipped.append((url, f"HTTP {got.status}" + (" after a second try" if got.retried else "")))
        else:
            skipped.append(
                (
                    url,
                    f"{got.media_type or 'not HTML'} ({len(got.body):,} bytes), not a page; "
                    f"fetch it with mode=raw and save= to keep it",
                )
            )

    workers = 1 if delay else AT_ONCE
    lock = threading.Condition()
    running = [0]  # pages being read now
    failures: list[BaseException] = []

    def next_url() -> tuple[str, str] | None:
        """Under the lock: the next page to read, waiting while the pages being read may yet add some."""
        while not failures and len(written) < limit:
            if pending and len(written) + running[0] < limit:
                url = pending.popleft()
                running[0] += 1
                return url, name_for(url)
            if not running[0]:
                return None  # nothing left, and nothing being read that could add any
            lock.wait()
        return None

    def reader() -> None:
        """Read pages until none is left or the limit is met; each reader takes the next page itself,
        so a page costs no future, no hand-off to a coordinating thread and no wake-up of one."""
        while True:
            with lock:
                taken = next_url()
            if taken is None:
                return
            url, name = taken
            failure: BaseException | None = None
            try:
                got, links = work(url, name)
            except BaseException as exc:  # noqa: BLE001 - raised again on the calling thread, below
                failure = exc
            with lock:  # one hold per page: the page's outcome, and a wake-up for readers waiting on it
                running[0] -= 1
                if failure is None:
                    try:
                        handle(url, name, got, links)
                    except BaseException as exc:  # noqa: BLE001 - as above
                        failure = exc
                if failure is not None:
                    failures.append(failure)
                lock.notify_all()
            if failures:
                return
            if delay:
                time.sleep(delay)

    with FolderWriter(tool.sandbox, folder) as writer:
        helpers = [threading.Thread(target=reader, name=f"crawl-{n}", daemon=True) for n in range(workers - 1)]
        for helper in helpers:
            helper.start()
        reader()  # the calling thread reads too
        for helper in helpers:
            helper.join()
    if failures:
        raise failures[0]
    queue = list(pending)
    cursor["pages"] += [list(p) for p in written]
    cursor["skipped"] += [list(s) for s in skipped]
    cursor["queue"], cursor["seen"] = queue, sorted(seen)
    index = "".join(f"{u}\t{n}\n" for u, n in cursor["pages"]) + "".join(
        f"{u}\t-\t{why}\n" for u, why in cursor["skipped"]
    )
    tool.write_file(folder / "index.txt", index.encode("utf-8"))
    tool.write_file(where, json.dumps(cursor).encode("utf-8"))
    tool.emit(
        {
            "event": "crawl",
            "url": start,
            "pages": len(written),
            "skipped": len(skipped),
            "left": len(queue),
            "resumed": resumed or None,
            "seconds": round(time.monotonic() - started, 3),
        }
    )
    return _report(tool, start, written, skipped, queue, cursor, resumed, where)


def _report(
    tool: "WebTool", start: str, written: list, skipped: list, queue: list, cursor: dict, resumed: bool, where
) -> str:  # noqa: ANN001
    total = len(cursor["pages"])
    head = (
        f"{'resumed the crawl of' if resumed else 'crawled'} {start}: {len(written)} page"
        f"{'s' if len(written) != 1 else ''} this call, {total} in all, in outputs/crawl/ "
        f"(index: outputs/crawl/index.txt)"
    )
    lines = [head]
    lines += [f"- {u} → outputs/crawl/{n}" for u, n in written]
    if skipped:
        lines.append(f"not kept ({len(skipped)}):")
        lines += [f"- {u}: {why}" for u, why in skipped]
    if queue:
        lines.append(
            f"{len(queue)} more page{'s' if len(queue) != 1 else ''} found and not yet read — the same call "
            f"again carries on (cursor: {tool.relative(where)})"
        )
    else:
        lines.append("nothing left to read on the site: the crawl is complete")
    return "\n".join(lines)
