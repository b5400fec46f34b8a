"""A vendor's proxy `state`, through the loopback stand-ins of the session APIs (tests/fakes/browser_vendors.py).

Every vendor that takes a proxy state takes a US state alone, so a state beside another country is refused by
`foldrun check` and by the call in the same sentence, before any vendor is asked. Each writes its state codes in
capitals, so a state is sent so whatever case the agent wrote, and one that is not among the vendor's codes is refused
the same way.
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


@pytest.mark.parametrize("vendor", ["steel", "hyperbrowser", "browserbase"])
def test_a_proxy_state_beside_a_country_other_than_us_is_refused_by_check_and_the_call_before_the_vendor_is_asked(
    browse, pages_site, relay, vendor
):
    (from_check,) = check_message(
        f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {{country: AU, state: NSW, city: Sydney}}"
    )
    with BrowserVendor(vendor, relay) as api:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(
                browse, vendor, api.url, api.key, {"proxy": {"country": "AU", "state": "NSW", "city": "Sydney"}}
            ).call({"action": "browse", "url": f"{pages_site.url}/who"})
    assert from_check == (
        f"web.browse.vendor_session.proxy.state: {vendor} takes a state only with country US (its "
        f"states are US states), and this proxy names country AU; write country: US, or drop state."
    )
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []


def test_a_steel_state_with_no_country_is_refused_as_steel_wants_the_country_written(browse, pages_site, relay):
    (from_check,) = check_message("  browse:\n    via: steel\n    vendor_session:\n      proxy: {state: NY}")
    with BrowserVendor("steel", relay) as steel:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, "steel", steel.url, steel.key, {"proxy": {"state": "NY"}}).call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    assert from_check.startswith("web.browse.vendor_session.proxy.state: steel takes a state only with country US")
    assert from_check.endswith("and this proxy names no country; write country: US, or drop state.")
    assert str(refused.value) == f"browse: {from_check}"
    assert steel.seen == []


def test_a_hyperbrowser_state_with_no_country_is_sent_as_its_country_is_us_unless_told(browse, pages_site, relay):
    assert check_message("  browse:\n    via: hyperbrowser\n    vendor_session:\n      proxy: {state: NY}") == []
    with BrowserVendor("hyperbrowser", relay) as vendor:
        out = vendor_tool(browse, "hyperbrowser", vendor.url, vendor.key, {"proxy": {"state": "NY"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    assert vendor.posted("/api/session") == [{"useProxy": True, "proxyState": "NY"}]


def test_a_us_state_written_in_lowercase_country_is_taken(browse, pages_site, relay):
    assert check_message("  browse:\n    via: steel\n    vendor_session:\n      proxy: {country: us, state: TX}") == []
    with BrowserVendor("steel", relay) as steel:
        out = vendor_tool(browse, "steel", steel.url, steel.key, {"proxy": {"country": "us", "state": "TX"}}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    assert steel.posted("/v1/sessions")[0]["useProxy"]["geolocation"]["state"] == "TX"


def test_the_vendors_a_state_is_checked_for_are_the_ones_the_spec_gives_a_state():
    # The spec's table gives a state to browserbase, steel and hyperbrowser; the US-only rule covers exactly them.
    assert set(W.VENDOR_STATE_COUNTRY) == set(W.vendors_with("proxy.state"))
    assert set(W.VENDOR_STATE_COUNTRY) <= set(KEY_HEADERS)


def state_received(vendor: str, api: BrowserVendor) -> str:
    """The state as the vendor's session API received it, in the JSON body."""
    if vendor == "hyperbrowser":
        return api.posted("/api/session")[0]["proxyState"]
    (body,) = api.posted("/v1/sessions")
    geolocation = body["proxies"][0]["geolocation"] if vendor == "browserbase" else body["useProxy"]["geolocation"]
    return geolocation["state"]


@pytest.mark.parametrize(
    "vendor,proxy,web_yaml,received",
    [
        ("browserbase", {"country": "US", "state": "ny"}, "{country: US, state: ny}", "NY"),
        ("steel", {"country": "us", "state": "tx"}, "{country: us, state: tx}", "TX"),
        ("hyperbrowser", {"state": "ca"}, "{state: ca}", "CA"),
        ("steel", {"country": "US", "state": "Pr"}, "{country: US, state: Pr}", "PR"),  # any mix of cases; Steel's PR
        ("browserbase", {"country": "US", "state": "dc"}, "{country: US, state: dc}", "DC"),
    ],
)
def test_a_proxy_state_reaches_each_vendor_in_capitals_as_its_sdk_lists_them_whatever_case_the_agent_wrote(
    browse, pages_site, relay, vendor, proxy, web_yaml, received
):
    assert check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {web_yaml}") == []
    with BrowserVendor(vendor, relay) as api:
        out = vendor_tool(browse, vendor, api.url, api.key, {"proxy": proxy}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    assert state_received(vendor, api) == received


@pytest.mark.parametrize(
    "vendor,proxy,web_yaml,scope,named",
    [
        (
            "browserbase",
            {"country": "US", "state": "New York"},
            "{country: US, state: New York}",
            "the 50 US states and DC",
            "state New York",
        ),
        (
            "steel",
            {"country": "US", "state": "nsw"},
            "{country: US, state: nsw}",
            "the 50 US states, DC, PR, GU and VI",
            "state nsw",
        ),
        ("hyperbrowser", {"state": "DC"}, "{state: DC}", "the 50 US states", "state DC"),  # not in Hyperbrowser's list
        (
            "steel",
            {"country": "US", "state": 12},
            "{country: US, state: 12}",
            "the 50 US states, DC, PR, GU and VI",
            "state 12",
        ),
    ],
)
def test_a_proxy_state_not_among_the_vendors_us_state_codes_is_refused_by_check_and_the_call_before_it_is_asked(
    browse, pages_site, relay, vendor, proxy, web_yaml, scope, named
):
    (from_check,) = check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      proxy: {web_yaml}")
    with BrowserVendor(vendor, relay) as api:
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, vendor, api.url, api.key, {"proxy": proxy}).call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    assert from_check == (
        f"web.browse.vendor_session.proxy.state: {vendor} takes a state as the two-letter code of "
        f"one of {scope}, and this proxy names {named}; write the state's two letters, e.g. "
        f"state: NY."
    )
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []
