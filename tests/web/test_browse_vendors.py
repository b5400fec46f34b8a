"""`web.browse: {via: <vendor>}`: the browse call on a vendor's browser, over CDP.

Each vendor is a loopback stand-in of its documented session API (tests/fakes/browser_vendors.py) handing back
the websocket of a real local Chromium started with `--remote-debugging-port=0`. The page below writes the
browser's own user agent into itself: the vendor's browser presents itself as it was launched (HeadlessChrome
here), where the step's own browser carries a desktop user agent — so the answer says which browser read it.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import threading

import pytest

from browsing.kept import KeptSeeds
from foldrun.contract import Desk, check
from foldrun.web import WebToolError
from foldrun.web.browse.vendors.adapters import ADAPTERS, BASES, SOURCES, socket_url
from tests.conftest import wait_for
from tests.fakes.browser_vendors import BRIGHT_DATA_COMMANDS, BrowserVendor, CdpRelay, LocalChromium
from tests.fakes.website import html

ROUTES = {
    "/who": html(
        b"<html><head><title>Who</title></head><body><main><p id=ua></p></main>"
        b"<script>document.getElementById('ua').textContent = 'seen by ' + "
        b"(navigator.userAgent.includes('HeadlessChrome') ? 'the vendor browser' : 'the own browser')"
        b"</script></body></html>"
    ),
}
VENDOR_BROWSER = "seen by the vendor browser"
OWN_BROWSER = "seen by the own browser"


@pytest.fixture(scope="module")
def chromium():
    with LocalChromium() as browser:
        yield browser


@pytest.fixture
def relay(chromium):
    with CdpRelay(chromium) as server:
        yield server


@pytest.fixture
def bright_data(chromium):
    """Bright Data's websocket host: its own CDP commands answered as its browser does, the rest Chromium's."""
    with CdpRelay(chromium, custom=BRIGHT_DATA_COMMANDS) as server:
        yield server


def vendor_tool(browse, name: str, endpoint: str, key: str, session: dict | None = None, **block):
    config = {"browse": {"via": name, **({"vendor_session": session} if session is not None else {}), **block}}
    secrets = {
        "BROWSERBASE_API_KEY": key,
        "STEEL_API_KEY": key,
        "HYPERBROWSER_API_KEY": key,
        "BROWSERLESS_TOKEN": key,
        "BRIGHTDATA_BROWSER_AUTH": key,
        "ZENROWS_API_KEY": key,
        "BROWSER_CDP_URL": key,
    }
    return browse(config, endpoints={name: endpoint}, secret=secrets.__getitem__)


def check_message(web_yaml: str) -> list[str]:
    text = f"---\nname: researcher\ntools: [web]\nweb:\n{web_yaml}\n---\nPrompt.\n"
    return [
        f.message
        for f in check(Desk(files={"agents/researcher/agent.md": text}), mode="check")
        if f.code.startswith("web.vendor")
    ]


def nowhere(recorder, key: str) -> None:
    """The key is in no log line, no trace event and no answer."""
    assert key not in recorder.text()


def test_browserbase_opens_a_session_with_the_settings_in_its_fields_and_the_page_is_read_on_its_browser(
    browse, pages_site, relay, recorder
):
    session = {
        "proxy": {"country": "AU", "city": "Sydney"},
        "captcha": True,
        "stealth": True,
        "region": "ap-southeast-1",
        "timeout": "30m",
        "record": False,
        "block": ["ads"],
        "options": {"browserSettings": {"viewport": {"width": 1440, "height": 900}}},
    }
    with BrowserVendor("browserbase", relay) as vendor:
        out = vendor_tool(browse, "browserbase", vendor.url, vendor.key, session).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    (body,) = vendor.posted("/v1/sessions")
    assert body == {
        "proxies": [{"type": "browserbase", "geolocation": {"country": "AU", "city": "Sydney"}}],
        "region": "ap-southeast-1",
        "timeout": 1800,
        "browserSettings": {
            "solveCaptchas": True,
            "verified": True,
            "recordSession": False,
            "blockAds": True,
            "viewport": {"width": 1440, "height": 900},
        },
    }
    assert all(r["headers"]["x-bb-api-key"] == vendor.key for r in vendor.seen)
    assert [h["query"].get("sessionId") for h in relay.handshakes] == list(vendor.sessions)
    session_id = next(iter(vendor.sessions))
    assert f"live view: https://www.browserbase.com/devtools-fullscreen/inspector.html?s={session_id}" in recorder.lines
    nowhere(recorder, vendor.key)


def test_steel_is_asked_in_its_fields_its_key_rides_the_websocket_as_apikey_and_the_session_is_released(
    browse, pages_site, relay, recorder
):
    session = {
        "proxy": {"country": "US", "state": "NY", "city": "New York"},
        "captcha": True,
        "stealth": True,
        "timeout": "90s",
        "block": ["ads"],
        "options": {"dimensions": {"width": 1280, "height": 800}},
    }
    with BrowserVendor("steel", relay) as vendor:
        out = vendor_tool(browse, "steel", vendor.url, vendor.key, session).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    (body,) = vendor.posted("/v1/sessions")
    assert body == {
        "useProxy": {"geolocation": {"country": "US", "state": "NY", "city": "NEW_YORK"}},
        "solveCaptcha": True,
        "stealthConfig": {"humanizeInteractions": True},
        "timeout": 90_000,
        "blockAds": True,
        "dimensions": {"width": 1280, "height": 800},
    }
    (session_id,) = vendor.sessions
    assert vendor.sessions[session_id]["status"] == "released"
    assert [r["method"] + " " + r["path"] for r in vendor.seen] == [
        "POST /v1/sessions",
        f"POST /v1/sessions/{session_id}/release",
    ]
    (handshake,) = relay.handshakes
    assert handshake["query"] == {"sessionId": session_id, "apiKey": vendor.key}
    assert f"live view: https://app.steel.dev/sessions/{session_id}" in recorder.lines


def test_steel_keep_stores_the_profile_under_state_web_browse_and_the_next_run_signs_in_with_it(
    browse, pages_site, relay, tmp_path
):
    with BrowserVendor("steel", relay) as vendor:
        vendor_tool(browse, "steel", vendor.url, vendor.key, {"keep": "client-portal"}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
        kept = json.loads((tmp_path / "state/web-browse/client-portal.json").read_text())
        vendor_tool(browse, "steel", vendor.url, vendor.key, {"keep": "client-portal"}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    first, second = vendor.posted("/v1/sessions")
    assert kept["vendor"] == "steel" and kept["profile"].startswith("prof_")
    assert first == {"persistProfile": True}
    assert second == {"persistProfile": True, "profileId": kept["profile"]}


def test_hyperbrowser_maps_block_words_and_keep_and_its_session_is_stopped_when_the_call_ends(
    browse, pages_site, relay, tmp_path, recorder
):
    session = {
        "proxy": {"country": "US", "state": "CA", "city": "Los Angeles"},
        "stealth": True,
        "captcha": True,
        "region": "asia-south",
        "timeout": "2h",
        "record": True,
        "block": ["ads", "trackers", "cookies"],
        "keep": "portal",
    }
    with BrowserVendor("hyperbrowser", relay) as vendor:
        out = vendor_tool(browse, "hyperbrowser", vendor.url, vendor.key, session).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    (profile,) = vendor.made
    (body,) = vendor.posted("/api/session")
    assert body == {
        "useProxy": True,
        "proxyCountry": "US",
        "proxyState": "CA",
        "proxyCity": "Los Angeles",
        "solveCaptchas": True,
        "useStealth": True,
        "region": "asia-south",
        "timeoutMinutes": 120,
        "enableWebRecording": True,
        "adblock": True,
        "trackers": True,
        "annoyances": True,
        "profile": {"id": profile, "persistChanges": True},
    }
    (session_id,) = vendor.sessions
    assert vendor.sessions[session_id]["status"] == "closed"
    assert vendor.seen[-1]["method"] == "PUT" and vendor.seen[-1]["path"] == f"/api/session/{session_id}/stop"
    assert json.loads((tmp_path / "state/web-browse/portal.json").read_text()) == {
        "vendor": "hyperbrowser",
        "profile": profile,
    }
    assert all(r["headers"]["x-api-key"] == vendor.key for r in vendor.seen)
    assert relay.handshakes[0]["query"] == {"token": vendor.sessions[session_id]["token"]}
    assert any(line.startswith("live view: https://app.hyperbrowser.ai/live?token=") for line in recorder.lines)


def test_browserless_takes_its_token_and_the_settings_as_query_parameters_on_the_stealth_route(
    browse, pages_site, relay, recorder
):
    session = {
        "proxy": {"country": "AU", "city": "Sydney"},
        "captcha": True,
        "stealth": True,
        "timeout": "5m",
        "block": ["ads"],
        "options": {"launch": '{"headless":false}'},
    }
    out = vendor_tool(browse, "browserless", relay.url, "browserless-token-0123", session).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert VENDOR_BROWSER in out
    (handshake,) = relay.handshakes
    assert handshake["path"] == "/stealth"
    assert handshake["query"] == {
        "token": "browserless-token-0123",
        "proxy": "residential",
        "proxyCountry": "au",
        "proxyCity": "sydney",
        "solveCaptchas": "true",
        "timeout": "300000",
        "blockAds": "true",
        "launch": '{"headless":false}',
    }
    nowhere(recorder, "browserless-token-0123")


def test_bright_data_takes_the_zones_user_pass_as_basic_auth_with_the_country_in_the_user_name(
    browse, pages_site, relay, recorder
):
    auth = "brd-customer-hl_1234-zone-scraping:zone-password-99"
    out = vendor_tool(browse, "brightdata", relay.url, auth, {"proxy": {"country": "AU"}}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert VENDOR_BROWSER in out
    (handshake,) = relay.handshakes
    sent = base64.b64decode(handshake["headers"]["authorization"].removeprefix("Basic ")).decode()
    assert sent == "brd-customer-hl_1234-zone-scraping-country-au:zone-password-99"
    assert handshake["query"] == {}
    nowhere(recorder, "zone-password-99")


def test_zenrows_takes_its_key_as_apikey_with_the_country_and_ttl_beside_it(browse, pages_site, relay, recorder):
    out = vendor_tool(
        browse, "zenrows", relay.url, "zenrows-key-0123", {"proxy": {"country": "AU"}, "timeout": "10m"}
    ).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out
    assert relay.handshakes[0]["query"] == {"apikey": "zenrows-key-0123", "proxy_country": "au", "session_ttl": "10m"}
    nowhere(recorder, "zenrows-key-0123")


@pytest.mark.parametrize("timeout,ttl", [("90s", "1m30s"), ("1m", "1m"), ("15m", "15m"), ("125s", "2m5s")])
def test_zenrows_session_ttl_is_the_timeout_to_the_second_in_its_minutes_and_seconds_spelling(
    browse, pages_site, relay, timeout, ttl
):
    out = vendor_tool(browse, "zenrows", relay.url, "zenrows-key-0123", {"timeout": timeout}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert VENDOR_BROWSER in out
    assert relay.handshakes[0]["query"] == {"apikey": "zenrows-key-0123", "session_ttl": ttl}


def test_a_zenrows_timeout_past_15_minutes_is_refused_by_check_in_its_range():
    assert check_message("  browse:\n    via: zenrows\n    vendor_session:\n      timeout: 20m") == [
        "web.browse.vendor_session.timeout: zenrows takes 1m–15m."
    ]


def test_bright_data_blocks_ads_and_cookie_banners_with_its_own_cdp_commands_before_the_page_loads(
    browse, pages_site, bright_data
):
    out = vendor_tool(
        browse,
        "brightdata",
        bright_data.url,
        "brd-customer-x-zone-y:pw-0123",
        {"captcha": True, "block": ["ads", "cookies"]},
    ).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out
    assert "did not take" not in out
    assert bright_data.commands == [
        ("Captcha.setAutoSolve", {"autoSolve": True}),
        ("Unblocker.enableAdBlock", {"version": "2"}),
        ("Unblocker.enableCookieBlock", {}),
    ]
    navigated = bright_data.methods.index("Page.navigate")
    assert all(bright_data.methods.index(method) < navigated for method, _ in bright_data.commands)


def test_bright_data_captcha_false_turns_its_default_solver_off(browse, pages_site, bright_data):
    vendor_tool(
        browse, "brightdata", bright_data.url, "brd-customer-x-zone-y:pw-0123", {"captcha": False, "block": ["cookies"]}
    ).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert bright_data.commands == [("Captcha.setAutoSolve", {"autoSolve": False}), ("Unblocker.enableCookieBlock", {})]


@pytest.mark.parametrize(
    "web_yaml,session,sentence",
    [
        (
            "block: [ads, trackers]",
            {"block": ["ads", "trackers"]},
            "web.browse.vendor_session.block: brightdata has no option to block trackers; the vendors that do are "
            "hyperbrowser.",
        ),
        (
            "timeout: 5m",
            {"timeout": "5m"},
            "web.browse.vendor_session.timeout: brightdata has no option for it; the vendors that do are browserbase, "
            "steel, hyperbrowser, browserless, zenrows.",
        ),
        (
            "proxy: {country: AU, city: Sydney}",
            {"proxy": {"country": "AU", "city": "Sydney"}},
            "web.browse.vendor_session.proxy.city: brightdata has no option for it; the vendors that do are browserbase, "
            "steel, hyperbrowser, browserless.",
        ),
    ],
)
def test_a_setting_bright_data_lacks_is_refused_naming_the_vendors_that_have_it(
    browse, pages_site, bright_data, web_yaml, session, sentence
):
    assert check_message(f"  browse:\n    via: brightdata\n    vendor_session:\n      {web_yaml}") == [sentence]
    with pytest.raises(WebToolError) as refused:
        vendor_tool(browse, "brightdata", bright_data.url, "brd-customer-x-zone-y:pw-0123", session).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert str(refused.value) == f"browse: {sentence}"
    assert bright_data.handshakes == []


@pytest.mark.parametrize(
    "words,fields",
    [
        (["cookies"], {"adblock": True, "trackers": True, "annoyances": True}),
        (["trackers"], {"adblock": True, "trackers": True}),
        (["ads"], {"adblock": True}),
        ("trackers, cookies", {"adblock": True, "trackers": True, "annoyances": True}),  # as a comma string
    ],
)
def test_hyperbrowser_block_words_turn_on_the_blocks_each_needs_beneath_it(words, fields):
    # Hyperbrowser blocks trackers only with ads blocked, and cookie notices only with both.
    assert ADAPTERS["hyperbrowser"].ask({"block": words}, dict).body == fields


@pytest.mark.parametrize(
    "city, steel, browserless",
    [
        ("Sydney", "SYDNEY", "sydney"),
        ("Los Angeles", "LOS_ANGELES", "losangeles"),  # Steel's proxies page spells it so
        ("Rio de Janeiro", "RIO_DE JANEIRO", "riodejaneiro"),  # Steel's city list: only the first gap is an underscore
        ("  New   York City ", "NEW_YORK CITY", "newyorkcity"),
    ],
)
def test_a_proxy_city_is_spelled_as_each_vendor_spells_it(city, steel, browserless):
    where = {"proxy": {"country": "US", "city": city}}
    assert ADAPTERS["steel"].ask(where, dict).body["useProxy"]["geolocation"]["city"] == steel
    assert ADAPTERS["browserless"].ask(where, dict).query["proxyCity"] == browserless
    assert ADAPTERS["browserbase"].ask(where, dict).body["proxies"][0]["geolocation"]["city"] == city  # as written


def test_every_vendor_mapping_was_matched_to_its_vendors_page_within_90_days():
    today = dt.date.today()
    stale = {
        (vendor, page): day
        for vendor, pages in SOURCES.items()
        for page, day in pages
        if (today - dt.date.fromisoformat(day)).days > 90
    }
    assert set(SOURCES) == set(ADAPTERS)
    assert stale == {}


def test_via_cdp_connects_to_the_browser_at_browser_cdp_url(browse, pages_site, chromium):
    out = vendor_tool(browse, "cdp", "", chromium.ws).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out


def test_a_cdp_url_that_refuses_is_a_sentence_and_the_call_renders_in_the_step(browse, pages_site, relay, recorder):
    relay.refuse = 403
    out = vendor_tool(browse, "cdp", "", f"{relay.url}/devtools/browser/x?secret=cdp-secret-77").call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert OWN_BROWSER in out
    (line,) = [line for line in recorder.lines if "BROWSER_CDP_URL" in line]
    assert line.startswith(
        f"browse: the CDP browser in BROWSER_CDP_URL could not be reached at {relay.url}/devtools/browser/x ("
    )
    assert line.endswith("; rendering in the step's own browser instead")
    nowhere(recorder, "cdp-secret-77")


@pytest.mark.parametrize(
    "status,words",
    [
        (
            401,
            "steel refused the key in STEEL_API_KEY (HTTP 401) — invalid, revoked, or not for steel; store a working "
            'one with `foldrun secrets set STEEL_API_KEY` — steel said "Unauthorized: invalid API key"',
        ),
        (
            402,
            "steel refused the key in STEEL_API_KEY (HTTP 402): the account behind it is out of credit — add credit "
            "with steel, or store another key in STEEL_API_KEY — steel said \"Payment required: your plan's browser "
            'minutes are used up"',
        ),
        (
            429,
            "steel is rate-limiting the key in STEEL_API_KEY (HTTP 429) and asked us to wait 30s; wait, or call steel "
            'less often — steel said "Too many concurrent sessions"',
        ),
    ],
)
def test_a_vendor_refusing_is_said_in_its_words_and_the_call_renders_in_the_step(
    browse, pages_site, relay, recorder, status, words
):
    with BrowserVendor("steel", relay) as vendor:
        vendor.refuse = status
        key = vendor.key if status != 401 else "a-revoked-key-000"
        out = vendor_tool(browse, "steel", vendor.url, key).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert OWN_BROWSER in out
    assert f"browse: {words}; rendering in the step's own browser instead" in recorder.lines
    assert out.startswith(f"{words}; rendered in the step's own browser instead")
    assert relay.handshakes == []


def test_a_vendor_that_cannot_be_reached_is_said_and_the_call_renders_in_the_step(browse, pages_site, recorder):
    out = vendor_tool(browse, "hyperbrowser", "http://127.0.0.1:9", "hb-key-0123456").call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert OWN_BROWSER in out
    (line,) = [line for line in recorder.lines if line.startswith("browse: hyperbrowser could not be reached")]
    assert line.endswith("; rendering in the step's own browser instead")


@pytest.mark.parametrize(
    "vendor,web_yaml,session",
    [
        ("zenrows", "captcha: true", {"captcha": True}),
        ("browserless", "proxy: {country: AU, state: NSW}", {"proxy": {"country": "AU", "state": "NSW"}}),
        ("steel", "block: [ads, trackers]", {"block": ["ads", "trackers"]}),
        ("brightdata", "keep: portal", {"keep": "portal"}),
    ],
)
def test_a_setting_the_vendor_lacks_is_refused_by_the_call_in_the_words_check_uses(
    browse, pages_site, relay, vendor, web_yaml, session
):
    (from_check,) = check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      {web_yaml}")
    with pytest.raises(WebToolError) as refused:
        vendor_tool(browse, vendor, relay.url, "k" * 12, session).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert str(refused.value) == f"browse: {from_check}"
    assert relay.handshakes == []  # refused before any session is opened


def test_proxy_and_block_are_said_not_to_reach_a_vendors_browser(browse, pages_site, relay, recorder):
    out = vendor_tool(browse, "zenrows", relay.url, "zenrows-key-0123").call(
        {"action": "browse", "url": f"{pages_site.url}/who", "block": "image"}
    )
    assert VENDOR_BROWSER in out
    assert (
        "browse: block= does not reach zenrows's browser — it is a launch option, and the vendor launched it; "
        "ask the vendor's session for it (vendor_session: {block: …})"
    ) in recorder.lines


def test_a_bright_data_command_its_browser_does_not_take_is_said_and_the_page_read_on(browse, pages_site, relay):
    out = vendor_tool(browse, "brightdata", relay.url, "brd-customer-x-zone-y:pw-0123", {"block": ["ads"]}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    # This relay hands every command to a plain Chromium, which has no Unblocker domain: said, and read on.
    assert out.startswith("brightdata did not take Unblocker.enableAdBlock: ")
    assert VENDOR_BROWSER in out


def test_keep_beside_a_locale_is_refused_by_the_call_in_the_words_check_uses(browse, pages_site, relay):
    (from_check,) = check_message(
        "  browse:\n    via: steel\n    locale: en-AU\n    vendor_session:\n      keep: portal"
    )
    with BrowserVendor("steel", relay) as vendor:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, "steel", vendor.url, vendor.key, {"keep": "portal"}, locale="en-AU").call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    assert str(refused.value) == f"browse: {from_check}"
    assert vendor.seen == []


def test_an_own_proxy_is_read_from_its_secret_into_browserbases_external_proxy_and_its_password_never_shown(
    browse, pages_site, relay, recorder
):
    with BrowserVendor("browserbase", relay) as vendor:
        secrets = {
            "BROWSERBASE_API_KEY": vendor.key,
            "MY_PROXY": "http://proxy-user:proxy-pass-0123@proxy.example:8080",
        }
        tool = browse(
            {"browse": {"via": "browserbase", "vendor_session": {"proxy": {"own": "MY_PROXY"}}}},
            endpoints={"browserbase": vendor.url},
            secret=secrets.__getitem__,
        )
        out = tool.call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out
    assert vendor.posted("/v1/sessions")[0]["proxies"] == [
        {
            "type": "external",
            "server": "http://proxy.example:8080",
            "username": "proxy-user",
            "password": "proxy-pass-0123",
        }
    ]
    nowhere(recorder, "proxy-pass-0123")


def test_a_cdp_url_at_a_private_address_meets_the_network_guard(browse, pages_site, chromium, recorder):
    tool = browse({"browse": {"via": "cdp"}}, allow_private=False, secret={"BROWSER_CDP_URL": chromium.ws}.__getitem__)
    with pytest.raises(WebToolError) as refused:
        tool.call({"action": "browse", "url": "http://93.184.216.34/"})  # a public literal: no DNS here
    assert str(refused.value).startswith("browse: the CDP browser in BROWSER_CDP_URL was not connected to — 127.0.0.1")


def test_a_vendor_browser_that_closes_mid_call_is_said_as_the_vendors_and_its_session_still_released(
    browse, pages_site, relay
):
    pages_site.trickle.add("/forever")

    def cut_when_asked() -> None:
        wait_for(lambda: "/forever" in pages_site.seen, timeout=30, interval=0.02)
        relay.cut()

    with BrowserVendor("steel", relay) as vendor:
        threading.Thread(target=cut_when_asked, daemon=True).start()
        with pytest.raises(WebToolError) as caught:
            vendor_tool(browse, "steel", vendor.url, vendor.key).call(
                {"action": "browse", "url": f"{pages_site.url}/forever"}
            )
    assert str(caught.value) == (
        "browse: steel's browser closed during this call — its session ended or the connection dropped."
    )
    assert [s["status"] for s in vendor.sessions.values()] == ["released"]


def test_browserbase_keep_creates_a_context_once_and_the_next_run_persists_into_the_same_one(
    browse, pages_site, relay, tmp_path
):
    with BrowserVendor("browserbase", relay) as vendor:
        for _ in range(2):
            vendor_tool(browse, "browserbase", vendor.url, vendor.key, {"keep": "client-portal"}).call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    (context,) = vendor.made
    assert [b["browserSettings"]["context"] for b in vendor.posted("/v1/sessions")] == [
        {"id": context, "persist": True},
        {"id": context, "persist": True},
    ]
    assert json.loads((tmp_path / "state/web-browse/client-portal.json").read_text()) == {
        "vendor": "browserbase",
        "context": context,
    }


def test_browserless_region_picks_its_host_and_the_old_session_name_is_still_read(browse, pages_site, relay):
    asked = ADAPTERS["browserless"].ask({"region": "lon", "stealth": True}, dict)
    assert (
        socket_url("browserless", BASES["browserless"], asked, "tok-1")
        == "wss://production-lon.browserless.io/stealth?token=tok-1"
    )
    config = {"browse": {"via": "browserless", "session": {"captcha": True}}}
    tool = browse(config, endpoints={"browserless": relay.url}, secret=lambda name: "tok-0123456")
    assert VENDOR_BROWSER in tool.call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert relay.handshakes[0]["query"] == {"token": "tok-0123456", "solveCaptchas": "true"}


def test_a_kept_profile_a_secrets_cookies_signed_in_refuses_script_in_a_later_run_that_names_no_secret(
    browse, pages_site, relay, tmp_path, recorder, workspace
):
    config = {"browse": {"via": "browserbase", "vendor_session": {"keep": "client-portal"}}}
    seeds = KeptSeeds(workspace)  # the server's record of what seeded it (tests/web/test_browse_kept_seeds.py)
    with BrowserVendor("browserbase", relay) as vendor:
        secrets = {"BROWSERBASE_API_KEY": vendor.key, "PORTAL_COOKIES": "sid=portal-sid-5150"}
        endpoints = {"browserbase": vendor.url}
        browse(config, endpoints=endpoints, secret=secrets.__getitem__, seeds=seeds).call(
            {"action": "browse", "url": f"{pages_site.url}/who", "cookies": "PORTAL_COOKIES"}
        )
        kept = json.loads((tmp_path / "state/web-browse/client-portal.json").read_text())
        with pytest.raises(WebToolError) as caught:  # the next run: the vendor's profile still holds that login
            browse(config, endpoints=endpoints, secret=secrets.__getitem__, seeds=seeds).call(
                {"action": "browse", "url": f"{pages_site.url}/who", "js": "document.cookie"}
            )
        read = browse(config, endpoints=endpoints, secret=secrets.__getitem__, seeds=seeds).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )  # reading it is as before
    (context,) = vendor.made
    assert kept == {"vendor": "browserbase", "context": context}  # the file holds the vendor's id alone
    (record,) = seeds.seeds("browserbase", "client-portal")
    assert record["kept"] == context and record["seeded"] == "cookies" and "PORTAL_COOKIES" in record["secrets"]
    assert "portal-sid-5150" not in json.dumps(record)  # the record names the secret, never its value
    assert str(caught.value) == (
        "browse: js does not run in a call that carries cookies from a secret, or in a "
        "session those cookies seeded — document.cookie is one expression away"
    )
    assert VENDOR_BROWSER in read


def test_a_kept_profile_with_no_record_to_ask_is_treated_as_signed_in_and_its_file_keeps_the_mark(
    browse, pages_site, relay, tmp_path
):
    config = {"browse": {"via": "steel", "vendor_session": {"keep": "client-portal"}}}
    secrets = {"STEEL_API_KEY": "steel-key-0123456789", "PORTAL_COOKIES": "sid=portal-sid-5150"}
    with BrowserVendor("steel", relay) as vendor:
        secrets["STEEL_API_KEY"] = vendor.key
        with pytest.raises(WebToolError) as caught:  # a tool its host gave no seed book (a laptop's)
            browse(config, endpoints={"steel": vendor.url}, secret=secrets.__getitem__).call(
                {"action": "browse", "url": f"{pages_site.url}/who", "js": "document.title"}
            )
        browse(config, endpoints={"steel": vendor.url}, secret=secrets.__getitem__).call(
            {"action": "browse", "url": f"{pages_site.url}/who", "cookies": "PORTAL_COOKIES"}
        )
    kept = json.loads((tmp_path / "state/web-browse/client-portal.json").read_text())
    # The mark stays where a server's record of it is taken in from (tests/web/test_browse_kept_seeds.py).
    assert kept == {
        "vendor": "steel",
        "profile": kept["profile"],
        "seeded": "cookies",
        "secrets": ["PORTAL_COOKIES", "STEEL_API_KEY"],
    }
    assert str(caught.value) == (
        "browse: js does not run beside vendor_session.keep here — nothing outside the "
        "workspace records whether a secret signed the kept profile in, so it is treated as "
        "signed in"
    )
