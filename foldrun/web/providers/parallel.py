"""Parallel: its own closed index — search, extract (fetch), the chat API (answer) and monitors (a question)."""

from __future__ import annotations

import hashlib
import json

from ..errors import WebToolError
from .base import Auth, Call, adapter, day, items, plain
from .query import Found, Hit, Query
from ..pages import to_text

BASE = "https://api.parallel.ai"
KEY = Auth("header", "x-api-key")
DOCS = "https://docs.parallel.ai"


@adapter("search", "parallel", base=BASE, auth=KEY, page=f"{DOCS}/api-reference/search/search", matched="2026-12-01")
def search(call: Call, q: Query) -> Found:
    # No domain filter is sent: it is asked for 20 "so enough are left after the check" on what comes back.
    body = {"objective": q.text, "search_queries": [q.text], "max_results": 20 if q.site else min(q.count, 20)}
    data = call.json("POST", "/v1/search", json=body)
    return Found(
        hits=[
            Hit(
                title=str(r.get("title") or ""),
                url=str(r.get("url") or ""),
                snippet=plain(" … ".join(str(e) for e in r.get("excerpts") or []))[:600],
                date=day(r.get("publish_date")),
            )
            for r in items(data, "results")
        ]
    )


@adapter("fetch", "parallel", base=BASE, auth=KEY, page=f"{DOCS}/api-reference/extract/extract", matched="2026-12-01")
def fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
    data = call.json("POST", "/v1/extract", json={"urls": urls, "full_content": True, "excerpts": False})
    got = {}
    for r in items(data, "results"):
        text = r.get("full_content") or "\n\n".join(str(e) for e in r.get("excerpts") or [])
        if mode == "text" and text:
            text = to_text(str(text))
        got[str(r.get("url"))] = str(text or "")
    errors = {str(e.get("url")): str(e.get("error_type") or "error") for e in items(data, "errors")}
    if not got and errors:
        raise WebToolError("\n".join(f"{u}: {e} (through parallel)" for u, e in errors.items()))
    return [
        (url, got[url] if url in got else f"{url}: {errors.get(url, 'no result')} (through parallel)") for url in urls
    ]


@adapter(
    "answer",
    "parallel",
    base=BASE,
    auth=Auth("header", "Authorization", "Bearer {key}"),
    page=f"{DOCS}/chat-api/chat-quickstart",
    matched="2026-12-01",
)
def answer(call: Call, question: str, args: dict) -> tuple[str, list[dict]]:
    data = call.json(
        "POST",
        "/chat/completions",
        json={"model": "speed", "stream": False, "messages": [{"role": "user", "content": question}]},
    )
    choice = (items(data, "choices") or [{}])[0]
    text = str((choice.get("message") or {}).get("content") or "")
    sources, seen = [], set()
    for basis in items(data, "basis"):
        for c in basis.get("citations") or []:
            if isinstance(c, dict) and c.get("url") and c["url"] not in seen:
                seen.add(c["url"])
                sources.append({"title": str(c.get("title") or ""), "url": str(c["url"])})
    return text, sources


@adapter(
    "monitor", "parallel", base=BASE, auth=KEY, page=f"{DOCS}/monitor-api/monitor-quickstart", matched="2026-12-01"
)
def monitor(call: Call, question: str, args: dict) -> str:
    """A question: the monitor is made once and kept in state/; each call returns the events not yet shown."""
    tool = call.tool
    place = (
        tool.sandbox / "state" / "web-monitor" / f"parallel-{hashlib.sha256(question.encode()).hexdigest()[:16]}.json"
    )
    kept = json.loads(place.read_text()) if place.is_file() else {}
    first = not kept.get("monitor_id")
    if first:
        made = call.json(
            "POST", "/v1alpha/monitors", json={"query": question, "cadence": str(args.get("cadence") or "daily")}
        )
        kept = {"monitor_id": str(made.get("monitor_id") or ""), "seen": []}
        if not kept["monitor_id"]:
            raise WebToolError("parallel did not say which monitor it made")
    data = call.json("GET", f"/v1alpha/monitors/{kept['monitor_id']}/events")
    fresh = []
    for event in items(data, "events"):
        ident = str(event.get("event_group_id") or event.get("event_id") or json.dumps(event, sort_keys=True))
        if event.get("type", "event") == "event" and ident not in kept["seen"]:
            kept["seen"].append(ident)
            fresh.append(event)
    tool.write_file(place, json.dumps(kept).encode())
    if first and not fresh:
        return f"parallel now watches: {question} — a first call, so nothing is new yet; the next call says what is"
    if not fresh:
        return f"nothing new since the last call (parallel watches: {question})"
    lines = [f"{len(fresh)} new since the last call (parallel watches: {question}):"]
    for n, event in enumerate(fresh, 1):
        lines.append(f"{n}. {str(event.get('output') or '').strip()}")
        for url in event.get("source_urls") or []:
            lines.append(f"   {url}")
    return "\n".join(lines)
