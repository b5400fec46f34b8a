"""What the `web` tool's engines and providers can do — one table each.

spec/tools.md, "Reaching the web" through "Tuning the account's own engine".
`foldrun check`, the deploy gate, the run and the gallery `web` tool all read
these tables, so a pair refused offline is refused at a call in the same words
(the spec's `BROWSE_ENGINE_LIMITS` "in core").

Pure Python, no Django, no I/O.
"""

from __future__ import annotations

import re

# ---------------------------------------------------------------- actions and who answers them
# The one table of what each action and provider can do lives in web_capabilities; these names
# are kept here because everything that reads the web tables imports this module.
from .web_capabilities import (  # noqa: E402,F401
    ACTION_PROVIDERS,
    CAN,
    MODEL_PROVIDER_ACTIONS,
    NOT_AN_ENDPOINT,
    NOT_SEARCH,
    OWN_OPTIONS,
    SAME_ENDPOINT,
    WEB_ACTIONS,
    batch_refusal,
    model_provider_refusal,
    option_refusal,
    provider_refusal,
    providers_for,
)

# The vault name each provider's key is read from when the block gives no `key:`.
VAULT_KEYS: dict[str, str] = {
    "brave": "BRAVE_SEARCH_API_KEY",
    "exa": "EXA_API_KEY",
    "parallel": "PARALLEL_API_KEY",
    "tavily": "TAVILY_API_KEY",
    "you": "YOU_API_KEY",
    "jina": "JINA_API_KEY",
    "firecrawl": "FIRECRAWL_API_KEY",
    "perplexity": "PERPLEXITY_API_KEY",
    "linkup": "LINKUP_API_KEY",
    "serper": "SERPER_API_KEY",
    "serpapi": "SERPAPI_API_KEY",
    "dataforseo": "DATAFORSEO_AUTH_BASIC",
    "zyte": "ZYTE_API_KEY_BASIC",
    "scrapingbee": "SCRAPINGBEE_API_KEY",
    "browserbase": "BROWSERBASE_API_KEY",
    "steel": "STEEL_API_KEY",
    "hyperbrowser": "HYPERBROWSER_API_KEY",
    "browserless": "BROWSERLESS_TOKEN",
    "brightdata": "BRIGHTDATA_BROWSER_AUTH",
    "zenrows": "ZENROWS_API_KEY",
    "cdp": "BROWSER_CDP_URL",
}
KEY_OPTIONAL: frozenset[str] = frozenset({"jina"})  # "optional — 20 a minute without one"

# Search APIs that cannot filter by date: a call asking them for `time_range=` is refused.
NO_TIME_RANGE: tuple[str, ...] = tuple(
    n for n in ACTION_PROVIDERS["search"] if "time_range" not in CAN["search"][n]["options"]
)


# ---------------------------------------------------------------- the account's own engine (SearXNG)

SEARXNG_KEYS: tuple[str, ...] = (
    "engines",
    "exclude_engines",
    "categories",
    "safesearch",
    "time_range",
    "timeout",
    "plugins",
    "exclude_plugins",
    "doi_resolver",
)
# Page-only preferences: "do nothing to a JSON answer, and a key that does nothing is a question someone asks later".
SEARXNG_PAGE_ONLY: tuple[str, ...] = ("theme", "results_on_new_tab", "image_proxy", "url_formatting", "autocomplete")
# SearXNG's built-in plugins, by the id `enabled_plugins=` takes.
SEARXNG_PLUGINS: tuple[str, ...] = (
    "ahmia_filter",
    "calculator",
    "hash_plugin",
    "hostnames",
    "oa_doi_rewrite",
    "self_info",
    "time_zone",
    "tor_check",
    "tracker_url_remover",
    "unit_converter",
)
SAFESEARCH: dict[object, int] = {"off": 0, "moderate": 1, "strict": 2, 0: 0, 1: 1, 2: 2}
TIME_RANGES: tuple[str, ...] = ("day", "week", "month", "year")
SEARCH_TIMEOUT_RANGE: tuple[float, float] = (0.5, 30.0)
# An engine, category or plugin name as SearXNG spells them: lower-case words ("google cse").
SEARXNG_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9 ._-]{0,48}$")

