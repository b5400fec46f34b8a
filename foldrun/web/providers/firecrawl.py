"""Firecrawl: search, scrape (fetch), crawl, map, extract (JSON by schema or prompt) and change tracking (monitor)."""

from __future__ import annotations

import time

from ..errors import WebToolError
from .base import BEARER, Call, adapter, items, plain
from .query import Found, Hit, Query
from ..pages import to_text

BASE = "https://api.firecrawl.dev"
DOCS = "https://docs.firecrawl.dev/api-reference/endpoint"
TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
POLL = 1.0


@adapter("search", "firecrawl", base=BASE, auth=BEARER, page=f"{DOCS}/search", matched="2026-12-01")
def search(call: Call, q: Query) -> Found:
    body: dict = {"query": q.with_site, "limit": min(q.count, 100), "sources": ["web"]}
    if q.time_range:
        body["tbs"] = TBS[q.time_range]
    if q.region:
        body["country"] = q.region
    data = call.json("POST", "/v2/search", json=body)
    return Found(
        hits=[
            Hit(title=str(r.get("title") or ""), url=str(r.get("url") or ""), snippet=plain(r.get("description")))
            for r in items(data, "data", "web")
        ]
    )


def _scrape(call: Call, url: str, formats: list) -> dict:
    data = call.json("POST", "/v2/scrape", json={"url": url, "formats": formats})
    page = data.get("data") if isinstance(data, dict) else None
    if not isinstance(page, dict):
        raise WebToolError("firecrawl answered something that is not its documented shape")
    status = (page.get("metadata") or {}).get("statusCode")
    if isinstance(status, int) and status >= 400:
        raise WebToolError(f"{url}: HTTP {status} (through firecrawl)")
    return page


@adapter("fetch", "firecrawl", base=BASE, auth=BEARER, page=f"{DOCS}/scrape", matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    fmt = "markdown" if mode == "markdown" else "html"  # Firecrawl answers markdown or html; text is read from html
    text = str(_scrape(call, urls[0], [fmt]).get(fmt) or "")
    if mode == "text":
        text = to_text(text)
    return [(urls[0], text)]


@adapter("crawl", "firecrawl", base=BASE, auth=BEARER, page=f"{DOCS}/crawl-post", matched="2026-12-01")
def crawl(call: Call, url: str, limit: int) -> list[tuple[str, str]]:
    started = call.json(
        "POST", "/v2/crawl", json={"url": url, "limit": limit, "scrapeOptions": {"formats": ["markdown"]}}
    )
    job = str(started.get("id") or "")
    if not job:
        raise WebToolError("firecrawl did not say which crawl it started")
    deadline = time.monotonic() + max(call.tool.fetch_timeout * 15, 300.0)
    data = call.json("GET", f"/v2/crawl/{job}")
    while data.get("status") not in ("completed", "failed"):
        if time.monotonic() > deadline:
            raise WebToolError(f"firecrawl's crawl of {url} had not finished in time")
        time.sleep(POLL)
        data = call.json("GET", f"/v2/crawl/{job}")
    if data.get("status") == "failed":
        raise WebToolError(f"firecrawl's crawl of {url} failed")
    pages: list[tuple[str, str]] = []
    while True:  # a finished crawl answers a page of results at a time, `next` pointing at the rest
        for page in items(data, "data"):
            meta = page.get("metadata") or {}
            pages.append((str(meta.get("sourceURL") or meta.get("url") or ""), str(page.get("markdown") or "")))
        following = data.get("next")
        if not (isinstance(following, str) and "/v2/" in following) or len(pages) >= limit:
            return pages[:limit]
        data = call.json("GET", following[following.index("/v2/") :])


@adapter("map", "firecrawl", base=BASE, auth=BEARER, page=f"{DOCS}/map", matched="2026-12-01")
def map_site(call: Call, url: str, limit: int) -> list[str]:
    data = call.json("POST", "/v2/map", json={"url": url, "limit": limit})
    links = data.get("links") if isinstance(data, dict) else None
    return [str(l.get("url") if isinstance(l, dict) else l) for l in links or []][:limit]


@adapter("extract", "firecrawl", base=BASE, auth=BEARER, page=f"{DOCS}/scrape", matched="2026-12-01")
def extract(call: Call, url: str, schema: dict | None, prompt: str | None) -> object:
    wanted: dict = {"type": "json"}
    if schema:
        wanted["schema"] = schema
    if prompt:
        wanted["prompt"] = prompt
    return _scrape(call, url, [wanted]).get("json")


@adapter(
    "monitor",
    "firecrawl",
    base=BASE,
    auth=BEARER,
    page="https://docs.firecrawl.dev/features/change-tracking",
    matched="2026-12-01",
)
def monitor(call: Call, target: str, args: dict) -> str:
    page = _scrape(call, target, ["markdown", {"type": "changeTracking", "modes": ["git-diff"]}])
    tracking = page.get("changeTracking") or {}
    status = str(tracking.get("changeStatus") or "")
    if status == "new":
        return f"{target}: firecrawl had not seen it before; it keeps this read as the baseline for the next call"
    if status == "same":
        return f"{target}: unchanged since {tracking.get('previousScrapeAt') or 'the last call'} (firecrawl)"
    if status == "removed":
        return f"{target}: the page is gone since {tracking.get('previousScrapeAt') or 'the last call'} (firecrawl)"
    diff = (tracking.get("diff") or {}).get("text") if isinstance(tracking.get("diff"), dict) else None
    lines = [l for l in str(diff or "").splitlines() if l[:1] in "+-" and not l.startswith(("+++", "---"))]
    return f"{target}: changed since {tracking.get('previousScrapeAt') or 'the last call'} (firecrawl)\n" + (
        "\n".join(lines) if lines else "(firecrawl gave no line diff)"
    )
