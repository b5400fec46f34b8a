"""Exa: its own semantic index — search, contents (fetch) and answer."""

from __future__ import annotations

from .base import Auth, Call, adapter, day, items, plain
from .query import Found, Hit, Query

KEY = Auth("header", "x-api-key")
BASE = "https://api.exa.ai"


@adapter("search", "exa", base=BASE, auth=KEY, page="https://docs.exa.ai/reference/search", matched="2026-12-01")
def search(call: Call, q: Query) -> Found:
    body: dict = {"query": q.text, "numResults": min(q.count, 100), "contents": {"highlights": True}}
    if q.site:
        body["includeDomains"] = [q.site]
    if q.time_range:
        body["startPublishedDate"] = q.since("%Y-%m-%dT%H:%M:%S.000Z")
    if q.region:
        body["userLocation"] = q.region
    data = call.json("POST", "/search", json=body)
    hits = []
    for r in items(data, "results"):
        snippet = " … ".join(str(h) for h in r.get("highlights") or []) or str(r.get("summary") or r.get("text") or "")
        hits.append(
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(snippet)[:600],
                date=day(r.get("publishedDate")),
            )
        )
    return Found(hits=hits)


@adapter("fetch", "exa", base=BASE, auth=KEY, page="https://docs.exa.ai/reference/get-contents", matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    # A fetch is expected to be live: ask for the page as it is now, not Exa's cached copy.
    data = call.json("POST", "/contents", json={"urls": urls, "text": True, "maxAgeHours": 0})
    by_url = {str(r.get("url") or r.get("id")): r for r in items(data, "results")}
    statuses = {str(s.get("id")): s for s in items(data, "statuses")}
    out = []
    for url in urls:
        result, status = by_url.get(url), statuses.get(url) or {}
        if result is None:
            out.append((url, f"{url}: exa could not read it ({status.get('status') or 'no result'})"))
            continue
        source = f"[exa: {status['source']}]\n" if status.get("source") else ""
        out.append((url, source + str(result.get("text") or "")))
    return out


@adapter("answer", "exa", base=BASE, auth=KEY, page="https://docs.exa.ai/reference/answer", matched="2026-12-01")
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    data = call.json("POST", "/answer", json={"query": question, "text": False})
    sources = [
        {"title": str(c.get("title") or ""), "url": str(c.get("url") or ""), "date": day(c.get("publishedDate"))}
        for c in items(data, "citations")
    ]
    return str(data.get("answer") or ""), sources
