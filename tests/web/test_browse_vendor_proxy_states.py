"""A vendor's proxy `state`, through the loopback stand-ins of the session APIs (tests/fakes/browser_vendors.py).

Every vendor that takes a proxy state takes a US state alone, so a state beside another country is refused by
`foldrun check` and by the call in the same sentence, before any vendor is asked.
"""
from __future__ import annotations

import pytest

from foldrun.contract import web_engines as W
from foldrun.web import WebToolError
from foldrun.web.browse.vendors import KEY_HEADERS
from tests.fakes.browser_vendors import BrowserVendor
from tests.web.test_browse_vendors import (ROUTES, VENDOR_BROWSER, check_message, chromium, relay,  # noqa: F401
                                          vendor_tool)

@pytest.mark.parametrize("vendor", ["steel", "hyperbrowser", "browserbase"])
def test_a_proxy_state_beside_a_country_other_than_us_is_refused_by_check_and_the_call_before_the_vendor_is_asked(
        browse, pages_site, relay, vendor):
    (from_check,) = check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n"
                                  f"      proxy: {{country: AU, state: NSW, city: Sydney}}")
    with BrowserVendor(vendor, relay) as api:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, vendor, api.url, api.key, {"proxy": {"country": "AU", "state": "NSW", "city": "Sydney"}}
                        ).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert from_check == (f"web.browse.vendor_session.proxy.state: {vendor} takes a state only with country US (its "
                          f"states are US states), and this proxy names country AU; write country: US, or drop state.")
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []


def test_a_steel_state_with_no_country_is_refused_as_steel_wants_the_country_written(browse, pages_site, relay):
    (from_check,) = check_message("  browse:\n    via: steel\n    vendor_session:\n      proxy: {state: NY}")
    with BrowserVendor("steel", relay) as steel:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, "steel", steel.url, steel.key, {"proxy": {"state": "NY"}}).call(
                {"action": "browse", "url": f"{pages_site.url}/who"})
    assert from_check.startswith("web.browse.vendor_session.proxy.state: steel takes a state only with country US")
    assert from_check.endswith("and this proxy names no country; write country: US, or drop state.")
    assert str(refused.value) == f"browse: {from_check}"
    assert steel.seen == []


def test_a_hyperbrowser_state_with_no_country_is_sent_as_its_country_is_us_unless_told(browse, pages_site, relay):
    assert check_message("  browse:\n    via: hyperbrowser\n    vendor_session:\n      proxy: {state: NY}") == []
    with BrowserVendor("hyperbrowser", relay) as vendor:
        out = vendor_tool(browse, "hyperbrowser", vendor.url, vendor.key, {"proxy": {"state": "NY"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out
    assert vendor.posted("/api/session") == [{"useProxy": True, "proxyState": "NY"}]


def test_a_us_state_written_in_lowercase_country_is_taken(browse, pages_site, relay):
    assert check_message("  browse:\n    via: steel\n    vendor_session:\n      proxy: {country: us, state: TX}") == []
    with BrowserVendor("steel", relay) as steel:
        out = vendor_tool(browse, "steel", steel.url, steel.key, {"proxy": {"country": "us", "state": "TX"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"})
    assert VENDOR_BROWSER in out
    assert steel.posted("/v1/sessions")[0]["useProxy"]["geolocation"]["state"] == "TX"


def test_the_vendors_a_state_is_checked_for_are_the_ones_the_spec_gives_a_state():
    # The spec's table gives a state to browserbase, steel and hyperbrowser; the US-only rule covers exactly them.
    assert set(W.VENDOR_STATE_COUNTRY) == set(W.vendors_with("proxy.state"))
    assert set(W.VENDOR_STATE_COUNTRY) <= set(KEY_HEADERS)
