"""Search and fetch APIs answered by someone else, with the key filled in here.

The key is read from the vault by name (`BRAVE_SEARCH_API_KEY`, or the
block's own `key: ${MY_KEY}`) through the tool's resolver, put in the one
header that API expects, and never in the arguments, the result or the trace;
an error body that echoes it has it replaced by `[secret NAME]`.

Built here (each against its vendor's documented wire; the tests speak it
from loopback stand-ins):

| name | search | fetch |
|---|---|---|
| brave | GET /res/v1/web/search, `X-Subscription-Token` → `web.results[]` | — |
| tavily | POST /search, `Authorization: Bearer` → `results[]` | — |
| exa | POST /search, `x-api-key` → `results[]` | — |
| serper | POST /search, `X-API-KEY` → `organic[]` | — |
| jina | — | GET r.jina.ai/<url>, `Accept: application/json` → `data.content` |
| firecrawl | — | POST /v2/scrape, `Authorization: Bearer` → `data.markdown` / `data.html` |
| exa | (above) | POST /contents, `maxAgeHours: 0` (live) → `results[].text` + `statuses[].source` |
| tavily | (above) | POST /extract → `results[].raw_content` + `failed_results[]`, both always |

Every other name the spec lists says so, naming the ones that are built.
"""
from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any, Callable

import httpx

from foldrun.contract import web_engines as W

from .errors import WebToolError
from .search import Found, Hit

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    from .tool import WebTool

ENDPOINTS: dict[str, str] = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
    "exa": "https://api.exa.ai",
    "serper": "https://google.serper.dev",
    "jina": "https://r.jina.ai",
    "firecrawl": "https://api.firecrawl.dev",
}
# Where each adapter was read from, and when (the spec: a test fails past 90 days).
SOURCES: dict[str, tuple[str, str]] = {
    "brave": ("https://api-dashboard.search.brave.com/app/documentation/web-search/get-started", "2026-11-30"),
    "tavily": ("https://docs.tavily.com/documentation/api-reference/endpoint/search", "2026-11-30"),
    "exa": ("https://docs.exa.ai/reference/search", "2026-11-30"),
    "serper": ("https://serper.dev/playground", "2026-11-30"),
    "jina": ("https://jina.ai/reader/", "2026-11-30"),
    "firecrawl": ("https://docs.firecrawl.dev/api-reference/endpoint/scrape", "2026-11-30"),
    "exa contents": ("https://docs.exa.ai/reference/get-contents", "2026-11-30"),
    "tavily extract": ("https://docs.tavily.com/documentation/api-reference/endpoint/extract", "2026-11-30"),
}
SEARCH_BUILT = ("brave", "tavily", "exa", "serper")
FETCH_BUILT = ("jina", "firecrawl", "exa", "tavily")
BRAVE_FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
SERPER_TBS = {"day": "qdr:d", "week": "qdr:w", "month": "qdr:m", "year": "qdr:y"}
DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


def _key(tool: "WebTool", provider: dict, *, optional: bool = False) -> tuple[str, str] | None:
    name = provider["key_name"]
    try:
        value = tool.secret(name)
    except Exception:  # noqa: BLE001 - any resolver failure is "not available", said by name
        value = None
    if not value:
        if optional:
            return None
        raise WebToolError(f"web.{provider['action']}: {provider['name']} needs the secret {name}, and it is not "
                           f"available to this step — `foldrun secrets set {name}`")
    return name, value


def _call(tool: "WebTool", provider: dict, method: str, path: str, key: tuple[str, str] | None,
          **kwargs: Any) -> dict:
    name = provider["name"]
    base = (tool.endpoints.get(name) or ENDPOINTS[name]).rstrip("/")
    started = time.monotonic()
    try:
        response = tool.http.request(method, base + path, timeout=tool.fetch_timeout, **kwargs)
    except httpx.TimeoutException:
        raise WebToolError(f"{name} did not answer within {tool.fetch_timeout:g}s") from None
    except httpx.HTTPError as exc:
        raise WebToolError(f"{name} could not be reached ({type(exc).__name__})") from None
    tool.emit({"event": "provider", "provider": name, "action": provider["action"], "status": response.status_code,
               "seconds": round(time.monotonic() - started, 3)})

    def hide(text: str) -> str:
        return text.replace(key[1], f"[secret {key[0]}]") if key and len(key[1]) >= 4 else text

    if response.status_code in (401, 403):
        held = f"the key in {key[0]}" if key else "a request without a key"
        raise WebToolError(f"{name} refused {held} (HTTP {response.status_code}): {hide(response.text[:300])}")
    if response.status_code == 429:
        raise WebToolError(f"{name} is rate-limiting this key (HTTP 429); wait, or search less often")
    if response.status_code >= 400:
        raise WebToolError(f"{name} answered HTTP {response.status_code}: {hide(response.text[:300])}")
    try:
        data = response.json()
    except ValueError:
        raise WebToolError(f"{name} did not answer JSON") from None
    if not isinstance(data, dict):
        raise WebToolError(f"{name} answered something that is not its documented shape")
    return data