# ---------------------------------------------------------------- engines

ENGINES: tuple[str, ...] = ("chromium", "chrome", "firefox", "safari", "lightpanda", "obscura")
DEFAULT_ENGINE = "chromium"
ENGINE_SPELLINGS: dict[str, str] = {**{engine: engine for engine in ENGINES}, "webkit": "safari"}

# What each engine is, as the refusal sentence says it.
ENGINE_WHAT: dict[str, str] = {
    "chromium": "is the open-source build",
    "chrome": "is real Google Chrome",
    "firefox": "is Firefox",
    "safari": "is WebKit, Safari's engine",
    "lightpanda": "reads and drives pages without drawing them",
    "obscura": "draws pages but cannot intercept requests, record them, emulate a device, keep a session or take a proxy",
}

# The spec's table, row by row: capability -> the engines marked — for it.
_ENGINE_TABLE: tuple[tuple[tuple[str, ...], frozenset[str]], ...] = (
    (("read", "drive", "aria", "actions"), frozenset()),
    (("screenshot", "vitals", "annotate", "visual"), frozenset({"lightpanda"})),
    (("pdf",), frozenset({"firefox", "safari", "lightpanda"})),
    (("video", "trace", "har"), frozenset({"lightpanda", "obscura"})),
    (("device",), frozenset({"lightpanda", "obscura"})),
    (("session",), frozenset({"lightpanda", "obscura"})),
    (("headless: false",), frozenset({"lightpanda", "obscura"})),
    (("proxy",), frozenset({"lightpanda", "obscura"})),
    (("block", "routes", "mock", "captcha", "allowed_domains"), frozenset({"obscura"})),
    (
        ("live", "webgpu", "extensions", "webmcp", "cpu_profile"),
        frozenset({"firefox", "safari", "lightpanda", "obscura"}),
    ),
    (("foldrun login --engine",), frozenset({"lightpanda", "obscura"})),
)
BROWSE_ENGINE_LIMITS: dict[str, frozenset[str]] = {
    capability: lacking for capabilities, lacking in _ENGINE_TABLE for capability in capabilities
}

# What a capability needs, said in the refusal. A light engine that never draws
# is told the one thing it lacks for everything a picture needs.
_NEEDS: dict[str, str] = {
    "screenshot": "a browser that renders",
    "vitals": "a browser that renders",
    "annotate": "a browser that renders",
    "visual": "a browser that renders",
    "pdf": "Chromium's PDF printer (chromium, chrome, or obscura's raster picture)",
    "video": "a browser that records what it draws",
    "trace": "a browser that records what it draws",
    "har": "a browser that records what it draws",
    "device": "a browser that can emulate a device",
    "session": "a browser that keeps a session between calls",
    "headless: false": "a browser with a window",
    "proxy": "a browser that takes a proxy",
    "block": "a browser that can intercept requests",
    "routes": "a browser that can intercept requests",
    "mock": "a browser that can intercept requests",
    "captcha": "a browser that can intercept requests",
    "allowed_domains": "a browser that can intercept requests",
    "live": "Chromium",
    "webgpu": "Chromium",
    "extensions": "Chromium",
    "webmcp": "Chromium",
    "cpu_profile": "Chromium",
    "foldrun login --engine": "a browser a person can sign in with",
}
_DRAWS = frozenset(
    {"screenshot", "vitals", "annotate", "visual", "pdf", "video", "trace", "har", "device", "headless: false"}
)


def engine_name(spelling: object) -> str | None:
    """The engine a spelling names (`webkit` → `safari`), or None."""
    return ENGINE_SPELLINGS.get(spelling.strip().lower()) if isinstance(spelling, str) else None


def engine_can(engine: str, capability: str) -> bool:
    return engine not in BROWSE_ENGINE_LIMITS.get(capability, frozenset())


def engine_for(capability: str) -> str:
    """The engine to suggest instead: Chrome, which the table marks ✓ everywhere."""
    for candidate in ("chrome", "chromium", "firefox", "safari", "obscura", "lightpanda"):
        if engine_can(candidate, capability):
            return candidate
    return DEFAULT_ENGINE


