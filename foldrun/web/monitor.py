"""`web action=monitor`, foldrun's own: what changed since the last call, kept in `state/monitor/`.

A page (`url=`): its text as markdown, line by line — the lines added and the
lines removed since the baseline, which then moves on. A question (`query=`):
the search's results that were not there last time. The first call has
nothing to compare with: it saves the baseline and says so.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import time
from typing import TYPE_CHECKING

from . import pages, site
from .errors import WebToolError
from .providers.actions import url_arg
from .answer import search_results

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

SHOWN_LINES = 200


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _stamp() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())


def _page_text(tool: "WebTool", url: str) -> str:
    got = site.get(tool, url)
    if got.location and site.same_site(got.location, site.origin_of(url)):
        got = site.get(tool, got.location)
    if got.error:
        raise WebToolError(f"{got.error}; the baseline was left as it was")
    if got.location:
        raise WebToolError(f"{url} redirects to another host ({got.location}); monitor that URL if it is the page")
    if got.status >= 400:
        raise WebToolError(f"{url}: HTTP {got.status}; the baseline was left as it was")
    if got.is_html():
        return pages.to_markdown(got.text, url)
    if got.media_type.startswith("text/") or got.media_type.endswith(("json", "xml")):
        return got.text
    return f"{got.media_type} sha256:{hashlib.sha256(got.body).hexdigest()}"


def _page(tool: "WebTool", url: str) -> str:
    where = tool.sandbox / "state" / "monitor" / f"page-{_key(url)}.json"
    now = _page_text(tool, url)
    lines = [line for line in now.splitlines() if line.strip()]
    before = _read(where)
    tool.write_file(where, json.dumps({"url": url, "at": _stamp(), "lines": lines}).encode("utf-8"))
    rel = tool.relative(where)
    if before is None:
        tool.emit({"event": "monitor", "url": url, "baseline": "saved"})
        return (
            f"first look at {url}: saved a baseline of {len(lines)} lines in {rel}; the next call says what "
            f"changed since now"
        )
    old = before.get("lines") or []
    added, removed = [], []
    for line in difflib.ndiff(old, lines):
        if line.startswith("+ "):
            added.append(line[2:])
        elif line.startswith("- "):
            removed.append(line[2:])
    tool.emit({"event": "monitor", "url": url, "added": len(added), "removed": len(removed)})
    if not added and not removed:
        return f"{url}: nothing changed since {before.get('at')}"
    out = [
        f"{url} since {before.get('at')}: {len(added)} line{'s' if len(added) != 1 else ''} added, "
        f"{len(removed)} removed (baseline now updated in {rel})"
    ]
    out += [f"+ {line}" for line in added[:SHOWN_LINES]]
    out += [f"- {line}" for line in removed[:SHOWN_LINES]]
    return "\n".join(out)


def question_arg(tool: "WebTool", query: str, args: dict) -> str:
    where = tool.sandbox / "state" / "monitor" / f"question-{_key(query)}.json"
    hits = search_results(tool, query, args)
    before = _read(where)
    known = set((before or {}).get("urls") or [])
    urls = list(dict.fromkeys(h.url for h in hits))
    tool.write_file(
        where, json.dumps({"query": query, "at": _stamp(), "urls": sorted(known | set(urls))}).encode("utf-8")
    )
    rel = tool.relative(where)
    if before is None:
        tool.emit({"event": "monitor", "query": query, "baseline": "saved"})
        return (
            f"first look at {query!r}: saved a baseline of {len(urls)} results in {rel}; the next call lists the "
            f"results that are new since now"
        )
    new = [h for h in hits if h.url not in known]
    tool.emit({"event": "monitor", "query": query, "new": len(new)})
    if not new:
        return f"{query!r}: no new results since {before.get('at')}"
    out = [f"{query!r}: {len(new)} new result{'s' if len(new) != 1 else ''} since {before.get('at')}"]
    for n, hit in enumerate(new, 1):
        out.append(f"{n}. {hit.title or hit.url}\n   {hit.url}" + (f"\n   {hit.snippet}" if hit.snippet else ""))
    return "\n".join(out)


def _read(where) -> dict | None:  # noqa: ANN001
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run(tool: "WebTool", args: dict) -> str:
    query = args.get("query")
    if args.get("url") and query:
        raise WebToolError("monitor watches a page (url=) or a question (query=), one per call — not both")
    if isinstance(query, str) and query.strip():
        return question_arg(tool, query.strip(), args)
    return _page(tool, url_arg(args, "monitor"))
