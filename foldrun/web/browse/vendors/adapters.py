"""What each vendor is asked for: `vendor_session:` mapped onto its own fields (spec/tools.md, "Browsing
somewhere else", the `vendor_session:` table, read 2026-09-29), and where its session's websocket is.

One `Adapter` per vendor: `opens` names how a session starts — `api` (an HTTP call that hands back the
websocket) or `socket` (the websocket itself, its options in the URL) — and `ask` turns the settings into
that call's JSON body or that URL's query. Which settings a vendor has at all is the contract's table
(`web_engines.VENDOR_SESSION_OPTIONS`), checked before any of this runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import quote

from foldrun.contract import web_engines as W

# The vendor's own host, where its key goes (FOLDRUN_WEB_ENDPOINTS points one elsewhere: a gateway, a test).
BASES: dict[str, str] = {
    "browserbase": "https://api.browserbase.com",
    "steel": "https://api.steel.dev",
    "hyperbrowser": "https://api.hyperbrowser.ai",
    "browserless": "wss://production-{region}.browserless.io",
    "brightdata": "wss://brd.superproxy.io:9222",
    "zenrows": "wss://browser.zenrows.com",
}
# The pages each mapping was read from, each with the day it was last matched to it (a test fails past 90
# days); 2026-09-29 is the day the spec's table says it was read. A city is spelled as each vendor's proxy page
# spells it: Steel's `LOS_ANGELES`, Browserless's `chicago` (lowercase, no spaces). Bright Data's cookie-banner
# command was read on the Chinese edition of its custom-CDP page (the English copy at hand predates it); ZenRows'
# `session_ttl` format is its own Scraping Browser SDK's (`convertSecondsToDuration`, 60–900 s), its docs page not
# being at hand.
# Re-read 2026-12-03 for the proxy's state and city, and Steel's region:
# - a proxy state is a US state at Browserbase (its SDK's session type: "Must also specify US as the country"),
#   Steel ("States: Supported for the US only"; its SDK types the country as required) and Hyperbrowser ("US
#   State-Level Targeting"; its country is US when none is sent) — a state beside another country is refused before
#   any vendor is asked (web_engines.vendor_state_refusal), in check's words;
# - Browserless's proxy page: `proxyCountry=us` lowercase, and a city needs a Scale plan (500k+ units), "plans under
#   500k units will receive a 401" — said as that, not as a bare status;
# - Steel now documents a session `region` (its multi-region page: lax, iad; its SDK also lists ord, scl, fra,
#   nrt). The spec's `vendor_session:` table, the contract, has none for Steel, so `region` on Steel is still
#   refused there and none is sent; the difference is recorded here, not mapped.
# Re-read 2026-12-03 for the proxy country's case: an ISO 3166-1 alpha-2 code in capitals at Browserbase (its SDK's
# geolocation: "Country code in ISO 3166-1 alpha-2 format"), Steel (its SDK's geolocation: "Country code (e.g.,
# 'US', 'GB', 'DE') - ISO 3166-1 alpha-2", every code it lists in capitals) and Hyperbrowser (its parameters page:
# `proxyCountry`, an ISO 3166-1 alpha-2 code such as `US` or `GB`); in lowercase at Browserless (`proxyCountry=us`),
# Bright Data (its geolocation page: `-country-us`) and ZenRows (its SDK's `proxy_country=us`). Each adapter sends
# it so whatever case the agent wrote (`_place`); a country that is not two letters is refused before any vendor is
# asked (web_engines.vendor_country_refusal), in check's words. A city needs a country beside it at Browserbase and
# Steel (each SDK's geolocation makes `country` required), so a city alone is refused there
# (web_engines.vendor_city_refusal). Hyperbrowser's country is US unless told. Browserless's proxies page calls a
# city one "within the selected country" but does not say a country is required, so a lone city is sent as written
# and Browserless's answer said.
# Re-read 2026-12-03 for the proxy state's case: capitals at Browserbase (its SDK: "US state code (2 characters)"),
# Steel (its SDK's geolocation state: AL … WY, DC, PR, GU, VI, each in capitals) and Hyperbrowser (its SDK's `State`:
# the 50 states in capitals, then again in lowercase); each adapter sends it so whatever case the agent wrote
# (`_place`). A state not among the vendor's codes is refused before any vendor is asked
# (web_engines.vendor_state_code_refusal), in check's words. Browserless, Bright Data and ZenRows take no state (the
# spec's table), so none is sent there.
SOURCES: dict[str, tuple[tuple[str, str], ...]] = {
    "browserbase": (
        ("https://docs.browserbase.com/reference/api/create-a-session", "2026-12-02"),
        (
            "https://github.com/browserbase/sdk-python/blob/main/src/browserbase/types/session_create_params.py",
            "2026-12-03",
        ),
    ),
    "steel": (
        ("https://docs.steel.dev/overview/sessions-api/configuration", "2026-12-02"),
        ("https://docs.steel.dev/overview/stealth/proxies", "2026-12-03"),
        ("https://github.com/steel-dev/steel-python/blob/main/src/steel/types/session_create_params.py", "2026-12-03"),
        ("https://docs.steel.dev/overview/sessions-api/multi-region", "2026-12-03"),
    ),
    "hyperbrowser": (
        ("https://hyperbrowser.ai/docs/sessions/parameters", "2026-12-03"),
        ("https://hyperbrowser.ai/docs/sessions/ad-blocking", "2026-12-02"),
        ("https://hyperbrowser.ai/docs/sessions/proxy", "2026-12-03"),
        ("https://github.com/hyperbrowserai/python-sdk/blob/main/hyperbrowser/models/consts.py", "2026-12-03"),
    ),
    "browserless": (
        ("https://docs.browserless.io/baas/connection-urls", "2026-12-02"),
        ("https://docs.browserless.io/rest-apis/proxies", "2026-12-03"),
    ),
    "brightdata": (
        ("https://docs.brightdata.com/scraping-automation/scraping-browser/cdp-functions/custom", "2026-12-02"),
        ("https://docs.brightdata.com/cn/scraping-automation/scraping-browser/cdp-functions/custom", "2026-12-02"),
        ("https://docs.brightdata.com/products/scraping-browser/features/proxy-location", "2026-12-03"),
    ),
    "zenrows": (("https://github.com/ZenRows/browser-js-sdk/blob/main/src/index.ts", "2026-12-03"),),
}


@dataclass
class Asked:
    """One session's request: the JSON body (api) or the query (socket), and what is done once connected."""

    body: dict[str, Any]
    query: dict[str, str]
    path: str = ""  # a socket vendor's route (`/stealth`)
    region: str = ""
    country: str = ""  # Bright Data's, carried in the zone's user name
    cdp: list[tuple[str, dict]] | None = None  # CDP commands sent on the first page once connected


def _merge(into: dict, extra: dict) -> dict:
    """`options:` — the vendor's own fields, as written — laid over what the settings asked for."""
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def _place(proxy: dict, case: Callable[[str], str]) -> dict[str, Any]:
    """The proxy's country, state and city as written, the country and the state in the case its vendor writes their
    codes (`case`: capitals at Browserbase, Steel and Hyperbrowser, lowercase at Browserless, Bright Data and
    ZenRows, which take no state) — whatever case the agent wrote them in; check refuses a country that is not two
    letters and a state that is not one of the vendor's US state codes."""
    place = {key: proxy[key] for key in ("country", "state", "city") if proxy.get(key)}
    for key in ("country", "state"):
        if key in place:
            place[key] = case(str(place[key]))
    return place


def _blocked(settings: dict) -> set[str]:
    """`block:` as its words, written as a list or as `ads, cookies` (check reads both)."""
    value = settings.get("block") or []
    return {str(w).strip() for w in (value.split(",") if isinstance(value, str) else value) if str(w).strip()}


def _seconds(value: Any, unit: float = 1) -> int:
    """The timeout in the vendor's unit (`unit` seconds each), rounded up: a session never ends before the time
    asked (90 s is 2 of Hyperbrowser's minutes, 1.5 s is 2 of Browserbase's seconds)."""
    return math.ceil(round((W.parse_duration(value) or 0) / unit, 6))  # round: 90.5 / 0.001 is 90500.00000000001