def engine_refusal(engine: str, capability: str) -> str:
    """The one sentence for an engine asked for something it cannot do, e.g.
    `video needs a browser that renders; lightpanda reads and drives pages
    without drawing them — use engine chrome` (no final full stop: a caller
    adds its own punctuation)."""
    needs = "a browser that renders" if engine == "lightpanda" and capability in _DRAWS else _NEEDS[capability]
    return f"{capability} needs {needs}; {engine} {ENGINE_WHAT[engine]} — use engine {engine_for(capability)}"


def engine_disagreement(where: str, engine: object, browser: object) -> str | None:
    """The one sentence for `engine` and `browser` naming two engines — a call's `browser=`/`engine=`, a
    `web.browse:` block's or an identity's `engine:`/`browser:` — said the same by check, the deploy and the
    call (no final full stop). None when they agree, or either is unset or not an engine (refused elsewhere)."""
    named = engine_name(engine), engine_name(browser)
    if None in named or named[0] == named[1]:
        return None
    return (
        f"{where} sets engine {engine} and browser {browser}, which disagree — they are one setting; "
        f"give either, or both only if they agree"
    )


def settings_capabilities(settings: dict) -> list[tuple[str, str]]:
    """(the engine table's row, the key that asks for it) for what a `web.browse:` block, an identity or a
    call's own settings ask of the engine — the one reading check, the deploy and the call share."""
    asked: list[tuple[str, str]] = []
    if settings.get("video") not in (None, False, "false", ""):
        asked.append(("video", "video"))
    if settings.get("device"):
        asked.append(("device", "device"))
    if settings.get("headless") is False:
        asked.append(("headless: false", "headless"))
    for key in ("proxy", "block", "captcha", "allowed_domains", "extensions"):
        if settings.get(key):
            asked.append((key, key))
    for key in ("live", "webgpu"):
        if settings.get(key) is True or settings.get(key) == "true":
            asked.append((key, key))
    return asked


# ---------------------------------------------------------------- browse vendors and their sessions

BROWSE_VENDORS: tuple[str, ...] = ACTION_PROVIDERS["browse"]

