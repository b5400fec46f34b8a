"""What each `web` action and each provider can do — the one table (check = run).

spec/tools.md, "Reaching the web" through "Searching somewhere else" and
"Fetching through someone else". `foldrun check` (rules/web/), the deploy
gate (which runs the same check) and the run (foldrun/web/tool.py and the
provider adapters) all read `CAN` and say a refusal with the sentences built
here, so a name refused offline is refused at a call in the same words, and
an option a provider cannot honour is refused rather than quietly dropped.

Pure Python, no Django, no I/O — the contract layer imports nothing above it.

The options a call may carry, and what "handles" means for each:
    count       the provider is asked for that many (up to `max`); every answer is trimmed to it anyway
    site        the provider filters by domain itself; every answer is checked on what comes back anyway
    time_range  the provider filters by date; one that cannot is refused (`time_range_refusal`)
    language    the provider is told the language the agent works in
    region      the provider is told the country the agent works for
"""

from __future__ import annotations

import difflib
from typing import Any

WEB_ACTIONS: tuple[str, ...] = ("search", "fetch", "browse", "crawl", "map", "extract", "answer", "monitor")
OPTIONS: tuple[str, ...] = ("count", "site", "time_range", "language", "region")
ALL = frozenset(OPTIONS)


def _api(*options: str, max: int = 0, batch: int = 1, what: str = "") -> dict[str, Any]:
    return {"kind": "api", "options": frozenset(options), "max": max, "batch": batch, "what": what}


def _model(runs_on: str) -> dict[str, Any]:
    # A model provider's own tool: it runs on their machines, inside their tool loop,
    # so none of the call's options reach it through us.
    return {"kind": "model", "options": frozenset(), "max": 0, "batch": 1, "runs_on": runs_on, "what": ""}


# action -> provider -> what it handles. The order of each action's providers is the spec's.
CAN: dict[str, dict[str, dict[str, Any]]] = {
    "search": {
        "brave": _api("count", "site", "time_range", "language", "region", max=20),
        "exa": _api("count", "site", "time_range", "region", max=100),
        "tavily": _api("count", "site", "time_range", "region", max=20),
        # "Parallel is asked for 20 so enough are left after the check" — it has no site filter of its own here.
        "parallel": _api("count", max=20),
        "you": _api("count", "site", "time_range", "language", "region", max=100),
        "jina": _api("count", "site", "language", "region", max=10),
        "firecrawl": _api("count", "site", "time_range", "region", max=100),
        "perplexity": _api("count", "site", "time_range", "region", max=20),
        "linkup": _api("count", "site", "time_range", max=100),
        "serper": _api("count", "site", "time_range", "language", "region", max=100),
        "serpapi": _api("count", "site", "time_range", "language", "region", max=100),
        "dataforseo": _api("count", "site", "language", "region", max=100),
        "anthropic": _model("Anthropic's servers — web_search_20250305"),
        "zai": _model("z.ai's endpoint, the same server tool"),
        "openrouter": _model("OpenRouter, as a plugin"),
        "openai": _model("OpenAI, Responses-shaped"),
        "kimi": _model("Moonshot, $web_search"),
    },
    "fetch": {
        "jina": _api(batch=1),
        "firecrawl": _api(batch=1),
        "exa": _api(batch=100),
        "tavily": _api(batch=20),
        "parallel": _api(batch=20),
        "zyte": _api(batch=1),
        "scrapingbee": _api(batch=1),
        "anthropic": _model("a small model's reading of the page, on Anthropic's servers"),
    },
    "browse": {
        v: _api() for v in ("browserbase", "steel", "hyperbrowser", "browserless", "brightdata", "zenrows", "cdp")
    },
    "crawl": {"firecrawl": _api("count"), "tavily": _api("count")},
    "map": {"firecrawl": _api("count", "site"), "tavily": _api("count")},
    "extract": {"firecrawl": _api(), "zyte": _api(), "hyperbrowser": _api()},
    "answer": {
        "exa": _api(),
        "linkup": _api("site", "time_range"),
        "tavily": _api("site", "time_range"),
        "parallel": _api(),
        "perplexity": _api("site", "time_range"),
        "you": _api(),
    },
    "monitor": {"parallel": _api(what="question"), "firecrawl": _api(what="page")},
}
# What foldrun's own answers for each action take; every action has one.
OWN_OPTIONS: dict[str, frozenset[str]] = {
    "search": ALL,
    "fetch": frozenset({"language"}),
    "browse": frozenset({"language", "region"}),
    "crawl": frozenset({"count"}),
    "map": frozenset({"count"}),
    "extract": frozenset(),
    "answer": frozenset({"count", "site", "time_range", "language", "region"}),
    "monitor": frozenset(),
}

