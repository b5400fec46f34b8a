"""Browserless's proxy country and city, and its turned-down websockets, through its loopback stand-in
(tests/fakes/browser_vendors.py: `CdpRelay` with `browserless_account`, answering as Browserless's server does).

Browserless takes its country lowercase in the websocket's address, and answers a proxy city on a plan under Scale
with 401 — said as that, with its words, and the call renders in the step's own browser; a token it does not know
is said as a refused key.
"""

from __future__ import annotations

from tests.fakes.browser_vendors import browserless_account
from tests.web.test_browse_vendors import (
    OWN_BROWSER,
    ROUTES,
    VENDOR_BROWSER,
    chromium,
    nowhere,
    relay,  # noqa: F401
    vendor_tool,
)

TOKEN = "browserless-token-0123"


def test_browserless_is_asked_for_its_country_in_lowercase_and_a_city_on_a_scale_plan_is_let_through(
    browse, pages_site, relay
):
    relay.refuse_when = browserless_account(TOKEN, scale=True)
    out = vendor_tool(browse, "browserless", relay.url, TOKEN, {"proxy": {"country": "US", "city": "Chicago"}}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    assert VENDOR_BROWSER in out
    assert relay.handshakes[0]["query"] == {
        "token": TOKEN,
        "proxy": "residential",
        "proxyCountry": "us",
        "proxyCity": "chicago",
    }


def test_browserless_refusing_a_city_on_a_plan_under_scale_is_said_as_that_and_the_call_renders_in_the_step(
    browse, pages_site, relay, recorder
):
    relay.refuse_when = browserless_account(TOKEN)
    out = vendor_tool(browse, "browserless", relay.url, TOKEN, {"proxy": {"country": "US", "city": "Chicago"}}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    sentence = (
        "browserless refused the browser (HTTP 401), its answer to a proxy city (vendor_session.proxy.city) "
        "on a plan under Scale (500k+ units) — drop proxy.city, or move the account behind BROWSERLESS_TOKEN "
        'to Scale (a token it does not know gets the same answer) — browserless said "City-level proxying '
        'needs a Scale plan (500k+ units)."'
    )
    assert OWN_BROWSER in out
    assert f"browse: {sentence}; rendering in the step's own browser instead" in recorder.lines
    assert out.startswith(f"{sentence}; rendered in the step's own browser instead")
    assert "401 Unauthorized" not in recorder.text()
    nowhere(recorder, TOKEN)


def test_browserless_refusing_its_token_is_said_as_a_refused_key_in_its_words(browse, pages_site, relay, recorder):
    relay.refuse_when = browserless_account(TOKEN)
    out = vendor_tool(browse, "browserless", relay.url, "a-revoked-token-000", {"captcha": True}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )
    sentence = (
        "browserless refused the key in BROWSERLESS_TOKEN (HTTP 401) — invalid, revoked, or not for "
        "browserless; store a working one with `foldrun secrets set BROWSERLESS_TOKEN` — browserless said "
        '"Bad or missing authentication."'
    )
    assert OWN_BROWSER in out
    assert f"browse: {sentence}; rendering in the step's own browser instead" in recorder.lines
    nowhere(recorder, "a-revoked-token-000")