# ------------------------------------------------------------------ search

def search_via(tool: "WebTool", provider: dict, query: str, *, count: int, site: str | None,
               time_range: str | None, language: str) -> Found:
    name = provider["name"]
    if time_range and name in W.NO_TIME_RANGE:
        raise WebToolError(f"{name} cannot filter by date, so time_range={time_range} is refused rather than "
                           f"answered for every date; search without it")
    if name not in SEARCH_BUILT:
        raise WebToolError(f"web.search: {name} is not built into this install yet; the search APIs that are: "
                           f"{', '.join(SEARCH_BUILT)} — or leave web.search unset for the account's own engine")
    key = _key(tool, provider)
    return SEARCHERS[name](tool, provider, key, query, count, site, time_range, language)


def _brave(tool, provider, key, query, count, site, time_range, language) -> Found:  # noqa: ANN001
    lang, _, country = language.partition("-")
    params: dict[str, Any] = {"q": f"{query} site:{site}" if site else query, "count": min(count, 20),
                              "search_lang": lang.lower()}
    if country:
        params["country"] = country.upper()
    if time_range:
        params["freshness"] = BRAVE_FRESHNESS[time_range]
    data = _call(tool, provider, "GET", "/res/v1/web/search", key, params=params,
                 headers={"Accept": "application/json", "X-Subscription-Token": key[1]})
    hits = []
    for item in ((data.get("web") or {}).get("results") or []):
        snippet = item.get("description") or ""
        if item.get("extra_snippets"):
            snippet = " … ".join([snippet] + [str(s) for s in item["extra_snippets"][:2]])
        hits.append(Hit(title=_plain(item.get("title") or ""), url=str(item.get("url") or ""), snippet=_plain(snippet),
                        date=item["page_age"][:10] if isinstance(item.get("page_age"), str) else None))
    return Found(hits=[h for h in hits if h.url])


def _tavily(tool, provider, key, query, count, site, time_range, language) -> Found:  # noqa: ANN001
    body: dict[str, Any] = {"query": query, "max_results": min(count, 20), "search_depth": "basic"}
    if site:
        body["include_domains"] = [site]
    if time_range:
        body["time_range"] = time_range
    data = _call(tool, provider, "POST", "/search", key, json=body,
                 headers={"Authorization": f"Bearer {key[1]}", "Content-Type": "application/json"})
    hits = [Hit(title=str(r.get("title") or ""), url=str(r.get("url") or ""), snippet=_plain(r.get("content") or ""),
                date=(str(r["published_date"])[:10] if r.get("published_date") else None))
            for r in data.get("results") or [] if isinstance(r, dict)]
    found = Found(hits=[h for h in hits if h.url])
    if data.get("answer"):
        found.answers.append(str(data["answer"]))
    return found


def _exa(tool, provider, key, query, count, site, time_range, language) -> Found:  # noqa: ANN001
    body: dict[str, Any] = {"query": query, "numResults": min(count, 100), "contents": {"highlights": True}}
    if site:
        body["includeDomains"] = [site]
    if time_range:
        since = dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=DAYS[time_range])
        body["startPublishedDate"] = since.strftime("%Y-%m-%dT%H:%M:%S.000Z")
    data = _call(tool, provider, "POST", "/search", key, json=body,
                 headers={"x-api-key": key[1], "Content-Type": "application/json"})
    hits = []
    for r in data.get("results") or []:
        if not isinstance(r, dict):
            continue
        snippet = " … ".join(str(h) for h in r.get("highlights") or []) or str(r.get("summary") or r.get("text") or "")
        hits.append(Hit(title=str(r.get("title") or ""), url=str(r.get("url") or ""), snippet=_plain(snippet)[:600],
                        date=(str(r["publishedDate"])[:10] if r.get("publishedDate") else None)))
    return Found(hits=[h for h in hits if h.url])


def _serper(tool, provider, key, query, count, site, time_range, language) -> Found:  # noqa: ANN001
    lang, _, country = language.partition("-")
    body: dict[str, Any] = {"q": f"{query} site:{site}" if site else query, "num": min(count, 100), "hl": lang.lower()}
    if country:
        body["gl"] = country.lower()
    if time_range:
        body["tbs"] = SERPER_TBS[time_range]
    data = _call(tool, provider, "POST", "/search", key, json=body,
                 headers={"X-API-KEY": key[1], "Content-Type": "application/json"})
    hits = [Hit(title=str(r.get("title") or ""), url=str(r.get("link") or ""), snippet=_plain(r.get("snippet") or ""),
                date=r.get("date")) for r in data.get("organic") or [] if isinstance(r, dict)]
    found = Found(hits=[h for h in hits if h.url])
    box = data.get("answerBox") or {}
    if isinstance(box, dict) and (box.get("answer") or box.get("snippet")):
        found.answers.append(str(box.get("answer") or box.get("snippet")))
    return found


SEARCHERS: dict[str, Callable[..., Found]] = {"brave": _brave, "tavily": _tavily, "exa": _exa, "serper": _serper}