ACTION_PROVIDERS: dict[str, tuple[str, ...]] = {
    action: tuple(name for name, can in by.items() if can["kind"] == "api") for action, by in CAN.items()
}
MODEL_PROVIDER_ACTIONS: dict[str, dict[str, str]] = {
    action: {name: can["runs_on"] for name, can in by.items() if can["kind"] == "model"}
    for action, by in CAN.items()
    if any(can["kind"] == "model" for can in by.values())
}
# Preset names that reach the same endpoint (providers.md: `moonshot` is "Same endpoint as `kimi`").
SAME_ENDPOINT: dict[str, str] = {"moonshot": "kimi"}

NOT_SEARCH: dict[str, str] = {
    "deepseek": (
        "deepseek has no search behind it: DeepSeek's endpoint is Anthropic-shaped, so every shape check passes, "
        "and there is still no search behind it"
    ),
    "bing": (
        "bing is not for sale: Bing's API retired 11 Aug 2025, and it survives only as grounding inside Microsoft's own models"
    ),
    "google": (
        "google is not for sale: Google's Custom Search JSON API retires 1 Jan 2027, and it survives only as grounding "
        "inside Google's own models; for where a page ranks on Google use a SERP scraper (serper, serpapi, dataforseo)"
    ),
}
NOT_AN_ENDPOINT: dict[str, str] = {
    "apify": "apify is a marketplace, not an endpoint — reach an actor as an http tool file",
}


def providers_for(action: str) -> tuple[str, ...]:
    """Every name that can answer `action`: the APIs, then model providers' own."""
    return tuple(CAN.get(action, {}))


def can(action: str, name: str) -> dict[str, Any] | None:
    return CAN.get(action, {}).get(name)


def _both(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def provider_refusal(action: str, name: object) -> tuple[str, str] | None:
    """(code, sentence) when `name` cannot answer `action`, else None. The sentence has no place
    prefix and no full stop: check writes `web.crawl: <sentence>.`, the run `web.crawl: <sentence>`."""
    can_do = providers_for(action)
    if not isinstance(name, str) or not name.strip():
        return "web.provider_unknown", f"name who answers {action}, e.g. {action}: {can_do[0]}"
    word = name.strip().lower()
    tail = f"— or leave web.{action} unset for foldrun's own"
    if word in NOT_AN_ENDPOINT:
        return "web.not_an_endpoint", NOT_AN_ENDPOINT[word]
    if action == "search" and word in NOT_SEARCH:
        return "web.search_not_for_sale", f"{NOT_SEARCH[word]}. Search with one of {', '.join(can_do)} {tail}"
    if word in can_do:
        return None
    elsewhere = [a for a in WEB_ACTIONS if word in providers_for(a)]
    if elsewhere:
        return (
            "web.provider_cannot",
            f"{word} cannot {action} (it answers {_both(elsewhere)}); the providers that can are {', '.join(can_do)} {tail}",
        )
    known = sorted({p for a in WEB_ACTIONS for p in providers_for(a)})
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.75)
    hint = f"; did you mean {near[0]}?" if near else "."
    return (
        "web.provider_unknown",
        f"{name!r} is not a web provider{hint} The providers that can {action} are {', '.join(can_do)} {tail}",
    )


def model_provider_refusal(action: str, name: str, running: str | None, holder: str = "agent") -> str | None:
    """A model provider's own search or fetch runs only while that provider is the one answering."""
    runs_on = MODEL_PROVIDER_ACTIONS.get(action, {}).get(name)
    if runs_on is None or running is None:
        return None
    running = SAME_ENDPOINT.get(running.lower(), running.lower())
    if running == name:
        return None
    return (
        f"{name}'s {action} runs on {runs_on}, inside its own tool loop, only while {name} is the one answering — "
        f"and this {holder} runs on {running}; name an API instead ({', '.join(ACTION_PROVIDERS[action])}) "
        f"or make {name} the provider"
    )


def time_range_refusal(name: str, value: str) -> str:
    return (
        f"{name} cannot filter by date, so time_range={value} is refused rather than answered for every date; "
        f"search without it"
    )


def option_refusal(action: str, name: str | None, option: str, value: object) -> str | None:
    """The sentence for a call option this answerer cannot honour, else None. Only a date filter is
    refused: count and site are enforced on what comes back, and language and region are a hint."""
    if value in (None, "", []) or option != "time_range":
        return None
    handled = OWN_OPTIONS[action] if name is None else (can(action, name) or {}).get("options", ALL)
    if "time_range" in handled:
        return None
    return time_range_refusal(name or "foldrun's own " + action, str(value))


def batch_refusal(action: str, name: str, count: int) -> str | None:
    batch = (can(action, name) or {}).get("batch", 1)
    if count <= batch:
        return None
    return (
        f"{name} reads {batch} url{'s' if batch != 1 else ''} a call; give "
        f"{'one url' if batch == 1 else f'at most {batch} urls'}, or leave web.{action} unset for foldrun's own (up to 20)"
    )
