"""Linkup: agent-shaped search, each result with its content; a sourced answer."""

from __future__ import annotations

from .base import BEARER, Call, adapter, items, plain
from .query import Found, Hit, Query

BASE = "https://api.linkup.so"
PAGE = "https://docs.linkup.so/pages/documentation/api-reference/endpoint/post-search"


def _body(text: str, output: str, site: str | None, since: str | None) -> dict:
    body: dict = {"q": text, "depth": "standard", "outputType": output}
    if site:
        body["includeDomains"] = [site]
    if since:
        body["fromDate"] = since
    return body


@adapter("search", "linkup", base=BASE, auth=BEARER, page=PAGE, matched="2026-12-01")
def search(call: Call, q: Query) -> Found:
    data = call.json(
        "POST",
        "/v1/search",
        json={**_body(q.text, "searchResults", q.site, q.since()), "maxResults": min(q.count, 100)},
    )
    return Found(
        hits=[
            Hit(title=str(r.get("name") or ""), url=str(r.get("url") or ""), snippet=plain(r.get("content"))[:600])
            for r in items(data, "results")
            if r.get("type", "text") == "text"
        ]
    )


@adapter("answer", "linkup", base=BASE, auth=BEARER, page=PAGE, matched="2026-12-01")
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    since = Query(question, 1, None, args.get("time_range"), "en", None).since()
    data = call.json("POST", "/v1/search", json=_body(question, "sourcedAnswer", args.get("site"), since))
    sources = [{"title": str(s.get("name") or ""), "url": str(s.get("url") or "")} for s in items(data, "sources")]
    return str(data.get("answer") or ""), sources
