"""A password a `login` step filled is `[secret NAME]` in every output — a later call in the same `session=`
included, where the site prints it back — and that later call may still run script, since signing in with
session= and reading in the next call is the way the spec gives (spec/tools.md, "What this agent's browser may
do"), and so on a browser session's own page. Real Chromium, a careless site that keeps the password in a cookie and shows it on a profile page."""

from __future__ import annotations

import json

import pytest

from tests.fakes.website import html, page
from tests.web.test_browse_in_session import session_browser  # noqa: F401 - the fixture, shared

pytestmark = pytest.mark.e2e

PASSWORD = "pa55-w0rd-long"
ROUTES = {
    "/login": html(
        page(
            "Sign in",
            '<form action="/home" method="get"><input name="user" id="user">'
            '<input type="password" name="pw" id="pw"><button type="submit">Sign in</button>'
            "</form>",
        )
    ),
    "/home": lambda request: (
        200,
        {
            "content-type": "text/html; charset=utf-8",
            "set-cookie": f"remember={request['path'].rpartition('pw=')[2]}; Path=/",
        },
        page("Home", "<p>welcome back</p>"),
    ),
    "/profile": lambda request: html(page("Profile", f'<p id="saved">saved {request["headers"].get("Cookie")}</p>')),
}


def test_a_password_a_login_filled_stays_redacted_in_a_later_call_of_the_session_which_may_run_script(
    browse, pages_site, tmp_path
):
    tool = browse(secret={"PORTAL_LOGIN": f"alice:{PASSWORD}"}.__getitem__)
    signed = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/login",
            "session": "portal",
            "actions": [{"login": "PORTAL_LOGIN"}],
        }
    )
    assert signed.splitlines()[0] == "login: signed in from the secret PORTAL_LOGIN"
    later = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/profile",
            "session": "portal",
            "actions": [{"get": "#saved"}, {"eval": "document.title"}],
        }
    )
    assert json.loads(later) == [
        {"get": "text of #saved", "value": "saved remember=[secret PORTAL_LOGIN]"},
        {"eval": "document.title", "value": "Profile"},
    ]
    assert PASSWORD not in (tmp_path / "outputs" / "results.json").read_text()


def test_on_a_browser_sessions_page_a_password_a_login_filled_stays_redacted_in_the_next_call(
    make_tool, pages_site, session_browser
):  # noqa: F811
    tool = make_tool({}, session_cdp=session_browser, secret={"PORTAL_LOGIN": f"alice:{PASSWORD}"}.__getitem__)
    signed = tool.call({"action": "browse", "url": f"{pages_site.url}/login", "actions": [{"login": "PORTAL_LOGIN"}]})
    assert signed.splitlines()[0] == "login: signed in from the secret PORTAL_LOGIN"
    later = tool.call({"action": "browse", "url": f"{pages_site.url}/profile", "actions": [{"get": "#saved"}]})
    assert json.loads(later) == [{"get": "text of #saved", "value": "saved remember=[secret PORTAL_LOGIN]"}]
