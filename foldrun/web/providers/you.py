"""You.com: its own index and cache (self-reported) — search, and the Express agent (answer)."""

from __future__ import annotations

from .base import Auth, Call, adapter, day, items, plain
from .query import Found, Hit, Query

KEY = Auth("header", "X-API-Key")


@adapter(
    "search",
    "you",
    base="https://ydc-index.io",
    auth=KEY,
    page="https://you.com/docs/api-reference/search/v1-search",
    matched="2026-12-01",
)
def search(call: Call, q: Query) -> Found:
    params: dict = {"query": q.with_site, "count": min(q.count, 100), "language": q.language.upper()}
    if q.region:
        params["country"] = q.region
    if q.time_range:
        params["freshness"] = q.time_range
    data = call.json("GET", "/v1/search", params=params)
    hits = []
    for r in items(data, "results", "web"):
        snippet = str(r.get("description") or "") or " … ".join(str(s) for s in r.get("snippets") or [])
        hits.append(
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(snippet),
                date=day(r.get("page_age")),
            )
        )
    return Found(hits=hits)


@adapter(
    "answer",
    "you",
    base="https://api.you.com",
    auth=Auth("header", "Authorization", "Bearer {key}"),
    page="https://you.com/docs/custom-solutions/agents/express-agent/express-agent-runs",
    matched="2026-12-01",
)
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    data = call.json("POST", "/v1/agents/runs", json={"agent": "express", "input": question, "stream": False})
    text, sources = "", []
    for part in items(data, "output"):
        if part.get("type") == "message.answer":
            text = str(part.get("text") or "")
        elif part.get("type") == "web_search.results":
            sources += [
                {"title": str(c.get("title") or ""), "url": str(c.get("url") or "")}
                for c in part.get("content") or []
                if isinstance(c, dict)
            ]
    return text, sources
