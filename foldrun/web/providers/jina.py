"""Jina: search (each result with its page already read) at s.jina.ai, the Reader at r.jina.ai."""

from __future__ import annotations

from .base import BEARER, Call, adapter, day, items, plain
from .query import Found, Hit, Query


@adapter(
    "search",
    "jina",
    base="https://s.jina.ai",
    auth=BEARER,
    page="https://jina.ai/reader/#apiform",
    matched="2026-12-01",
)
def search(call: Call, q: Query) -> Found:
    params = {"q": q.text, "hl": q.language}
    if q.region:
        params["gl"] = q.region.lower()
    headers = {"X-Respond-With": "no-content"}
    if q.site:
        headers["X-Site"] = q.site  # Jina's own domain filter
    data = call.json("GET", "/", params=params, headers=headers)
    return Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(r.get("description") or str(r.get("content") or "")[:400]),
                date=day(r.get("publishedTime")),
            )
            for r in items(data, "data")
        ]
    )


@adapter("fetch", "jina", base="https://r.jina.ai", auth=BEARER, page="https://jina.ai/reader/", matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    out = []
    for url in urls:
        data = call.json("GET", "/" + url, headers={"X-Return-Format": mode})
        page = data.get("data") if isinstance(data, dict) else None
        page = page if isinstance(page, dict) else {}
        if page.get("warning"):
            call.tool.log(f"web fetch via jina: {page['warning']}")
        out.append((url, str(page.get("content") or "")))
    return out
