"""crawl, map, extract, answer and monitor through a provider: the call's arguments read once, the
answer written where foldrun's own writes it (outputs/crawl/, outputs/map.txt, outputs/extracted.json)."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from foldrun.contract import web_engines as W

from ..errors import WebToolError
from ..shapes import check_url, site_domain
from .base import open_call

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool

LIMITS = {"crawl": (50, 5000), "map": (500, 50000)}


def url_arg(args: dict, action: str) -> str:
    raw = args.get("url")
    if raw in (None, ""):
        raise WebToolError(
            f"{action} needs url= — the {'page' if action in ('extract', 'monitor') else 'site'} to read"
        )
    return check_url(raw)


def limit_arg(args: dict, action: str) -> int:
    default, most = LIMITS[action]
    raw = args.get("limit", default)
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise WebToolError(f"{action} limit={raw} must be a whole number, 1 to {most:,}") from None
    if not 1 <= value <= most:
        raise WebToolError(f"{action} limit={value} must be 1 to {most:,}")
    return value


def url_slug(url: str) -> str:
    parts = urlsplit(url)
    text = (parts.path.strip("/") or "index") + (f"-{parts.query}" if parts.query else "")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "index"


def question_arg(args: dict, action: str) -> str:
    text = args.get("query")
    if not isinstance(text, str) or not text.strip():
        raise WebToolError(f"{action} needs query= — the question")
    return text.strip()


def schema_arg(args: dict) -> dict | None:
    raw = args.get("schema")
    if raw in (None, ""):
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise WebToolError("extract schema= must be a JSON Schema object, written as JSON") from None
    if not isinstance(raw, dict):
        raise WebToolError("extract schema= must be a JSON Schema object")
    return raw


def run(tool: "WebTool", provider: dict, args: dict) -> str:
    action, name = provider["action"], provider["name"]
    for option in ("time_range",):
        refused = W.option_refusal(action, name, option, args.get(option))
        if refused:
            raise WebToolError(refused)
    return RUNNERS[action](tool, provider, args)


def _crawl(tool: "WebTool", provider: dict, args: dict) -> str:
    url, limit = url_arg(args, "crawl"), limit_arg(args, "crawl")
    call = open_call(tool, provider)
    pages = [(u, text) for u, text in call.adapter.fn(call, url, limit) if u]
    folder = tool.sandbox / "outputs" / "crawl"
    index, used = [], set()
    for n, (page_url, text) in enumerate(pages, 1):
        slug = url_slug(page_url)
        name = f"{slug}.md" if slug not in used else f"{slug}-{n}.md"
        used.add(slug)
        tool.write_file(folder / name, text.encode("utf-8"))
        index.append(f"{page_url}\t{name}")
    tool.write_file(folder / "index.txt", ("\n".join(index) + "\n").encode("utf-8"))
    tool.emit({"event": "crawl", "provider": provider["name"], "url": url, "pages": len(pages)})
    return (
        f"crawled {len(pages)} page{'s' if len(pages) != 1 else ''} of {url} through {provider['name']} into "
        f"outputs/crawl/ (index: outputs/crawl/index.txt)\n" + "\n".join(line.split("\t")[0] for line in index)
    )


def _map(tool: "WebTool", provider: dict, args: dict) -> str:
    url, limit = url_arg(args, "map"), limit_arg(args, "map")
    call = open_call(tool, provider)
    urls = list(dict.fromkeys(u for u in call.adapter.fn(call, url, limit) if u))
    tool.write_file(tool.sandbox / "outputs" / "map.txt", ("\n".join(urls) + "\n").encode("utf-8"))
    tool.emit({"event": "map", "provider": provider["name"], "url": url, "urls": len(urls)})
    return f"{len(urls)} URLs on {url} through {provider['name']} (outputs/map.txt)\n" + "\n".join(urls)


def _extract(tool: "WebTool", provider: dict, args: dict) -> str:
    url = url_arg(args, "extract")
    ours = [a for a in ("fields", "each") if args.get(a) not in (None, "", {}, [])]
    if ours:
        raise WebToolError(
            f"{' and '.join(a + '=' for a in ours)} {'are' if len(ours) > 1 else 'is'} foldrun's own "
            f"selectors; this agent extracts with {provider['name']}, which reads by schema= or prompt="
        )
    schema, prompt = schema_arg(args), args.get("prompt")
    if not schema and not prompt and provider["name"] != "zyte":
        raise WebToolError(f"extract through {provider['name']} needs schema= or prompt= — what to read off the page")
    call = open_call(tool, provider)
    data: Any = call.adapter.fn(call, url, schema, str(prompt) if prompt else None)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    tool.write_file(tool.sandbox / "outputs" / "extracted.json", text.encode("utf-8"))
    tool.emit({"event": "extract", "provider": provider["name"], "url": url})
    return text


def _answer(tool: "WebTool", provider: dict, args: dict) -> str:
    question = question_arg(args, "answer")
    options = {"site": site_domain(args.get("site")), "time_range": args.get("time_range")}
    call = open_call(tool, provider)
    text, sources = call.adapter.fn(call, question, options)
    tool.emit({"event": "answer", "provider": provider["name"], "sources": len(sources)})
    lines = [
        f"Answer from {provider['name']} (its own model wrote it, from the sources below):",
        text.strip() or "(none)",
    ]
    if sources:
        lines += ["", "Sources:"]
        for n, source in enumerate(sources, 1):
            lines.append(f"{n}. {source.get('title') or source['url']}")
            lines.append(f"   {source['url']}")
    return "\n".join(lines)


def _monitor(tool: "WebTool", provider: dict, args: dict) -> str:
    what = W.CAN["monitor"][provider["name"]]["what"]
    call = open_call(tool, provider)
    if what == "question":
        if args.get("url") and not args.get("query"):
            raise WebToolError(
                f"{provider['name']} monitors a question (query=), not a page; firecrawl monitors a page"
            )
        return call.adapter.fn(call, question_arg(args, "monitor"), args)
    if args.get("query") and not args.get("url"):
        raise WebToolError(f"{provider['name']} monitors a page (url=), not a question; parallel monitors a question")
    return call.adapter.fn(call, url_arg(args, "monitor"), args)


RUNNERS = {"crawl": _crawl, "map": _map, "extract": _extract, "answer": _answer, "monitor": _monitor}
