"""Brave Search: its own index (~40B pages)."""

from __future__ import annotations

from .base import Auth, Call, adapter, day, items, plain
from .query import Found, Hit, Query

FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}


@adapter(
    "search",
    "brave",
    base="https://api.search.brave.com",
    auth=Auth("header", "X-Subscription-Token"),
    page="https://api-dashboard.search.brave.com/app/documentation/web-search/get-started",
    matched="2026-12-01",
)
def search(call: Call, q: Query) -> Found:
    params = {"q": q.with_site, "count": min(q.count, 20), "search_lang": q.language}
    if q.region:
        params["country"] = q.region
    if q.time_range:
        params["freshness"] = FRESHNESS[q.time_range]
    data = call.json("GET", "/res/v1/web/search", params=params)
    hits = []
    for item in items(data, "web", "results"):
        snippet = str(item.get("description") or "")
        if item.get("extra_snippets"):
            snippet = " … ".join([snippet] + [str(s) for s in item["extra_snippets"][:2]])
        hits.append(
            Hit(
                title=plain(item.get("title")),
                url=str(item.get("url") or ""),
                snippet=plain(snippet),
                date=day(item.get("page_age")),
            )
        )
    return Found(hits=hits)
