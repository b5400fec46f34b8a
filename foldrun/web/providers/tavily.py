"""Tavily: own crawler plus bought-in feeds — search, extract (fetch), crawl, map and answer."""

from __future__ import annotations

from ..errors import WebToolError
from .base import BEARER, Call, adapter, day, items, plain
from .query import Found, Hit, Query

BASE = "https://api.tavily.com"
DOCS = "https://docs.tavily.com/documentation/api-reference/endpoint"


def _body(q: Query) -> dict:
    body: dict = {"query": q.text, "max_results": min(q.count, 20), "search_depth": "basic"}
    if q.site:
        body["include_domains"] = [q.site]
    if q.time_range:
        body["time_range"] = q.time_range
    return body


@adapter("search", "tavily", base=BASE, auth=BEARER, page=f"{DOCS}/search", matched="2026-12-01")
def search(call: Call, q: Query) -> Found:
    data = call.json("POST", "/search", json=_body(q))
    found = Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(r.get("content")),
                date=day(r.get("published_date")),
            )
            for r in items(data, "results")
        ]
    )
    if data.get("answer"):
        found.answers.append(str(data["answer"]))
    return found


@adapter("fetch", "tavily", base=BASE, auth=BEARER, page=f"{DOCS}/extract", matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    data = call.json("POST", "/extract", json={"urls": urls, "format": "text" if mode == "text" else "markdown"})
    got = {str(r.get("url")): str(r.get("raw_content") or "") for r in items(data, "results")}
    failed = {str(r.get("url")): str(r.get("error") or "failed") for r in items(data, "failed_results")}
    if not got and failed:
        raise WebToolError("\n".join(f"{u}: {e} (through tavily)" for u, e in failed.items()))
    return [
        (url, got[url] if url in got else f"{url}: {failed.get(url, 'no result')} (through tavily)") for url in urls
    ]


@adapter("crawl", "tavily", base=BASE, auth=BEARER, page=f"{DOCS}/crawl", matched="2026-12-01")
def crawl(call: Call, url: str, limit: int) -> list[tuple[str, str]]:
    data = call.json(
        "POST",
        "/crawl",
        json={"url": url, "limit": limit, "format": "markdown"},
        timeout=max(call.tool.fetch_timeout, 150.0),
    )
    return [(str(r.get("url") or ""), str(r.get("raw_content") or "")) for r in items(data, "results")][:limit]


@adapter("map", "tavily", base=BASE, auth=BEARER, page=f"{DOCS}/map", matched="2026-12-01")
def map_site(call: Call, url: str, limit: int) -> list[str]:
    data = call.json("POST", "/map", json={"url": url, "limit": limit}, timeout=max(call.tool.fetch_timeout, 150.0))
    results = data.get("results") if isinstance(data, dict) else None
    return [str(u) for u in results or [] if isinstance(u, str)][:limit]


@adapter("answer", "tavily", base=BASE, auth=BEARER, page=f"{DOCS}/search", matched="2026-12-01")
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    q = Query(question, 10, args.get("site"), args.get("time_range"), "en", None)
    data = call.json("POST", "/search", json={**_body(q), "include_answer": "advanced"})
    sources = [
        {"title": str(r.get("title") or ""), "url": str(r.get("url") or ""), "date": day(r.get("published_date"))}
        for r in items(data, "results")
    ]
    return str(data.get("answer") or ""), sources