VENDOR_SESSION_KEYS: tuple[str, ...] = (
    "proxy",
    "captcha",
    "stealth",
    "region",
    "timeout",
    "keep",
    "record",
    "block",
    "options",
)
_SESSION_VENDORS = ("browserbase", "steel", "hyperbrowser", "browserless", "brightdata", "zenrows")
# setting -> vendor -> that vendor's own field (None: the vendor has no option for it).
VENDOR_SESSION_OPTIONS: dict[str, dict[str, str | None]] = {
    "proxy": {
        "browserbase": "proxies",
        "steel": "useProxy",
        "hyperbrowser": "useProxy",
        "browserless": "proxy=residential",
        "brightdata": "always on",
        "zenrows": "always on",
    },
    "proxy.country": {v: "✓" for v in _SESSION_VENDORS},
    "proxy.state": {
        "browserbase": "✓",
        "steel": "✓",
        "hyperbrowser": "✓",
        "browserless": None,
        "brightdata": None,
        "zenrows": None,
    },
    "proxy.city": {
        "browserbase": "✓",
        "steel": "✓",
        "hyperbrowser": "✓",
        "browserless": "✓",
        "brightdata": None,
        "zenrows": None,
    },
    "proxy.own": {
        "browserbase": "external",
        "steel": "proxyUrl",
        "hyperbrowser": "proxyServer (Enterprise)",
        "browserless": "externalProxyServer (paid)",
        "brightdata": None,
        "zenrows": None,
    },
    "captcha": {
        "browserbase": "solveCaptchas",
        "steel": "solveCaptcha",
        "hyperbrowser": "solveCaptchas",
        "browserless": "solveCaptchas",
        "brightdata": "Captcha.setAutoSolve",
        "zenrows": None,
    },
    "stealth": {
        "browserbase": "verified (Scale)",
        "steel": "humanized input",
        "hyperbrowser": "useStealth",
        "browserless": "the /stealth route",
        "brightdata": "built in",
        "zenrows": "built in",
    },
    "region": {
        "browserbase": "✓",
        "steel": None,
        "hyperbrowser": "✓",
        "browserless": "✓",
        "brightdata": None,
        "zenrows": None,
    },
    "timeout": {
        "browserbase": "✓",
        "steel": "✓",
        "hyperbrowser": "✓",
        "browserless": "the connection's",
        "brightdata": None,
        "zenrows": "✓",
    },
    "keep": {
        "browserbase": "a context",
        "steel": "a profile",
        "hyperbrowser": "a profile",
        "browserless": None,
        "brightdata": None,
        "zenrows": None,
    },
    "record": {
        "browserbase": "recordSession",
        "steel": None,
        "hyperbrowser": "enableWebRecording",
        "browserless": None,
        "brightdata": None,
        "zenrows": None,
    },
    "block": {
        "browserbase": "ads",
        "steel": "ads",
        "hyperbrowser": "ads · trackers · cookies",
        "browserless": "ads",
        "brightdata": "ads · cookies",
        "zenrows": None,
    },
    "options": {
        "browserbase": "into the request",
        "steel": "into the request",
        "hyperbrowser": "into the request",
        "browserless": "query parameters",
        "brightdata": None,
        "zenrows": "query parameters",
    },
}
VENDOR_REGIONS: dict[str, tuple[str, ...]] = {
    "browserbase": ("us-west-2", "us-east-1", "eu-central-1", "ap-southeast-1"),
    "hyperbrowser": ("us", "us-central", "us-west", "us-east", "asia-south", "europe-west"),
    "browserless": ("sfo", "lon", "ams"),
}
# Seconds, inclusive. Browserless's is "the connection's": any.
VENDOR_TIMEOUTS: dict[str, tuple[int, int]] = {
    "browserbase": (60, 6 * 3600),
    "steel": (15, 24 * 3600),
    "hyperbrowser": (60, 12 * 3600),
    "zenrows": (60, 15 * 60),
}
VENDOR_TIMEOUT_LABELS: dict[str, str] = {
    "browserbase": "60s–6h",
    "steel": "15s–24h",
    "hyperbrowser": "1m–12h",
    "zenrows": "1m–15m",
}
VENDOR_BLOCK: dict[str, tuple[str, ...]] = {
    "browserbase": ("ads",),
    "steel": ("ads",),
    "hyperbrowser": ("ads", "trackers", "cookies"),
    "browserless": ("ads",),
    "brightdata": ("ads", "cookies"),
}
VENDOR_BLOCK_WORDS: tuple[str, ...] = ("ads", "trackers", "cookies")
# A proxy state is a US state at every vendor that takes one (Browserbase's and Steel's session types, Hyperbrowser's
# proxy page), so a state beside another country is one the vendor cannot honour. Hyperbrowser's country is US when
# none is written; Browserbase and Steel want the country written.
VENDOR_STATE_COUNTRY: dict[str, str] = {"browserbase": "US", "steel": "US", "hyperbrowser": "US"}
VENDOR_DEFAULT_COUNTRY: dict[str, str] = {"hyperbrowser": "US"}
# The state codes each takes, as its SDK lists them: Hyperbrowser's the 50 states, Steel's those with DC, PR, GU
# and VI; Browserbase's says only "US state code (2 characters)", read as the 50 states and DC (USPS's codes).
_US_STATES = frozenset(
    "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY "
    "NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY".split()
)
VENDOR_STATES: dict[str, tuple[frozenset[str], str]] = {
    "browserbase": (_US_STATES | {"DC"}, "the 50 US states and DC"),
    "steel": (_US_STATES | {"DC", "PR", "GU", "VI"}, "the 50 US states, DC, PR, GU and VI"),
    "hyperbrowser": (_US_STATES, "the 50 US states"),
}
# A proxy country is its two-letter ISO 3166-1 code at every vendor (each adapter sends it in the case its vendor
# writes it). Browserbase and Steel want a country beside a city (their session types make it required); the others
# take a city alone (Hyperbrowser's country is US unless told).
VENDOR_CITY_NEEDS_COUNTRY: tuple[str, ...] = ("browserbase", "steel")
_COUNTRY_CODE = re.compile(r"[A-Za-z]{2}")