def _plain(text: str) -> str:
    """Brave marks matches with <strong>; the model reads words."""
    import re

    return re.sub(r"</?(strong|b|em)>", "", str(text))


# ------------------------------------------------------------------ fetch

def fetch_via(tool: "WebTool", provider: dict, urls: list[str], mode: str, target: "Path | None") -> str:
    """markdown, text or html from a fetch API; the caller reads meta, links and raw directly."""
    name = provider["name"]
    if name not in FETCH_BUILT:
        raise WebToolError(f"web.fetch: {name} is not built into this install yet; the fetch APIs that are: "
                           f"{', '.join(FETCH_BUILT)} — or leave web.fetch unset for foldrun's own")
    key = _key(tool, provider, optional=name in W.KEY_OPTIONAL)
    if len(urls) > FETCH_BATCH[name]:
        raise WebToolError(f"{name} reads {FETCH_BATCH[name]} url{'s' if FETCH_BATCH[name] != 1 else ''} a call; "
                           f"give one url, or leave web.fetch unset for foldrun's own (up to 20)")
    pages = FETCHERS[name](tool, provider, key, urls, mode)
    parts = [text if len(urls) == 1 else f"=== {url} ===\n{text}" for url, text in pages]
    out = "\n\n".join(parts)
    if target is not None:
        where = tool.write_file(target, out.encode("utf-8"))
        return f"saved {where} ({len(out.encode()):,} bytes) from {', '.join(urls)} via {name}"
    return out


def _jina(tool, provider, key, urls, mode) -> list[tuple[str, str]]:  # noqa: ANN001
    out = []
    for url in urls:
        headers = {"Accept": "application/json", "X-Return-Format": mode}
        if key:
            headers["Authorization"] = f"Bearer {key[1]}"
        data = _call(tool, provider, "GET", "/" + url, key, headers=headers)
        page = data.get("data") or {}
        if page.get("warning"):
            tool.log(f"web fetch via jina: {page['warning']}")
        out.append((url, str(page.get("content") or "")))
    return out


def _firecrawl(tool, provider, key, urls, mode) -> list[tuple[str, str]]:  # noqa: ANN001
    fmt = "markdown" if mode == "markdown" else "html"  # Firecrawl answers markdown or html; text is read from html
    data = _call(tool, provider, "POST", "/v2/scrape", key, json={"url": urls[0], "formats": [fmt]},
                 headers={"Authorization": f"Bearer {key[1]}", "Content-Type": "application/json"})
    page = data.get("data") or {}
    status = (page.get("metadata") or {}).get("statusCode")
    if isinstance(status, int) and status >= 400:
        raise WebToolError(f"{urls[0]}: HTTP {status} (through firecrawl)")
    text = str(page.get(fmt) or "")
    if mode == "text":
        from .pages import to_text

        text = to_text(text)
    return [(urls[0], text)]


def _exa_contents(tool, provider, key, urls, mode) -> list[tuple[str, str]]:  # noqa: ANN001
    # A fetch is expected to be live: ask for the page as it is now, not Exa's cached copy.
    body = {"urls": urls, "text": True, "maxAgeHours": 0}
    data = _call(tool, provider, "POST", "/contents", key, json=body,
                 headers={"x-api-key": key[1], "Content-Type": "application/json"})
    by_url = {str(r.get("url") or r.get("id")): r for r in data.get("results") or [] if isinstance(r, dict)}
    statuses = {str(s.get("id")): s for s in data.get("statuses") or [] if isinstance(s, dict)}
    out = []
    for url in urls:
        result, status = by_url.get(url), statuses.get(url) or {}
        if result is None:
            out.append((url, f"{url}: exa could not read it ({status.get('status') or 'no result'})"))
            continue
        source = f"[exa: {status['source']}]\n" if status.get("source") else ""
        out.append((url, source + str(result.get("text") or "")))
    return out


def _tavily_extract(tool, provider, key, urls, mode) -> list[tuple[str, str]]:  # noqa: ANN001
    body = {"urls": urls, "format": "text" if mode == "text" else "markdown"}
    data = _call(tool, provider, "POST", "/extract", key, json=body,
                 headers={"Authorization": f"Bearer {key[1]}", "Content-Type": "application/json"})
    got = {str(r.get("url")): str(r.get("raw_content") or "") for r in data.get("results") or [] if isinstance(r, dict)}
    failed = {str(r.get("url")): str(r.get("error") or "failed") for r in data.get("failed_results") or []
              if isinstance(r, dict)}
    if not got and failed:
        raise WebToolError("\n".join(f"{u}: {e} (through tavily)" for u, e in failed.items()))
    return [(url, got[url] if url in got else f"{url}: {failed.get(url, 'no result')} (through tavily)")
            for url in urls]


FETCHERS: dict[str, Callable[..., list[tuple[str, str]]]] = {
    "jina": _jina, "firecrawl": _firecrawl, "exa": _exa_contents, "tavily": _tavily_extract}
FETCH_BATCH: dict[str, int] = {"jina": 1, "firecrawl": 1, "exa": 20, "tavily": 20}
