"""Every action answered by someone else, one module per vendor family, found through one registry.

`REGISTRY[(action, name)]` is the adapter; `foldrun.contract.web_capabilities.CAN`
is what the check and the run say each can do, and a test holds the two equal
(every pair in the table has an adapter; nothing else does). Each adapter
records the vendor page it was built from and the day it was matched to it
(`SOURCES`); a test fails when that is more than 90 days old.

| name | search | fetch | crawl · map | extract | answer | monitor |
|---|---|---|---|---|---|---|
| brave | /res/v1/web/search → `web.results[]` | | | | | |
| exa | /search → `results[]` | /contents, `maxAgeHours: 0` | | | /answer | |
| tavily | /search → `results[]` | /extract, failures beside | /crawl · /map | | /search + answer | |
| parallel | /v1/search → `results[]` | /v1/extract | | | /chat/completions | /v1alpha/monitors (a question) |
| you | ydc-index.io /v1/search → `results.web[]` | | | | /v1/agents/runs (express) | |
| jina | s.jina.ai → `data[]` | r.jina.ai → `data.content` | | | | |
| firecrawl | /v2/search → `data.web[]` | /v2/scrape | /v2/crawl · /v2/map | /v2/scrape json | | change tracking (a page) |
| perplexity | /search → `results[]` | | | | /chat/completions (sonar) | |
| linkup | /v1/search → `results[]` | | | | /v1/search sourcedAnswer | |
| serper | /search → `organic[]` | | | | | |
| serpapi | /search.json, key in the query → `organic_results[]` | | | | | |
| dataforseo | basic auth → `tasks[0].result[0].items[]` organic | | | | | |
| zyte | | basic auth, `browserHtml` or base64 body | | automatic extraction | | |
| scrapingbee | | `render_js`, key in the query | | | | |
| hyperbrowser | | | | /api/extract job | | |
| anthropic · zai · openrouter · openai · kimi | their own server tool (models.py) | anthropic's web_fetch | | | | |
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from foldrun.contract import web_engines as W

from ..errors import WebToolError
from ..shapes import Found
from . import actions
from . import brave, exa, firecrawl, hyperbrowser, jina, linkup, models, parallel, perplexity, scrapingbee  # noqa: F401
from . import serp, tavily, you, zyte  # noqa: F401
from .base import REGISTRY, Raw, open_call
from .query import query_of

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from ..tool import WebTool

# adapter -> (the vendor page it was built from, the day it was matched to it)
SOURCES: dict[str, tuple[str, str]] = {
    f"{name} {action}": (a.page, a.matched) for (action, name), a in REGISTRY.items()
}


def search_via(
    tool: "WebTool", provider: dict, query: str, *, count: int, site: str | None, time_range: str | None, language: str
) -> Found:
    refused = W.option_refusal("search", provider["name"], "time_range", time_range)
    if refused:
        raise WebToolError(refused)
    call = open_call(tool, provider)
    found = call.adapter.fn(call, query_of(query, count, site, time_range, language))
    found.hits = [h for h in found.hits if h.url]
    return found


def fetch_via(tool: "WebTool", provider: dict, urls: list[str], mode: str, target: "Path | None") -> str:
    """markdown, text or html from a fetch API; the caller reads meta, links and raw directly."""
    name = provider["name"]
    refused = W.batch_refusal("fetch", name, len(urls))
    if refused:
        raise WebToolError(refused)
    call = open_call(tool, provider)
    call.saving = target is not None
    pages = call.adapter.fn(call, urls, mode)
    raw = [(url, answer) for url, answer in pages if isinstance(answer, Raw)]
    if raw and target is not None:  # not a page (a PDF, an image): its own bytes kept, as a direct fetch keeps them
        url, answer = raw[0]
        where = tool.write_file(target, answer.body)
        return (
            f"saved {where} ({len(answer.body):,} bytes, {answer.media_type or 'not HTML'}, as the site sent it) "
            f"from {url} via {name}"
        )
    out = "\n\n".join(text if len(urls) == 1 else f"=== {url} ===\n{text}" for url, text in pages)
    if target is not None:
        where = tool.write_file(target, out.encode("utf-8"))
        return f"saved {where} ({len(out.encode()):,} bytes) from {', '.join(urls)} via {name}"
    return out


def run_action(tool: "WebTool", provider: dict, args: dict) -> str:
    """crawl, map, extract, answer or monitor, answered by the provider the agent's `web:` block names."""
    return actions.run(tool, provider, args)