def vendors_with(setting: str) -> list[str]:
    return [vendor for vendor, field in VENDOR_SESSION_OPTIONS[setting].items() if field is not None]


def vendor_session_refusal(vendor: str, setting: str, where: str) -> str | None:
    """The sentence for a `vendor_session:` setting (`proxy.state`, `record`) the vendor has no option for, or
    None — `foldrun check` and the call say it in these words."""
    if VENDOR_SESSION_OPTIONS[setting].get(vendor) is not None:
        return None
    return f"{where}: {vendor} has no option for it; the vendors that do are {', '.join(vendors_with(setting))}."


def vendor_block_refusal(vendor: str, word: str, where: str) -> str | None:
    """The sentence for a `vendor_session.block` word the vendor cannot block, or None."""
    if word in VENDOR_BLOCK.get(vendor, ()):
        return None
    can = [v for v, words in VENDOR_BLOCK.items() if word in words]
    return f"{where}: {vendor} has no option to block {word}; the vendors that do are {', '.join(can)}."


def vendor_state_refusal(vendor: str, proxy: object, where: str) -> str | None:
    """The sentence for a `vendor_session.proxy` whose state the vendor cannot honour (a state beside a country
    other than US), or None — `foldrun check` and the call say it in these words, before any vendor is asked."""
    if not isinstance(proxy, dict) or not proxy.get("state") or vendor not in VENDOR_STATE_COUNTRY:
        return None
    wanted = VENDOR_STATE_COUNTRY[vendor]
    country = str(proxy.get("country") or VENDOR_DEFAULT_COUNTRY.get(vendor, "")).strip().upper()
    if country == wanted:
        return None
    beside = f"country {proxy['country']}" if proxy.get("country") else "no country"
    return (
        f"{where}.state: {vendor} takes a state only with country {wanted} (its states are {wanted} states), and "
        f"this proxy names {beside}; write country: {wanted}, or drop state."
    )


def vendor_proxy_refusal(vendor: str, proxy: object, where: str) -> str | None:
    """The first sentence `foldrun check` says of a `vendor_session.proxy` block's place — its country, its state, its
    city — or None; the call says it in these words before any vendor is asked."""
    return (
        vendor_country_refusal(vendor, proxy, where)
        or vendor_state_refusal(vendor, proxy, where)
        or vendor_state_code_refusal(vendor, proxy, where)
        or vendor_city_refusal(vendor, proxy, where)
    )


def vendor_country_refusal(vendor: str, proxy: object, where: str) -> str | None:
    """The sentence for a `vendor_session.proxy.country` that is not two letters (`Australia`, `AUS`, a number),
    or None. YAML reads an unquoted NO (Norway) as false, so that one is told to be quoted."""
    if not isinstance(proxy, dict) or "country" not in proxy:
        return None
    value = proxy["country"]
    if isinstance(value, str) and _COUNTRY_CODE.fullmatch(value):
        return None
    if value is False:
        return (
            f"{where}.country: {vendor} takes a country as its two-letter ISO 3166-1 code, and this proxy's was "
            f"read as false — YAML reads an unquoted NO so; quote it, country: 'NO'."
        )
    beside = "no country" if value in (None, "") else f"country {value}"
    return (
        f"{where}.country: {vendor} takes a country as its two-letter ISO 3166-1 code, and this proxy names "
        f"{beside}; write the country's two letters, e.g. country: AU."
    )


def vendor_state_code_refusal(vendor: str, proxy: object, where: str) -> str | None:
    """The sentence for a `vendor_session.proxy.state` beside country US that is not one of the vendor's two-letter
    state codes (`New York`, `NSW`, a number), in any case, or None. A state beside another country is
    vendor_state_refusal's to say."""
    if (
        not isinstance(proxy, dict)
        or proxy.get("state") in (None, "")
        or vendor not in VENDOR_STATES
        or vendor_state_refusal(vendor, proxy, where)
    ):
        return None
    codes, scope = VENDOR_STATES[vendor]
    value = proxy["state"]
    if isinstance(value, str) and value.upper() in codes:
        return None
    return (
        f"{where}.state: {vendor} takes a state as the two-letter code of one of {scope}, and this proxy names "
        f"state {value}; write the state's two letters, e.g. state: NY."
    )


