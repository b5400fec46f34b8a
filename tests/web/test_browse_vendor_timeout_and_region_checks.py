"""A vendor session's `timeout` and `region` as the call sends them: refused by the call in check's own words
before any session is opened, and a timeout rounded up to the vendor's unit so the session never ends before the
time asked.

Each vendor is the loopback stand-in of its session API (tests/fakes/browser_vendors.py) over a real local Chromium.
"""

from __future__ import annotations

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


@pytest.mark.parametrize(
    "vendor,web_yaml,session",
    [
        ("hyperbrowser", "region: mars", {"region": "mars"}),
        ("browserbase", "region: us-west-1", {"region": "us-west-1"}),
        ("browserless", "region: nyc", {"region": "nyc"}),
        # Steel documents a session region (lax, iad) since the spec was written; the spec's table gives it none.
        ("steel", "region: lax", {"region": "lax"}),
        ("hyperbrowser", "timeout: 30s", {"timeout": "30s"}),
        ("steel", "timeout: 2d", {"timeout": "2d"}),
        ("browserbase", "timeout: soon", {"timeout": "soon"}),
        ("zenrows", "timeout: 20m", {"timeout": "20m"}),
    ],
)
def test_a_region_or_timeout_the_vendor_does_not_take_is_refused_by_the_call_in_the_words_check_uses(
    browse, pages_site, relay, vendor, web_yaml, session
):
    (from_check,) = check_message(f"  browse:\n    via: {vendor}\n    vendor_session:\n      {web_yaml}")
    with BrowserVendor(vendor, relay) as api:
        # An API vendor is asked at its session API; a socket vendor (browserless, zenrows) at the websocket itself.
        endpoint = api.url if vendor in KEY_HEADERS else relay.url
        with pytest.raises(WebToolError) as refused:
            vendor_tool(browse, vendor, endpoint, api.key, session).call(
                {"action": "browse", "url": f"{pages_site.url}/who"}
            )
    assert str(refused.value) == f"browse: {from_check}"
    assert api.seen == [] and relay.handshakes == []  # refused before any session is asked for


@pytest.mark.parametrize("timeout,minutes", [("90s", 2), ("61s", 2), ("60s", 1), ("2h", 120), ("119m", 119)])
def test_hyperbrowsers_timeout_is_rounded_up_to_whole_minutes_so_the_session_outlasts_the_time_asked(
    browse, pages_site, relay, timeout, minutes
):
    with BrowserVendor("hyperbrowser", relay) as vendor:
        out = vendor_tool(browse, "hyperbrowser", vendor.url, vendor.key, {"timeout": timeout}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert VENDOR_BROWSER in out
    (body,) = vendor.posted("/api/session")
    assert body["timeoutMinutes"] == minutes


def test_browserbases_seconds_and_steels_milliseconds_are_rounded_up_too(browse, pages_site, relay):
    with BrowserVendor("browserbase", relay) as browserbase:
        vendor_tool(browse, "browserbase", browserbase.url, browserbase.key, {"timeout": "90.5s"}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    with BrowserVendor("steel", relay) as steel:
        vendor_tool(browse, "steel", steel.url, steel.key, {"timeout": "90.5s"}).call(
            {"action": "browse", "url": f"{pages_site.url}/who"}
        )
    assert browserbase.posted("/v1/sessions")[0]["timeout"] == 91
    assert steel.posted("/v1/sessions")[0]["timeout"] == 90_500
