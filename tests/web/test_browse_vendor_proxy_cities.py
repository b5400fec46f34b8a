"""A vendor's proxy `city` with no country beside it, through the loopback stand-ins of the session APIs
(tests/fakes/browser_vendors.py).

Browserbase and Steel make a proxy's country required (their session types), so a city alone is refused by `foldrun
check` and by the call in the same sentence, before any vendor is asked; Hyperbrowser's country is US unless told,
and Browserless takes a city alone, so theirs are sent.
"""

from __future__ import annotations

import pytest

from foldrun.contract import web_engines as W
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


@pytest.mark.parametrize("vendor", ["browserbase", "steel"])
def test_a_proxy_city_with_no_country_is_refused_by_check_and_the_call_before_the_vendor_is_asked(
    browse, pages_site, relay, vendor
):
    (from_check,) = check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {{city: Sydney}}")
    with BrowserVendor(vendor, relay) as api:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, vendor, api.url, api.key, {"proxy": {"city": "Sydney"}}).call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    assert from_check == (
        f"web.browse.vendor_session.proxy.city: {vendor} takes a city only with its country (a "
        f"{vendor} proxy's country is required), and this proxy names no country; write the city's "
        f"country, e.g. country: AU, or drop city."
    )
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []


@pytest.mark.parametrize("vendor", ["browserbase", "steel"])
def test_a_proxy_city_beside_its_country_is_sent(browse, pages_site, relay, vendor):
    assert (
        check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {{country: au, city: Sydney}}")
        == []
    )
    with BrowserVendor(vendor, relay) as api:
        out = vendor_tool(browse, vendor, api.url, api.key, {"proxy": {"country": "au", "city": "Sydney"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    (body,) = api.posted("/v1/sessions")
    where = body["proxies"][0]["geolocation"] if vendor == "browserbase" else body["useProxy"]["geolocation"]
    assert where == {"country": "AU", "city": "Sydney" if vendor == "browserbase" else "SYDNEY"}


def test_a_hyperbrowser_city_with_no_country_is_sent_as_its_country_is_us_unless_told(browse, pages_site, relay):
    assert check_message("  browse:\n    via: hyperbrowser\n    vendor_session:\n      proxy: {city: Chicago}") == []
    with BrowserVendor("hyperbrowser", relay) as vendor:
        out = vendor_tool(browse, "hyperbrowser", vendor.url, vendor.key, {"proxy": {"city": "Chicago"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    assert vendor.posted("/api/session") == [{"useProxy": True, "proxyCity": "Chicago"}]


def test_the_vendors_a_city_needs_a_country_at_are_ones_the_spec_gives_a_city_and_a_session_api():
    # Each has a city in the spec's table, and a session type (an API vendor's) that makes the country required.
    assert set(W.VENDOR_CITY_NEEDS_COUNTRY) <= set(W.vendors_with("proxy.city")) & set(KEY_HEADERS)
    assert "hyperbrowser" in W.VENDOR_DEFAULT_COUNTRY  # a city alone is a US city there