def vendor_city_refusal(vendor: str, proxy: object, where: str) -> str | None:
    """The sentence for a `vendor_session.proxy.city` with no country beside it at a vendor that wants one, or
    None — `foldrun check` and the call say it in these words, before any vendor is asked."""
    if (
        not isinstance(proxy, dict)
        or not proxy.get("city")
        or proxy.get("country") not in (None, "")
        or vendor not in VENDOR_CITY_NEEDS_COUNTRY
    ):
        return None
    return (
        f"{where}.city: {vendor} takes a city only with its country (a {vendor} proxy's country is required), "
        f"and this proxy names no country; write the city's country, e.g. country: AU, or drop city."
    )


def vendor_value_refusal(vendor: str, key: str, value: object, where: str) -> str | None:
    """The sentence for a `vendor_session.region` the vendor does not have, or a `vendor_session.timeout` that is
    unreadable or outside the vendor's range, or None — `foldrun check` and the call say it in these words (a
    vendor answers such a session with an error of its own, or quietly clamps it)."""
    if key == "region" and vendor in VENDOR_REGIONS and value not in VENDOR_REGIONS[vendor]:
        text = str(value)  # quoted and cut as check's `shown` does
        shown = repr(text if len(text) <= 40 else text[:39] + "…")
        return f"{where}: {shown} is not a {vendor} region; its regions are {', '.join(VENDOR_REGIONS[vendor])}."
    if key == "timeout":
        seconds = parse_duration(value)
        bounds = VENDOR_TIMEOUTS.get(vendor)
        if seconds is None or seconds <= 0:
            return f"{where} must be a duration such as 30m, 90s or 2h."
        if bounds and not bounds[0] <= seconds <= bounds[1]:
            return f"{where}: {vendor} takes {VENDOR_TIMEOUT_LABELS[vendor]}."
    return None


def parse_duration(value: object) -> float | None:
    """Seconds for `30m`, `60s`, `6h`, `1d` or a bare number of seconds; None when unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if not isinstance(value, str):
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*", value)
    if not match:
        return None
    scale = {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600, "d": 86400}[match.group(2)]
    return float(match.group(1)) * scale


# ---------------------------------------------------------------- browse steps

# Every action a browse step may take (the "Actions" table), plus `js`, which
# `deny:` uses for the call argument.
BROWSE_STEP_ACTIONS: tuple[str, ...] = (
    "click",
    "dblclick",
    "rightclick",
    "hover",
    "check",
    "uncheck",
    "drag",
    "fill",
    "type",
    "login",
    "insert",
    "pushstate",
    "webmcp",
    "press",
    "select",
    "wait",
    "goto",
    "scroll",
    "screenshot",
    "pdf",
    "paste",
    "upload",
    "download",
    "extract",
    "frame",
    "tab",
    "back",
    "forward",
    "reload",
    "focus",
    "clear",
    "highlight",
    "keyboard",
    "keydown",
    "keyup",
    "mouse",
    "wheel",
    "tap",
    "swipe",
    "clipboard",
    "get",
    "eval",
    "expect",
    "if",
    "mock",
    "unmock",
    "offline",
    "cookie",
    "localstorage",
    "sessionstorage",
    "viewport",
    "dialog",
    "solve",
)
DENYABLE: tuple[str, ...] = BROWSE_STEP_ACTIONS + ("js",)

BROWSE_MODES: tuple[str, ...] = (
    "text",
    "markdown",
    "html",
    "aria",
    "meta",
    "table",
    "network",
    "capture",
    "links",
    "screenshot",
    "pdf",
    "map",
    "crawl",
    "console",
    "vitals",
    "a11y",
    "diff",
    "feed",
    "webmcp",
    "react",
)
PERMISSIONS: tuple[str, ...] = ("geolocation", "notifications", "clipboard-read", "camera", "microphone")
CAPTCHA_SOLVERS: tuple[str, ...] = ("capsolver", "2captcha", "anticaptcha")
CHROME_CHANNELS: tuple[str, ...] = ("stable", "beta", "dev")
