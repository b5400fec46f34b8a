"""A `session=` a secret seeded — cookies from a secret, or the block's `storage:` — stays seeded for every later
call in it: script is refused naming what seeded it, the secret's values stay redacted, and `state=` will not
write its login to the workspace (spec/tools.md, "Claims, identity and state"). Real Chromium, a page that
shows its login."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

TOKEN = "tok-abcdef-1234567890"
SID = "sid-0123456789abcdef"
ROUTES = {
    "/app": html(
        page(
            "App",
            "<p id=\"who\">-</p><script>document.getElementById('who').textContent = "
            "'signed in with ' + (localStorage.getItem('user-session') || 'nothing');</script>",
        )
    ),
    # The site prints the session cookie it was sent, as a debug footer might.
    "/account": lambda request: html(page("Account", f"<p>cookie {request['headers'].get('Cookie', 'none')}</p>")),
}


@pytest.fixture
def storage_tool(make_tool, browsers, pages_site):
    return make_tool(
        {"browse": {"storage": "SITE_STORAGE", "storage_origin": pages_site.url}},
        browsers=browsers,
        secret={"SITE_STORAGE": json.dumps({"localStorage": {"user-session": TOKEN}})}.__getitem__,
    )


@pytest.fixture
def cookie_tool(make_tool, browsers):
    return make_tool(None, browsers=browsers, secret={"SITE_COOKIES": f"sid={SID}"}.__getitem__)


def test_a_later_call_in_a_session_the_storage_seeded_refuses_script_naming_the_storage(storage_tool, pages_site):
    storage_tool.call({"action": "browse", "url": f"{pages_site.url}/app", "session": "app"})
    with pytest.raises(WebToolError) as caught:
        storage_tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/app",
                "session": "app",
                "actions": [{"eval": "localStorage.getItem('user-session')"}],
            }
        )
    assert str(caught.value) == (
        "browse: eval does not run in a call that carries web.browse.storage, or in a "
        "session it seeded — an expression in the page could hand over the token"
    )


def test_a_later_call_in_a_session_the_storage_seeded_still_redacts_its_values(storage_tool, pages_site):
    storage_tool.call({"action": "browse", "url": f"{pages_site.url}/app", "session": "app"})
    out = storage_tool.call({"action": "browse", "url": f"{pages_site.url}/app", "session": "app"})
    assert "signed in with [secret SITE_STORAGE (1)]" in out
    assert TOKEN not in out


def test_a_later_call_in_a_session_cookies_seeded_still_redacts_them_and_refuses_script(cookie_tool, pages_site):
    first = cookie_tool.call(
        {"action": "browse", "url": f"{pages_site.url}/account", "session": "acct", "cookies": "SITE_COOKIES"}
    )
    assert SID not in first
    later = cookie_tool.call({"action": "browse", "url": f"{pages_site.url}/account", "session": "acct"})
    assert "cookie [secret SITE_COOKIES]" in later
    assert SID not in later
    with pytest.raises(WebToolError) as caught:
        cookie_tool.call(
            {"action": "browse", "url": f"{pages_site.url}/account", "session": "acct", "js": "document.cookie"}
        )
    assert str(caught.value) == (
        "browse: js does not run in a call that carries cookies from a secret, or in a "
        "session those cookies seeded — document.cookie is one expression away"
    )


def test_state_refuses_a_session_cookies_from_a_secret_seeded_and_writes_nothing(cookie_tool, pages_site, tmp_path):
    cookie_tool.call(
        {"action": "browse", "url": f"{pages_site.url}/account", "session": "acct", "cookies": "SITE_COOKIES"}
    )
    with pytest.raises(WebToolError) as caught:
        cookie_tool.call({"action": "browse", "url": f"{pages_site.url}/account", "session": "acct", "state": "portal"})
    assert str(caught.value) == (
        "browse: state= does not keep a login seeded from a secret (cookies) — "
        "session=acct was signed in by one, and state/ is a workspace file every later step "
        "can read; sign in with actions instead"
    )
    assert not (tmp_path / "state" / "browser" / "portal.json").exists()


def test_a_session_a_secret_seeded_is_never_written_to_the_workspace(
    cookie_tool, storage_tool, pages_site, tmp_path, recorder
):
    cookie_tool.call(
        {"action": "browse", "url": f"{pages_site.url}/account", "session": "acct", "cookies": "SITE_COOKIES"}
    )
    storage_tool.call({"action": "browse", "url": f"{pages_site.url}/app", "session": "app"})
    kept = [path for path in (tmp_path / "outputs").rglob("*") if path.is_file()]
    assert not [
        path for path in kept if SID in path.read_text(errors="replace") or TOKEN in path.read_text(errors="replace")
    ]
    assert (
        "browse: session=acct was signed in from a secret, so its login is held in this step's browser only and "
        "never written to outputs/.browser/ — a later step names the secret again"
    ) in recorder.lines
