"""`web action=search`: numbered titles, URLs and snippets.

Unset `web.search:` (or a block of SearXNG settings) asks the account's own
engine — a SearXNG instance, over its JSON API (`/search?format=json`). A
name (`brave`, `tavily`, …) asks that search API with the key filled in here,
host-side. Either way the model sees the same shape back.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx

from foldrun.contract import web_engines as W
from foldrun.net import NoSuchHost, PrivateAddress

from .errors import WebToolError
from .providers import search_via
from .shapes import Found, Hit, site_domain
from foldrun import net

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

DEFAULT_COUNT = 10
MAX_COUNT = 50
OWN_ENGINE_ONLY = ("engines", "categories", "page")
NO_ENGINE = (
    "search: this account has no search engine — no SearXNG URL of its own, and the install has no "
    "default; an owner sets one in Settings or with `foldrun account search-engine set URL`, or name a "
    "search API in web.search:"
)


# ------------------------------------------------------------------ the call's options


def on_site(url: str, domain: str) -> bool:
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return host == domain or host.endswith("." + domain)


def language_tag(language: str | None, region: str | None) -> str:
    """`en` + `au` → `en-AU`; a tag that carries its country keeps it."""
    tag = (language or "en").strip()
    if "-" not in tag and region:
        tag = f"{tag}-{region.strip().upper()}"
    return tag


def _count(raw: Any) -> int:
    if raw in (None, ""):
        return DEFAULT_COUNT
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise WebToolError("count= must be a whole number of results") from None
    if value < 1:
        raise WebToolError("count= must be 1 or more")
    return min(value, MAX_COUNT)


def time_range_of(raw: Any) -> str | None:
    if raw in (None, ""):
        return None
    if raw not in W.TIME_RANGES:
        raise WebToolError(f"time_range={raw} is not one of {', '.join(W.TIME_RANGES)}")
    return str(raw)


def _names(raw: Any, arg: str) -> list[str]:
    if isinstance(raw, str):
        items = [i.strip() for i in raw.split(",")]
    elif isinstance(raw, list):
        items = [str(i).strip() for i in raw]
    else:
        raise WebToolError(f"{arg}= must be a list of names")
    return [i for i in items if i]


# ------------------------------------------------------------------ formatting


def format_found(found: Found, query: str, who: str) -> str:
    lines: list[str] = []
    for note in found.notes:
        lines.append(note)
    for answer in found.answers:
        lines.append(f"Answer: {answer}")
    for box in found.infoboxes:
        lines.append(f"Infobox: {box}")
    if found.corrections:
        lines.append("Did you mean: " + "; ".join(found.corrections))
    if lines:
        lines.append("")
    if not found.hits:
        lines.append(f"No results for {query!r} on {who}.")
    for number, hit in enumerate(found.hits, 1):
        lines.append(f"{number}. {hit.title or hit.url}")
        lines.append(f"   {hit.url}")
        if hit.date:
            lines.append(f"   {hit.date}")
        if hit.snippet:
            lines.append(f"   {' '.join(hit.snippet.split())}")
    if found.suggestions:
        lines.append("")
        lines.append("Related searches: " + "; ".join(found.suggestions))
    if found.unresponsive:
        lines.append("")
        lines.append("Engines that did not answer: " + "; ".join(found.unresponsive))
    return "\n".join(lines).strip()


# ------------------------------------------------------------------ the whole action


def run(tool: "WebTool", args: dict) -> str:
    """Preconditions: the action is allowed and this is not a test run."""
    query = args.get("query")
    if not isinstance(query, str) or not query.strip():
        raise WebToolError("search needs query= — the words to look for")
    query = query.strip()
    count = _count(args.get("count"))
    site = site_domain(args.get("site"))
    time_range = time_range_of(args.get("time_range"))
    tag = language_tag(args.get("language") or tool.language, args.get("region") or tool.region)
    provider = tool.provider_for("search")
    started = time.monotonic()
    if provider is None:
        engine = SearxngEngine(tool)
        found = engine.search(query, count=count, site=site, time_range=time_range, language=tag, args=args)
        who = "the account's own engine"
    else:
        passed = [a for a in OWN_ENGINE_ONLY if args.get(a) not in (None, "", [])]
        if passed:
            raise WebToolError(
                f"{', '.join(a + '=' for a in passed)} {'is' if len(passed) == 1 else 'are'} the "
                f"account's own engine's; this agent searches with {provider['name']}, which has "
                f"no such option — drop {'it' if len(passed) == 1 else 'them'}"
            )
        found = search_via(tool, provider, query, count=count, site=site, time_range=time_range, language=tag)
        who = provider["name"]
    if site:
        found.hits = [h for h in found.hits if on_site(h.url, site)]
    found.hits = found.hits[:count]
    tool.emit(
        {
            "event": "search",
            "provider": who,
            "query": query,
            "results": len(found.hits),
            "seconds": round(time.monotonic() - started, 3),
        }
    )
    return format_found(found, query, who)


# ------------------------------------------------------------------ the account's own engine

_config_cache: dict[str, tuple[float, dict]] = {}
_config_lock = threading.Lock()
CONFIG_TTL = 300.0


class SearxngEngine:
    """The account's SearXNG, asked over `/search?format=json`; names checked against `/config`."""

    def __init__(self, tool: "WebTool") -> None:
        if not tool.searxng_url:
            raise WebToolError(NO_ENGINE)
        self.tool = tool
        self.base = tool.searxng_url.rstrip("/")
        block = tool.config.get("search")
        self.block: dict = block if isinstance(block, dict) and "name" not in block else {}

    def _get(self, path: str, params: dict | None = None) -> dict:
        timeout = max(float(self.block.get("timeout") or 5) + 5, 10.0)
        try:
            client = self.tool.http
            if self.tool.searxng_guarded:  # an address a person typed meets the network guard
                client = net.client("web", allow_private=self.tool.allow_private)
            response = client.get(
                f"{self.base}{path}", params=params, timeout=timeout, headers={"Accept": "application/json"}
            )
        except httpx.TimeoutException:
            raise WebToolError(f"search: the account's engine did not answer within {timeout:g}s") from None
        except (PrivateAddress, NoSuchHost) as exc:
            raise WebToolError(f"search: the account's engine at {self.base} cannot be asked — {exc}") from None
        except httpx.HTTPError as exc:
            raise WebToolError(f"search: the account's engine could not be reached: {net.describe(exc)}") from None
        if response.status_code == 403 and path == "/search":
            raise WebToolError(
                "search: the account's engine refused a JSON answer (HTTP 403) — its settings.yml "
                "needs `json` under search.formats"
            )
        if response.status_code == 429:
            raise WebToolError(
                "search: the account's engine is rate-limiting this account (HTTP 429); wait and search again"
            )
        if response.status_code >= 400:
            raise WebToolError(f"search: the account's engine answered HTTP {response.status_code}")
        try:
            data = response.json()
        except ValueError:
            raise WebToolError("search: the account's engine did not answer JSON") from None
        if not isinstance(data, dict):
            raise WebToolError("search: the account's engine answered something that is not a SearXNG result")
        return data

    def instance_config(self) -> dict:
        now = time.monotonic()
        with _config_lock:
            cached = _config_cache.get(self.base)
            if cached and now - cached[0] < CONFIG_TTL:
                return cached[1]
        data = self._get("/config")
        with _config_lock:
            _config_cache[self.base] = (now, data)
        return data

    def search(
        self, query: str, *, count: int, site: str | None, time_range: str | None, language: str, args: dict
    ) -> Found:
        block = self.block
        notes: list[str] = []
        params: dict[str, Any] = {
            "q": f"{query} site:{site}" if site else query,
            "format": "json",
            "language": language,
        }
        engines = _names(args["engines"], "engines") if args.get("engines") else None
        categories = _names(args["categories"], "categories") if args.get("categories") else None
        if engines is None and categories is None:  # the call says neither: the file's
            engines = _names(block["engines"], "engines") if block.get("engines") else None
            categories = _names(block["categories"], "categories") if block.get("categories") and not engines else None
        if engines:  # one choice of engines, never two: a named list beats categories
            categories = None
        excluded = _names(block["exclude_engines"], "exclude_engines") if block.get("exclude_engines") else []
        time_range = time_range or block.get("time_range") or None
        needs_config = bool(
            engines
            or categories
            or excluded
            or time_range
            or block.get("plugins")
            or block.get("exclude_plugins")
            or block.get("doi_resolver")
        )
        config = self.instance_config() if needs_config else {}
        known = _engines_of(config)
        if engines:
            self._check_names(engines, known, "engine")
        if categories:
            self._check_names(categories, config.get("categories") or [], "category")
        if needs_config and (excluded or time_range):
            # The engines SearXNG would ask, spelt out, so exclusions and date filters are exact.
            if engines:
                asked = [e for e in engines if e not in excluded]
            else:
                wanted = set(categories or ["general"])
                asked = [
                    name
                    for name, info in known.items()
                    if info.get("enabled", True) and wanted & set(info.get("categories") or []) and name not in excluded
                ]
            if time_range:
                skipped = [e for e in asked if not known.get(e, {}).get("time_range_support", True)]
                asked = [e for e in asked if e not in skipped]
                if skipped and not asked:
                    raise WebToolError(
                        f"search: time_range={time_range} would skip every engine asked "
                        f"({', '.join(skipped)} cannot filter by date); search without it"
                    )
                if skipped:
                    notes.append(f"time_range={time_range} skipped {', '.join(skipped)}, which cannot filter by date.")
            if not asked:
                raise WebToolError("search: every engine it would ask is excluded (web.search.exclude_engines)")
            engines, categories = asked, None
        if engines:
            params["engines"] = ",".join(engines)
        if categories:
            params["categories"] = ",".join(categories)
        if time_range:
            params["time_range"] = time_range
        if "safesearch" in block:
            value = block["safesearch"]
            params["safesearch"] = 0 if value is False else W.SAFESEARCH.get(value, 0)  # YAML reads `off` as false
        if block.get("timeout"):
            params["timeout_limit"] = block["timeout"]
        plugins = _names(block["plugins"], "plugins") if block.get("plugins") else []
        dropped = _names(block["exclude_plugins"], "exclude_plugins") if block.get("exclude_plugins") else []
        if plugins or dropped:
            available = [p.get("name") for p in config.get("plugins") or [] if isinstance(p, dict)]
            ids = {str(n).lower().replace(" ", "_") for n in available}
            for name in plugins + dropped:
                if available and name not in ids and name not in available:
                    raise WebToolError(
                        f"search: the plugin {name} is not on the account's engine; it has {', '.join(sorted(ids))}"
                    )
        if plugins:
            params["enabled_plugins"] = ",".join(plugins)
        if dropped:
            params["disabled_plugins"] = ",".join(dropped)
        if block.get("doi_resolver"):
            resolvers = [str(r) for r in config.get("doi_resolvers") or []]
            if resolvers and block["doi_resolver"] not in resolvers:
                raise WebToolError(
                    f"search: the DOI resolver {block['doi_resolver']} is not on the account's engine; "
                    f"it has {', '.join(resolvers)}"
                )
            params["doi_resolver"] = block["doi_resolver"]
        page = args.get("page")
        if page not in (None, ""):
            try:
                page = int(page)
            except (TypeError, ValueError):
                raise WebToolError("page= must be a number from 1 to 10") from None
            if not 1 <= page <= 10:
                raise WebToolError("page= must be a number from 1 to 10")
            params["pageno"] = page
        data = self._get("/search", params)
        return _found_from_searxng(data, notes)

    @staticmethod
    def _check_names(names: list[str], known: Any, kind: str) -> None:
        known_names = list(known)
        if not known_names:
            return
        wrong = [n for n in names if n not in known_names]
        if wrong:
            plural = "engines" if kind == "engine" else "categories"
            raise WebToolError(
                f"search: {', '.join(wrong)} {'is' if len(wrong) == 1 else 'are'} not "
                f"{'an' if kind == 'engine' else 'a'} {kind} on the account's engine; its {plural} are "
                f"{', '.join(sorted(known_names))}"
            )


