"""A vendor's proxy `country`, through the loopback stand-ins of the session APIs and websockets
(tests/fakes/browser_vendors.py), each recording what it was sent.

Every vendor takes the country as its two-letter ISO 3166-1 code, in the case its docs write it: capitals at
Browserbase, Steel and Hyperbrowser, lowercase at Browserless, Bright Data and ZenRows — so it is sent so whatever
case the agent wrote, and a country that is not two letters is refused by `foldrun check` and by the call in the same
sentence, before any vendor is asked.
"""

from __future__ import annotations

import base64

import pytest

from foldrun.web import WebToolError
from foldrun.web.browse.vendors import KEY_HEADERS
from tests.fakes.browser_vendors import BrowserVendor
from tests.web.test_browse_vendors import (
    ROUTES,
    VENDOR_BROWSER,
    check_message,
    chromium,
    relay,  # noqa: F401
    vendor_tool,
)

BRIGHT_DATA_AUTH = "brd-customer-hl_1234-zone-scraping:zone-password-99"


def country_received(vendor: str, api: BrowserVendor, relay) -> str:
    """The country as the vendor's stand-in received it: in the session's JSON body, the websocket's query, or (Bright
    Data) the zone's user name on the handshake."""
    if vendor == "browserbase":
        return api.posted("/v1/sessions")[0]["proxies"][0]["geolocation"]["country"]
    if vendor == "steel":
        return api.posted("/v1/sessions")[0]["useProxy"]["geolocation"]["country"]
    if vendor == "hyperbrowser":
        return api.posted("/api/session")[0]["proxyCountry"]
    (handshake,) = relay.handshakes
    if vendor == "brightdata":
        user = base64.b64decode(handshake["headers"]["authorization"].removeprefix("Basic ")).decode().split(":")[0]
        return user.rpartition("-country-")[2]
    return handshake["query"]["proxyCountry" if vendor == "browserless" else "proxy_country"]


def call_with_country(browse, pages_site, relay, api: BrowserVendor, vendor: str, country: object) -> str:
    # An API vendor is asked at its session API; a socket vendor at the websocket itself.
    endpoint = api.url if vendor in KEY_HEADERS else relay.url
    key = BRIGHT_DATA_AUTH if vendor == "brightdata" else api.key
    return vendor_tool(browse, vendor, endpoint, key, {"proxy": {"country": country}}).call(
        {"action": "browse", "url": f"{pages_site.url}/who"}
    )


@pytest.mark.parametrize(
    "vendor,written,received",
    [
        ("browserbase", "au", "AU"),
        ("steel", "au", "AU"),
        ("hyperbrowser", "au", "AU"),
        ("browserless", "AU", "au"),
        ("brightdata", "AU", "au"),
        ("zenrows", "AU", "au"),
        ("steel", "Gb", "GB"),  # any mix of cases
        ("zenrows", "gB", "gb"),
    ],
)
def test_a_proxy_country_reaches_each_vendor_in_the_case_its_docs_write_it_whatever_case_the_agent_wrote(
    browse, pages_site, relay, vendor, written, received
):
    assert (
        check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {{country: {written}}}") == []
    )
    with BrowserVendor(vendor, relay) as api:
        out = call_with_country(browse, pages_site, relay, api, vendor, written)
    assert VENDOR_BROWSER in out
    assert country_received(vendor, api, relay) == received


@pytest.mark.parametrize(
    "vendor,web_yaml,country,named",
    [
        ("browserbase", "Australia", "Australia", "country Australia"),
        ("hyperbrowser", "AUS", "AUS", "country AUS"),
        ("browserless", "61", 61, "country 61"),
        ("brightdata", "A1", "A1", "country A1"),
        ("steel", "''", "", "no country"),
    ],
)
def test_a_proxy_country_that_is_not_two_letters_is_refused_by_check_and_the_call_before_the_vendor_is_asked(
    browse, pages_site, relay, vendor, web_yaml, country, named
):
    (from_check,) = check_message(
        f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {{country: {web_yaml}}}"
    )
    with BrowserVendor(vendor, relay) as api:
        with pytest.raises(WebToolError) as refused:
            call_with_country(browse, pages_site, relay, api, vendor, country)
    assert from_check == (
        f"web.browse.vendor_session.proxy.country: {vendor} takes a country as its two-letter "
        f"ISO 3166-1 code, and this proxy names {named}; write the country's two letters, e.g. "
        f"country: AU."
    )
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []


def test_norway_written_bare_is_read_by_yaml_as_false_and_the_refusal_says_to_quote_it(browse, pages_site, relay):
    (from_check,) = check_message("  browse:\n    via: zenrows\n    vendor_session:\n      proxy: {country: NO}")
    with pytest.raises(WebToolError) as refused:
        vendor_tool(browse, "zenrows", relay.url, "zenrows-key-0123", {"proxy": {"country": False}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )  # False: what YAML makes of the bare NO
    assert from_check == (
        "web.browse.vendor_session.proxy.country: zenrows takes a country as its two-letter "
        "ISO 3166-1 code, and this proxy's was read as false — YAML reads an unquoted NO so; quote "
        "it, country: 'NO'."
    )
    assert str(refused.value) == f"browse: {from_check}"
    assert check_message("  browse:\n    via: zenrows\n    vendor_session:\n      proxy: {country: 'NO'}") == []
    assert relay.handshakes == []