def _browserbase(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    body: dict[str, Any] = {}
    browser: dict[str, Any] = {}
    proxy = settings.get("proxy")
    if proxy is True:
        body["proxies"] = True
    elif isinstance(proxy, dict) and proxy.get("own"):
        own = own_proxy()
        body["proxies"] = [
            {
                "type": "external",
                "server": own["server"],
                **({"username": own["username"], "password": own["password"]} if own["username"] else {}),
            }
        ]
    elif isinstance(proxy, dict):
        body["proxies"] = [{"type": "browserbase", "geolocation": _place(proxy, str.upper)}]
    if "captcha" in settings:
        browser["solveCaptchas"] = bool(settings["captcha"])
    if settings.get("stealth"):
        browser["verified"] = True
    if settings.get("region"):
        body["region"] = settings["region"]
    if settings.get("timeout"):
        body["timeout"] = _seconds(settings["timeout"])
    if "record" in settings:
        browser["recordSession"] = bool(settings["record"])
    if "ads" in _blocked(settings):
        browser["blockAds"] = True
    if browser:
        body["browserSettings"] = browser
    return Asked(_merge(body, dict(settings.get("options") or {})), {})


def _steel(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    body: dict[str, Any] = {}
    proxy = settings.get("proxy")
    if proxy is True:
        body["useProxy"] = True
    elif isinstance(proxy, dict) and proxy.get("own"):
        body["proxyUrl"] = own_proxy()["url"]
    elif isinstance(proxy, dict):
        where = _place(proxy, str.upper)
        if "city" in where:
            where["city"] = _steel_city(str(where["city"]))
        body["useProxy"] = {"geolocation": where}
    if "captcha" in settings:
        body["solveCaptcha"] = bool(settings["captcha"])
    if settings.get("stealth"):
        body["stealthConfig"] = {"humanizeInteractions": True}
    if settings.get("timeout"):
        body["timeout"] = _seconds(settings["timeout"], 0.001)  # milliseconds
    if "ads" in _blocked(settings):
        body["blockAds"] = True
    return Asked(_merge(body, dict(settings.get("options") or {})), {})


def _steel_city(city: str) -> str:
    """Steel's spelling of a city: capitals, the first gap an underscore — `Sydney` is `SYDNEY`, `Los Angeles`
    `LOS_ANGELES`, `Rio de Janeiro` `RIO_DE JANEIRO` (its SDKs' city list writes every name that way)."""
    return " ".join(city.split()).upper().replace(" ", "_", 1)


def _hyperbrowser(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    body: dict[str, Any] = {}
    proxy = settings.get("proxy")
    if proxy:
        body["useProxy"] = True
    if isinstance(proxy, dict) and proxy.get("own"):
        own = own_proxy()
        body["proxyServer"] = own["server"]
        if own.get("username"):
            body["proxyServerUsername"], body["proxyServerPassword"] = own["username"], own.get("password", "")
    elif isinstance(proxy, dict):
        fields = {"country": "proxyCountry", "state": "proxyState", "city": "proxyCity"}
        body.update({fields[key]: value for key, value in _place(proxy, str.upper).items()})
    if "captcha" in settings:
        body["solveCaptchas"] = bool(settings["captcha"])
    if settings.get("stealth"):
        body["useStealth"] = True
    if settings.get("region"):
        body["region"] = settings["region"]
    if settings.get("timeout"):
        body["timeoutMinutes"] = max(1, _seconds(settings["timeout"], 60))
    if "record" in settings:
        body["enableWebRecording"] = bool(settings["record"])
    # Hyperbrowser blocks trackers only with ads blocked, and cookie notices ("annoyances") only with both.
    words = _blocked(settings)
    if words:
        body["adblock"] = True
    if words & {"trackers", "cookies"}:
        body["trackers"] = True
    if "cookies" in words:
        body["annoyances"] = True
    return Asked(_merge(body, dict(settings.get("options") or {})), {})


def _browserless(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    query: dict[str, str] = {}
    proxy = settings.get("proxy")
    if isinstance(proxy, dict) and proxy.get("own"):
        query["externalProxyServer"] = own_proxy()["url"]
    elif proxy:
        query["proxy"] = "residential"
        place = _place(proxy, str.lower) if isinstance(proxy, dict) else {}
        if "country" in place:
            query["proxyCountry"] = place["country"]
        if "city" in place:  # lowercase without its spaces: `newyorkcity`
            query["proxyCity"] = str(place["city"]).lower().replace(" ", "")
    if settings.get("captcha"):
        query["solveCaptchas"] = "true"
    if settings.get("timeout"):
        query["timeout"] = str(_seconds(settings["timeout"], 0.001))
    if "ads" in _blocked(settings):
        query["blockAds"] = "true"
    query.update({str(k): _query_value(v) for k, v in (settings.get("options") or {}).items()})
    return Asked(
        {}, query, path="/stealth" if settings.get("stealth") else "", region=str(settings.get("region") or "sfo")
    )


def _brightdata(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    """The country rides in the zone's user name; the rest are Bright Data's own CDP commands, sent on the page
    before it navigates, as its custom-CDP page asks."""
    proxy = settings.get("proxy")
    country = _place(proxy, str.lower).get("country", "") if isinstance(proxy, dict) else ""
    cdp: list[tuple[str, dict]] = []
    if "captcha" in settings:  # its solver is on by default: `captcha: false` turns it off
        cdp.append(("Captcha.setAutoSolve", {"autoSolve": bool(settings["captcha"])}))
    words = _blocked(settings)
    if "ads" in words:
        cdp.append(("Unblocker.enableAdBlock", {"version": "2"}))  # "2": the current engine, ads only by default
    if "cookies" in words:
        cdp.append(("Unblocker.enableCookieBlock", {}))
    return Asked({}, {}, country=country, cdp=cdp)


def _zenrows(settings: dict, own_proxy: Callable[[], dict]) -> Asked:
    query: dict[str, str] = {}
    proxy = settings.get("proxy")
    if isinstance(proxy, dict) and proxy.get("country"):
        query["proxy_country"] = _place(proxy, str.lower)["country"]
    if settings.get("timeout"):
        query["session_ttl"] = _go_duration(_seconds(settings["timeout"]))
    query.update({str(k): _query_value(v) for k, v in (settings.get("options") or {}).items()})
    return Asked({}, query)


def _go_duration(seconds: int) -> str:
    """ZenRows' `session_ttl` spelling: 90 s is `1m30s`, 600 s `10m`, 45 s `45s` (its SDK's own conversion)."""
    minutes, rest = divmod(seconds, 60)
    return (f"{minutes}m" if minutes else "") + (f"{rest}s" if rest or not minutes else "")


def _query_value(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _browserless_refused(status: int, asked: Asked, held: str | None) -> str | None:
    """Browserless answers a proxy city on a plan under Scale (500k units) with 401 (its proxies page), which is also
    its answer to a bad token: both are named."""
    if status != 401 or "proxyCity" not in asked.query:
        return None
    return (
        f"browserless refused the browser (HTTP 401), its answer to a proxy city (vendor_session.proxy.city) on a "
        f"plan under Scale (500k+ units) — drop proxy.city, or move the account behind "
        f"{held or 'BROWSERLESS_TOKEN'} to Scale (a token it does not know gets the same answer)"
    )


@dataclass(frozen=True)
class Adapter:
    opens: str  # "api" or "socket"
    ask: Callable[[dict, Callable[[], dict]], Asked]
    keep: str = ""  # "context" or "profile": what `keep` stores
    # A socket vendor's own sentence for a websocket it turned down — (its HTTP status, what was asked, the key's
    # secret name) → the sentence, or None where the shared wording of a refused key says it.
    refused: Callable[[int, Asked, str | None], str | None] | None = None


ADAPTERS: dict[str, Adapter] = {
    "browserbase": Adapter("api", _browserbase, keep="context"),
    "steel": Adapter("api", _steel, keep="profile"),
    "hyperbrowser": Adapter("api", _hyperbrowser, keep="profile"),
    "browserless": Adapter("socket", _browserless, refused=_browserless_refused),
    "brightdata": Adapter("socket", _brightdata),
    "zenrows": Adapter("socket", _zenrows),
}


def socket_url(vendor: str, base: str, asked: Asked, key: str) -> str:
    """A socket vendor's websocket, its key where that vendor reads it."""
    base = base.replace("{region}", asked.region or "sfo").rstrip("/")
    if vendor == "brightdata":  # the zone's whole user:pass, the country carried in the user name
        user, _, password = key.partition(":")
        scheme, _, rest = base.partition("://")
        user += f"-country-{asked.country}" if asked.country else ""
        return f"{scheme}://{quote(user, safe='-_.')}:{quote(password, safe='')}@{rest}"
    name = {"browserless": "token", "zenrows": "apikey"}[vendor]
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in {name: key, **asked.query}.items())
    return f"{base}{asked.path}?{query}"