def _engines_of(config: dict) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for item in config.get("engines") or []:
        if isinstance(item, dict) and item.get("name"):
            found[str(item["name"])] = item
    return found


def _found_from_searxng(data: dict, notes: list[str]) -> Found:
    hits: list[Hit] = []
    seen: set[str] = set()
    for item in data.get("results") or []:
        if not isinstance(item, dict) or not item.get("url") or item["url"] in seen:
            continue
        seen.add(item["url"])
        date = item.get("publishedDate") or item.get("pubdate")
        hits.append(
            Hit(
                title=str(item.get("title") or ""),
                url=str(item["url"]),
                snippet=str(item.get("content") or ""),
                date=str(date)[:10] if date else None,
                engines=list(item.get("engines") or []),
            )
        )
    answers = []
    for answer in data.get("answers") or []:
        if isinstance(answer, dict):
            text = answer.get("answer") or answer.get("content") or ""
            answers.append(f"{text} ({answer['url']})" if answer.get("url") else str(text))
        else:
            answers.append(str(answer))
    boxes = []
    for box in data.get("infoboxes") or []:
        if not isinstance(box, dict):
            continue
        head = str(box.get("infobox") or "")
        content = " ".join(str(box.get("content") or "").split())
        link = box.get("id") or next((u.get("url") for u in box.get("urls") or [] if isinstance(u, dict)), None)
        boxes.append(" — ".join(p for p in (head, content[:500], str(link) if link else "") if p))
    unresponsive = []
    for item in data.get("unresponsive_engines") or []:
        if isinstance(item, (list, tuple)) and item:
            unresponsive.append(f"{item[0]} ({item[1]})" if len(item) > 1 and item[1] else str(item[0]))
        else:
            unresponsive.append(str(item))
    return Found(
        hits=hits,
        answers=answers,
        infoboxes=boxes,
        corrections=[str(c) for c in data.get("corrections") or []],
        suggestions=[str(s) for s in data.get("suggestions") or []],
        unresponsive=unresponsive,
        notes=notes,
    )
