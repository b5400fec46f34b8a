"""Perplexity: its own crawl — the Search API (results, not an answer) and Sonar (answer)."""

from __future__ import annotations

from .base import BEARER, Call, adapter, day, items, plain
from .query import Found, Hit, Query

BASE = "https://api.perplexity.ai"


@adapter(
    "search",
    "perplexity",
    base=BASE,
    auth=BEARER,
    page="https://docs.perplexity.ai/api-reference/search-post",
    matched="2026-12-01",
)
def search(call: Call, q: Query) -> Found:
    body: dict = {"query": q.text, "max_results": min(q.count, 20)}
    if q.site:
        body["search_domain_filter"] = [q.site]
    if q.time_range:
        body["search_recency_filter"] = q.time_range
    if q.region:
        body["country"] = q.region
    data = call.json("POST", "/search", json=body)
    return Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(r.get("snippet")),
                date=day(r.get("date") or r.get("last_updated")),
            )
            for r in items(data, "results")
        ]
    )


@adapter(
    "answer",
    "perplexity",
    base=BASE,
    auth=BEARER,
    page="https://docs.perplexity.ai/api-reference/chat-completions-post",
    matched="2026-12-01",
)
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    body: dict = {"model": "sonar", "messages": [{"role": "user", "content": question}]}
    if args.get("site"):
        body["search_domain_filter"] = [args["site"]]
    if args.get("time_range"):
        body["search_recency_filter"] = args["time_range"]
    data = call.json("POST", "/chat/completions", json=body)
    choice = (items(data, "choices") or [{}])[0]
    sources = [
        {"title": str(r.get("title") or ""), "url": str(r.get("url") or ""), "date": day(r.get("date"))}
        for r in items(data, "search_results")
    ]
    if not sources:
        sources = [{"title": "", "url": str(u)} for u in data.get("citations") or [] if isinstance(u, str)]
    return str((choice.get("message") or {}).get("content") or ""), sources
