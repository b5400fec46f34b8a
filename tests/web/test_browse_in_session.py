"""`web action=browse` in a browser session: the step drives that session's own Chromium over CDP.

A real Chromium is started here with a CDP endpoint on loopback (what a browser session's keeper runs); the
browse calls attach to it instead of launching, act on its page and leave the page where they left it.
"""

from __future__ import annotations


import pytest

from foldrun.web.errors import WebToolError
from tests.fakes.cdp_chromium import cdp_chromium


@pytest.fixture
def session_browser(tmp_path):
    """A Chromium with its CDP endpoint on loopback, as a browser session keeps one."""
    with cdp_chromium(tmp_path) as endpoint:
        yield endpoint


def test_browse_calls_in_a_session_act_on_its_page_and_leave_it_there(make_tool, site, session_browser):
    tool = make_tool({}, session_cdp=session_browser)
    first = tool.call({"action": "browse", "url": f"{site.url}/buttons", "mode": "text"})
    assert "Checkout" in first
    # No url: the next call reads the page the session is on, and a click there moves it.
    second = tool.call({"action": "browse", "actions": [{"click": "text=Checkout"}], "mode": "text"})
    assert "/checkout" in tool_final_url(tool)
    third = tool.call({"action": "browse", "mode": "text"})
    assert third == second


def tool_final_url(tool) -> str:
    return tool.browsers.run(lambda: tool.browsers.session_page()[1].url)


def test_a_session_left_open_by_the_step_keeps_its_page_for_the_next_step(make_tool, site, session_browser):
    first = make_tool({}, session_cdp=session_browser)
    first.call({"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    first.close()  # the step ends: its connection goes, the session's browser and page stay
    later = make_tool({}, session_cdp=session_browser)
    assert "twice a year" in later.call({"action": "browse", "mode": "text"})


def test_a_call_in_a_session_refuses_the_sessions_own_settings(make_tool, site, session_browser):
    tool = make_tool({}, session_cdp=session_browser)
    with pytest.raises(WebToolError, match=r"browse: state= is the browser session's own setting here"):
        tool.call({"action": "browse", "url": f"{site.url}/article", "state": "login"})


def test_a_blocked_address_is_not_opened_in_the_session(make_tool, session_browser):
    tool = make_tool({}, session_cdp=session_browser, allow_private=False)
    with pytest.raises(WebToolError, match=r"browse: http://127\.0\.0\.1:9/ was not opened — "):
        tool.call({"action": "browse", "url": "http://127.0.0.1:9/"})


def test_expect_claims_in_a_session_are_each_reported_and_a_failed_one_fails_the_call(make_tool, site, session_browser):
    tool = make_tool({}, session_cdp=session_browser)
    out = tool.call(
        {
            "action": "browse",
            "url": f"{site.url}/buttons",
            "mode": "text",
            "expect": [{"expect": "url", "contains": "/buttons"}],
        }
    )
    assert out.startswith('expect ✓ {"expect": "url", "contains": "/buttons"}\n')
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "mode": "text", "expect": [{"expect": "title", "equals": "Nowhere"}]})
    assert str(caught.value).startswith('browse: expect ✗ {"expect": "title", "equals": "Nowhere"} — title is ')
